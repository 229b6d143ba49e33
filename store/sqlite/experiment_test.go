package sqlite

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// TestExperimentCountsMatchTheRows: the counters the write paths keep (experiment_tally.go)
// agree with a count of the rows made here, over random turns, surfacings and outcomes —
// including outcomes replaced later and rewritten decisions — as of after the last day
// and as of its last instant.
func TestExperimentCountsMatchTheRows(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	e := &models.Experiment{ID: "x", Namespace: "n", Name: "x", Status: models.ExperimentRunning, CreatedAt: start,
		Variants: []models.Variant{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5}}}
	if err := s.CreateExperiment(ctx, e); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	outcomes := []models.EventType{"", models.EventUsed, models.EventHelpful, models.EventIgnored, models.EventDismissed}
	type key struct {
		v string
		d int
	}
	want := map[key]*models.DayTally{}
	wantDay := func(v string, d int) *models.DayTally {
		if want[key{v, d}] == nil {
			want[key{v, d}] = &models.DayTally{Day: start.Add(time.Duration(d) * 24 * time.Hour)}
		}
		return want[key{v, d}]
	}
	count := func(dt *models.DayTally, o models.EventType, by int) {
		switch o {
		case models.EventUsed:
			dt.Used += by
		case models.EventHelpful:
			dt.Helpful += by
		case models.EventIgnored:
			dt.Ignored += by
		case models.EventDismissed:
			dt.Dismissed += by
		}
	}
	lat := map[string][]float64{}
	convs := map[string]map[string]bool{"a": {}, "b": {}}
	for i := range 400 {
		d := rng.IntN(5)
		v := []string{"a", "b"}[rng.IntN(2)]
		at := start.Add(time.Duration(d)*24*time.Hour + time.Duration(rng.IntN(86400))*time.Second)
		turn, conv := fmt.Sprintf("t%d", i), fmt.Sprintf("%s-c%d", v, rng.IntN(30))
		ms := rng.Float64() * 50
		shown := rng.IntN(3)
		dec := &models.Decision{Namespace: "n", TurnID: turn, ConversationID: conv, Variant: v, Experiment: "x", Policy: "bandit",
			Prob: 1, LatencyMS: ms, Surfaced: shown, At: at}
		if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(dec) }); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(4) == 0 { // rewarded later: the same turn
			dec.Rewarded, dec.Reward = true, 0.5
			if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(dec) }); err != nil {
				t.Fatal(err)
			}
		}
		wantDay(v, d).Turns++
		if shown == 0 {
			wantDay(v, d).EmptyTurns++
		}
		lat[v] = append(lat[v], float64(int(ms*10+0.5))/10)
		convs[v][conv] = true
		for k := range shown {
			mode := []models.Mode{models.ModeAmbient, models.ModeResurface, models.ModeSearch}[rng.IntN(3)]
			sf := &models.Surfacing{ID: fmt.Sprintf("%s-%d", turn, k), Namespace: "n", ConversationID: conv, TurnID: turn, MemoryID: "m",
				Mode: mode, Variant: v, Experiment: "x", At: at, Outcome: outcomes[rng.IntN(len(outcomes))]}
			if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
				t.Fatal(err)
			}
			final := sf.Outcome
			if rng.IntN(3) == 0 { // a later report replaces the outcome
				final = outcomes[1+rng.IntN(4)]
				if err := s.Update(ctx, func(tx models.Tx) error {
					got, err := tx.GetSurfacing("n", sf.ID)
					if err != nil {
						return err
					}
					got.Outcome, got.OutcomeAt = final, at.Add(time.Second)
					return tx.PutSurfacing(got)
				}); err != nil {
					t.Fatal(err)
				}
			}
			if mode != models.ModeSearch {
				dt := wantDay(v, d)
				dt.Surfaced++
				count(dt, final, 1)
			}
		}
	}
	check := func(name string, asOf time.Time) {
		got, err := s.TallyExperiment(ctx, "n", "x", asOf)
		if err != nil {
			t.Fatal(err)
		}
		for _, vt := range got {
			var days []models.DayTally
			for d := range 5 {
				if dt := want[key{vt.Variant, d}]; dt != nil {
					days = append(days, *dt)
				}
			}
			if !reflect.DeepEqual(vt.Days, days) {
				t.Errorf("%s, variant %s: days\n%+v\nwant\n%+v", name, vt.Variant, vt.Days, days)
			}
			gotLat := slices.Clone(vt.LatenciesMS)
			slices.Sort(gotLat)
			wantLat := slices.Clone(lat[vt.Variant])
			slices.Sort(wantLat)
			if !slices.Equal(gotLat, wantLat) || vt.Conversations != len(convs[vt.Variant]) || vt.Turns != len(wantLat) {
				t.Errorf("%s, variant %s: %d latencies, %d conversations, %d turns; want %d, %d, %d", name, vt.Variant,
					len(gotLat), vt.Conversations, vt.Turns, len(wantLat), len(convs[vt.Variant]), len(wantLat))
			}
		}
	}
	check("after the last day", start.Add(6*24*time.Hour))
	check("at the end of the last day", start.Add(5*24*time.Hour-time.Nanosecond))
}
