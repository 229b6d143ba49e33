package predict

import (
	"fmt"
	"math"
	"testing"
)

// proactiveModel learns "rain → umbrella" perfectly: every [rain cloud] turn is followed by
// an [umbrella] turn, and the memory "m-umbrella" is used there.
func proactiveModel() (*Transitions, *Usage) {
	tr, us := NewTransitions(), NewUsage()
	var hist [][]string
	for i := range 20 {
		cur := []string{"rain", "cloud"}
		if i%2 == 1 {
			cur = []string{"umbrella"}
			us.Record("m-umbrella", hist)
		}
		tr.Learn(hist, cur)
		hist = append(hist, cur)
	}
	return tr, us
}

// TestProactiveGates stops one prediction with each gate alone and checks the verdict names
// it; the others of the table pass.
func TestProactiveGates(t *testing.T) {
	tr, us := proactiveModel()
	recent := [][]string{{"umbrella"}, {"rain", "cloud"}}
	good := Candidate{ID: "m-umbrella", Concepts: []string{"umbrella"}}
	for _, c := range []struct {
		name      string
		cand      Candidate
		recent    [][]string
		momentum  float64
		threshold float64
		blocked   string
	}{
		{"passes every gate", good, recent, 1, 0.7, ""},
		{"gate 1: confidence below the threshold", good, recent, 1, 0.999, ReasonThreshold},
		{"gate 1: no predicted topic", Candidate{ID: "m-umbrella", Concepts: []string{"sun"}}, recent, 1, 0.7, ReasonThreshold},
		{"gate 2: one trigger match", good, [][]string{{"rain"}}, 1, 0.7, ReasonTriggers},
		{"gate 3: momentum above 5 per minute", good, recent, 5.2, 0.7, ReasonMomentum},
		{"gate 4: dismissed recently", Candidate{ID: "m-umbrella", Concepts: []string{"umbrella"}, RecentDismissals: 3}, recent, 1, 0.7, ReasonDismissals},
		{"cooldown", Candidate{ID: "m-umbrella", Concepts: []string{"umbrella"}, InCooldown: true}, recent, 1, 0.7, ReasonCooldown},
		{"own triggers count too", Candidate{ID: "other", Concepts: []string{"umbrella"}, Triggers: []string{"rain", "cloud"}}, recent, 1, 0.7, ""},
	} {
		got := Proactive(tr, us, c.recent, []Candidate{c.cand}, c.momentum, c.threshold)
		if len(got) != 1 {
			t.Fatalf("%s: %d verdicts, want 1", c.name, len(got))
		}
		if p := got[0]; p.Surfaced != (c.blocked == "") || p.Blocked != c.blocked {
			t.Errorf("%s: surfaced %v blocked by %q (confidence %.3f, matches %v); want blocked by %q",
				c.name, p.Surfaced, p.Blocked, p.Confidence, p.Matches, c.blocked)
		}
	}
	// A passing prediction says why: the topic, what predicted it, the trigger matches, the
	// lead. The learned triggers are rain and cloud (10 uses of 10, lead 1) and umbrella itself
	// (the previous umbrella turn, 2 back, before 9 uses): lead (10 + 10 + 18)/29.
	p := Proactive(tr, us, recent, []Candidate{good}, 1, 0.7)[0]
	if p.Topic != "umbrella" || p.From != "cloud" || len(p.Matches) != 3 || math.Abs(p.Lead-38.0/29) > 1e-12 {
		t.Errorf("verdict %+v: want topic umbrella from cloud (ties by name), 3 matches, lead 38/29", p)
	}
	// P(umbrella | cloud) = (10 + 2·base)/(10 + 2), base = 1 − (1 − 10/20)³ = 0.875.
	if want := (10 + 2*0.875) / 12; math.Abs(p.Confidence-want) > 1e-12 {
		t.Errorf("confidence %v, want %v", p.Confidence, want)
	}
}

// TestProactiveLimit surfaces at most MaxProactive and marks the rest over_limit.
func TestProactiveLimit(t *testing.T) {
	tr, us := proactiveModel()
	var cands []Candidate
	for i := range 5 {
		cands = append(cands, Candidate{ID: fmt.Sprintf("m%d", i), Concepts: []string{"umbrella"}, Triggers: []string{"rain", "cloud"}})
	}
	got := Proactive(tr, us, [][]string{{"rain", "cloud"}}, cands, 0, 0.5)
	n := 0
	for i, p := range got {
		if p.Surfaced {
			n++
			if i >= MaxProactive {
				t.Errorf("surfaced verdict at position %d", i)
			}
		} else if p.Blocked != ReasonLimit {
			t.Errorf("%s blocked by %q, want %q", p.MemoryID, p.Blocked, ReasonLimit)
		}
	}
	if n != MaxProactive || got[0].MemoryID != "m0" {
		t.Errorf("%d surfaced, first %s; want %d, m0 (ties by id)", n, got[0].MemoryID, MaxProactive)
	}
	if Proactive(tr, us, nil, cands, 0, 0.5) != nil {
		t.Error("no recent turns should predict nothing")
	}
}
