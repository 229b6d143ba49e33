package engagement_test

import (
	"testing"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// The one-outcome rules of DESIGN.md §5 (issue 8, item 6): the first explicit report on a
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
