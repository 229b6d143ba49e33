package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/salience-ai/salience/internal/app"
)

// TestEvalParaphrase runs the paraphrase benchmark through the command line with the
// default embedder and the lexical one, and refuses a bad --k or embedder.
func TestEvalParaphrase(t *testing.T) {
	ctx := context.Background()
	env := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"paraphrase"}, "embedder static-minilm-l6-v2-256-int8-v1: 13 of 36 facts in the top 3 (342 turns)"},
		{[]string{"paraphrase", "--embedder", "local", "-v"}, "embedder local-hash-v1-256: 0 of 36 facts in the top 3"},
	} {
		var out, errb bytes.Buffer
		if err := runEval(ctx, c.args, env, &out, &errb); err != nil {
			t.Fatalf("%v: %v (%s)", c.args, err, errb.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: output %q, want %q", c.args, out.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	if err := runEval(ctx, []string{"paraphrase", "--embedder", "local", "-v"}, env, &out, &errb); err != nil ||
		strings.Count(out.String(), "missed: ") != 36 {
		t.Errorf("-v lists %d misses, want 36 (err %v)", strings.Count(out.String(), "missed: "), err)
	}
	for _, args := range [][]string{{"paraphrase", "--k", "0"}, {"paraphrase", "--embedder", "magic"}} {
		if err := runEval(ctx, args, env, &out, &errb); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestDefaultEmbedderIsStatic: serve with no embedder flags embeds with the static table.
func TestDefaultEmbedderIsStatic(t *testing.T) {
	c := app.DefaultConfig()
	emb, err := app.NewEmbedder(&c)
	if err != nil {
		t.Fatal(err)
	}
	if emb.Name() != "static-minilm-l6-v2-256-int8-v1" || emb.Dims() != 256 {
		t.Fatalf("default embedder %s of %d dims", emb.Name(), emb.Dims())
	}
}
