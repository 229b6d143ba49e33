package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestEvalLocomoRerankAgainstTheFake(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tiny.json"), []byte(tinyLoCoMo), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runMain(t, "eval", "locomo", "--data", dir, "--rerank", "--rerank-fake-latency", "1ms")
	if err != nil {
		t.Fatalf("eval --rerank: %v\n%s", err, out)
	}
	for _, want := range []string{"reranking with claude-haiku-4-5 at http://127.0.0.1:", "rerank: applied 2\n", `{"recall@5":1.0000`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without an endpoint or a key it says what to set.
	if _, err := runMain(t, "eval", "locomo", "--data", dir, "--rerank"); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("eval --rerank without an endpoint: %v", err)
	}
}
