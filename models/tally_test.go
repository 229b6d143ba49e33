package models

import (
	"reflect"
	"testing"
	"time"
)

var tallyDay0 = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

// tallyAt is day d (0: 2026-05-01) at hour h, minute m.
func tallyAt(d, h, m int) time.Time {
	return tallyDay0.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// cell is a counter of variant "a" of experiment x in namespace n, days relative to day 0.
func cell(day, known int) TallyCell {
	d0 := UnixDay(tallyDay0)
	return TallyCell{"n", "x", "a", d0 + int64(day), d0 + int64(known)}
}

func TestUnixDayAndLatencyTenths(t *testing.T) {
	for _, tt := range []struct {
		at   time.Time
		want int64
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(1970, 1, 1, 23, 59, 59, 999, time.UTC), 0},
		{time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC), 1},
		{time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), -1},                     // floored, not truncated
		{time.Date(2026, 5, 1, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)), 20573}, // 2026-04-30 23:00 UTC
	} {
		if got := UnixDay(tt.at); got != tt.want {
			t.Errorf("UnixDay(%s) = %d, want %d", tt.at, got, tt.want)
		}
	}
	for _, tt := range []struct {
		ms   float64
		want int64
	}{{12.44, 124}, {12.46, 125}, {12.4, 124}, {12.6, 126}, {0.04, 0}, {0.05, 1}, {30.06, 301}, {-3, 0}, {0, 0}} {
		if got := LatencyTenths(tt.ms); got != tt.want {
			t.Errorf("LatencyTenths(%g) = %d, want %d", tt.ms, got, tt.want)
		}
	}
}

func TestTalliesSurfacing(t *testing.T) {
	sf := func(mode Mode, outcome EventType, decided time.Time) *Surfacing {
		return &Surfacing{Namespace: "n", Experiment: "x", Variant: "a", Mode: mode, At: tallyAt(0, 9, 0), Outcome: outcome, OutcomeAt: decided}
	}
	for _, tt := range []struct {
		name   string
		old, s *Surfacing
		want   map[TallyCell]TallyCounts
	}{
		{name: "recorded undecided", s: sf(ModeAmbient, "", time.Time{}),
			want: map[TallyCell]TallyCounts{cell(0, 0): {Surfaced: 1}}},
		{name: "recorded with an implicit ignore", s: sf(ModeResurface, EventIgnored, time.Time{}),
			want: map[TallyCell]TallyCounts{cell(0, 0): {Surfaced: 1, Ignored: 1}}},
		{name: "a search is not counted", s: sf(ModeSearch, EventUsed, tallyAt(0, 10, 0))},
		{name: "outside an experiment", s: &Surfacing{Namespace: "n", Mode: ModeAmbient, At: tallyAt(0, 9, 0), Outcome: EventUsed}},
		{name: "decided the same day", old: sf(ModeAmbient, "", time.Time{}), s: sf(ModeAmbient, EventUsed, tallyAt(0, 10, 0)),
			want: map[TallyCell]TallyCounts{cell(0, 0): {Used: 1}}},
		{name: "decided late: known the next day", old: sf(ModeAmbient, "", time.Time{}), s: sf(ModeAmbient, EventHelpful, tallyAt(1, 0, 1)),
			want: map[TallyCell]TallyCounts{cell(0, 1): {Helpful: 1}}},
		{name: "stamped before its surfacing: known its day", old: sf(ModeAmbient, "", time.Time{}), s: sf(ModeAmbient, EventDismissed, tallyAt(-1, 23, 0)),
			want: map[TallyCell]TallyCounts{cell(0, 0): {Dismissed: 1}}},
		{name: "an implicit ignore replaced two days on", old: sf(ModeAmbient, EventIgnored, time.Time{}), s: sf(ModeAmbient, EventUsed, tallyAt(2, 9, 0)),
			want: map[TallyCell]TallyCounts{cell(0, 0): {Ignored: -1}, cell(0, 2): {Used: 1}}},
		{name: "rewritten unchanged", old: sf(ModeAmbient, EventUsed, tallyAt(1, 0, 0)), s: sf(ModeAmbient, EventUsed, tallyAt(1, 0, 0))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got Tallies
			got.Surfacing(tt.old, tt.s)
			if len(got.Counts) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got.Counts, tt.want) {
				t.Errorf("counts %v, want %v", got.Counts, tt.want)
			}
		})
	}
}

