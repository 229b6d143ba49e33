package engagement_test

import (
	"testing"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// The one-outcome rules of docs/design.md#engagement (issue 8, item 6): the first explicit report on a
// surfacing decides its outcome, later reports under fresh ids are duplicates, and an event
// must lie between its surfacing and now + skew.

// statuses returns the status of each result, and the error field of rejected ones.
func statuses(res *engagement.BatchResult) []want {
	out := make([]want, len(res.Results))
	for i, r := range res.Results {
		out[i].status = r.Status
		if r.Err != nil {
			out[i].code, out[i].field = r.Err.Code, r.Err.Field
		}
	}
	return out
}

func TestOneOutcomePerSurfacing(t *testing.T) {
	st, svc := fixture(t)
	// Across batches: a bot repeating itself under fresh ids.
	res, err := svc.Apply(ctx, "a", []*models.Event{{ID: "first", SurfacingID: "s1", Type: models.EventUsed, At: t0.Add(-5 * time.Minute)}})
	must(t, err)
	if res.Applied != 1 {
		t.Fatalf("first report: %+v", res.Results)
	}
	res, err = svc.Apply(ctx, "a", []*models.Event{
		{ID: "again", SurfacingID: "s1", Type: models.EventUsed},
		{ID: "louder", SurfacingID: "s1", Type: models.EventHelpful},
		{ID: "changed-mind", SurfacingID: "s1", Type: models.EventDismissed},
		// The memory+conversation form finds the same surfacing when it is the latest before at.
		{ID: "by-memory", MemoryID: "m1", ConversationID: "c1", Type: models.EventUsed, At: t0.Add(-9*time.Minute - 30*time.Second)},
	})
	must(t, err)
	dup := want{engagement.StatusDuplicate, "", ""}
	if got := statuses(res); len(got) != 4 || got[0] != dup || got[1] != dup || got[2] != dup || got[3] != dup {
		t.Errorf("later reports on s1: %+v, want four duplicates", got)
	}
	if res.Applied != 0 || res.Duplicates != 4 {
		t.Errorf("counts: %+v", res)
	}
	// Within one batch: the first decides, whatever the order of the times.
	res, err = svc.Apply(ctx, "a", []*models.Event{
		{ID: "b1", SurfacingID: "s2", Type: models.EventDismissed, At: t0.Add(-2 * time.Minute)},
		{ID: "b2", SurfacingID: "s2", Type: models.EventUsed, At: t0.Add(-time.Minute)},
		{ID: "b3", SurfacingID: "s2", Type: models.EventUsed, At: t0.Add(-3 * time.Minute)},
	})
	must(t, err)
	if got := statuses(res); got[0].status != engagement.StatusApplied || got[1] != dup || got[2] != dup {
		t.Errorf("one batch on s2: %+v, want applied, duplicate, duplicate", got)
	}

	// One surfacing moved its memory once: 0.5 + 0.10, one use.
	if m := getMemory(t, st, "a", "m1"); !near(m.Confidence, 0.6) || m.UsageCount != 1 || !m.LastUsed.Equal(t0.Add(-5*time.Minute)) {
		t.Errorf("m1: confidence %v, usage %d, last used %v; want 0.6, 1, %v", m.Confidence, m.UsageCount, m.LastUsed, t0.Add(-5*time.Minute))
	}
	if m := getMemory(t, st, "a", "m2"); !near(m.Confidence, 0.35) || m.UsageCount != 0 || m.RecentDismissals != 2 {
		t.Errorf("m2: confidence %v, usage %d, dismissals %v; want 0.35, 0, 2", m.Confidence, m.UsageCount, m.RecentDismissals)
	}
	for _, c := range []struct {
		id      string
		outcome models.EventType
		at      time.Time
	}{{"s1", models.EventUsed, t0.Add(-5 * time.Minute)}, {"s2", models.EventDismissed, t0.Add(-2 * time.Minute)}} {
		sf, err := st.GetSurfacing(ctx, "a", c.id)
		must(t, err)
		if sf.Outcome != c.outcome || !sf.OutcomeAt.Equal(c.at) {
			t.Errorf("%s outcome %q at %v, want %q at %v", c.id, sf.Outcome, sf.OutcomeAt, c.outcome, c.at)
		}
	}
	// Only the deciding reports are in the log; the duplicates changed nothing.
	logged, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	var ids []string
	for _, e := range logged {
		ids = append(ids, e.ID)
	}
	if len(ids) != 2 || ids[0] != "first" || ids[1] != "b1" {
		t.Errorf("log = %v, want [first b1]", ids)
	}
	// Edges: m1's context once (weight 0.3, one co-occurrence), nothing for the dismissal.
	es := edges(t, st, "a")
	if e := es["m1-mentions->c:berlin"]; e == nil || e.CoOccurrences != 1 || !near(e.Weight, 0.3) || len(es) != 2 {
		t.Errorf("edges %v; m1 → berlin = %+v, want one co-occurrence at 0.3", keys(es), e)
	}
}

func TestEventMustLieBetweenSurfacingAndNow(t *testing.T) {
	st, svc := fixture(t)
	turn1 := t0.Add(-10 * time.Minute) // s1–s3; s4 is a minute later
	res, err := svc.Apply(ctx, "a", []*models.Event{
		{ID: "before", SurfacingID: "s1", Type: models.EventUsed, At: turn1.Add(-time.Nanosecond)},
		{ID: "at-surfacing", SurfacingID: "s2", Type: models.EventUsed, At: turn1},
		{ID: "future", SurfacingID: "s3", Type: models.EventUsed, At: t0.Add(engagement.DefaultMaxSkew + time.Second)},
		{ID: "skew", SurfacingID: "s3", Type: models.EventUsed, At: t0.Add(engagement.DefaultMaxSkew)},
		// m4 was never surfaced in c1: a report about it has no surfacing to lie after.
		{ID: "never-shown", MemoryID: "m4", ConversationID: "c1", Type: models.EventUsed},
		// m1 by memory and conversation, dated before its first surfacing there.
		{ID: "before-first", MemoryID: "m1", ConversationID: "c1", Type: models.EventUsed, At: turn1.Add(-time.Minute)},
	})
	must(t, err)
	wantRes := []want{
		{engagement.StatusRejected, models.EINVALID, "events[0].at"},
		{engagement.StatusApplied, "", ""},
		{engagement.StatusRejected, models.EINVALID, "events[2].at"},
		{engagement.StatusApplied, "", ""},
		{engagement.StatusRejected, models.ENOTFOUND, "events[4].conversation_id"},
		{engagement.StatusRejected, models.EINVALID, "events[5].at"},
	}
	got := statuses(res)
	for i := range wantRes {
		if got[i] != wantRes[i] {
			t.Errorf("event %d: %+v (%v), want %+v", i, got[i], res.Results[i].Err, wantRes[i])
		}
	}
	if m := getMemory(t, st, "a", "m1"); m.UsageCount != 0 || m.Confidence != models.DefaultConfidence {
		t.Errorf("m1 moved by a rejected event: %+v", m)
	}
	if m := getMemory(t, st, "a", "m4"); m.UsageCount != 0 {
		t.Errorf("m4 moved by a report on no surfacing: usage %d", m.UsageCount)
	}
}

// TestApplyImplicit: the implicit-ignore job's events go through the same apply as reports.
// A surfacing that has an outcome is left alone; one whose memory was deleted still gets its
// event and outcome; a report then replaces the job's outcome, once.
func TestApplyImplicit(t *testing.T) {
	st, svc := fixture(t)
	turn1 := t0.Add(-10 * time.Minute)
	res, err := svc.Apply(ctx, "a", []*models.Event{{ID: "r1", SurfacingID: "s1", Type: models.EventUsed}})
	must(t, err)
	if res.Applied != 1 {
		t.Fatalf("report on s1: %+v", res.Results)
	}
	must(t, st.DeleteMemory(ctx, "a", "m3"))
	var ss []*models.Surfacing
	for _, id := range []string{"s1", "s2", "s3"} {
		sf, err := st.GetSurfacing(ctx, "a", id)
		must(t, err)
		ss = append(ss, sf)
	}
	res, err = svc.ApplyImplicit(ctx, "a", append(ss, &models.Surfacing{ID: "gone", Namespace: "a", MemoryID: "m1", At: turn1}))
	must(t, err)
	got := statuses(res)
	wantRes := []want{
		{engagement.StatusDuplicate, "", ""}, // s1 was reported
		{engagement.StatusApplied, "", ""},
		{engagement.StatusApplied, "", ""}, // m3 is gone; the surfacing still gets its outcome
		{engagement.StatusRejected, models.ENOTFOUND, "events[3].surfacing_id"},
	}
	for i := range wantRes {
		if got[i] != wantRes[i] {
			t.Errorf("surfacing %d: %+v, want %+v", i, got[i], wantRes[i])
		}
	}
	if res.Results[1].ID != "implicit:s2" || res.Applied != 2 {
		t.Errorf("results %+v", res.Results)
	}
	// The job's rule is the ignored one: 0.5 − 0.02, one recent dismissal, a Hard review.
	if m := getMemory(t, st, "a", "m2"); !near(m.Confidence, 0.48) || m.RecentDismissals != 1 || m.Schedule.Reps != 1 {
		t.Errorf("m2: confidence %v, dismissals %v, reps %d; want 0.48, 1, 1", m.Confidence, m.RecentDismissals, m.Schedule.Reps)
	}
	// The event is dated at its surfacing; the outcome is ignored, with no time (the job's).
	logged, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	var implicit []string
	for _, e := range logged {
		if e.Implicit {
			implicit = append(implicit, e.ID)
			if !e.At.Equal(turn1) || e.Type != models.EventIgnored {
				t.Errorf("implicit event %+v, want ignored at %v", e, turn1)
			}
		}
	}
	if len(implicit) != 2 || implicit[0] != "implicit:s2" || implicit[1] != "implicit:s3" {
		t.Errorf("implicit events %v, want [implicit:s2 implicit:s3]", implicit)
	}
	for _, id := range []string{"s2", "s3"} {
		sf, err := st.GetSurfacing(ctx, "a", id)
		must(t, err)
		if sf.Outcome != models.EventIgnored || !sf.OutcomeAt.IsZero() {
			t.Errorf("%s outcome %q at %v, want ignored with no time", id, sf.Outcome, sf.OutcomeAt)
		}
	}

	// A rerun changes nothing; a report replaces the job's outcome, a second one is a duplicate.
	res, err = svc.ApplyImplicit(ctx, "a", ss[1:2])
	must(t, err)
	if res.Duplicates != 1 {
		t.Errorf("rerun: %+v", res.Results)
	}
	res, err = svc.Apply(ctx, "a", []*models.Event{
		{ID: "r2", SurfacingID: "s2", Type: models.EventHelpful},
		{ID: "r3", SurfacingID: "s2", Type: models.EventDismissed},
		{ID: "r4", SurfacingID: "s3", Type: models.EventUsed},
	})
	must(t, err)
	got = statuses(res)
	wantRes = []want{
		{engagement.StatusApplied, "", ""},
		{engagement.StatusDuplicate, "", ""},
		{engagement.StatusRejected, models.ENOTFOUND, "events[2].surfacing_id"}, // its memory is gone
	}
	for i := range wantRes {
		if got[i] != wantRes[i] {
			t.Errorf("report %d: %+v, want %+v", i, got[i], wantRes[i])
		}
	}
	if sf, err := st.GetSurfacing(ctx, "a", "s2"); err != nil || sf.Outcome != models.EventHelpful || !sf.OutcomeAt.Equal(t0) {
		t.Errorf("s2 = %+v, %v; want helpful at %v", sf, err, t0)
	}
	if m := getMemory(t, st, "a", "m2"); !near(m.Confidence, 0.58) || m.UsageCount != 1 {
		t.Errorf("m2: confidence %v, usage %d; want 0.58, 1", m.Confidence, m.UsageCount)
	}
}

// TestImplicitIDsAreReserved: a bot cannot write the job's events, or claim its own are
// implicit.
func TestImplicitIDsAreReserved(t *testing.T) {
	st, svc := fixture(t)
	res, err := svc.Apply(ctx, "a", []*models.Event{
		{ID: "implicit:s1", SurfacingID: "s1", Type: models.EventIgnored},
		{ID: "mine", SurfacingID: "s2", Type: models.EventIgnored, Implicit: true},
	})
	must(t, err)
	if got := statuses(res); got[0] != (want{engagement.StatusRejected, models.EINVALID, "events[0].id"}) || got[1].status != engagement.StatusApplied {
		t.Errorf("results %+v", got)
	}
	logged, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	must(t, err)
	if len(logged) != 1 || logged[0].Implicit {
		t.Errorf("log %s, want one explicit event", dump(logged))
	}
	if sf, err := st.GetSurfacing(ctx, "a", "s2"); err != nil || sf.OutcomeAt.IsZero() {
		t.Errorf("s2 = %+v, %v; want a report's outcome, with its time", sf, err)
	}
}
