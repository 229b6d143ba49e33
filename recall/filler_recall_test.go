package recall_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
)

// Filler never decides (issue 41, failure 3): in a new namespace of five memories the message
// shares "place", a common English word, with a short memory and "harmonica", a rare one,
// with a long memory. Search and ambient recall both put the harmonica first, with the
// higher p_use. (Before the general prior, the dinner memory came first at p_use 0.76 in
// search and 0.70 in ambient recall, the harmonica at 0.17.)
//
// Ambient recall's p_use gate is off: the harmonica, BM25 over the best 1 but no lead (the
// dinner's cosine gives it the better absolute match, 0.170 to 0.100, and so the turn's top
// and its lead of 0.070), has p_use σ(−2.213) ≈ 0.099 — the curve at match 0.0997, −5.400,
// plus coverage 1.5·0.125 and BM25 3·1 — against the dinner's σ(−2.378) ≈ 0.085 (BM25 0.816,
// the lead 5·0.070), and even the bandit's lowest arm, 0.1, would hide both. What is tested
// is the order and the p_use, not the threshold.
func TestFillerDoesNotDecideRecall(t *testing.T) {
	const ask = "Do you know a place to fix a harmonica?"
	for _, mode := range []models.Mode{models.ModeSearch, models.ModeAmbient} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			for i, s := range []string{
				"We could grab dinner at my place on Friday.",
				"Lena has been learning the harmonica from online videos since her brother gave her his old blues harp for her birthday.",
				"The bakery on Elm Street closes early on Sundays.",
				"Marcus is allergic to peanuts.",
				"The printer at work keeps jamming.",
			} {
				e.add(t, "a", mem(models.KindFact, s, t0.Add(-time.Duration(48+i)*time.Hour)))
			}
			req := &recall.Request{Namespace: "a", Mode: mode, ConversationID: "c1", Explain: true, ThresholdPolicy: predict.PolicyOff}
			if mode == models.ModeSearch {
				req.Query = ask
			} else {
				req.Messages = []recall.Message{{Speaker: "user", Content: "hi there"}, {Speaker: "user", Content: ask}}
			}
			resp, err := e.p.Recall(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range resp.Results {
				got = append(got, r.Content)
			}
			if len(got) == 0 || !strings.Contains(got[0], "harmonica") {
				t.Fatalf("results = %q, want the harmonica memory first", got)
			}
			if h := resp.Results[0]; mode == models.ModeAmbient && (h.Components.Top != 0 || h.Components.Margin != 0 || math.Abs(h.PUse-0.09854672787751874) > 1e-9) {
				t.Errorf("harmonica: p_use %v, top %v, margin %v; want σ(−2.213) ≈ 0.099, not the top and no lead", h.PUse, h.Components.Top, h.Components.Margin)
			}
			for _, r := range resp.Results[1:] {
				if r.PUse >= resp.Results[0].PUse {
					t.Errorf("%q has p_use %.2f, not below the harmonica's %.2f", r.Content, r.PUse, resp.Results[0].PUse)
				}
			}
		})
	}
}
