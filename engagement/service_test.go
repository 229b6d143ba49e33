package engagement_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

var ctx = context.Background()

// t0 is the service's clock in these tests.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openStore opens an empty SQLite store with its indexes loaded.
func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

func memory(ns, id string) *models.Memory {
	return &models.Memory{ID: id, Namespace: ns, Kind: models.KindFact, Content: "memory " + id,
		CreatedAt: t0.Add(-48 * time.Hour), Importance: 0.5, Confidence: models.DefaultConfidence}
}

func surfacing(ns, id, conv, turn, mem string, mode models.Mode, at time.Time, concepts ...string) *models.Surfacing {
	return &models.Surfacing{ID: id, Namespace: ns, ConversationID: conv, TurnID: turn, MemoryID: mem, Mode: mode,
		Rank: 1, Score: 0.5, Concepts: concepts, At: at}
}

// fixture holds memories m1–m4 in namespace "a" and x1 in "b", and surfacings: turn t1 of
// conversation c1 showed m1, m2, m3 (s1–s3) in a context about Berlin; turn t2 searched m1
// again (s4); conversation c9 showed m4 (s5, about a budget); namespace b has sb.
func fixture(t testing.TB) (*sqlite.Store, *engagement.Service) {
	t.Helper()
	st := openStore(t)
	var ws []*models.MemoryWrite
	for _, m := range []*models.Memory{memory("a", "m1"), memory("a", "m2"), memory("a", "m3"), memory("a", "m4"), memory("b", "x1")} {
		ws = append(ws, &models.MemoryWrite{Memory: m})
	}
	if err := st.CreateMemories(ctx, ws); err != nil {
		t.Fatal(err)
	}
	turn1 := t0.Add(-10 * time.Minute)
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{
		surfacing("a", "s1", "c1", "t1", "m1", models.ModeAmbient, turn1, "berlin", "moving"),
		surfacing("a", "s2", "c1", "t1", "m2", models.ModeAmbient, turn1, "berlin", "moving"),
		surfacing("a", "s3", "c1", "t1", "m3", models.ModeAmbient, turn1, "berlin", "moving"),
	}, nil))
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{
		surfacing("a", "s4", "c1", "t2", "m1", models.ModeSearch, turn1.Add(time.Minute), "flat"),
	}, nil))
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{
		surfacing("a", "s5", "c9", "t9", "m4", models.ModeAmbient, turn1, "budget"),
	}, nil))
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{surfacing("b", "sb", "c1", "t1", "x1", models.ModeAmbient, turn1)}, nil))
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return t0 }})
	return st, svc
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func getMemory(t testing.TB, st models.Store, ns, id string) *models.Memory {
	t.Helper()
	m, err := st.GetMemory(ctx, ns, id)
	must(t, err)
	return m
}

