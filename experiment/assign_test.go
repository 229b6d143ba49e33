package experiment

import (
	"math"
	"strconv"
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestUnitIsStable(t *testing.T) {
	// Literal values, computed apart from this code (Python's hashlib: SHA-256 of
	// exp + b"\0" + conv, first 8 bytes big-endian >> 11, / 2^53). A change of hash, byte
	// order or separator would move every conversation to another variant mid-experiment.
	for _, tt := range []struct {
		exp, conv string
		want      float64
	}{
		{"exp-1", "conv-1", 0.8916092875868218},
		{"exp-1", "conv-2", 0.6834205375664258},
		{"exp-2", "conv-1", 0.1533177605144369},
	} {
		if got := Unit(tt.exp, tt.conv); got != tt.want {
			t.Errorf("Unit(%q, %q) = %.17g, want %.17g", tt.exp, tt.conv, got, tt.want)
		}
	}
}

func TestAssignIsStableAndFollowsShares(t *testing.T) {
	e := &models.Experiment{ID: "01JEXPERIMENT", Variants: []models.Variant{
		{Name: "control", Share: 0.5}, {Name: "b", Share: 0.3}, {Name: "c", Share: 0.2}}}
	// exp-1/conv-1 has unit 0.8916…: past 0.5 + 0.3, so the third variant.
	if got := Assign(&models.Experiment{ID: "exp-1", Variants: e.Variants}, "conv-1").Name; got != "c" {
		t.Errorf("exp-1/conv-1 in %s, want c", got)
	}
	const n = 100_000
	counts := map[string]int{}
	for i := range n {
		conv := "conv-" + strconv.Itoa(i)
		v := Assign(e, conv)
		if again := Assign(e, conv); again.Name != v.Name {
			t.Fatalf("%s moved from %s to %s", conv, v.Name, again.Name)
		}
		counts[v.Name]++
	}
	// Each count is Binomial(n, share): 5 standard deviations is at most ~0.8 % of n here,
	// a bound a correct hash misses about once in 3 million runs.
	for _, v := range e.Variants {
		sd := math.Sqrt(n * v.Share * (1 - v.Share))
		if diff := math.Abs(float64(counts[v.Name]) - n*v.Share); diff > 5*sd {
			t.Errorf("variant %s: %d of %d conversations, want %.0f ± %.0f", v.Name, counts[v.Name], n, n*v.Share, 5*sd)
		}
	}
}

func TestAssignRoundingGap(t *testing.T) {
	// Shares that sum to 1 − 1e-10 (valid) leave a gap at the top that goes to the last variant.
	e := &models.Experiment{ID: "x", Variants: []models.Variant{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5 - 1e-10}}}
	for i := range 1000 {
		if v := Assign(e, strconv.Itoa(i)); v == nil {
			t.Fatal("no variant")
		}
	}
	if Assign(&models.Experiment{ID: "x"}, "c") != nil {
		t.Error("an experiment without variants assigned one")
	}
}
