package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/rerank"
	"github.com/salience-ai/salience/rerank/rerankfake"
	"github.com/salience-ai/salience/store/sqlite"
)

// tinyLoCoMo is one conversation in LoCoMo's format.
const tinyLoCoMo = `{
  "speaker_a": "Ana", "speaker_b": "Ben",
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
    {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten called Pebble last week."},
    {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! Does Pebble like the garden?"},
    {"speaker": "Ana", "dia_id": "D1:3", "text": "She sleeps under the lavender all day."}
  ],
  "qa": [
    {"question": "What is the name of Ana's kitten?", "answer": "Pebble", "evidence": ["D1:1"], "category": 4},
    {"question": "Where does Pebble sleep?", "answer": "under the lavender", "evidence": ["D1:3"], "category": 4}
  ]
}`

// tinyLoCoMoDir is a directory holding tinyLoCoMo as tiny.json.
func tinyLoCoMoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tiny.json"), []byte(tinyLoCoMo), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEvalLocomoRerankAgainstTheFake(t *testing.T) {
	dir := tinyLoCoMoDir(t)
	out, err := runMain(t, "eval", "locomo", "--locomo", dir, "--rerank", "--rerank-fake-latency", "1ms")
	if err != nil {
		t.Fatalf("eval --rerank: %v\n%s", err, out)
	}
	for _, want := range []string{"reranking with claude-haiku-4-5 at http://127.0.0.1:", "rerank: applied 2\n", `{"recall@5":1.0000`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without an endpoint or a key it says what to set.
	if _, err := runMain(t, "eval", "locomo", "--locomo", dir, "--rerank"); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("eval --rerank without an endpoint: %v", err)
	}
}

// TestEvalEngineReranks checks that the engine every evaluation runs on passes its reranker
// to recall. Both stores build theirs with evalEngine (`eval locomo --store neo4j --rerank`
// once dropped the reranker and answered every question unreranked); this runs it on
// SQLite, TestNeo4jEvalRerank runs the command on a real Neo4j.
func TestEvalEngineReranks(t *testing.T) {
	ctx := context.Background()
	dir := tinyLoCoMoDir(t)
	convs, err := eval.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := rerankfake.Start(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rr, err := rerank.New(rerank.Options{BaseURL: url, Default: rerank.PolicyOn})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(dir, "eval.db"), sqlite.Options{Logger: app.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	e := evalEngine(st, embed.NewLocal(0), rr)
	rep, err := eval.RunWith(ctx, e.Ingest, e.Recall, convs, io.Discard, eval.Options{Rerank: rerank.ModeOn, LatencyBudget: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rerank[rerank.StatusApplied] != 2 {
		t.Errorf("rerank statuses %v, want both questions applied", rep.Rerank)
	}
}

// TestNeo4jEvalRerank runs `eval locomo --store neo4j --rerank` against the fake endpoint:
// every question is reranked on Neo4j as on SQLite. It needs SALIENCE_NEO4J_URI (make
// test-neo4j) and empties the locomo-tiny namespace there.
func TestNeo4jEvalRerank(t *testing.T) {
	uri := os.Getenv("SALIENCE_NEO4J_URI")
	if uri == "" {
		t.Skip("Neo4j eval test skipped: SALIENCE_NEO4J_URI is not set; run `make test-neo4j`")
	}
	dir := tinyLoCoMoDir(t)
	out, err := runMain(t, "eval", "locomo", "--store", "neo4j", "--neo4j-uri", uri, "--locomo", dir, "--rerank", "--rerank-fake-latency", "1ms")
	if err != nil {
		t.Fatalf("eval --store neo4j --rerank: %v\n%s", err, out)
	}
	if !strings.Contains(out, "rerank: applied 2\n") {
		t.Errorf("output lacks every question reranked:\n%s", out)
	}
}