// edges returns every edge of ns by "from-type->to".
func edges(t testing.TB, st models.Store, ns string) map[string]*models.Edge {
	t.Helper()
	es, err := st.ScanEdges(ctx, ns, models.EdgeKey{}, 100000)
	must(t, err)
	out := map[string]*models.Edge{}
	for _, e := range es {
		out[fmt.Sprintf("%s-%s->%s", e.From, e.Type, e.To)] = e
	}
	return out
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

type want struct {
	status engagement.Status
	code   string
	field  string
}

func TestApplyReportsEachEvent(t *testing.T) {
	st, svc := fixture(t)
	many := make([]string, 65)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	cases := []struct {
		ev   *models.Event
		want want
	}{
		{&models.Event{ID: "e0", SurfacingID: "s1", Type: models.EventUsed}, want{engagement.StatusApplied, "", ""}},
		{&models.Event{ID: "e1", SurfacingID: "s2", Type: "liked"}, want{engagement.StatusRejected, models.EINVALID, "events[1].type"}},
		{&models.Event{SurfacingID: "s2", Type: models.EventUsed}, want{engagement.StatusRejected, models.EINVALID, "events[2].id"}},
		{&models.Event{ID: "e3", SurfacingID: "nope", Type: models.EventUsed}, want{engagement.StatusRejected, models.ENOTFOUND, "events[3].surfacing_id"}},
		{&models.Event{ID: "e4", SurfacingID: "sb", Type: models.EventUsed}, want{engagement.StatusRejected, models.ENOTFOUND, "events[4].surfacing_id"}},
		{&models.Event{ID: "e5", MemoryID: "m9", ConversationID: "c1", Type: models.EventUsed}, want{engagement.StatusRejected, models.ENOTFOUND, "events[5].memory_id"}},
		{&models.Event{ID: "e6", MemoryID: "m4", Type: models.EventUsed}, want{engagement.StatusRejected, models.EINVALID, "events[6].conversation_id"}},
		{&models.Event{ID: "e7", SurfacingID: "s2", Type: models.EventUsed, At: t0.Add(6 * time.Minute)}, want{engagement.StatusRejected, models.EINVALID, "events[7].at"}},
		{&models.Event{ID: "e8", SurfacingID: "s2", Type: models.EventUsed, Concepts: many}, want{engagement.StatusRejected, models.EINVALID, "events[8].concepts"}},
		{&models.Event{ID: "e9", SurfacingID: "s2", MemoryID: "m3", Type: models.EventUsed}, want{engagement.StatusRejected, models.EINVALID, "events[9].memory_id"}},
		{&models.Event{ID: "e10", SurfacingID: "s2", Type: models.EventHelpful, At: t0.Add(4 * time.Minute)}, want{engagement.StatusApplied, "", ""}},
		{&models.Event{ID: "e11", MemoryID: "m4", ConversationID: "c9", Type: models.EventDismissed, Concepts: []string{"Taxes"}}, want{engagement.StatusApplied, "", ""}},
		{&models.Event{ID: "e0", SurfacingID: "s1", Type: models.EventDismissed}, want{engagement.StatusDuplicate, "", ""}},
		{&models.Event{ID: "e13", SurfacingID: "s3", Type: models.EventIgnored, At: t0.Add(-time.Minute)}, want{engagement.StatusApplied, "", ""}},
		{nil, want{engagement.StatusRejected, models.EINVALID, "events[14]"}},
		{&models.Event{ID: "e15", Type: models.EventUsed}, want{engagement.StatusRejected, models.EINVALID, "events[15].surfacing_id"}},
		{&models.Event{ID: "e16", SurfacingID: "s2", Type: models.EventUsed, Concepts: []string{"ok", " "}}, want{engagement.StatusRejected, models.EINVALID, "events[16].concepts[1]"}},
		{&models.Event{ID: "e17", SurfacingID: "s2", ConversationID: "c2", Type: models.EventUsed}, want{engagement.StatusRejected, models.EINVALID, "events[17].conversation_id"}},
		{&models.Event{ID: "e18", SurfacingID: "s2", Type: models.EventUsed, At: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)}, want{engagement.StatusRejected, models.EINVALID, "events[18].at"}},
		{&models.Event{ID: strings.Repeat("x", 201), SurfacingID: "s2", Type: models.EventUsed}, want{engagement.StatusRejected, models.EINVALID, "events[19].id"}},
	}
	evs := make([]*models.Event, len(cases))
	for i, c := range cases {
		evs[i] = c.ev
	}
	res, err := svc.Apply(ctx, "a", evs)
	must(t, err)
	if len(res.Results) != len(cases) {
		t.Fatalf("%d results for %d events", len(res.Results), len(cases))
	}
	for i, c := range cases {
		r := res.Results[i]
		got := want{status: r.Status}
		if r.Err != nil {
			got.code, got.field = r.Err.Code, r.Err.Field
			if r.Err.Message == "" {
				t.Errorf("event %d: error without a message", i)
			}
		}
		if got != c.want {
			t.Errorf("event %d: got %+v (%v), want %+v", i, got, r.Err, c.want)
		}
		if c.ev != nil && r.ID != c.ev.ID {
			t.Errorf("event %d: id %q, want %q", i, r.ID, c.ev.ID)
		}
	}
	if res.Applied != 4 || res.Duplicates != 1 || res.Rejected != 15 {
		t.Errorf("counts applied, duplicates, rejected = %d, %d, %d; want 4, 1, 15", res.Applied, res.Duplicates, res.Rejected)
	}
	if evs[0].Namespace != "" || !evs[0].At.IsZero() {
		t.Errorf("Apply modified the caller's event: %+v", evs[0])
	}

	// The memories moved by exactly the rules.
	for _, c := range []struct {
		id         string
		confidence float64
		usage      int
		lastUsed   time.Time
		dismissals float64
		irrelevant [][]string
	}{
		{"m1", 0.6, 1, t0, 0, nil},                               // used (at defaults to now)
		{"m2", 0.6, 1, t0.Add(4 * time.Minute), 0, nil},          // helpful, within the skew
		{"m3", 0.48, 0, time.Time{}, 1, nil},                     // ignored
		{"m4", 0.35, 0, time.Time{}, 2, [][]string{{"taxes"}}},   // dismissed, in its own context
		{"x1", models.DefaultConfidence, 0, time.Time{}, 0, nil}, // namespace b: untouched
	} {
		ns := "a"
		if c.id == "x1" {
			ns = "b"
		}
		m := getMemory(t, st, ns, c.id)
		if !near(m.Confidence, c.confidence) || m.UsageCount != c.usage || !m.LastUsed.Equal(c.lastUsed) ||
			m.RecentDismissals != c.dismissals || !reflect.DeepEqual(m.IrrelevantContexts, c.irrelevant) {
			t.Errorf("%s: confidence %v, usage %d, last used %v, dismissals %v, irrelevant %v; want %v, %d, %v, %v, %v",
				c.id, m.Confidence, m.UsageCount, m.LastUsed, m.RecentDismissals, m.IrrelevantContexts,
				c.confidence, c.usage, c.lastUsed, c.dismissals, c.irrelevant)
		}
	}
	// The decay policy saw each event after the rules: FSRS reviews (the first event is the
	// first review), and the dismissal's cooldown.
	if m := getMemory(t, st, "a", "m4"); m.Schedule.Reps != 1 || !m.Schedule.CooldownTo.Equal(t0.Add(decay.DefaultCooldown)) || m.Schedule.Due.Before(m.Schedule.CooldownTo) {
		t.Errorf("m4 schedule = %+v, want 1 review and a cooldown to %v", m.Schedule, t0.Add(decay.DefaultCooldown))
	}
	if m := getMemory(t, st, "a", "m2"); m.Schedule.Reps != 1 || !m.Schedule.LastReview.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("m2 schedule = %+v, want 1 review at %v", m.Schedule, t0.Add(4*time.Minute))
	}

	// Edges: the surfacing's context for m1 and m2 (the events had no concepts), and one
	// co_retrieved edge for the two memories used in turn t1. Negative events add none.
	gotEdges := edges(t, st, "a")
	wantEdges := map[string]struct {
		weight float64
		co     int
		last   time.Time
	}{
		"m1-mentions->c:berlin": {0.3, 1, t0},
		"m1-mentions->c:moving": {0.3, 1, t0},
		"m2-mentions->c:berlin": {0.3, 1, t0.Add(4 * time.Minute)},
		"m2-mentions->c:moving": {0.3, 1, t0.Add(4 * time.Minute)},
		"m1-co_retrieved->m2":   {0.3, 1, t0.Add(4 * time.Minute)},
	}
	if len(gotEdges) != len(wantEdges) {
		t.Errorf("edges = %v, want %d", keys(gotEdges), len(wantEdges))
	}
	for k, w := range wantEdges {
		e := gotEdges[k]
		if e == nil || !near(e.Weight, w.weight) || e.CoOccurrences != w.co || !e.LastCoOccurred.Equal(w.last) {
			t.Errorf("edge %s = %+v, want weight %v, %d co-occurrences, last %v", k, e, w.weight, w.co, w.last)
		}
	}

	// Outcomes and the log.
	for _, c := range []struct {
		id      string
		outcome models.EventType
		at      time.Time
	}{{"s1", models.EventUsed, t0}, {"s2", models.EventHelpful, t0.Add(4 * time.Minute)}, {"s3", models.EventIgnored, t0.Add(-time.Minute)}, {"s4", "", time.Time{}}, {"s5", models.EventDismissed, t0}} {
		sf, err := st.GetSurfacing(ctx, "a", c.id)
		must(t, err)
		if sf.Outcome != c.outcome || !sf.OutcomeAt.Equal(c.at) {
			t.Errorf("%s outcome = %q at %v, want %q at %v", c.id, sf.Outcome, sf.OutcomeAt, c.outcome, c.at)
		}
	}
	logged, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	wantLog := []*models.Event{
		{ID: "e13", Namespace: "a", SurfacingID: "s3", MemoryID: "m3", ConversationID: "c1", Type: models.EventIgnored, At: t0.Add(-time.Minute), Seq: 4},
		{ID: "e0", Namespace: "a", SurfacingID: "s1", MemoryID: "m1", ConversationID: "c1", Type: models.EventUsed, At: t0, Seq: 1},
		{ID: "e11", Namespace: "a", SurfacingID: "s5", MemoryID: "m4", ConversationID: "c9", Type: models.EventDismissed, At: t0, Concepts: []string{"Taxes"}, Seq: 3},
		{ID: "e10", Namespace: "a", SurfacingID: "s2", MemoryID: "m2", ConversationID: "c1", Type: models.EventHelpful, At: t0.Add(4 * time.Minute), Seq: 2},
	}
	if !reflect.DeepEqual(logged, wantLog) {
		t.Errorf("event log:\n%s\nwant\n%s", dump(logged), dump(wantLog))
	}
	if other, err := st.FindEvents(ctx, models.EventFilter{Namespace: "b"}); err != nil || len(other) != 0 {
		t.Errorf("namespace b's log = %v, %v; want empty", other, err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func dump(evs []*models.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %+v\n", *e)
	}
	return b.String()
}

// snapshot is everything engagement may change in a namespace.
type snapshot struct {
	Memories   []*models.Memory
	Edges      []*models.Edge
	Surfacings []*models.Surfacing
	Events     []*models.Event
}

func snap(t testing.TB, st models.Store, ns string) snapshot {
	t.Helper()
	ms, _, err := st.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Limit: 1000, Sort: "created_asc"})
	must(t, err)
	for _, m := range ms {
		m.Embedding = nil
	}
	es, err := st.ScanEdges(ctx, ns, models.EdgeKey{}, 100000)
	must(t, err)
	ss, err := st.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, Limit: 100000})
	must(t, err)
	evs, err := st.FindEvents(ctx, models.EventFilter{Namespace: ns})
	must(t, err)
	return snapshot{ms, es, ss, evs}
}

