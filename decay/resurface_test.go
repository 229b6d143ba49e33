package decay

import (
	"math"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func TestTriggerMatches(t *testing.T) {
	m := &models.Memory{
		Triggers: []string{"Postgres", "vacuum  FULL", ""},
		Concepts: []string{"postgres", "Index bloat", "autovacuum"},
	}
	for _, c := range []struct {
		name    string
		context []string
		want    int
	}{
		{"none", []string{"kubernetes", "helm"}, 0},
		{"one", []string{"kubernetes", "POSTGRES"}, 1},
		{"normalized, distinct", []string{"postgres", "Postgres!", "vacuum full", "index-bloat"}, 2},
		{"trigger and concept", []string{"autovacuum", "index bloat", "vacuum, full"}, 3},
		{"empty context names never match the empty trigger", []string{"", "  ", "?"}, 0},
		{"nil context", nil, 0},
	} {
		if got := TriggerMatches(m, c.context); got != c.want {
			t.Errorf("%s: TriggerMatches = %d, want %d", c.name, got, c.want)
		}
	}
	if TriggerMatches(nil, []string{"x"}) != 0 {
		t.Error("nil memory matched")
	}
}

// FSRS-6 retrievability R(t, S) = (1 + F·t/S)^(−w20), F = 0.9^(−1/w20) − 1, with the default
// w20 = 0.1542 (open-spaced-repetition, "The Algorithm", FSRS-6); computed by hand:
const (
	forgotten7of2306 = 0.191690060 // 1 − R(7, 2.3065): seven days on the prior curve, S0(Good)
	forgotten4of2306 = 0.142014211 // 1 − R(4, 2.3065): four days after a first Good review
)

func TestResurfaceRule(t *testing.T) {
	f := NewFSRS()
	now := t0.Add(7 * Day)
	used := func(m *models.Memory, at time.Duration, n int) *models.Memory {
		for range n {
			m.UsageCount++
			m.LastUsed = t0.Add(at)
			m.Confidence += 0.1
			f.OnEvent(m, models.EventUsed, t0.Add(at))
		}
		return m
	}
	mem := func(k models.Kind, imp float64) *models.Memory {
		return &models.Memory{ID: string(k), Kind: k, Importance: imp, CreatedAt: t0, Confidence: 0.5}
	}
	ignored := mem(models.KindTurn, 0)
	f.OnEvent(ignored, models.EventIgnored, t0.Add(Day))
	f.OnEvent(ignored, models.EventIgnored, t0.Add(2*Day))
	sensitive := used(mem(models.KindTurn, 0), 3*Day, 1)
	sensitive.Sensitive = true
	retired := mem(models.KindFact, 0.9)
	retired.InvalidAt = t0.Add(5 * Day)
	cooling := mem(models.KindFact, 0.9)
	f.OnEvent(cooling, models.EventDismissed, t0.Add(3*Day))
	chunk := mem(models.KindFact, 0.9)
	chunk.ParentID = "p"
	for _, c := range []struct {
		name string
		m    *models.Memory
		ok   bool
		want float64 // Worth × (1 − R(now))
	}{
		{"a turn only said: never", mem(models.KindTurn, 0), false, 0},
		{"a turn only ignored: never", ignored, false, 0},
		{"importance just under the bar: never", mem(models.KindTurn, 0.69), false, 0},
		{"a summary: never", mem(models.KindSummary, 0.5), false, 0},
		{"a document: never", mem(models.KindDocument, 0), false, 0},
		{"importance at the bar, on the prior curve", mem(models.KindTurn, 0.7), true, 0.5 * 0.25 * 0.7 * forgotten7of2306},
		{"a fact counts with importance 0.5", mem(models.KindFact, 0), true, 0.5 * 0.25 * 0.5 * forgotten7of2306},
		{"a fact keeps a higher importance", mem(models.KindFact, 0.9), true, 0.5 * 0.25 * 0.9 * forgotten7of2306},
		{"an anchor", mem(models.KindAnchor, 0), true, 0.5 * 0.25 * 0.5 * forgotten7of2306},
		{"an insight", mem(models.KindInsight, 0), true, 0.5 * 0.25 * 0.5 * forgotten7of2306},
		{"a crystal", mem(models.KindCrystal, 0), true, 0.5 * 0.25 * 0.5 * forgotten7of2306},
		{"a turn used at day 3, due at 5.3", used(mem(models.KindTurn, 0), 3*Day, 1), true, 0.6 * 1 * forgotten4of2306},
		{"a turn used three times at day 3 (same day: S stays S0)", used(mem(models.KindTurn, 0), 3*Day, 3), true, 0.8 * 3 * forgotten4of2306},
		{"a fact used at day 3", used(mem(models.KindFact, 0.9), 3*Day, 1), true, 0.6 * (1 + 0.25*0.9) * forgotten4of2306},
		{"a turn used at day 6: not due before 8.3", used(mem(models.KindTurn, 0), 6*Day, 1), false, 0},
		{"used but sensitive", sensitive, false, 0},
		{"important but no longer true", retired, false, 0},
		{"important but in its dismissal cooldown", cooling, false, 0},
		{"a chunk", chunk, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, due, ok := Resurface(f, c.m, now)
			if ok != c.ok {
				t.Fatalf("Resurface ok = %v, want %v (value %v)", ok, c.ok, v)
			}
			if !ok {
				return
			}
			near(t, "value", v, c.want, 1e-8)
			if !due.Equal(f.NextDue(c.m)) || due.After(now) {
				t.Errorf("due = %v, want NextDue %v, not after now", due, f.NextDue(c.m))
			}
		})
	}
}

