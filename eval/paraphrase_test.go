package eval_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// TestParaphraseSetLayout: the benchmark is big enough to mean something, and laid out as
// a conversation whose every question points at its own fact.
func TestParaphraseSetLayout(t *testing.T) {
	s, err := eval.Paraphrases()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pairs) < 30 || len(s.Distractors) < 300 {
		t.Fatalf("%d pairs among %d distractors; want at least 30 among 300", len(s.Pairs), len(s.Distractors))
	}
	c := s.Conversation()
	turns := c.Sessions[0].Turns
	if len(turns) != len(s.Pairs)+len(s.Distractors) || len(c.QA) != len(s.Pairs) {
		t.Fatalf("%d turns and %d questions", len(turns), len(c.QA))
	}
	byID := map[string]string{}
	for _, tu := range turns {
		byID[tu.DiaID] = tu.Text
	}
	prev := -1
	for i, q := range c.QA {
		if q.Question != s.Pairs[i].Question || byID[q.Evidence[0]] != s.Pairs[i].Fact {
			t.Fatalf("question %d %q points at %q", i, q.Question, byID[q.Evidence[0]])
		}
		var at int
		for j, tu := range turns {
			if tu.DiaID == q.Evidence[0] {
				at = j
			}
		}
		if at <= prev+1 && i > 0 {
			t.Fatalf("fact %d at turn %d right after fact %d at %d: facts are not spread out", i, at, i-1, prev)
		}
		prev = at
	}
}

// paraphraseFound runs the benchmark through the real ingest and recall pipeline.
func paraphraseFound(t *testing.T, emb embed.Embedder) *eval.ParaphraseResult {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "p.db"), sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := eval.Paraphrases()
	if err != nil {
		t.Fatal(err)
	}
	res, err := eval.Paraphrase(context.Background(), ingest.New(st, emb), recall.New(st, emb, recall.Options{Seed: 1}), s, 3)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestParaphraseStaticBeatsLexical: on questions that share no word with their fact, the
// static embedder finds what the lexical one cannot (figures in docs/benchmarks.md; all-MiniLM-L6-v2
// itself, served through --embedder openai, is measured by `salience eval paraphrase`).
func TestParaphraseStaticBeatsLexical(t *testing.T) {
	static, err := embed.NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	lex := paraphraseFound(t, embed.NewLocal(0))
	sem := paraphraseFound(t, static)
	t.Logf("top 3: lexical %d, static %d of %d", lex.Found, sem.Found, sem.Total)
	if lex.Found > staticParaphraseLexicalMax || sem.Found < staticParaphraseMin {
		var missed []string
		for _, p := range sem.Missed {
			missed = append(missed, p.Question)
		}
		t.Fatalf("top 3: lexical %d (want ≤ %d), static %d (want ≥ %d); static missed %s",
			lex.Found, staticParaphraseLexicalMax, sem.Found, staticParaphraseMin, strings.Join(missed, " | "))
	}
}

// What the built-in table finds on the benchmark, and what the lexical embedder does.
const (
	staticParaphraseMin        = 12
	staticParaphraseLexicalMax = 1
)
