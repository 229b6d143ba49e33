package experiment_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

var ctx = context.Background()

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// record writes n ambient turns of a variant on a day, each with one surfacing whose
// outcome is the i-th of outcomes (cycled; "" for none).
func record(t *testing.T, st models.Store, expID, variant string, day time.Time, n int, outcomes []models.EventType) {
	t.Helper()
	for i := range n {
		at := day.Add(time.Duration(i) * time.Minute)
		turn := variant + day.Format("0102") + strconv.Itoa(i)
		d := &models.Decision{Namespace: "ns", TurnID: turn, ConversationID: "c" + strconv.Itoa(i%7), ConvType: models.ConvOther,
			Variant: variant, Experiment: expID, Policy: "bandit", Prob: 1, Surfaced: 1, LatencyMS: float64(i % 13), At: at}
		if err := st.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(d) }); err != nil {
			t.Fatal(err)
		}
		s := &models.Surfacing{ID: "s-" + turn, Namespace: "ns", ConversationID: d.ConversationID, TurnID: turn, MemoryID: "m",
			Mode: models.ModeAmbient, Variant: variant, Experiment: expID, At: at, Outcome: outcomes[i%len(outcomes)]}
		if s.Outcome != "" {
			s.OutcomeAt = at.Add(time.Second)
		}
		if err := st.RecordSurfacings(ctx, []*models.Surfacing{s}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReportSurvivesRestart: the report and its input computed again after the store is
// closed and opened are the same; the daily snapshot is taken once per day and read as of
// a date by the nearest day at or before it.
func TestReportSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st := open(t, path)
	day1 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clock := day1.Add(time.Hour)
	svc := experiment.NewService(st, experiment.Options{Now: func() time.Time { return clock }})
	// The job walks the namespaces that hold memories (an experiment elsewhere has nothing
	// to count).
	if err := st.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: "m", Namespace: "ns", Kind: models.KindFact,
		Content: "bees", CreatedAt: day1, Confidence: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	e, err := svc.Create(ctx, "ns", &models.Experiment{Name: "fresh", Variants: []models.Variant{
		{Name: "control", Share: 0.5}, {Name: "fresh", Share: 0.5}}}, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if running, err := svc.Running(ctx, "ns"); err != nil || running == nil || running.ID != e.ID {
		t.Fatalf("running = %v, %v; want %s", running, err, e.ID)
	}
	used, ign := []models.EventType{models.EventUsed, models.EventIgnored, ""}, []models.EventType{models.EventIgnored, models.EventHelpful}
	record(t, st, e.ID, "control", day1.Add(2*time.Hour), 30, used)
	record(t, st, e.ID, "fresh", day1.Add(2*time.Hour), 40, ign)
	record(t, st, e.ID, "fresh", day1.Add(26*time.Hour), 10, ign)

	asOf := day1.Add(30 * time.Hour)
	before, err := svc.InputAt(ctx, e, asOf)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{before.Variants[0].Turns, before.Variants[0].Used, before.Variants[1].Turns, before.Variants[1].Helpful}; !slices.Equal(got, []int{30, 10, 50, 25}) {
		t.Errorf("turns/used/turns/helpful = %v, want [30 10 50 25]", got)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, path)
	t.Cleanup(func() { st.Close() })
	svc = experiment.NewService(st, experiment.Options{Now: func() time.Time { return clock }})
	after, err := svc.InputAt(ctx, e, asOf)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []experiment.Input{before, after} {
		for _, v := range in.Variants {
			slices.Sort(v.LatenciesMS)
		}
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("input after restart\n%+v\nwant\n%+v", after, before)
	}
	rb, _ := json.Marshal(experiment.Analyze(before))
	ra, _ := json.Marshal(experiment.Analyze(after))
	if string(rb) != string(ra) {
		t.Errorf("report after restart %s, want %s", ra, rb)
	}

	// The job on day 2 snapshots day 1, once; on day 3, day 2.
	for i, want := range []int{1, 0} {
		n, err := svc.SnapshotAll(ctx, day1.Add(24*time.Hour+10*time.Minute))
		if err != nil || n != want {
			t.Fatalf("run %d on day 2: %d snapshots, %v; want %d", i, n, err, want)
		}
	}
	if n, err := svc.SnapshotAll(ctx, day1.Add(48*time.Hour+10*time.Minute)); err != nil || n != 1 {
		t.Fatalf("day 3: %d snapshots, %v; want 1", n, err)
	}
	r1, err := svc.SnapshotOn(ctx, "ns", e.ID, day1)
	if err != nil {
		t.Fatal(err)
	}
	if !r1.Input.AsOf.Equal(day1.Add(24 * time.Hour)) {
		t.Errorf("day-1 snapshot as of %v, want the end of day 1", r1.Input.AsOf)
	}
	// A date after the last snapshot reads the last one.
	r9, err := svc.SnapshotOn(ctx, "ns", e.ID, day1.Add(9*24*time.Hour))
	if err != nil || !r9.Input.AsOf.Equal(day1.Add(48*time.Hour)) {
		t.Errorf("day 10: as of %v, %v; want the day-2 snapshot (as of %v)", r9.Input.AsOf, err, day1.Add(48*time.Hour))
	}
	_, err = svc.SnapshotOn(ctx, "ns", e.ID, day1.Add(-24*time.Hour))
	if models.ErrorCode(err) != models.ENOTFOUND || models.ErrorField(err) != "as_of" {
		t.Errorf("before the first snapshot: %v, want ENOTFOUND naming as_of", err)
	}
	// A second running experiment is refused; after a stop, Running says none.
	if _, err := svc.Create(ctx, "ns", &models.Experiment{Name: "x", Variants: []models.Variant{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5}}}, ""); models.ErrorCode(err) != models.ECONFLICT {
		t.Errorf("second experiment: %v, want ECONFLICT", err)
	}
	if _, err := svc.Stop(ctx, "ns", e.ID); err != nil {
		t.Fatal(err)
	}
	if running, err := svc.Running(ctx, "ns"); err != nil || running != nil {
		t.Errorf("after stop: running %v, %v; want none", running, err)
	}
}