func TestReplayChangesNothing(t *testing.T) {
	st, svc := fixture(t)
	batch := []*models.Event{
		{ID: "r1", SurfacingID: "s1", Type: models.EventUsed, At: t0.Add(-5 * time.Minute)},
		{ID: "r2", SurfacingID: "s2", Type: models.EventHelpful, At: t0.Add(-4 * time.Minute), Concepts: []string{"Tempelhof"}},
		{ID: "r3", SurfacingID: "s3", Type: models.EventDismissed, At: t0.Add(-3 * time.Minute)},
		{ID: "r4", MemoryID: "m1", ConversationID: "c1", Type: models.EventUsed, At: t0.Add(-2 * time.Minute)},
		{ID: "r5", MemoryID: "m4", ConversationID: "c9", Type: models.EventIgnored, At: t0.Add(-time.Minute)},
	}
	first, err := svc.Apply(ctx, "a", batch)
	must(t, err)
	if first.Applied != 5 {
		t.Fatalf("first apply: %+v", first)
	}
	before := snap(t, st, "a")
	for round := range 2 {
		again, err := svc.Apply(ctx, "a", batch)
		must(t, err)
		if again.Applied != 0 || again.Duplicates != 5 || again.Rejected != 0 {
			t.Fatalf("replay %d: applied, duplicates, rejected = %d, %d, %d; want 0, 5, 0", round, again.Applied, again.Duplicates, again.Rejected)
		}
		for i, r := range again.Results {
			if r.Status != engagement.StatusDuplicate || r.ID != batch[i].ID || r.Err != nil {
				t.Errorf("replay %d, event %d: %+v", round, i, r)
			}
		}
		if after := snap(t, st, "a"); !reflect.DeepEqual(after, before) {
			t.Fatalf("replay %d changed the store:\nbefore %+v\nafter  %+v", round, before, after)
		}
	}
	// Exact values after the first application, so "nothing changed" means the right thing.
	m1 := getMemory(t, st, "a", "m1")
	if !near(m1.Confidence, 0.7) || m1.UsageCount != 2 {
		t.Errorf("m1 confidence %v usage %d, want 0.7 and 2", m1.Confidence, m1.UsageCount)
	}
	if e := edges(t, st, "a")["m2-mentions->c:tempelhof"]; e == nil || !near(e.Weight, 0.3) || e.CoOccurrences != 1 {
		t.Errorf("m2 → tempelhof = %+v, want a new edge at 0.3", e)
	}
}

