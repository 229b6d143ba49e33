package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestSharedMemoryRecall: a recall in "a" that also names "shared" returns memories of both,
// each labelled with its namespace; each surfacing lands in its memory's namespace, where
// engagement on it is applied (and nowhere else); a key not granted "shared" is refused,
// naming it; the home namespace's settings apply to the memories of both.
func TestSharedMemoryRecall(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	v := testserver.NewValidator(t, nil)
	ctx := context.Background()
	admin := keyed(t, srv, v, testserver.KeyAdmin)
	both := keyed(t, srv, v, testserver.KeyShared)
	onlyA := keyed(t, srv, v, testserver.KeyA)

	own, err := both.Namespace("a").Store(ctx, api.MemoryInput{Kind: "fact", Content: "Nadia keeps her bees on the cannery roof."})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := both.Namespace("shared").Store(ctx, api.MemoryInput{Kind: "fact", Content: "The cannery roof leaks when it rains, say the maintenance notes."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Namespace("a").PatchSettings(ctx, map[string]any{"rerank": "off"}); err != nil {
		t.Fatal(err)
	}

	req := api.RecallRequest{Mode: client.ModeSearch, Query: "cannery roof", ConversationID: "c1", Namespaces: []string{"shared"}}
	resp, err := both.Namespace("a").Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	label := map[string]string{}
	surf := map[string]string{}
	for _, r := range resp.Results {
		label[r.ID], surf[r.ID] = r.Namespace, r.SurfacingID
	}
	if len(resp.Results) != 2 || label[own.ID] != "a" || label[shared.ID] != "shared" {
		t.Fatalf("results = %+v, want %s labelled a and %s labelled shared", resp.Results, own.ID, shared.ID)
	}
	// Merged by p_use (a probability, comparable across namespaces), highest first.
	for i := 1; i < len(resp.Results); i++ {
		if prev, cur := resp.Results[i-1], resp.Results[i]; cur.PUse > prev.PUse {
			t.Errorf("results[%d] (%s, p_use %v) comes after results[%d] (%s, p_use %v): the merge is not by p_use",
				i, cur.Namespace, cur.PUse, i-1, prev.Namespace, prev.PUse)
		}
	}
	if resp.SettingsVersion != 1 {
		t.Errorf("settings_version = %d, want 1 (the home namespace's)", resp.SettingsVersion)
	}
	if s, err := srv.Store.GetSurfacing(ctx, "shared", surf[shared.ID]); err != nil || s.MemoryID != shared.ID || s.SettingsVersion != 1 {
		t.Errorf("the shared memory's surfacing in shared = %+v, %v", s, err)
	}
	if _, err := srv.Store.GetSurfacing(ctx, "a", surf[shared.ID]); err == nil {
		t.Errorf("the shared memory's surfacing is in a too")
	}

	// Engagement lands in each memory's own namespace.
	rep, err := both.Namespace("shared").Report(ctx, api.EngagementEvent{SurfacingID: surf[shared.ID], Type: client.EventUsed})
	if err != nil || rep.Applied != 1 {
		t.Fatalf("used, reported to shared = %+v, %v", rep, err)
	}
	rep, err = both.Namespace("a").Report(ctx, api.EngagementEvent{SurfacingID: surf[own.ID], Type: client.EventUsed})
	if err != nil || rep.Applied != 1 {
		t.Fatalf("used, reported to a = %+v, %v", rep, err)
	}
	rep, err = both.Namespace("a").Report(ctx, api.EngagementEvent{SurfacingID: surf[shared.ID], Type: client.EventHelpful})
	if err != nil || rep.Rejected != 1 || rep.Results[0].Error.Code != client.CodeNotFound {
		t.Errorf("the shared surfacing reported to a = %+v, %v; want rejected not_found", rep, err)
	}
	for ns, id := range map[string]string{"a": own.ID, "shared": shared.ID} {
		m, err := both.Namespace(ns).Get(ctx, id)
		if err != nil || m.UsageCount != 1 {
			t.Errorf("%s/%s: usage %d, %v; want 1", ns, id, m.UsageCount, err)
		}
	}

	// A key without "shared" is refused, naming it; so is one naming a namespace it lacks
	// among others it has.
	for _, tc := range []struct {
		c     *client.Client
		names []string
		field string
	}{
		{onlyA, []string{"shared"}, "namespaces[0]"},
		{both, []string{"shared", "b"}, "namespaces[1]"},
	} {
		req.Namespaces = tc.names
		_, err := tc.c.Namespace("a").Recall(ctx, req)
		var e *client.Error
		missing := tc.names[len(tc.names)-1]
		if !errors.As(err, &e) || e.Status != 403 || e.Field != tc.field || !strings.Contains(e.Message, `"`+missing+`"`) {
			t.Errorf("recall naming %v: %v, want 403 naming %s at %s", tc.names, err, missing, tc.field)
		}
	}
	// And the home namespace still needs its own grant.
	req.Namespaces = []string{"a"}
	if _, err := keyed(t, srv, v, testserver.KeyB).Namespace("shared").Recall(ctx, req); client.ErrorCode(err) != client.CodeForbidden {
		t.Errorf("key b recalling shared: %v, want forbidden", err)
	}
}
