package recall_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
)

// TestThresholdDecisions records one decision per ambient turn, empty turns included, with
// the arm, its probability and how many memories surfaced; fixed policies are certain; a
// search turn makes none; a bad policy is a 400 naming threshold_policy; a turn id sent again
// keeps its first decision.
//
// The bees fact surfaces whichever arm the bandit draws: the brother, who shares only
// Nadia's name, is its runner-up, so it leads by about 0.8 and its p_use (≈ 0.98) clears
// the highest arm, 0.5, while his (≈ 0.002) clears none. Alone, with nothing to lead, it
// would have σ(−6.8 + 5.9) ≈ 0.289 and surface only under arms 0.1 and 0.2.
func TestThresholdDecisions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.add(t, "a", mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0.Add(-time.Hour)),
		mem(models.KindFact, "Nadia's brother repairs fishing boats in the harbour.", t0.Add(-time.Hour)))
	ask := func(turn, query, policy string, mode models.Mode) *recall.Response {
		t.Helper()
		resp, err := e.p.Recall(ctx, &recall.Request{Namespace: "a", ConversationID: "c1", TurnID: turn, Mode: mode,
			Query: query, ThresholdPolicy: policy, ConversationType: models.ConvDebugging})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	r1 := ask("t1", "where does Nadia keep her bees?", "", models.ModeAmbient)
	if len(r1.Results) != 1 || r1.Policy != predict.PolicyBandit || !slices.Contains(predict.Arms, r1.Threshold) ||
		!(r1.ArmProb > 0 && r1.ArmProb <= 1) {
		t.Fatalf("bandit turn: %d results, policy %q, threshold %v, probability %v", len(r1.Results), r1.Policy, r1.Threshold, r1.ArmProb)
	}
	ask("t2", "quantum chromodynamics lecture notes", predict.PolicyFixedDefault, models.ModeAmbient) // nothing matches
	ask("t3", "bees", "fixed:0.85", models.ModeAmbient)
	ask("t4", "bees", "", models.ModeSearch)
	ask("t1", "bees again", "off", models.ModeAmbient) // the same turn id again
	ds, err := e.store.FindDecisions(ctx, models.DecisionFilter{Namespace: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*models.Decision{}
	for _, d := range ds {
		got[d.TurnID] = d
	}
	if len(ds) != 3 || got["t4"] != nil {
		t.Fatalf("decisions %v, want t1, t2, t3 (none for a search)", ds)
	}
	if d := got["t1"]; d.Policy != predict.PolicyBandit || d.Arm < 0 || predict.Arms[d.Arm] != d.Threshold ||
		d.Prob != r1.ArmProb || d.Surfaced != 1 || d.ConvType != models.ConvDebugging || d.Rewarded {
		t.Errorf("t1 = %+v, want the bandit's first decision, 1 surfaced", d)
	}
	if d := got["t2"]; d.Policy != predict.PolicyFixedDefault || d.Threshold != 0.2 || d.Arm != 1 || d.Prob != 1 || d.Surfaced != 0 {
		t.Errorf("t2 = %+v, want fixed:default 0.2 (arm 1: debugging on the p_use scale), probability 1, nothing surfaced", d)
	}
	if d := got["t3"]; d.Policy != "fixed:0.85" || d.Threshold != 0.85 || d.Arm != -1 || d.Prob != 1 {
		t.Errorf("t3 = %+v, want fixed 0.85, no arm", d)
	}
	// The surfacing carries the arm's probability for off-policy replay.
	s, err := e.store.GetSurfacing(ctx, "a", r1.Results[0].SurfacingID)
	if err != nil || s.ArmProb != r1.ArmProb || s.Threshold != r1.Threshold {
		t.Errorf("surfacing = %+v, %v; want threshold %v, probability %v", s, err, r1.Threshold, r1.ArmProb)
	}
	_, err = e.p.Recall(ctx, &recall.Request{Namespace: "a", Query: "bees", ThresholdPolicy: "fixed:1.5"})
	if me, ok := err.(*models.Error); !ok || me.Code != models.EINVALID || me.Field != "threshold_policy" {
		t.Errorf("bad policy: %v, want EINVALID on threshold_policy", err)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, c := range []struct {
		in, name string
		fixed    float64
		ok       bool
	}{
		{"", "bandit", 0, true}, {"bandit", "bandit", 0, true}, {"off", "off", 0, true},
		{"fixed:default", "fixed:default", -1, true}, {"fixed:0.70", "fixed:0.7", 0.7, true}, {"fixed:0", "fixed:0", 0, true},
		{"fixed:1.01", "", 0, false}, {"fixed:", "", 0, false}, {"fixed:NaN", "", 0, false}, {"greedy", "", 0, false},
		{"fixed:1e-400", "", 0, false}, {"fixed:0x1p-2", "", 0, false}, {"fixed:0.0000001", "fixed:0.0000001", 1e-7, true},
	} {
		p, err := predict.ParsePolicy(c.in, "threshold_policy")
		if (err == nil) != c.ok || p.Name != c.name || p.Fixed != c.fixed {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %q %v ok=%v", c.in, p, err, c.name, c.fixed, c.ok)
		}
	}
}

// Selective ambient recall (docs/design.md#threshold-and-rerank): in ambient mode a direct match surfaces only when
// its p_use clears the threshold in force. A fresh namespace's clear best match clears the
// "other" default (0.3) and its runners-up do not; a threshold above it leaves the turn and
// its context block empty; off and an explicit search are not gated.
func TestAmbientGatesOnPUse(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.add(t, "a",
		mem(models.KindFact, "The harbor ferry to Skye leaves at seven every morning.", t0.Add(-time.Hour)),
		mem(models.KindFact, "The harbor cafe opens late on Sundays.", t0.Add(-time.Hour)),
		mem(models.KindFact, "Morning walks along the harbor wall are Ravi's habit.", t0.Add(-time.Hour)))
	ask := func(conv, policy string, mode models.Mode) *recall.Response {
		t.Helper()
		resp, err := e.p.Recall(ctx, &recall.Request{Namespace: "a", ConversationID: conv, Mode: mode, Explain: true,
			Query: "when does the harbor ferry to Skye leave", ThresholdPolicy: policy, ConversationType: models.ConvOther, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	r := ask("c1", predict.PolicyFixedDefault, models.ModeAmbient)
	if r.Threshold != 0.3 || len(r.Results) != 1 || !strings.Contains(r.Results[0].Content, "ferry") ||
		!(r.Results[0].PUse >= 0.3) || r.Results[0].Components.Top != 1 {
		t.Fatalf("fixed:default: threshold %v, results %+v; want the ferry alone, the turn's top, p_use ≥ 0.3", r.Threshold, r.Results)
	}
	if r := ask("c2", "fixed:0.99", models.ModeAmbient); len(r.Results) != 0 || r.Context != "" {
		t.Errorf("fixed:0.99: %d results, context %q; want an empty turn", len(r.Results), r.Context)
	}
	if r := ask("c3", predict.PolicyOff, models.ModeAmbient); len(r.Results) < 2 {
		t.Errorf("off: %d results, want every match", len(r.Results))
	}
	if r := ask("c4", "fixed:0.95", models.ModeSearch); len(r.Results) < 2 {
		t.Errorf("search: %d results, want every match (search is never gated)", len(r.Results))
	}
}