func TestMemoryConversationFormTiesTheLatestSurfacing(t *testing.T) {
	st, svc := fixture(t)
	res, err := svc.Apply(ctx, "a", []*models.Event{{ID: "e1", MemoryID: "m1", ConversationID: "c1", Type: models.EventUsed}})
	must(t, err)
	if res.Applied != 1 {
		t.Fatalf("result %+v", res.Results)
	}
	s4, err := st.GetSurfacing(ctx, "a", "s4")
	must(t, err)
	s1, err := st.GetSurfacing(ctx, "a", "s1")
	must(t, err)
	if s4.Outcome != models.EventUsed || s1.Outcome != "" {
		t.Errorf("outcomes s4 %q, s1 %q; want the latest surfacing (s4) used", s4.Outcome, s1.Outcome)
	}
	evs, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	if len(evs) != 1 || evs[0].SurfacingID != "s4" {
		t.Errorf("logged %+v, want the event tied to s4", evs)
	}
	// The context is the search turn's ("flat"), not turn t1's.
	got := keys(edges(t, st, "a"))
	if len(got) != 1 || got[0] != "m1-mentions->c:flat" {
		t.Errorf("edges = %v, want only m1 → flat", got)
	}
}

func TestCoRetrievedOncePerTurnPair(t *testing.T) {
	st, svc := fixture(t)
	implicit := func(id string) {
		t.Helper()
		sf, err := st.GetSurfacing(ctx, "a", id)
		must(t, err)
		res, err := svc.ApplyImplicit(ctx, "a", []*models.Surfacing{sf})
		must(t, err)
		if res.Applied != 1 {
			t.Fatalf("implicit ignore of %s: %+v", id, res.Results)
		}
	}
	steps := []struct {
		ev     models.Event
		status engagement.Status
		want   map[string]int // co-occurrences of the co_retrieved edges after the step
	}{
		{models.Event{ID: "a", SurfacingID: "s1", Type: models.EventUsed}, engagement.StatusApplied, map[string]int{}},
		{models.Event{ID: "c", SurfacingID: "s2", Type: models.EventUsed}, engagement.StatusApplied, map[string]int{"m1-co_retrieved->m2": 1}},
		// s1 is reported again: a duplicate, so the pair is not counted twice.
		{models.Event{ID: "d", SurfacingID: "s1", Type: models.EventHelpful}, engagement.StatusDuplicate, map[string]int{"m1-co_retrieved->m2": 1}},
		// s3, implicitly ignored meanwhile, is reported used: it pairs with both used memories.
		{models.Event{ID: "e", SurfacingID: "s3", Type: models.EventUsed}, engagement.StatusApplied,
			map[string]int{"m1-co_retrieved->m2": 1, "m1-co_retrieved->m3": 1, "m2-co_retrieved->m3": 1}},
		// s4 is m1 in another turn: no pair.
		{models.Event{ID: "f", SurfacingID: "s4", Type: models.EventUsed}, engagement.StatusApplied,
			map[string]int{"m1-co_retrieved->m2": 1, "m1-co_retrieved->m3": 1, "m2-co_retrieved->m3": 1}},
	}
	for i, s := range steps {
		if s.ev.ID == "e" {
			implicit("s3")
		}
		ev := s.ev
		res, err := svc.Apply(ctx, "a", []*models.Event{&ev})
		must(t, err)
		if res.Results[0].Status != s.status {
			t.Fatalf("step %d: %+v, want %s", i, res.Results, s.status)
		}
		got := map[string]int{}
		for k, e := range edges(t, st, "a") {
			if e.Type == models.EdgeCoRetrieved {
				got[k] = e.CoOccurrences
			}
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d (%s %s): co_retrieved %v, want %v", i, ev.SurfacingID, ev.Type, got, s.want)
		}
	}
	// Positive events each strengthen the context edges: m1 was used once in t1's context and
	// once in t2's.
	es := edges(t, st, "a")
	for k, n := range map[string]int{"m1-mentions->c:berlin": 1, "m1-mentions->c:flat": 1, "m3-mentions->c:berlin": 1} {
		if e := es[k]; e == nil || e.CoOccurrences != n || !near(e.Weight, 0.3) {
			t.Errorf("%s = %+v, want %d co-occurrence at 0.3", k, e, n)
		}
	}
}

