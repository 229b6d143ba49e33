package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
)

// TestExplicitReportReplacesImplicitIgnore: the bot's word beats the timeout (docs/design.md#engagement).
// A report that arrives after the implicit-ignore job recorded a surfacing as ignored becomes
// the surfacing's outcome and applies its learning rule; a second report is a duplicate, and
// the job never overrides a report that came first.
func TestExplicitReportReplacesImplicitIgnore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.add(t, "a", mem("reported late"), mem("reported in time"))
	late, inTime := ids["reported late"], ids["reported in time"]
	shown := t0.Add(time.Hour)
	var ss []*models.Surfacing
	for _, s := range []struct{ id, mem string }{{"s1", late}, {"s2", inTime}} {
		ss = append(ss, &models.Surfacing{ID: s.id, Namespace: "a", ConversationID: "c1", TurnID: "t1", MemoryID: s.mem,
			Mode: models.ModeAmbient, Concepts: []string{"ferry"}, At: shown})
	}
	if err := e.st.RecordSurfacings(ctx, ss, nil); err != nil {
		t.Fatal(err)
	}
	now := shown
	eng := engagement.NewService(e.st, engagement.ServiceOptions{Now: func() time.Time { return now }})
	report := func(id, sf string, typ models.EventType, at time.Time) engagement.EventResult {
		t.Helper()
		now = at
		res, err := eng.Apply(ctx, "a", []*models.Event{{ID: id, SurfacingID: sf, Type: typ, At: at}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Results[0]
	}

	if r := report("in-time", "s2", models.EventUsed, shown.Add(5*time.Minute)); r.Status != engagement.StatusApplied {
		t.Fatalf("report in time: %+v", r)
	}
	jobs := maintenance.New(e.st, maintenance.Options{})
	run := newRun(t0)
	if n, err := jobs.ImplicitIgnore(run.at(shown.Add(31*time.Minute), 0), run); err != nil || n != 1 {
		t.Fatalf("implicit-ignore: %d, %v; want s1 only", n, err)
	}

	if r := report("late", "s1", models.EventUsed, shown.Add(40*time.Minute)); r.Status != engagement.StatusApplied {
		t.Fatalf("late report: %+v (%v)", r, r.Err)
	}
	if r := report("later", "s1", models.EventDismissed, shown.Add(41*time.Minute)); r.Status != engagement.StatusDuplicate {
		t.Errorf("a second report after the replacement: %+v, want a duplicate", r)
	}
	if r := report("again", "s2", models.EventDismissed, shown.Add(42*time.Minute)); r.Status != engagement.StatusDuplicate {
		t.Errorf("a second report on s2: %+v, want a duplicate", r)
	}

	sf, err := e.st.GetSurfacing(ctx, "a", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sf.Outcome != models.EventUsed || !sf.OutcomeAt.Equal(shown.Add(40*time.Minute)) {
		t.Errorf("s1 outcome %q at %v, want used at %v", sf.Outcome, sf.OutcomeAt, shown.Add(40*time.Minute))
	}
	// The implicit ignore's effect stays (0.5 − 0.02, one recent dismissal, an FSRS Hard
	// review); the report's rule applies on top: + 0.10, one use, a Good review.
	m := e.memory(t, "a", late)
	if !near(m.Confidence, 0.58) || m.UsageCount != 1 || m.RecentDismissals != 1 || m.Schedule.Reps != 2 ||
		!m.LastUsed.Equal(shown.Add(40*time.Minute)) {
		t.Errorf("late memory: confidence %v, usage %d, dismissals %v, reps %d, last used %v; want 0.58, 1, 1, 2, %v",
			m.Confidence, m.UsageCount, m.RecentDismissals, m.Schedule.Reps, m.LastUsed, shown.Add(40*time.Minute))
	}
	if m := e.memory(t, "a", inTime); !near(m.Confidence, 0.6) || m.UsageCount != 1 || m.RecentDismissals != 0 {
		t.Errorf("in-time memory: confidence %v, usage %d, dismissals %v; want 0.6, 1, 0", m.Confidence, m.UsageCount, m.RecentDismissals)
	}
	// The turn's two used memories are now co-retrieved.
	es, err := e.st.Neighbors(ctx, "a", []string{late})
	if err != nil {
		t.Fatal(err)
	}
	co := 0
	for _, ed := range es {
		if ed.Type == models.EdgeCoRetrieved {
			co += ed.CoOccurrences
		}
	}
	if co != 1 {
		t.Errorf("co_retrieved co-occurrences of the late memory = %d, want 1", co)
	}
	// The log keeps the implicit event and the report that replaced it, nothing else.
	evs, err := e.st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.ID)
	}
	if len(got) != 3 || got[0] != "implicit:s1" || got[1] != "in-time" || got[2] != "late" {
		t.Errorf("log = %v, want [implicit:s1 in-time late] (by time: the implicit event is dated at its surfacing)", got)
	}
	// A rerun of the job finds nothing to do.
	delete(run.state, "cursor")
	if n, err := jobs.ImplicitIgnore(run.at(shown.Add(2*time.Hour), 0), run); err != nil || n != 0 {
		t.Errorf("rerun: %d, %v", n, err)
	}
}
