package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// experiment returns a valid running experiment created at minute.
func experiment(namespace, id string, minute int) *models.Experiment {
	div := 0.5
	return &models.Experiment{
		ID: id, Namespace: namespace, Name: "half-life " + id, Status: models.ExperimentRunning,
		Variants: []models.Variant{
			{Name: "control", Share: 0.5},
			{Name: "fresh", Share: 0.5, Overrides: models.Overrides{FreshnessHalfLifeHours: 48, Diversity: &div,
				ThresholdPolicy: "fixed:0.7", RelevanceModel: "off", Rerank: "off"}},
		},
		PrimaryMetric: models.MetricPrecision, CreatedAt: at(minute), CreatedBy: "ops",
	}
}

// testExperiments covers experiments: create, get, list newest first, one running per
// namespace, stop (idempotent), namespace isolation; and the tally of the turns and
// surfacings recorded in an experiment, as of a time (the rule of models/tally.go: what was
// known on the days begun by then), with exact numbers, so every store reports the same.
func testExperiments(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	t.Run("CreateGetFindStop", func(t *testing.T) {
		e1 := experiment(ns, "e1", 1)
		mustNil(t, s.CreateExperiment(ctx, e1))
		got, err := s.GetExperiment(ctx, ns, "e1")
		mustNil(t, err)
		assertEqual(t, "experiment", got, e1)
		// One running experiment per namespace; a duplicate id is a conflict too.
		wantCode(t, s.CreateExperiment(ctx, experiment(ns, "e2", 2)), models.ECONFLICT)
		wantCode(t, s.CreateExperiment(ctx, experiment(ns, "e1", 2)), models.ECONFLICT)
		// Another namespace runs its own.
		mustNil(t, s.CreateExperiment(ctx, experiment(other, "e2", 2)))
		_, err = s.GetExperiment(ctx, ns, "e2")
		wantCode(t, err, models.ENOTFOUND)

		stopped, err := s.StopExperiment(ctx, ns, "e1", at(10))
		mustNil(t, err)
		want := experiment(ns, "e1", 1)
		want.Status, want.StoppedAt = models.ExperimentStopped, at(10)
		assertEqual(t, "stopped", stopped, want)
		again, err := s.StopExperiment(ctx, ns, "e1", at(20))
		mustNil(t, err)
		assertEqual(t, "stopped again", again, want)
		_, err = s.StopExperiment(ctx, ns, "nope", at(20))
		wantCode(t, err, models.ENOTFOUND)

		mustNil(t, s.CreateExperiment(ctx, experiment(ns, "e3", 30)))
		list, err := s.FindExperiments(ctx, ns)
		mustNil(t, err)
		assertEqual(t, "list", list, []*models.Experiment{experiment(ns, "e3", 30), want})

		bad := experiment(ns, "e4", 40)
		bad.Variants[1].Share = 0.6
		wantCode(t, s.CreateExperiment(ctx, bad), models.EINVALID)
		_, err = s.GetExperiment(ctx, "", "e1")
		wantCode(t, err, models.EINVALID)
	})
	t.Run("Tally", func(t *testing.T) {
		e := experiment(ns, "tally", 0)
		e.Namespace = "suite-tally"
		mustNil(t, s.CreateExperiment(ctx, e))
		day2 := 24 * 60
		// Turns: control has two conversations, five turns (two on day 2; t8 and t9 empty, one
		// each day: the counts of past days and the rows of asOf's day both see them);
		// fresh one turn. A turn outside the experiment and one of another namespace do
		// not count.
		decisions := []*models.Decision{
			{TurnID: "t1", ConversationID: "c1", Variant: "control", Experiment: "tally", LatencyMS: 10, At: at(1), Surfaced: 3},
			{TurnID: "t2", ConversationID: "c2", Variant: "control", Experiment: "tally", LatencyMS: 30, At: at(2), Surfaced: 1},
			{TurnID: "t3", ConversationID: "c1", Variant: "control", Experiment: "tally", LatencyMS: 20, At: at(day2 + 1), Surfaced: 3},
			{TurnID: "t8", ConversationID: "c2", Variant: "control", Experiment: "tally", LatencyMS: 40, At: at(4)},
			{TurnID: "t9", ConversationID: "c1", Variant: "control", Experiment: "tally", LatencyMS: 50, At: at(day2 + 3)},
			{TurnID: "t4", ConversationID: "c3", Variant: "fresh", Experiment: "tally", LatencyMS: 5, At: at(3), Surfaced: 1},
			{TurnID: "t5", ConversationID: "c4", At: at(3)},
			{TurnID: "t6", ConversationID: "c5", Variant: "fresh", Experiment: "tally", LatencyMS: 7, At: at(day2 + 800)}, // the day after asOf's
		}
		for _, d := range decisions {
			d.Namespace, d.ConvType, d.Policy, d.Prob = "suite-tally", models.ConvOther, "bandit", 1
			mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(d) }))
		}
		type sf struct {
			id, turn, variant string
			mode              models.Mode
			minute            int
			outcome           models.EventType
			outcomeMinute     int
		}
		for _, x := range []sf{
			{"a1", "t1", "control", models.ModeAmbient, 1, models.EventUsed, 2},
			{"a2", "t1", "control", models.ModeResurface, 1, models.EventIgnored, 0}, // implicit
			{"a3", "t2", "control", models.ModeAmbient, 2, models.EventDismissed, 5},
			{"a4", "t3", "control", models.ModeAmbient, day2 + 1, models.EventHelpful, day2 + 2},
			{"a5", "t3", "control", models.ModeAmbient, day2 + 1, models.EventUsed, day2 + 800}, // decided the day after asOf's
			{"a6", "t3", "control", models.ModeSearch, day2 + 1, models.EventUsed, day2 + 2},    // search: not counted
			{"b1", "t4", "fresh", models.ModeAmbient, 3, "", 0},
		} {
			rec := surfacing("suite-tally", x.id, "c1", "m1", x.minute)
			rec.TurnID, rec.Variant, rec.Experiment, rec.Mode = x.turn, x.variant, "tally", x.mode
			mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{rec}, nil))
			if x.outcome != "" {
				mustNil(t, s.Update(ctx, func(tx models.Tx) error {
					got, err := tx.GetSurfacing("suite-tally", x.id)
					if err != nil {
						return err
					}
					got.Outcome = x.outcome
					if x.outcomeMinute > 0 {
						got.OutcomeAt = at(x.outcomeMinute)
					}
					return tx.PutSurfacing(got)
				}))
			}
		}
		// A reward rewrites a decision: still one turn. An implicit ignore replaced by a
		// later report counts as the report.
		rewarded := *decisions[0]
		rewarded.Rewarded, rewarded.Reward, rewarded.RewardedAt = true, 0.8, at(50)
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(&rewarded) }))
		late := surfacing("suite-tally", "a7", "c1", "m1", 1)
		late.TurnID, late.Variant, late.Experiment, late.Mode, late.Outcome = "t1", "control", "tally", models.ModeAmbient, models.EventIgnored
		mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{late}, nil))
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			got, err := tx.GetSurfacing("suite-tally", "a7")
			if err != nil {
				return err
			}
			got.Outcome, got.OutcomeAt = models.EventUsed, at(40)
			return tx.PutSurfacing(got)
		}))
		asOf := at(day2 + 100)
		got, err := s.TallyExperiment(ctx, "suite-tally", "tally", asOf)
		mustNil(t, err)
		if len(got) != 2 {
			t.Fatalf("tally has %d variants, want 2", len(got))
		}
		d1, d2 := t0.Truncate(24*time.Hour), t0.Truncate(24*time.Hour).Add(24*time.Hour)
		want := []*models.VariantTally{
			{Variant: "control", Conversations: 2, Turns: 5, EmptyTurns: 2, Surfaced: 6, Used: 2, Helpful: 1, Ignored: 1, Dismissed: 1,
				LatenciesMS: []float64{10, 20, 30, 40, 50}, Days: []models.DayTally{
					{Day: d1, Turns: 3, EmptyTurns: 1, Surfaced: 4, Used: 2, Ignored: 1, Dismissed: 1},
					{Day: d2, Turns: 2, EmptyTurns: 1, Surfaced: 2, Helpful: 1},
				}},
			{Variant: "fresh", Conversations: 1, Turns: 1, Surfaced: 1, LatenciesMS: []float64{5},
				Days: []models.DayTally{{Day: d1, Turns: 1, Surfaced: 1}}},
		}
		for _, v := range got {
			slices.Sort(v.LatenciesMS)
		}
		assertEqual(t, "tally", got, want)

		_, err = s.TallyExperiment(ctx, "suite-tally", "missing", asOf)
		wantCode(t, err, models.ENOTFOUND)
		empty, err := s.TallyExperiment(ctx, "suite-tally", "tally", t0.Truncate(24*time.Hour)) // the first day not begun
		mustNil(t, err)
		if fmt.Sprint(empty[0].Turns, empty[0].Surfaced, empty[1].Turns) != "0 0 0" {
			t.Errorf("tally before the start: %+v %+v, want nothing counted", *empty[0], *empty[1])
		}
	})
	t.Run("TallyDays", func(t *testing.T) { testTallyDays(t, s) })
}