// TestFirstReportDecidesWhateverItsTime: the report that arrives first is the outcome, even
// when a later-arriving one is dated earlier; the later one is a duplicate.
func TestFirstReportDecidesWhateverItsTime(t *testing.T) {
	st, svc := fixture(t)
	res, err := svc.Apply(ctx, "a", []*models.Event{
		{ID: "late-2", SurfacingID: "s1", Type: models.EventDismissed, At: t0},
		{ID: "late-1", SurfacingID: "s1", Type: models.EventUsed, At: t0.Add(-5 * time.Minute)},
	})
	must(t, err)
	if res.Applied != 1 || res.Duplicates != 1 || res.Results[1].Status != engagement.StatusDuplicate {
		t.Errorf("results %+v, want the second a duplicate", res.Results)
	}
	sf, err := st.GetSurfacing(ctx, "a", "s1")
	must(t, err)
	if sf.Outcome != models.EventDismissed || !sf.OutcomeAt.Equal(t0) {
		t.Errorf("outcome %q at %v, want dismissed at %v", sf.Outcome, sf.OutcomeAt, t0)
	}
	// Only the dismissal counts for the memory: 0.5 − 0.15.
	if m := getMemory(t, st, "a", "m1"); !near(m.Confidence, 0.35) || m.UsageCount != 0 || !m.LastUsed.IsZero() {
		t.Errorf("m1 = confidence %v, usage %d, last used %v", m.Confidence, m.UsageCount, m.LastUsed)
	}
}

