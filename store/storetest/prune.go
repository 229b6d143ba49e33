package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// PruneHistory is the suite's PruneHistory test, for a store to run again with its batches
// made small, so that its cursors walk many windows.
func PruneHistory(t *testing.T, open func(t *testing.T) models.Store) { testPruneHistory(t, open) }

// testPruneHistory checks which rows PruneHistory deletes (the rules of models.SurfacingAge and the other ages), that a
// second call finds nothing, that the event log's numbering and the memories' surfacing
// counters carry on, and that what stays reads back whole.
func testPruneHistory(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	mustCreate(t, s, write(mem(ns, "m1", "the kettle is broken", at(0))), write(mem(other, "m1", "the kettle is broken", at(0))))
	cut := at(100)

	done := func(sf *models.Surfacing, outcome int) *models.Surfacing {
		sf.Outcome, sf.OutcomeAt = models.EventUsed, at(outcome)
		return sf
	}
	waits := surfacing(ns, "s-waits", "c1", "m1", 10) // decided, but its turn's decision awaits its reward: stays
	waits.TurnID = "t-pending"
	edge := surfacing(ns, "s-edge", "c1", "m1", 0) // shown and decided a nanosecond before the cut: goes
	edge.At = cut.Add(-time.Nanosecond)
	rewarded := surfacing(ns, "s-rewarded", "c1", "m1", 10) // its turn's decision is rewarded: goes
	rewarded.TurnID = "t-done"
	exp := surfacing(ns, "s-exp", "c1", "m1", 10)
	exp.Experiment, exp.Variant = "e1", "control"
	surfs := []*models.Surfacing{
		surfacing(ns, "s-done", "c1", "m1", 10),    // decided before the cut: goes
		surfacing(ns, "s-pending", "c1", "m1", 10), // no outcome yet: stays
		surfacing(ns, "s-late", "c1", "m1", 50),    // decided after the cut: stays
		exp,                                        // an experiment's: stays
		edge,
		waits,
		rewarded,
		surfacing(other, "o-done", "c1", "m1", 10), // the other namespace's, old: goes
		surfacing(ns, "s-new", "c2", "m1", 200),    // recent: stays
	}
	for _, sf := range surfs { // one turn each, in this order: the newest row is recent
		mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil))
	}
	outcomes := map[string]int{"s-done": 20, "s-late": 150, "s-exp": 20, "s-new": 210, "o-done": 20, "s-waits": 20, "s-rewarded": 20}
	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		for _, sf := range surfs {
			if o, ok := outcomes[sf.ID]; ok {
				if err := tx.PutSurfacing(done(sf, o)); err != nil {
					return err
				}
			}
		}
		edge.Outcome, edge.OutcomeAt = models.EventIgnored, edge.At
		return tx.PutSurfacing(edge)
	}))
	before, err := s.GetMemory(ctx, ns, "m1")
	mustNil(t, err)
	if before.SurfaceCount != 8 {
		t.Fatalf("surface count before pruning = %d, want 8", before.SurfaceCount)
	}

	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		for _, e := range []*models.Event{
			{ID: "e1", Namespace: ns, Type: models.EventUsed, At: at(10)},
			{ID: "e2", Namespace: ns, Type: models.EventUsed, At: at(20)},
			{ID: "e3", Namespace: ns, Type: models.EventUsed, At: at(30)},
			{ID: "e-edge", Namespace: ns, Type: models.EventUsed, At: cut.Add(-time.Nanosecond)},
			{ID: "e4", Namespace: ns, Type: models.EventUsed, At: at(150)},
			{ID: "o1", Namespace: other, Type: models.EventUsed, At: at(10)},
		} {
			if err := tx.InsertEvent(e); err != nil {
				return err
			}
		}
		return nil
	}))
	// In ns every event before the cut goes; in other, o1 stays, old as it is: it is its
	// namespace's latest.

	dec := func(turn string, minute int, rewarded bool, experiment string) *models.Decision {
		return &models.Decision{Namespace: ns, TurnID: turn, ConversationID: "c1", Policy: "bandit", Arm: 1,
			Threshold: 0.5, At: at(minute), Rewarded: rewarded, Experiment: experiment}
	}
	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		for _, d := range []*models.Decision{
			dec("t-done", 10, true, ""),     // goes
			dec("t-pending", 10, false, ""), // not rewarded yet: stays
			dec("t-exp", 10, true, "e1"),    // an experiment's: stays
			dec("t-new", 200, true, ""),     // recent: stays
		} {
			if err := tx.PutDecision(d); err != nil {
				return err
			}
		}
		return nil
	}))

	conv := func(id string, minute int) *models.ConversationState {
		return &models.ConversationState{Namespace: ns, ConversationID: id, Type: models.ConvDebugging, Turns: 1, UpdatedAt: at(minute)}
	}
	mustNil(t, s.RecordSurfacings(ctx, nil, conv("c-old", 10)))
	mustNil(t, s.RecordSurfacings(ctx, nil, conv("c-new", 200)))
	unset := conv("c-unset", 0) // no update time: its age is unknown, it stays
	unset.UpdatedAt = time.Time{}
	mustNil(t, s.RecordSurfacings(ctx, nil, unset))

	for _, r := range []*models.JobRun{
		{ID: "a1", Job: "job-a", Start: at(10), End: at(11), Finished: true},
		{ID: "a2", Job: "job-a", Start: at(20), End: at(21), Finished: true}, // job-a's latest: stays
		{ID: "b1", Job: "job-b", Start: at(300), End: at(301), Finished: true},
	} {
		mustNil(t, s.RecordJobRun(ctx, r))
	}

	_, err = s.PruneHistory(ctx, models.PruneCut{})
	wantCode(t, err, models.EINVALID)
	_, err = s.PruneHistory(ctx, models.PruneCut{Namespaces: map[string]time.Time{ns: {}}})
	wantCode(t, err, models.EINVALID)

	got, err := s.PruneHistory(ctx, models.PruneCut{Before: cut})
	mustNil(t, err)
	want := models.Pruned{Surfacings: 4, Events: 4, Decisions: 1, Conversations: 1, JobRuns: 1}
	if got != want {
		t.Fatalf("pruned %+v, want %+v", got, want)
	}
	again, err := s.PruneHistory(ctx, models.PruneCut{Before: cut})
	mustNil(t, err)
	if again != (models.Pruned{}) {
		t.Fatalf("a second call pruned %+v, want nothing", again)
	}

	ss, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns})
	mustNil(t, err)
	assertIDs(t, "surfacings left", sortedKeys(ss, func(sf *models.Surfacing) string { return sf.ID }),
		[]string{"s-exp", "s-late", "s-new", "s-pending", "s-waits"})
	left, err := s.GetSurfacing(ctx, ns, "s-exp")
	mustNil(t, err)
	assertEqual(t, "experiment surfacing", left, done(exp, 20))
	_, err = s.GetSurfacing(ctx, other, "o-done")
	wantCode(t, err, models.ENOTFOUND)

	after, err := s.GetMemory(ctx, ns, "m1")
	mustNil(t, err)
	if after.SurfaceCount != before.SurfaceCount || !after.LastSurfaced.Equal(before.LastSurfaced) {
		t.Fatalf("surfacing counters after pruning: %d, %v; want %d, %v", after.SurfaceCount, after.LastSurfaced, before.SurfaceCount, before.LastSurfaced)
	}

	// The log's numbering goes on from the event that stayed.
	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		return tx.InsertEvent(&models.Event{ID: "e5", Namespace: ns, Type: models.EventUsed, At: at(160)})
	}))
	evs, err := s.FindEvents(ctx, models.EventFilter{Namespace: ns, BySeq: true})
	mustNil(t, err)
	var seqs []string
	for _, e := range evs {
		seqs = append(seqs, e.ID+"#"+string(rune('0'+e.Seq)))
	}
	assertIDs(t, "events left, by sequence", seqs, []string{"e4#5", "e5#6"})
	oevs, err := s.FindEvents(ctx, models.EventFilter{Namespace: other})
	mustNil(t, err)
	if len(oevs) != 1 || oevs[0].ID != "o1" {
		t.Fatalf("the other namespace's only event: got %v", oevs)
	}

	ds, err := s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns})
	mustNil(t, err)
	assertIDs(t, "decisions left", sortedKeys(ds, func(d *models.Decision) string { return d.TurnID }),
		[]string{"t-exp", "t-new", "t-pending"})

	_, err = s.GetConversation(ctx, ns, "c-old")
	wantCode(t, err, models.ENOTFOUND)
	c, err := s.GetConversation(ctx, ns, "c-new")
	mustNil(t, err)
	assertEqual(t, "conversation left", c, conv("c-new", 200))
	c, err = s.GetConversation(ctx, ns, "c-unset")
	mustNil(t, err)
	assertEqual(t, "conversation with no update time", c, unset)

	runs, err := s.FindJobRuns(ctx, "", 0)
	mustNil(t, err)
	var rids []string
	for _, r := range runs {
		rids = append(rids, r.ID)
	}
	assertIDs(t, "job runs left, newest first", rids, []string{"b1", "a2"})
}

