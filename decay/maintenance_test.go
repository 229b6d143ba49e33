package decay

import (
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func TestDecayEdge(t *testing.T) {
	now := t0.Add(400 * Day)
	old := now.Add(-EdgeIdleAfter)
	for _, c := range []struct {
		name        string
		e           models.Edge
		want        float64
		wantChanged bool
	}{
		{"idle six months: −0.05", models.Edge{Weight: 0.8, LastCoOccurred: old}, 0.75, true},
		{"idle five months: unchanged", models.Edge{Weight: 0.8, LastCoOccurred: now.Add(-150 * Day)}, 0.8, false},
		{"decayed 29 days ago: unchanged", models.Edge{Weight: 0.8, LastCoOccurred: old, LastDecayed: now.Add(-29 * Day)}, 0.8, false},
		{"decayed 30 days ago: −0.05", models.Edge{Weight: 0.8, LastCoOccurred: old, LastDecayed: now.Add(-30 * Day)}, 0.75, true},
		{"near the floor: to the floor", models.Edge{Weight: 0.12, LastCoOccurred: old}, 0.1, true},
		{"at the floor: unchanged", models.Edge{Weight: 0.1, LastCoOccurred: old}, 0.1, false},
		{"under the floor: never raised", models.Edge{Weight: 0.05, LastCoOccurred: old}, 0.05, false},
		{"never co-occurred (structural): unchanged", models.Edge{Weight: 0.8}, 0.8, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := c.e
			changed := DecayEdge(&e, now)
			if changed != c.wantChanged {
				t.Errorf("changed = %v, want %v", changed, c.wantChanged)
			}
			near(t, "weight", e.Weight, c.want, 1e-12)
			if changed && !e.LastDecayed.Equal(now) {
				t.Errorf("LastDecayed = %v, want %v", e.LastDecayed, now)
			}
			if !changed && !e.LastDecayed.Equal(c.e.LastDecayed) {
				t.Errorf("LastDecayed moved without a change: %v", e.LastDecayed)
			}
			// Idempotent within the period.
			again := e
			if DecayEdge(&again, now) || again != e {
				t.Errorf("second application at the same now changed the edge: %+v", again)
			}
		})
	}
	if DecayEdge(nil, now) {
		t.Error("DecayEdge(nil) reported a change")
	}
}

// TestDecayEdgeMonthly runs the job daily for a year on one stale edge: one step per 30 days.
func TestDecayEdgeMonthly(t *testing.T) {
	e := models.Edge{Weight: 1, LastCoOccurred: t0}
	steps := 0
	for d := 0; d < 365; d++ {
		if DecayEdge(&e, t0.Add(EdgeIdleAfter+time.Duration(d)*Day)) {
			steps++
		}
	}
	// Days 0, 30, …, 360 of the stale period: 13 steps.
	if steps != 13 {
		t.Errorf("steps = %d, want 13", steps)
	}
	near(t, "weight", e.Weight, 1-13*0.05, 1e-9)
}

func TestHalveDismissals(t *testing.T) {
	for _, c := range []struct {
		in, want    float64
		wantChanged bool
	}{
		{4, 2, true},
		{3, 1.5, true},
		{0.02, 0.01, true},
		{0.019, 0, true}, // 0.0095 < 0.01
		{0, 0, false},
		{-1, 0, true},
	} {
		m := &models.Memory{RecentDismissals: c.in}
		changed := HalveDismissals(m)
		if changed != c.wantChanged || m.RecentDismissals != c.want {
			t.Errorf("HalveDismissals(%v) = %v, %v; want %v, %v", c.in, m.RecentDismissals, changed, c.want, c.wantChanged)
		}
	}
	// A heavily dismissed memory (gate 4 blocks above 2) is let back after two weeks.
	m := &models.Memory{RecentDismissals: 6}
	weeks := 0
	for m.RecentDismissals > 2 {
		HalveDismissals(m)
		weeks++
	}
	if weeks != 2 {
		t.Errorf("weeks to pass gate 4 from 6 dismissals = %d, want 2", weeks)
	}
}