// TestResurfaceValueOrder: among due memories a use outweighs any declared importance, more
// uses outweigh fewer, and at equal worth the more forgotten comes first.
func TestResurfaceValueOrder(t *testing.T) {
	f := NewFSRS()
	now := t0.Add(30 * Day)
	at := func(d time.Duration, uses int, k models.Kind, imp float64) *models.Memory {
		m := &models.Memory{Kind: k, Importance: imp, CreatedAt: t0, Confidence: 0.5, UsageCount: uses}
		if uses > 0 {
			m.LastUsed = t0.Add(d)
			f.OnEvent(m, models.EventUsed, t0.Add(d))
		}
		return m
	}
	order := []*models.Memory{
		at(20*Day, 3, models.KindTurn, 0), // three uses
		at(20*Day, 1, models.KindTurn, 0), // one use, ten days ago
		at(25*Day, 1, models.KindTurn, 0), // one use, five days ago: less forgotten
		at(0, 0, models.KindFact, 1),      // important, thirty days on the prior curve
		at(0, 0, models.KindFact, 0),      // a fact of no stated importance
	}
	prev := math.Inf(1)
	for i, m := range order {
		v, _, ok := Resurface(f, m, now)
		if !ok || !(v < prev) {
			t.Errorf("memory %d: value %v (ok %v), want below the previous %v", i, v, ok, prev)
		}
		prev = v
	}
}

func TestResurfaceLinear(t *testing.T) {
	l := Linear(0)
	m := &models.Memory{Kind: models.KindTurn, CreatedAt: t0, Confidence: 0.7, UsageCount: 1, LastUsed: t0.Add(Day)}
	// Due 0.7·2 = 1.4 days after the use; at day 5 the decay score is 4 / 2 = 2.
	v, due, ok := Resurface(l, m, t0.Add(5*Day))
	if !ok || math.Abs(v-0.7*1*2) > 1e-12 || !due.Equal(t0.Add(Day+days2d(1.4))) {
		t.Errorf("Resurface = %v, %v, %v; want 1.4, day 2.4, true", v, due, ok)
	}
	if _, _, ok := Resurface(l, &models.Memory{Kind: models.KindTurn, CreatedAt: t0, Confidence: 0.5}, t0.Add(5*Day)); ok {
		t.Error("linear: a turn never used was queued")
	}
}