// testTallyDays: a report's earlier days as they were known then — a late outcome counts
// under its surfacing's day from the day it arrived, a replaced outcome as the one that
// replaced it, a conversation on the day of its first turn even when that turn is recorded
// last — and latencies to a tenth of a millisecond.
func testTallyDays(t *testing.T, s models.Store) {
	const ns = "suite-days"
	e := experiment(ns, "days", 0)
	mustNil(t, s.CreateExperiment(ctx, e))
	midnight := t0.Truncate(24 * time.Hour)
	tm := func(day, hour, minute int) time.Time {
		return midnight.Add(time.Duration(day)*24*time.Hour + time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
	}
	for _, d := range []*models.Decision{
		{TurnID: "u1", ConversationID: "c1", Variant: "control", LatencyMS: 12.44, Surfaced: 2, At: tm(0, 9, 0)},
		{TurnID: "u2", ConversationID: "c2", Variant: "fresh", LatencyMS: 12.46, Surfaced: 1, At: tm(0, 23, 59)},
		{TurnID: "u3", ConversationID: "c1", Variant: "control", LatencyMS: 0.04, At: tm(1, 10, 0)},
		{TurnID: "u4", ConversationID: "c3", Variant: "control", LatencyMS: 30.06, Surfaced: 1, At: tm(1, 11, 0)},
		{TurnID: "u5", ConversationID: "c3", Variant: "control", LatencyMS: 1, At: tm(0, 8, 0)}, // c3's first turn, recorded last
	} {
		d.Namespace, d.Experiment, d.ConvType, d.Policy, d.Prob = ns, "days", models.ConvOther, "bandit", 1
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(d) }))
	}
	record := func(id, turn, variant string, mode models.Mode, when time.Time, outcome models.EventType, decided time.Time) {
		t.Helper()
		sf := surfacing(ns, id, "c", "m1", 0)
		sf.TurnID, sf.Variant, sf.Experiment, sf.Mode, sf.At, sf.Outcome, sf.OutcomeAt = turn, variant, "days", mode, when, outcome, decided
		mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil))
	}
	decide := func(id string, outcome models.EventType, decided time.Time) {
		t.Helper()
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			got, err := tx.GetSurfacing(ns, id)
			if err != nil {
				return err
			}
			got.Outcome, got.OutcomeAt = outcome, decided
			return tx.PutSurfacing(got)
		}))
	}
	record("s1", "u1", "control", models.ModeAmbient, tm(0, 9, 0), "", time.Time{})
	decide("s1", models.EventUsed, tm(0, 10, 0))
	record("s2", "u1", "control", models.ModeAmbient, tm(0, 9, 0), "", time.Time{})
	decide("s2", models.EventHelpful, tm(1, 8, 0)) // late: the next day
	record("s3", "u2", "fresh", models.ModeAmbient, tm(0, 23, 59), "", time.Time{})
	decide("s3", models.EventDismissed, tm(1, 0, 1))                                                    // late, just after midnight
	record("s4", "u4", "control", models.ModeResurface, tm(1, 11, 0), models.EventIgnored, time.Time{}) // an implicit ignore
	decide("s4", models.EventUsed, tm(2, 9, 0))                                                         // replaced by a report two days on

	d0, d1 := tm(0, 0, 0), tm(1, 0, 0)
	tally := func(asOf time.Time) []*models.VariantTally {
		t.Helper()
		got, err := s.TallyExperiment(ctx, ns, "days", asOf)
		mustNil(t, err)
		for _, v := range got {
			slices.Sort(v.LatenciesMS)
		}
		return got
	}
	// The snapshot of day 0: what was known by its end.
	assertEqual(t, "as of the end of day 0", tally(tm(1, 0, 0)), []*models.VariantTally{
		{Variant: "control", Conversations: 2, Turns: 2, EmptyTurns: 1, Surfaced: 2, Used: 1, LatenciesMS: []float64{1, 12.4},
			Days: []models.DayTally{{Day: d0, Turns: 2, EmptyTurns: 1, Surfaced: 2, Used: 1}}},
		{Variant: "fresh", Conversations: 1, Turns: 1, Surfaced: 1, LatenciesMS: []float64{12.5},
			Days: []models.DayTally{{Day: d0, Turns: 1, Surfaced: 1}}},
	})
	// The snapshot of day 1: day 0's late outcomes. s4 counts with the outcome it has, a
	// report decided on day 2, so not yet.
	fresh := &models.VariantTally{Variant: "fresh", Conversations: 1, Turns: 1, Surfaced: 1, Dismissed: 1, LatenciesMS: []float64{12.5},
		Days: []models.DayTally{{Day: d0, Turns: 1, Surfaced: 1, Dismissed: 1}}}
	assertEqual(t, "as of the end of day 1", tally(tm(2, 0, 0)), []*models.VariantTally{
		{Variant: "control", Conversations: 2, Turns: 4, EmptyTurns: 2, Surfaced: 3, Used: 1, Helpful: 1,
			LatenciesMS: []float64{0, 1, 12.4, 30.1}, Days: []models.DayTally{
				{Day: d0, Turns: 2, EmptyTurns: 1, Surfaced: 2, Used: 1, Helpful: 1},
				{Day: d1, Turns: 2, EmptyTurns: 1, Surfaced: 1},
			}},
		fresh,
	})
	// Now, on day 2: s4's report has replaced its ignore.
	assertEqual(t, "on day 2", tally(tm(2, 12, 0)), []*models.VariantTally{
		{Variant: "control", Conversations: 2, Turns: 4, EmptyTurns: 2, Surfaced: 3, Used: 2, Helpful: 1,
			LatenciesMS: []float64{0, 1, 12.4, 30.1}, Days: []models.DayTally{
				{Day: d0, Turns: 2, EmptyTurns: 1, Surfaced: 2, Used: 1, Helpful: 1},
				{Day: d1, Turns: 2, EmptyTurns: 1, Surfaced: 1, Used: 1},
			}},
		fresh,
	})
}