func TestApplyRejectsBadBatches(t *testing.T) {
	_, svc := fixture(t)
	one := []*models.Event{{ID: "e", SurfacingID: "s1", Type: models.EventUsed}}
	tooMany := make([]*models.Event, models.MaxBatch+1)
	for i := range tooMany {
		tooMany[i] = &models.Event{ID: fmt.Sprint(i), SurfacingID: "s1", Type: models.EventUsed}
	}
	for _, c := range []struct {
		name  string
		ns    string
		evs   []*models.Event
		field string
	}{
		{"bad namespace", "-a", one, "namespace"},
		{"empty", "a", nil, "events"},
		{"too many", "a", tooMany, "events"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := svc.Apply(ctx, c.ns, c.evs)
			if res != nil || models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != c.field {
				t.Errorf("got %v, %v; want EINVALID naming %s", res, err, c.field)
			}
		})
	}
}

func TestPolicyPerNamespace(t *testing.T) {
	st, _ := fixture(t)
	linear, err := decay.PolicyByName(decay.PolicyLinear)
	must(t, err)
	var asked []string
	svc := engagement.NewService(st, engagement.ServiceOptions{
		Now: func() time.Time { return t0 },
		Policy: func(ns string) decay.Policy {
			asked = append(asked, ns)
			return linear
		},
	})
	_, err = svc.Apply(ctx, "a", []*models.Event{{ID: "e", SurfacingID: "s1", Type: models.EventUsed}})
	must(t, err)
	m := getMemory(t, st, "a", "m1")
	// Linear: due 0.7 × (usage + 1) days after the last use; no FSRS review happened.
	if want := t0.Add(time.Duration(0.7 * 2 * 24 * float64(time.Hour))); !m.Schedule.Due.Equal(want) || m.Schedule.Reps != 0 {
		t.Errorf("schedule %+v, want linear due at %v", m.Schedule, want)
	}
	if !reflect.DeepEqual(asked, []string{"a"}) {
		t.Errorf("policy asked for %v, want [a]", asked)
	}
}

