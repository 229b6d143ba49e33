package mcp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/mcptest"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestReadFullMemoryShowsLearnedWords: read_full_memory shows the words a memory learned from
// being used, in its text and its structured output.
func TestReadFullMemoryShowsLearnedWords(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{})
	c, _ := client.New(srv.URL)
	ns := c.Namespace("agent")
	m, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: "Priya works night shifts at the bakery on Elm Street."})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "c", Mode: "search", Rerank: "off",
		Query: "Is Priya still baking sourdough on her night shifts?"})
	if err != nil || len(resp.Results) == 0 || resp.Results[0].ID != m.ID {
		t.Fatalf("recall = %+v, %v; want the bakery memory", resp, err)
	}
	if _, err := ns.Report(ctx, api.EngagementEvent{ID: "e1", SurfacingID: resp.Results[0].SurfacingID, Type: "used"}); err != nil {
		t.Fatal(err)
	}

	s, err := connectHTTP(t, srv, testserver.NewValidator(t, nil), "agent", "")
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Learned []string `json:"learned"`
	}
	text := mcptest.OK(t, s, "read_full_memory", map[string]any{"id": m.ID}, &out)
	if !slices.Equal(out.Learned, []string{"bake", "sourdough"}) {
		t.Errorf("learned = %v, want [bake sourdough]", out.Learned)
	}
	if !strings.Contains(text, "Learned from its uses: bake, sourdough") {
		t.Errorf("the text does not list the learned words:\n%s", text)
	}
}
