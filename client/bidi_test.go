package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestContextBlockDropsBidiControls: a memory holding U+202E is stored and returned as
// written, and the context block a bot pastes into its prompt has none of it (issue 39).
func TestContextBlockDropsBidiControls(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ns := newClient(t, srv, testserver.NewValidator(t, nil)).Namespace("bidi")
	ctx := context.Background()
	content := "The lighthouse keeper is \u202eecilA\u202c, not Bob."
	if _, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: content}); err != nil {
		t.Fatal(err)
	}
	got, err := ns.Recall(ctx, api.RecallRequest{Mode: client.ModeSearch, Query: "lighthouse keeper"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 1 || got.Results[0].Content != content {
		t.Fatalf("results = %+v, want the memory as stored", got.Results)
	}
	if strings.ContainsRune(got.Context, '\u202e') || strings.ContainsRune(got.Context, '\u202c') {
		t.Errorf("context block %q holds a bidi control", got.Context)
	}
	if !strings.Contains(got.Context, "The lighthouse keeper is ecilA, not Bob.") {
		t.Errorf("context block %q lost the memory's words", got.Context)
	}
}