// TestConcurrentWriters has 16 reporters send 300 events each, in batches, about shared
// memories; any lost update shows in the exact counts.
func TestConcurrentWriters(t *testing.T) {
	st := openStore(t)
	var ws []*models.MemoryWrite
	for _, id := range []string{"m0", "m1", "m2", "m3"} {
		ws = append(ws, &models.MemoryWrite{Memory: memory("a", id)})
	}
	must(t, st.CreateMemories(ctx, ws))
	// 500 turns each surfaced m0 and m1; both are used, reported by different writers.
	const turns = 500
	var ss []*models.Surfacing
	for i := range turns {
		turn := fmt.Sprintf("t%d", i)
		ss = append(ss, surfacing("a", "A"+turn, "c", turn, "m0", models.ModeAmbient, t0.Add(-time.Hour), "shared"),
			surfacing("a", "B"+turn, "c", turn, "m1", models.ModeAmbient, t0.Add(-time.Hour), "shared"))
	}
	must(t, st.RecordSurfacings(ctx, ss, nil))
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return t0 }})

	const writers, perWriter, batchSize = 16, 300, 50
	plans := make([][]*models.Event, writers)
	for i := range turns {
		a, b := i%writers, (i+1)%writers
		plans[a] = append(plans[a], &models.Event{ID: fmt.Sprintf("A%d", i), SurfacingID: fmt.Sprintf("At%d", i), Type: models.EventUsed})
		plans[b] = append(plans[b], &models.Event{ID: fmt.Sprintf("B%d", i), SurfacingID: fmt.Sprintf("Bt%d", i), Type: models.EventHelpful})
	}
	// The rest report on m2 and m3, each on a surfacing of its own (one outcome per
	// surfacing). By surfacing id: the memory+conversation form would find the surfacing
	// through the store's memory index, a scan of m2's thousands of surfacings per event.
	used2, dismissed3 := 0, 0
	ss = ss[:0]
	for w := range writers {
		for j := 0; len(plans[w]) < perWriter; j++ {
			id := fmt.Sprintf("w%d-%d", w, j)
			if j%2 == 0 {
				ss = append(ss, surfacing("a", "S"+id, id, id, "m2", models.ModeAmbient, t0.Add(-time.Hour)))
				plans[w] = append(plans[w], &models.Event{ID: id, SurfacingID: "S" + id, Type: models.EventUsed, Concepts: []string{"Shared", "x"}})
				used2++
			} else {
				ss = append(ss, surfacing("a", "S"+id, id, id, "m3", models.ModeAmbient, t0.Add(-time.Hour)))
				plans[w] = append(plans[w], &models.Event{ID: id, SurfacingID: "S" + id, Type: models.EventDismissed, Concepts: []string{"noise"}})
				dismissed3++
			}
		}
	}
	must(t, st.RecordSurfacings(ctx, ss, nil))
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < len(plans[w]); i += batchSize {
				res, err := svc.Apply(ctx, "a", plans[w][i:min(i+batchSize, len(plans[w]))])
				if err != nil {
					errs <- err
					return
				}
				if res.Applied != min(batchSize, len(plans[w])-i) {
					errs <- fmt.Errorf("writer %d batch %d: %+v", w, i, res)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for _, c := range []struct {
		id         string
		usage      int
		confidence float64
		dismissals float64
	}{
		{"m0", turns, 1, 0},
		{"m1", turns, 1, 0},
		{"m2", used2, 1, 0},
		{"m3", 0, 0.2, float64(2 * dismissed3)},
	} {
		m := getMemory(t, st, "a", c.id)
		if m.UsageCount != c.usage || !near(m.Confidence, c.confidence) || m.RecentDismissals != c.dismissals {
			t.Errorf("%s: usage %d, confidence %v, dismissals %v; want %d, %v, %v", c.id, m.UsageCount, m.Confidence, m.RecentDismissals, c.usage, c.confidence, c.dismissals)
		}
	}
	es := edges(t, st, "a")
	for k, want := range map[string]int{
		"m0-co_retrieved->m1":   turns,
		"m0-mentions->c:shared": turns,
		"m1-mentions->c:shared": turns,
		"m2-mentions->c:shared": used2,
		"m2-mentions->c:x":      used2,
	} {
		if e := es[k]; e == nil || e.CoOccurrences != want || !near(e.Weight, 1) {
			t.Errorf("%s = %+v, want %d co-occurrences at weight 1", k, e, want)
		}
	}
	if len(es) != 5 {
		t.Errorf("edges %v, want 5", keys(es))
	}
	evs, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	if len(evs) != writers*perWriter {
		t.Errorf("%d events logged, want %d", len(evs), writers*perWriter)
	}
}

func TestChunkIDStandsForItsMemory(t *testing.T) {
	st, svc := fixture(t)
	parent := memory("a", "p1")
	parent.ChunkCount = 1
	chunk := memory("a", "p1-0")
	chunk.ParentID = "p1"
	must(t, st.CreateMemories(ctx, []*models.MemoryWrite{{Memory: parent, Chunks: []*models.Memory{chunk}}}))
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{
		surfacing("a", "sp", "c", "t", "p1", models.ModeSearch, t0.Add(-time.Minute)),
		surfacing("a", "sp2", "c", "t2", "p1", models.ModeSearch, t0.Add(-50*time.Second)),
	}, nil))
	res, err := svc.Apply(ctx, "a", []*models.Event{
		{ID: "e", MemoryID: "p1-0", ConversationID: "c", Type: models.EventUsed, At: t0.Add(-30 * time.Second)},
		// Beside a surfacing_id, the chunk's id matches the surfacing's memory.
		{ID: "e2", SurfacingID: "sp", MemoryID: "p1-0", Type: models.EventUsed},
	})
	must(t, err)
	if res.Applied != 2 {
		t.Fatalf("result %+v", res.Results)
	}
	if m := getMemory(t, st, "a", "p1"); m.UsageCount != 2 || !near(m.Confidence, 0.7) {
		t.Errorf("parent = usage %d, confidence %v; want 2, 0.7", m.UsageCount, m.Confidence)
	}
	evs, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	if len(evs) != 2 || evs[0].MemoryID != "p1" || evs[0].SurfacingID != "sp2" || evs[1].MemoryID != "p1" || evs[1].SurfacingID != "sp" {
		t.Errorf("logged %s, want the parent's id on sp2 (the latest surfacing before e) and sp", dump(evs))
	}
}

