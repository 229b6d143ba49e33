package recall_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// runningExperiment answers recall's ExperimentSource with one experiment.
type runningExperiment struct{ e *models.Experiment }

func (r runningExperiment) Running(context.Context, string) (*models.Experiment, error) {
	return r.e, nil
}

// TestRecallInExperiment: a conversation gets the variant its hash assigns, whatever the
// request says; the variant's threshold policy is in force; every surfacing and the turn's
// decision record the variant, the experiment and the latency; a request that sets the
// threshold policy, or rerank when the variant sets it, is refused naming the field.
func TestRecallInExperiment(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	exp := &models.Experiment{ID: "exp1", Namespace: "a", Name: "policy", Status: models.ExperimentRunning, CreatedAt: t0,
		Variants: []models.Variant{
			{Name: "control", Share: 0.5},
			{Name: "fixed", Share: 0.5, Overrides: models.Overrides{ThresholdPolicy: "fixed:0.1", Rerank: "off", RelevanceModel: "off"}},
		}}
	emb := embed.NewLocal(0)
	ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return t0 }})
	p := recall.New(st, emb, recall.Options{Now: func() time.Time { return t0 }, Experiments: runningExperiment{exp}})
	// The bees fact leads its runner-up, who shares only Nadia's name, by about 0.8: its p_use
	// (≈ 0.98) clears every arm the control's bandit may draw. Alone it would have ≈ 0.289 and
	// surface only under arms 0.1 and 0.2, as the clock-seeded draw decides.
	if _, err := ing.Ingest(ctx, "a", []*models.Memory{mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0.Add(-time.Hour)),
		mem(models.KindFact, "Nadia's brother repairs fishing boats in the harbour.", t0.Add(-time.Hour))}); err != nil {
		t.Fatal(err)
	}
	// One conversation of each variant, found by the assignment itself.
	conv := map[string]string{}
	for i := 0; len(conv) < 2; i++ {
		c := "conv-" + strconv.Itoa(i)
		if v := experiment.Assign(exp, c).Name; conv[v] == "" {
			conv[v] = c
		}
	}
	for _, variant := range []string{"control", "fixed"} {
		resp, err := p.Recall(ctx, &recall.Request{Namespace: "a", ConversationID: conv[variant], Query: "where does Nadia keep her bees?"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Variant != variant || resp.Experiment != "exp1" {
			t.Errorf("%s: response variant %q of %q, want %s of exp1", conv[variant], resp.Variant, resp.Experiment, variant)
		}
		wantPolicy := predict.PolicyBandit
		if variant == "fixed" {
			wantPolicy = "fixed:0.1"
		}
		if resp.Policy != wantPolicy {
			t.Errorf("%s: policy %q, want %q", variant, resp.Policy, wantPolicy)
		}
		if variant == "fixed" && resp.Threshold != 0.1 {
			t.Errorf("fixed: threshold %v, want 0.1", resp.Threshold)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("%s: nothing recalled", variant)
		}
		ss, err := st.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "a", TurnID: resp.TurnID})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.Variant != variant || s.Experiment != "exp1" || s.LatencyMS <= 0 {
				t.Errorf("surfacing variant %q experiment %q latency %v, want %s, exp1, > 0", s.Variant, s.Experiment, s.LatencyMS, variant)
			}
		}
		var d *models.Decision
		if err := st.Update(ctx, func(tx models.Tx) error { d, err = tx.GetDecision("a", resp.TurnID); return err }); err != nil {
			t.Fatal(err)
		}
		if d.Variant != variant || d.Experiment != "exp1" || d.LatencyMS <= 0 {
			t.Errorf("decision variant %q experiment %q latency %v, want %s, exp1, > 0", d.Variant, d.Experiment, d.LatencyMS, variant)
		}
	}
	// Without a conversation there is no assignment: no variant.
	resp, err := p.Recall(ctx, &recall.Request{Namespace: "a", Query: "bees"})
	if err != nil || resp.Variant != "" {
		t.Errorf("no conversation: variant %q, err %v; want none", resp.Variant, err)
	}
	for _, tc := range []struct {
		req   recall.Request
		field string
	}{
		{recall.Request{Namespace: "a", ConversationID: conv["control"], Query: "bees", ThresholdPolicy: "off"}, "threshold_policy"},
		{recall.Request{Namespace: "a", ConversationID: conv["fixed"], Query: "bees", Rerank: "on"}, "rerank"},
	} {
		_, err := p.Recall(ctx, &tc.req)
		if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tc.field {
			t.Errorf("%+v: %v, want EINVALID naming %s", tc.req, err, tc.field)
		}
	}
	// The control variant sets no rerank policy: a rerank mode is still the bot's to ask.
	if _, err := p.Recall(ctx, &recall.Request{Namespace: "a", ConversationID: conv["control"], Query: "bees", Rerank: "off"}); err != nil {
		t.Errorf("control with rerank off: %v", err)
	}
}

func TestWithOverridesAfterSettings(t *testing.T) {
	div := 0.1
	o := recall.DefaultOptions().WithSettings(&models.Settings{FreshnessHalfLifeHours: 48, Diversity: &div})
	o = o.WithOverrides(models.Overrides{FreshnessHalfLifeHours: 12, RelevanceModel: "off"})
	if o.HalfLife != 12*time.Hour {
		t.Errorf("half-life %v, want the variant's 12h over the namespace's 48h", o.HalfLife)
	}
	if o.MMRLambda != 0.9 {
		t.Errorf("MMR lambda %v, want the namespace's 0.9 (diversity 0.1): the variant does not set it", o.MMRLambda)
	}
	if !o.NoModel {
		t.Error("relevance_model off did not take the model out")
	}
}

// TestThresholdPolicyGrammarsAgree: every policy models accepts in an experiment, predict
// parses, and the other way round, over a sample of both.
func TestThresholdPolicyGrammarsAgree(t *testing.T) {
	for _, p := range []string{"", "bandit", "off", "fixed:default", "fixed:0", "fixed:0.5", "fixed:1", "fixed:1.01", "fixed:-1",
		"fixed:", "fixed:x", "Bandit", " bandit", "fixed:1e-1", "on", "fixed:1e-400", "fixed:0x1p-2", "fixed:0.0000001"} {
		_, err := predict.ParsePolicy(p, "f")
		if (err == nil) != models.ValidThresholdPolicy(p) {
			t.Errorf("%q: predict says %v, models says %v", p, err, models.ValidThresholdPolicy(p))
		}
	}
}
