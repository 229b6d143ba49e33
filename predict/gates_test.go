package predict

import (
	"math"
	"testing"
	"time"
)

func TestDefaultThreshold(t *testing.T) {
	for typ, want := range map[string]float64{
		"debugging": 0.6, "help-seeking": 0.5, "exploration": 0.8, "casual": 0.9, "other": 0.7, "": 0.7, "sonnets": 0.7,
	} {
		if got := DefaultThreshold(typ); got != want {
			t.Errorf("DefaultThreshold(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestMomentum(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, c := range []struct {
		name  string
		times []time.Time
		want  float64
	}{
		{"none", nil, 0},
		{"one just now", []time.Time{now}, 0.2},
		{"ten in the window", []time.Time{ago(0), ago(30 * time.Second), ago(time.Minute), ago(90 * time.Second), ago(2 * time.Minute),
			ago(150 * time.Second), ago(3 * time.Minute), ago(4 * time.Minute), ago(270 * time.Second), ago(299 * time.Second)}, 2},
		{"exactly five minutes ago is out", []time.Time{ago(5 * time.Minute), ago(time.Minute)}, 0.2},
		{"old and future times are out", []time.Time{ago(time.Hour), now.Add(time.Second), ago(10 * time.Second)}, 0.2},
		{"a burst: 30 messages", burst(now, 30), 6},
	} {
		if got := Momentum(c.times, now); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Momentum = %v, want %v", c.name, got, c.want)
		}
	}
}

func burst(now time.Time, n int) []time.Time {
	ts := make([]time.Time, n)
	for i := range ts {
		ts[i] = now.Add(-time.Duration(i) * 5 * time.Second)
	}
	return ts
}

func TestGate(t *testing.T) {
	for _, c := range []struct {
		name       string
		conf, th   float64
		triggers   int
		momentum   float64
		dismissals float64
		ok         bool
		reason     string
	}{
		{"all pass", 0.8, 0.7, 2, 1, 0, true, ""},
		{"at every boundary", 0.7, 0.7, 2, 5, 2, true, ""},
		{"gate 1: below threshold", 0.69, 0.7, 5, 0, 0, false, ReasonThreshold},
		{"gate 2: one trigger", 0.9, 0.7, 1, 0, 0, false, ReasonTriggers},
		{"gate 3: fast conversation", 0.9, 0.7, 3, 5.2, 0, false, ReasonMomentum},
		{"gate 4: dismissed", 0.9, 0.7, 3, 1, 2.5, false, ReasonDismissals},
		{"first failing gate wins", 0.1, 0.7, 0, 9, 9, false, ReasonThreshold},
		{"NaN confidence fails", math.NaN(), 0.7, 3, 1, 0, false, ReasonThreshold},
		{"NaN momentum fails", 0.9, 0.7, 3, math.NaN(), 0, false, ReasonMomentum},
		{"NaN dismissals fail", 0.9, 0.7, 3, 1, math.NaN(), false, ReasonDismissals},
	} {
		ok, reason := Gate(c.conf, c.th, c.triggers, c.momentum, c.dismissals)
		if ok != c.ok || reason != c.reason {
			t.Errorf("%s: Gate = %v, %q; want %v, %q", c.name, ok, reason, c.ok, c.reason)
		}
	}
}

// TestGatesCheck covers the limits only Check exposes: the activation alternative to
// triggers, limits that do not apply (NoLimit), and the cooldown gate — ambient recall's
// volunteer gate is Gates{MinTriggers: 2, MinActivation: 0.5, NoLimit, NoLimit}.
func TestGatesCheck(t *testing.T) {
	ambient := Gates{MinTriggers: 2, MinActivation: 0.5, MaxMomentum: NoLimit, MaxRecentDismissals: NoLimit}
	for _, c := range []struct {
		name   string
		g      Gates
		th     float64
		s      Signals
		ok     bool
		reason string
	}{
		{"associated strongly enough", ambient, 0.7, Signals{Score: 0.72, Activation: 0.8}, true, ""},
		{"activation exactly at the minimum", ambient, 0.7, Signals{Score: 0.7, Activation: 0.5}, true, ""},
		{"weak association, no triggers", ambient, 0.7, Signals{Score: 0.9, Activation: 0.49}, false, ReasonTriggers},
		{"weak association, two triggers", ambient, 0.7, Signals{Score: 0.9, Activation: 0.1, Triggers: 2}, true, ""},
		{"NaN activation is no alternative", ambient, 0.7, Signals{Score: 0.9, Activation: math.NaN()}, false, ReasonTriggers},
		{"no momentum limit", ambient, 0.7, Signals{Score: 0.9, Activation: 1, Momentum: 60}, true, ""},
		{"no dismissal limit", ambient, 0.7, Signals{Score: 0.9, Activation: 1, RecentDismissals: 7}, true, ""},
		{"NaN momentum still fails", ambient, 0.7, Signals{Score: 0.9, Activation: 1, Momentum: math.NaN()}, false, ReasonMomentum},
		{"in cooldown", ambient, 0.7, Signals{Score: 0.9, Activation: 1, InCooldown: true}, false, ReasonCooldown},
		{"threshold before cooldown", ambient, 0.7, Signals{Score: 0.3, Activation: 1, InCooldown: true}, false, ReasonThreshold},
		{"proactive: activation does not replace triggers", ProactiveGates(), 0.7, Signals{Score: 0.9, Activation: 1, Triggers: 1}, false, ReasonTriggers},
		{"proactive: cooldown applies too", ProactiveGates(), 0.7, Signals{Score: 0.9, Triggers: 2, InCooldown: true}, false, ReasonCooldown},
	} {
		ok, reason := c.g.Check(c.th, c.s)
		if ok != c.ok || reason != c.reason {
			t.Errorf("%s: Check = %v, %q; want %v, %q", c.name, ok, reason, c.ok, c.reason)
		}
	}
}