// TestEventIDReusedForAnotherSurfacingConflicts: an id already logged for one surfacing and
// sent again for another is a conflict naming the id (issue 39: it was a duplicate, and the
// report was lost without a word), whether the other surfacing still awaits its outcome or
// has one, in a later batch or the same one; nothing of it is applied. The same id on its
// own surfacing stays a duplicate.
func TestEventIDReusedForAnotherSurfacingConflicts(t *testing.T) {
	st, svc := fixture(t)
	first, err := svc.Apply(ctx, "a", []*models.Event{
		{ID: "x1", SurfacingID: "s1", Type: models.EventUsed},
		{ID: "x3", SurfacingID: "s3", Type: models.EventIgnored},
	})
	must(t, err)
	if first.Applied != 2 {
		t.Fatalf("first batch: %+v", first)
	}
	before := snap(t, st, "a")
	res, err := svc.Apply(ctx, "a", []*models.Event{
		{ID: "x1", SurfacingID: "s2", Type: models.EventUsed},      // s2 has no outcome yet
		{ID: "x1", SurfacingID: "s3", Type: models.EventDismissed}, // s3 has x3's
		{ID: "x1", SurfacingID: "s1", Type: models.EventUsed},      // the retry
		{ID: "x1", MemoryID: "m2", ConversationID: "c1", Type: models.EventHelpful},
	})
	must(t, err)
	for i, w := range []want{
		{engagement.StatusRejected, models.ECONFLICT, "events[0].id"},
		{engagement.StatusRejected, models.ECONFLICT, "events[1].id"},
		{engagement.StatusDuplicate, "", ""},
		{engagement.StatusRejected, models.ECONFLICT, "events[3].id"},
	} {
		r := res.Results[i]
		got := want{status: r.Status}
		if r.Err != nil {
			got.code, got.field = r.Err.Code, r.Err.Field
			if !strings.Contains(r.Err.Message, "x1") || !strings.Contains(r.Err.Message, "s1") {
				t.Errorf("event %d: message %q does not name the id and its surfacing", i, r.Err.Message)
			}
		}
		if got != w {
			t.Errorf("event %d: %+v, want %+v", i, got, w)
		}
	}
	if res.Applied != 0 || res.Duplicates != 1 || res.Rejected != 3 {
		t.Errorf("counts applied, duplicates, rejected = %d, %d, %d; want 0, 1, 3", res.Applied, res.Duplicates, res.Rejected)
	}
	if after := snap(t, st, "a"); !reflect.DeepEqual(after, before) {
		t.Errorf("a conflicting event changed the store:\nbefore %+v\nafter  %+v", before, after)
	}
	// In one batch: the second use of an id is the conflict, the first applies.
	res, err = svc.Apply(ctx, "a", []*models.Event{
		{ID: "y", SurfacingID: "s2", Type: models.EventUsed},
		{ID: "y", MemoryID: "m4", ConversationID: "c9", Type: models.EventUsed},
	})
	must(t, err)
	if res.Results[0].Status != engagement.StatusApplied || res.Results[1].Err == nil || res.Results[1].Err.Code != models.ECONFLICT {
		t.Errorf("one batch: %+v, want applied then conflict", res.Results)
	}
}