// testPruneHistoryPerNamespace: a namespace's own cutoff replaces the default one, a
// namespace without either keeps everything, and job runs follow the default alone.
func testPruneHistoryPerNamespace(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	const third = "suite-third"
	for _, n := range []string{ns, other, third} {
		mustCreate(t, s, write(mem(n, "m1", "the kettle is broken", at(0))))
		for i, minute := range []int{10, 50, 90} {
			sf := surfacing(n, "s"+string(rune('0'+i)), "c1", "m1", minute)
			sf.Outcome, sf.OutcomeAt = models.EventUsed, at(minute+1)
			mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{sf},
				&models.ConversationState{Namespace: n, ConversationID: "c" + string(rune('0'+i)), Type: models.ConvDebugging, Turns: 1, UpdatedAt: at(minute)}))
		}
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			for i, minute := range []int{10, 50, 90, 95} { // the last is the namespace's latest: stays
				if err := tx.InsertEvent(&models.Event{ID: "e" + string(rune('0'+i)), Namespace: n, Type: models.EventUsed, At: at(minute)}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	// A newer turn last, so that no namespace's surfacing is the store's newest row.
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing("suite-fourth", "s9", "c1", "m1", 500)}, nil))
	mustNil(t, s.RecordJobRun(ctx, &models.JobRun{ID: "a1", Job: "job-a", Start: at(10), End: at(11), Finished: true}))
	mustNil(t, s.RecordJobRun(ctx, &models.JobRun{ID: "a2", Job: "job-a", Start: at(20), End: at(21), Finished: true}))

	// No default: ns up to minute 60, other up to 20, third keeps everything; job runs stay.
	got, err := s.PruneHistory(ctx, models.PruneCut{Namespaces: map[string]time.Time{ns: at(60), other: at(20)}})
	mustNil(t, err)
	if want := (models.Pruned{Surfacings: 3, Events: 3, Conversations: 3}); got != want {
		t.Fatalf("pruned %+v, want %+v", got, want)
	}
	left := func(n string) (surfs, events, convs int) {
		ss, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: n})
		mustNil(t, err)
		evs, err := s.FindEvents(ctx, models.EventFilter{Namespace: n})
		mustNil(t, err)
		for i := range 3 {
			if _, err := s.GetConversation(ctx, n, "c"+string(rune('0'+i))); err == nil {
				convs++
			}
		}
		return len(ss), len(evs), convs
	}
	for n, want := range map[string][3]int{ns: {1, 2, 1}, other: {2, 3, 2}, third: {3, 4, 3}} {
		if a, b, c := left(n); [3]int{a, b, c} != want {
			t.Errorf("%s keeps %d surfacings, %d events, %d conversations; want %v", n, a, b, c, want)
		}
	}
	runs, err := s.FindJobRuns(ctx, "", 0)
	mustNil(t, err)
	if len(runs) != 2 {
		t.Fatalf("job runs after a cut with no default: %d, want 2", len(runs))
	}

	// A default too: third goes up to it, and job runs before it.
	got, err = s.PruneHistory(ctx, models.PruneCut{Before: at(60), Namespaces: map[string]time.Time{other: at(20)}})
	mustNil(t, err)
	if want := (models.Pruned{Surfacings: 2, Events: 2, Conversations: 2, JobRuns: 1}); got != want {
		t.Fatalf("pruned with a default %+v, want %+v", got, want)
	}
	if a, b, c := left(third); [3]int{a, b, c} != [3]int{1, 2, 1} {
		t.Errorf("third keeps %d surfacings, %d events, %d conversations after the default cut; want 1, 2, 1", a, b, c)
	}
}

// sortedKeys returns key of each of xs, sorted.
func sortedKeys[T any](xs []T, key func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = key(x)
	}
	slices.Sort(out)
	return out
}