func TestTalliesDecisionAndConversation(t *testing.T) {
	d := &Decision{Namespace: "n", Experiment: "x", Variant: "a", TurnID: "t1", ConversationID: "c", LatencyMS: 12.46, At: tallyAt(1, 9, 0)}
	var got Tallies
	got.Decision(nil, d)
	first, changed := got.Conversation(d, FirstTurn{})
	lat := LatencyCell{"n", "x", "a", UnixDay(tallyAt(1, 0, 0)), 125}
	if want := (Tallies{Counts: map[TallyCell]TallyCounts{cell(1, 1): {Turns: 1, EmptyTurns: 1, Conversations: 1}},
		Latencies: map[LatencyCell]int{lat: 1}}); !reflect.DeepEqual(got, want) || !changed || first != (FirstTurn{"a", d.At}) {
		t.Fatalf("a new empty turn: %+v, first %+v (%v); want %+v", got, first, changed, want)
	}

	// A reward rewrites the decision: nothing moves.
	rewarded := *d
	rewarded.Rewarded, rewarded.Reward = true, 1
	var none Tallies
	none.Decision(d, &rewarded)
	if _, changed := none.Conversation(&rewarded, first); !none.Empty() || changed {
		t.Errorf("a reward moved %+v (first changed: %v)", none, changed)
	}

	// A turn recorded after a later one moves the conversation to its own, earlier day.
	early := *d
	early.TurnID, early.At, early.Surfaced = "t0", tallyAt(0, 8, 0), 2
	var moved Tallies
	next, changed := moved.Conversation(&early, first)
	if want := map[TallyCell]TallyCounts{cell(1, 1): {Conversations: -1}, cell(0, 0): {Conversations: 1}}; !reflect.DeepEqual(moved.Counts, want) ||
		!changed || next.At != early.At {
		t.Errorf("an earlier turn: %v, first %+v; want %v", moved.Counts, next, want)
	}
	// A later turn of the conversation changes nothing.
	late := *d
	late.At = tallyAt(3, 0, 0)
	var same Tallies
	if _, changed := same.Conversation(&late, first); changed || !same.Empty() {
		t.Errorf("a later turn moved %+v", same)
	}
}

// Report counts what was known on the days begun by asOf: a late outcome from the day it
// was decided, the days ascending, every variant in order even with nothing counted.
func TestTalliesReport(t *testing.T) {
	var tl Tallies
	for _, d := range []*Decision{
		{Namespace: "n", Experiment: "x", Variant: "a", ConversationID: "c1", LatencyMS: 12.44, Surfaced: 1, At: tallyAt(1, 9, 0)},
		{Namespace: "n", Experiment: "x", Variant: "a", ConversationID: "c1", LatencyMS: 3, Surfaced: 1, At: tallyAt(0, 9, 0)},
	} {
		tl.Decision(nil, d)
	}
	first, _ := tl.Conversation(&Decision{Namespace: "n", Experiment: "x", Variant: "a", At: tallyAt(1, 9, 0)}, FirstTurn{})
	tl.Conversation(&Decision{Namespace: "n", Experiment: "x", Variant: "a", At: tallyAt(0, 9, 0)}, first)
	tl.Surfacing(nil, &Surfacing{Namespace: "n", Experiment: "x", Variant: "a", Mode: ModeAmbient, At: tallyAt(0, 9, 0), Outcome: EventUsed, OutcomeAt: tallyAt(2, 1, 0)})
	tl.Surfacing(nil, &Surfacing{Namespace: "n", Experiment: "x", Variant: "a", Mode: ModeAmbient, At: tallyAt(1, 9, 0), Outcome: EventDismissed, OutcomeAt: tallyAt(1, 9, 5)})
	tl.Surfacing(nil, &Surfacing{Namespace: "n", Experiment: "x", Variant: "gone", Mode: ModeAmbient, At: tallyAt(1, 9, 0)})

	for _, tt := range []struct {
		asOf time.Time
		want []*VariantTally
	}{
		{tallyAt(0, 0, 0), []*VariantTally{{Variant: "a"}, {Variant: "b"}}},
		{tallyAt(1, 0, 0), []*VariantTally{{Variant: "a", Conversations: 1, Turns: 1, Surfaced: 1, LatenciesMS: []float64{3},
			Days: []DayTally{{Day: tallyAt(0, 0, 0), Turns: 1, Surfaced: 1}}}, {Variant: "b"}}},
		{tallyAt(1, 0, 1), []*VariantTally{{Variant: "a", Conversations: 1, Turns: 2, Surfaced: 2, Dismissed: 1, LatenciesMS: []float64{3, 12.4},
			Days: []DayTally{{Day: tallyAt(0, 0, 0), Turns: 1, Surfaced: 1}, {Day: tallyAt(1, 0, 0), Turns: 1, Surfaced: 1, Dismissed: 1}}}, {Variant: "b"}}},
		{tallyAt(2, 0, 1), []*VariantTally{{Variant: "a", Conversations: 1, Turns: 2, Surfaced: 2, Used: 1, Dismissed: 1, LatenciesMS: []float64{3, 12.4},
			Days: []DayTally{{Day: tallyAt(0, 0, 0), Turns: 1, Surfaced: 1, Used: 1}, {Day: tallyAt(1, 0, 0), Turns: 1, Surfaced: 1, Dismissed: 1}}}, {Variant: "b"}}},
	} {
		got := tl.Report([]string{"a", "b"}, tt.asOf)
		for _, v := range got {
			if len(v.LatenciesMS) == 2 && v.LatenciesMS[0] > v.LatenciesMS[1] {
				v.LatenciesMS[0], v.LatenciesMS[1] = v.LatenciesMS[1], v.LatenciesMS[0]
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("as of %s:\n got %+v %+v\nwant %+v %+v", tt.asOf, *got[0], *got[1], *tt.want[0], *tt.want[1])
		}
	}
}
