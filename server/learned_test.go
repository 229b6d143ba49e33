package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestLearnedWordsAreShown: the words a memory learned from a use are in GET
// /v1/namespaces/{ns}/memories/{id} (as "learned": [{"term","weight","at"}]) and in the
// explain of a recall that matched them, through the real stack and the Go client, every
// exchange checked against openapi.yaml.
func TestLearnedWordsAreShown(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{})
	hc := &http.Client{Transport: testserver.NewValidator(t, nil)}
	c, err := client.New(srv.URL, client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace("a")
	bakery, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: "Priya works night shifts at the bakery on Elm Street."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: "Jonas plays the cello in a quartet on Thursdays."}); err != nil {
		t.Fatal(err)
	}
	if bakery.Learned != nil {
		t.Fatalf("a new memory has learned words: %+v", bakery.Learned)
	}

	resp, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "c", Mode: "search", Rerank: "off",
		Query: "Is Priya still baking sourdough on her night shifts?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].ID != bakery.ID {
		t.Fatalf("the shifts question did not find the bakery memory first: %+v", resp.Results)
	}
	if _, err := ns.Report(ctx, api.EngagementEvent{ID: "e1", SurfacingID: resp.Results[0].SurfacingID, Type: "used"}); err != nil {
		t.Fatal(err)
	}

	// GET, on the wire.
	res, err := hc.Get(srv.URL + "/v1/namespaces/a/memories/" + bakery.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var raw struct {
		Learned []map[string]any `json:"learned"`
	}
	if err := json.Unmarshal(body, &raw); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET memory = %d %s", res.StatusCode, body)
	}
	if len(raw.Learned) != 2 || raw.Learned[0]["term"] != "bake" || raw.Learned[0]["weight"] != 1.0 || raw.Learned[0]["at"] == nil ||
		raw.Learned[1]["term"] != "sourdough" {
		t.Errorf("GET memory learned = %v, want bake and sourdough at weight 1", raw.Learned)
	}
	// The client's type carries them.
	m, err := ns.Get(ctx, bakery.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := learnedTerms(m.Learned); !slices.Equal(got, []string{"bake", "sourdough"}) || m.Learned[1].Weight != 1 || m.Learned[1].At.IsZero() {
		t.Errorf("client Get learned = %+v, want bake and sourdough at weight 1", m.Learned)
	}

	// Explain shows the learned words a recall matched, and only those.
	resp, err = ns.Recall(ctx, api.RecallRequest{ConversationID: "c2", Mode: "search", Rerank: "off", Explain: true,
		Query: "who bakes sourdough?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].ID != bakery.ID || resp.Results[0].Components == nil {
		t.Fatalf("the sourdough question did not find the bakery memory first, explained: %+v", resp.Results)
	}
	if got := learnedTerms(resp.Results[0].Components.Learned); !slices.Equal(got, []string{"bake", "sourdough"}) {
		t.Errorf("explain learned = %v, want [bake sourdough]", got)
	}
	resp, err = ns.Recall(ctx, api.RecallRequest{ConversationID: "c3", Mode: "search", Rerank: "off", Explain: true,
		Query: "what is Priya's sourdough like?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].ID != bakery.ID || resp.Results[0].Components == nil {
		t.Fatalf("the Priya question did not find the bakery memory first, explained: %+v", resp.Results)
	}
	if got := learnedTerms(resp.Results[0].Components.Learned); !slices.Equal(got, []string{"sourdough"}) {
		t.Errorf("explain learned = %v, want only the matched [sourdough]", got)
	}
}

func learnedTerms(ls []api.LearnedTerm) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Term)
	}
	return out
}
