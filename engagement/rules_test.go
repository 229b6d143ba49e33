package engagement

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

var at = time.Date(2025, 5, 2, 14, 0, 0, 0, time.UTC)

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 || got != got {
		t.Errorf("%s = %.15g, want %.15g", name, got, want)
	}
}

func TestApplyConfidence(t *testing.T) {
	r := DefaultRules()
	for _, c := range []struct {
		ev       models.EventType
		from, to float64
	}{
		{models.EventUsed, 0.5, 0.6},
		{models.EventHelpful, 0.5, 0.6},
		{models.EventUsed, 0.95, 1.0},   // cap
		{models.EventHelpful, 1.0, 1.0}, // at the cap
		{models.EventUsed, 0, 0.1},
		{models.EventIgnored, 0.5, 0.48},
		{models.EventIgnored, 0.31, 0.3},  // floor
		{models.EventIgnored, 0.3, 0.3},   // at the floor
		{models.EventIgnored, 0.25, 0.25}, // below the floor: never raised (the source gave 0.3)
		{models.EventDismissed, 0.5, 0.35},
		{models.EventDismissed, 0.3, 0.2},  // floor
		{models.EventDismissed, 0.2, 0.2},  // at the floor
		{models.EventDismissed, 0.1, 0.1},  // below the floor: never raised
		{models.EventDismissed, 1.0, 0.85}, // from the top
		{"shrugged", 0.5, 0.5},             // unknown: nothing
	} {
		m := &models.Memory{Confidence: c.from}
		r.ApplyToMemory(m, c.ev, nil, at)
		near(t, string(c.ev)+" from "+ftoa(c.from), m.Confidence, c.to)
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestApplyCounters(t *testing.T) {
	r := DefaultRules()
	earlier := at.Add(-time.Hour)
	for _, c := range []struct {
		name       string
		ev         models.EventType
		at         time.Time
		usage      int
		lastUsed   time.Time
		dismissals float64
	}{
		{"used", models.EventUsed, at, 4, at, 1.5},
		{"helpful", models.EventHelpful, at, 4, at, 1.5},
		{"late used keeps the newer LastUsed", models.EventUsed, earlier.Add(-time.Hour), 4, earlier, 1.5},
		{"ignored", models.EventIgnored, at, 3, earlier, 2.5},
		{"dismissed", models.EventDismissed, at, 3, earlier, 3.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &models.Memory{Confidence: 0.5, UsageCount: 3, LastUsed: earlier, RecentDismissals: 1.5}
			r.ApplyToMemory(m, c.ev, []string{"Go"}, c.at)
			if m.UsageCount != c.usage || !m.LastUsed.Equal(c.lastUsed) || m.RecentDismissals != c.dismissals {
				t.Errorf("UsageCount, LastUsed, RecentDismissals = %d, %v, %v; want %d, %v, %v",
					m.UsageCount, m.LastUsed, m.RecentDismissals, c.usage, c.lastUsed, c.dismissals)
			}
			wantCtx := 0
			if c.ev == models.EventDismissed {
				wantCtx = 1
			}
			if len(m.IrrelevantContexts) != wantCtx {
				t.Errorf("IrrelevantContexts = %v, want %d sets", m.IrrelevantContexts, wantCtx)
			}
		})
	}
}

func TestIrrelevantContexts(t *testing.T) {
	r := DefaultRules()
	m := &models.Memory{Confidence: 0.5}
	r.ApplyToMemory(m, models.EventDismissed, []string{"Kubernetes", "helm", "kubernetes", " ", "Helm!"}, at)
	if want := [][]string{{"helm", "kubernetes"}}; !equalSets(m.IrrelevantContexts, want) {
		t.Fatalf("IrrelevantContexts = %v, want %v", m.IrrelevantContexts, want)
	}
	// An empty context records nothing.
	r.ApplyToMemory(m, models.EventDismissed, []string{"", "!!"}, at)
	if len(m.IrrelevantContexts) != 1 {
		t.Errorf("empty context was recorded: %v", m.IrrelevantContexts)
	}
	// Bounded: twelve more distinct contexts keep the newest ten.
	for i := range 12 {
		r.ApplyToMemory(m, models.EventDismissed, []string{"topic " + string(rune('a'+i))}, at)
	}
	if len(m.IrrelevantContexts) != 10 {
		t.Fatalf("len = %d, want 10", len(m.IrrelevantContexts))
	}
	if first, last := m.IrrelevantContexts[0][0], m.IrrelevantContexts[9][0]; first != "topic c" || last != "topic l" {
		t.Errorf("oldest, newest = %q, %q; want topic c, topic l", first, last)
	}
	// A repeated context moves to the end instead of being stored twice.
	r.ApplyToMemory(m, models.EventDismissed, []string{"Topic E"}, at)
	if len(m.IrrelevantContexts) != 10 || m.IrrelevantContexts[9][0] != "topic e" || m.IrrelevantContexts[2][0] != "topic f" {
		t.Errorf("after repeating topic e: %v", m.IrrelevantContexts)
	}
}

func equalSets(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

func TestStrengthen(t *testing.T) {
	r := DefaultRules()
	key := &models.Edge{Namespace: "ns", From: "m1", To: "c:go", Type: models.EdgeMentions}
	e := r.Strengthen(key, false, at)
	if e == key {
		t.Fatal("Strengthen returned its argument; want a new edge")
	}
	if e.Weight != 0.3 || e.CoOccurrences != 1 || !e.LastCoOccurred.Equal(at) || e.Key() != key.Key() || e.Namespace != "ns" {
		t.Errorf("new edge = %+v, want weight 0.3, 1 co-occurrence at %v", e, at)
	}
	if key.Weight != 0 || key.CoOccurrences != 0 {
		t.Errorf("argument modified: %+v", key)
	}
	for _, c := range []struct{ from, to float64 }{{0.3, 0.4}, {0.95, 1.0}, {1.0, 1.0}, {0.1, 0.2}} {
		old := models.Edge{Weight: c.from, CoOccurrences: 7, LastCoOccurred: at.Add(-time.Hour)}
		got := r.Strengthen(&old, true, at)
		near(t, "weight from "+ftoa(c.from), got.Weight, c.to)
		if got.CoOccurrences != 8 || !got.LastCoOccurred.Equal(at) {
			t.Errorf("CoOccurrences, LastCoOccurred = %d, %v; want 8, %v", got.CoOccurrences, got.LastCoOccurred, at)
		}
	}
	// A late co-occurrence counts but does not move LastCoOccurred back.
	old := models.Edge{Weight: 0.5, CoOccurrences: 1, LastCoOccurred: at}
	got := r.Strengthen(&old, true, at.Add(-time.Hour))
	if !got.LastCoOccurred.Equal(at) || got.CoOccurrences != 2 {
		t.Errorf("late strengthen: %+v", got)
	}
	// Repeated strengthening from creation: 0.3, 0.4, …, 1.0 after eight co-occurrences.
	e = r.Strengthen(key, false, at)
	for range 7 {
		e = r.Strengthen(e, true, at)
	}
	near(t, "after 8", e.Weight, 1.0)
	if e.CoOccurrences != 8 {
		t.Errorf("CoOccurrences = %d, want 8", e.CoOccurrences)
	}
}

func TestEdgesFor(t *testing.T) {
	r := DefaultRules()
	ctx := []string{"Go", "go", "Kubernetes", ""}
	got := r.EdgesFor("ns", "01B", models.EventUsed, ctx, []string{"01C", "01A", "01B", "01A", ""})
	want := []models.EdgeKey{
		{From: "01B", To: "c:go", Type: models.EdgeMentions},
		{From: "01B", To: "c:kubernetes", Type: models.EdgeMentions},
		{From: "01A", To: "01B", Type: models.EdgeCoRetrieved}, // smaller id first
		{From: "01B", To: "01C", Type: models.EdgeCoRetrieved},
	}
	if !slices.Equal(got, want) {
		t.Errorf("EdgesFor(used) =\n%v\nwant\n%v", got, want)
	}
	if got := r.EdgesFor("ns", "01B", models.EventHelpful, nil, nil); len(got) != 0 {
		t.Errorf("no context, no co-used: %v", got)
	}
	for _, ev := range []models.EventType{models.EventIgnored, models.EventDismissed, "shrugged"} {
		if got := r.EdgesFor("ns", "01B", ev, ctx, []string{"01C"}); got != nil {
			t.Errorf("EdgesFor(%s) = %v, want none", ev, got)
		}
	}
	// The pair is the same edge whichever memory reports it.
	a := r.EdgesFor("ns", "01A", models.EventUsed, nil, []string{"01B"})
	b := r.EdgesFor("ns", "01B", models.EventUsed, nil, []string{"01A"})
	if !slices.Equal(a, b) {
		t.Errorf("pair keys differ: %v vs %v", a, b)
	}
}

func TestOverriddenRules(t *testing.T) {
	r := DefaultRules()
	r.PositiveDelta = 0.25
	r.MaxIrrelevantContexts = 1
	m := &models.Memory{Confidence: 0.5}
	r.ApplyToMemory(m, models.EventUsed, nil, at)
	near(t, "confidence", m.Confidence, 0.75)
	r.ApplyToMemory(m, models.EventDismissed, []string{"a"}, at)
	r.ApplyToMemory(m, models.EventDismissed, []string{"b"}, at)
	if !equalSets(m.IrrelevantContexts, [][]string{{"b"}}) {
		t.Errorf("IrrelevantContexts = %v, want [[b]]", m.IrrelevantContexts)
	}
}
