package models

import (
	"slices"
	"testing"
	"time"
)

func TestExperimentValidate(t *testing.T) {
	valid := func() *Experiment {
		return &Experiment{ID: "e1", Namespace: "ns", Name: "weights", Status: ExperimentRunning, CreatedAt: time.Unix(1, 0),
			Variants: []Variant{{Name: "control", Share: 0.3}, {Name: "b", Share: 0.3}, {Name: "c", Share: 0.4}}}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid experiment: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(e *Experiment)
		field string
	}{
		{"one variant", func(e *Experiment) { e.Variants = e.Variants[:1]; e.Variants[0].Share = 1 }, "variants"},
		{"shares sum below 1", func(e *Experiment) { e.Variants[2].Share = 0.3999 }, "variants"},
		{"duplicate name", func(e *Experiment) { e.Variants[1].Name = "control" }, "variants[1].name"},
		{"bad name", func(e *Experiment) { e.Variants[2].Name = "a b" }, "variants[2].name"},
		{"zero share", func(e *Experiment) { e.Variants[0].Share = 0; e.Variants[2].Share = 0.7 }, "variants[0].share"},
		{"bad policy", func(e *Experiment) { e.Variants[1].Overrides.ThresholdPolicy = "fixed:2" }, "variants[1].overrides.threshold_policy"},
		{"bad weights mode", func(e *Experiment) {
			e.Variants[1].Overrides.Weights = map[Mode]ScoreWeights{ModeStartup: {Relevance: 1}}
		}, "variants[1].overrides.weights.startup"},
		{"bad relevance model", func(e *Experiment) { e.Variants[1].Overrides.RelevanceModel = "maybe" }, "variants[1].overrides.relevance_model"},
		{"bad rerank", func(e *Experiment) { e.Variants[1].Overrides.Rerank = "auto" }, "variants[1].overrides.rerank"},
		{"no name", func(e *Experiment) { e.Name = " " }, "name"},
		{"bad status", func(e *Experiment) { e.Status = "paused" }, "status"},
		{"unknown primary metric", func(e *Experiment) { e.PrimaryMetric = "clicks" }, "primary_metric"},
		{"primary metric in capitals", func(e *Experiment) { e.PrimaryMetric = "Precision" }, "primary_metric"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := valid()
			tt.edit(e)
			err := e.Validate()
			if ErrorCode(err) != EINVALID || ErrorField(err) != tt.field {
				t.Errorf("got %v (field %q), want EINVALID on %q", err, ErrorField(err), tt.field)
			}
		})
	}
	// Shares within 1e-9 of 1 are accepted: thirds do not sum to 1 exactly.
	e := valid()
	e.Variants[0].Share, e.Variants[1].Share, e.Variants[2].Share = 1.0/3, 1.0/3, 1.0/3
	if err := e.Validate(); err != nil {
		t.Errorf("thirds: %v", err)
	}
}

func TestParsePrimaryMetric(t *testing.T) {
	for in, want := range map[string]string{"": "reward_per_turn", "reward_per_turn": "reward_per_turn",
		"used_per_turn": "used_per_turn", "precision": "precision", "dismissal_rate": "dismissal_rate",
		" precision": "", "surfaced_per_turn": "", "PRECISION": "", "reward": ""} {
		got, ok := ParsePrimaryMetric(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParsePrimaryMetric(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// FuzzParsePrimaryMetric: what is accepted is one of the listed metrics, and Validate
// refuses exactly what the parser refuses, naming primary_metric.
func FuzzParsePrimaryMetric(f *testing.F) {
	for _, s := range append([]string{"", " ", "precision\x00", "dismissal_rate ", "reward_per_turn\n"}, PrimaryMetrics...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := ParsePrimaryMetric(s)
		if ok && !slices.Contains(PrimaryMetrics, m) {
			t.Fatalf("ParsePrimaryMetric(%q) = %q: not a listed metric", s, m)
		}
		if ok && s != "" && m != s {
			t.Fatalf("ParsePrimaryMetric(%q) = %q: a metric is spelled one way", s, m)
		}
		e := &Experiment{ID: "e1", Namespace: "ns", Name: "n", Status: ExperimentRunning, CreatedAt: time.Unix(1, 0), PrimaryMetric: s,
			Variants: []Variant{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5}}}
		err := e.Validate()
		if ok != (err == nil) || (err != nil && ErrorField(err) != "primary_metric") {
			t.Fatalf("Validate with primary metric %q: %v; parser ok %v", s, err, ok)
		}
	})
}

func TestValidThresholdPolicy(t *testing.T) {
	for p, want := range map[string]bool{"": true, "bandit": true, "off": true, "fixed:default": true, "fixed:0.7": true,
		"fixed:1": true, "fixed:1.5": false, "fixed:-0.1": false, "fixed:": false, "greedy": false,
		// Decimal numbers only (issue 39): ParseFloat's other spellings are refused.
		"fixed:0.25": true, "fixed:1.0": true, "fixed:1e-400": false, "fixed:0x1p-2": false, "fixed:1e-1": false,
		"fixed:.5": false, "fixed:0.": false, "fixed:+0.5": false, "fixed:Inf": false, "fixed:0_5": false} {
		if got := ValidThresholdPolicy(p); got != want {
			t.Errorf("ValidThresholdPolicy(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestUpgradeThresholdPolicy(t *testing.T) {
	for in, want := range map[string]string{
		"fixed:1e-1": "fixed:0.1", "fixed:0x1p-2": "fixed:0.25", "fixed:1e-400": "fixed:0", "fixed:1E0": "fixed:1",
		"fixed:0.3": "fixed:0.3", "bandit": "bandit", "": "", "fixed:2e0": "fixed:2e0", "fixed:NaN": "fixed:NaN", "greedy": "greedy",
	} {
		got := UpgradeThresholdPolicy(in)
		if got != want {
			t.Errorf("UpgradeThresholdPolicy(%q) = %q, want %q", in, got, want)
		}
		if ValidThresholdPolicy(in) != ValidThresholdPolicy(got) && !ValidThresholdPolicy(got) {
			t.Errorf("UpgradeThresholdPolicy(%q) = %q, which is not valid", in, got)
		}
	}
}
