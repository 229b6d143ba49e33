package recall_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// FuzzRecallQuery feeds arbitrary user text through the whole pipeline: it must never panic
// or fail on a valid request, and text is only ever text — quotes, operators, SQL or FTS
// syntax find memories by their words, never by a meaning of their own.
func FuzzRecallQuery(f *testing.F) {
	for _, s := range []string{
		"where are the bees kept?", `"bees" AND roof OR NOT cannery`, "bees*", "roof NEAR(bees)",
		"'; DROP TABLE memories; --", "c:bees", "yesterday in May 2023", "\x00\xff", "   ",
		strings.Repeat("bee ", 500), "🐝 roof", "high-trust bot pairs", "-bees +roof", "{\"q\":1}",
	} {
		f.Add(s)
	}
	e := newEnv(f)
	e.add(f, "a",
		mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0),
		mem(models.KindTurn, "Omar: the ferry leaves at seven; bring the roof keys.", t0))
	e.add(f, "b", mem(models.KindFact, "Secret of b: bees roof cannery.", t0))
	f.Fuzz(func(t *testing.T, q string) {
		for _, mode := range []models.Mode{models.ModeSearch, models.ModeAmbient} {
			resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: mode, Query: q, ConversationID: "fz"})
			valid := strings.TrimSpace(q) != "" && len(q) <= recall.MaxQueryBytes
			if !valid {
				if models.ErrorCode(err) != models.EINVALID && models.ErrorCode(err) != models.ETOOLARGE {
					t.Fatalf("query %q: err = %v, want invalid or too_large", q, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("query %q (%s): %v", q, mode, err)
			}
			for _, r := range resp.Results {
				if r.Memory.Namespace != "a" || strings.Contains(r.Content, "Secret of b") {
					t.Fatalf("query %q returned another namespace's memory: %+v", q, r.Memory)
				}
				if !utf8.ValidString(r.Content) {
					t.Fatalf("invalid UTF-8 in result content")
				}
			}
		}
	})
}