// TestReportCountsEmptyTurnsFromTheStore: a created experiment ranks by reward per turn, and
// the report over the SQLite store counts the turns that surfaced nothing, on past days (the
// running counts) and on the report's own day (the rows), at the empty-turn reward.
func TestReportCountsEmptyTurnsFromTheStore(t *testing.T) {
	st := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer st.Close()
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	now := day.Add(36 * time.Hour)
	svc := experiment.NewService(st, experiment.Options{Now: func() time.Time { return now }})
	e, err := svc.Create(ctx, "ns", &models.Experiment{Name: "quiet", Variants: []models.Variant{{Name: "control", Share: 0.5}, {Name: "quiet", Share: 0.5}}}, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if e.PrimaryMetric != models.MetricRewardPerTurn {
		t.Fatalf("created with primary metric %q, want reward_per_turn", e.PrimaryMetric)
	}
	for _, d := range []time.Time{day, day.Add(24 * time.Hour)} {
		record(t, st, e.ID, "control", d, 4, []models.EventType{models.EventUsed})
		for i := range 4 { // empty turns of quiet
			dec := &models.Decision{Namespace: "ns", TurnID: "empty" + d.Format("0102") + strconv.Itoa(i), ConversationID: "q",
				ConvType: models.ConvOther, Variant: "quiet", Experiment: e.ID, Policy: "bandit", Prob: 1, At: d.Add(time.Duration(i) * time.Minute)}
			if err := st.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(dec) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := svc.Report(ctx, "ns", e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.PrimaryMetric != models.MetricRewardPerTurn {
		t.Errorf("report ranks by %q", r.PrimaryMetric)
	}
	ctl, quiet := r.Variants[0], r.Variants[1]
	if ctl.Turns != 8 || ctl.EmptyTurns != 0 || quiet.Turns != 8 || quiet.EmptyTurns != 8 {
		t.Errorf("turns %d (%d empty) and %d (%d empty), want 8 (0) and 8 (8)", ctl.Turns, ctl.EmptyTurns, quiet.Turns, quiet.EmptyTurns)
	}
	if ctl.RewardPerTurn == nil || *ctl.RewardPerTurn != 0.8 || quiet.RewardPerTurn == nil || *quiet.RewardPerTurn != 0.4 {
		t.Errorf("reward per turn %v and %v, want 0.8 (every turn used) and 0.4 (every turn empty)", ctl.RewardPerTurn, quiet.RewardPerTurn)
	}
}
