package models

import (
	"math"
	"time"
)

// The experiment tally's rule, kept once. A store records a turn, a surfacing or an outcome
// by adding to its counters the change Tallies.Decision, Tallies.Surfacing and
// Tallies.Conversation compute, and answers TallyExperiment by reading the counters back
// into a Tallies and calling Tallies.Report (SQLite: a report must not read a million
// outcomes); a store that keeps no counters folds its rows through the same functions
// (Neo4j). Either way no store decides what counts: it adds and reads.
//
// A count is a fact about the turns or surfacings of one UTC day (Day) that became known on
// one UTC day (Known): a turn, a surfacing and a conversation's first turn on their own day;
// a surfacing's outcome (the one it has now) on the day it was decided (an implicit
// ignore, which has no time of its own, and an outcome stamped before its surfacing: on
// the surfacing's day). A report as of asOf counts every count whose Known day began
// before asOf. That is exact for the reports the server makes — as of now (every day so
// far) and a daily snapshot as of a midnight (the days before it, a late outcome counting
// under its surfacing's day from the day it arrived; a snapshot is stored when taken, so
// an outcome replaced later does not rewrite it) — and it lets a store keep counts per
// day, a few thousand rows for a month, instead of reading a million outcomes for each
// report (a report as of an hour in the past counts that whole day).

// TallyCell addresses one counter: what became known on day Known about the turns and
// surfacings of day Day of a variant. Days are unix days (UnixDay).
type TallyCell struct {
	Namespace, Experiment, Variant string
	Day, Known                     int64
}

// TallyCounts are one cell's counts; a change to them may be negative.
type TallyCounts struct {
	Turns, EmptyTurns, Conversations, Surfaced, Used, Helpful, Ignored, Dismissed int
}

// LatencyCell addresses the count of a day's turns whose latency rounds to Tenths tenths
// of a millisecond (a turn's latency is known with it).
type LatencyCell struct {
	Namespace, Experiment, Variant string
	Day, Tenths                    int64
}

// FirstTurn is the earliest turn of a conversation in an experiment seen so far (zero At:
// none); a store keeps one per conversation so that Tallies.Conversation counts each
// conversation once, on the day of its first turn.
type FirstTurn struct {
	Variant string
	At      time.Time
}

// Tallies is a set of counts: the change one write makes to the counters (cells that net
// to zero are dropped), or the counters a report reads.
type Tallies struct {
	Counts    map[TallyCell]TallyCounts
	Latencies map[LatencyCell]int
}

const secondsPerDay = 24 * 60 * 60

// UnixDay is t's UTC day, counted from 1970-01-01 (negative before).
func UnixDay(t time.Time) int64 {
	s := t.Unix()
	d := s / secondsPerDay
	if s%secondsPerDay < 0 {
		d--
	}
	return d
}

// dayStart is the midnight UTC that starts unix day d.
func dayStart(d int64) time.Time { return time.Unix(d*secondsPerDay, 0).UTC() }

// LatencyTenths is a turn's latency as the tally keeps it: in tenths of a millisecond,
// rounded half away from zero (12.44 ms is 124, 12.46 ms 125); a negative or not-finite
// latency (none measured) is 0. Tenths keep the p50 and p95 a report shows exact to 0.1 ms
// with a few hundred counters a day instead of one row per turn.
func LatencyTenths(ms float64) int64 {
	if !(ms > 0) || math.IsInf(ms, 1) {
		return 0
	}
	return int64(math.Round(ms * 10))
}

// countsSurfacing reports whether a surfacing is counted: recorded in an experiment, by an
// ambient turn (ambient or resurface; a search is the bot asking, not the variant choosing).
func countsSurfacing(s *Surfacing) bool {
	return s != nil && s.Experiment != "" && (s.Mode == ModeAmbient || s.Mode == ModeResurface)
}

// Surfacing adds the change to the counts when the stored surfacing old is replaced by s:
// old nil when s is recorded, both when its outcome is decided or replaced (an implicit
// ignore by a later report). A surfacing counts with the outcome it has now, under its own
// day, known from the day that outcome was decided (outcomeKnown): the counts follow the
// stored surfacing, so a store that keeps no counters gets the same from its rows.
func (t *Tallies) Surfacing(old, s *Surfacing) {
	for _, x := range []struct {
		s    *Surfacing
		sign int
	}{{old, -1}, {s, 1}} {
		if !countsSurfacing(x.s) {
			continue
		}
		day := UnixDay(x.s.At)
		t.add(TallyCell{x.s.Namespace, x.s.Experiment, x.s.Variant, day, day}, TallyCounts{Surfaced: x.sign})
		if c, ok := outcomeCount(x.s.Outcome, x.sign); ok {
			t.add(TallyCell{x.s.Namespace, x.s.Experiment, x.s.Variant, day, outcomeKnown(x.s)}, c)
		}
	}
}

// outcomeKnown is the day a surfacing's outcome became known: the day of its outcome_at,
// or the surfacing's own day for an implicit ignore (no outcome_at) or an outcome stamped
// before the surfacing.
func outcomeKnown(s *Surfacing) int64 {
	day := UnixDay(s.At)
	if s.OutcomeAt.IsZero() {
		return day
	}
	return max(day, UnixDay(s.OutcomeAt))
}

// outcomeCount is n of outcome o as counts; ok is false for none (undecided).
func outcomeCount(o EventType, n int) (c TallyCounts, ok bool) {
	switch o {
	case EventUsed:
		c.Used = n
	case EventHelpful:
		c.Helpful = n
	case EventIgnored:
		c.Ignored = n
	case EventDismissed:
		c.Dismissed = n
	default:
		return c, false
	}
	return c, true
}

// Decision adds the change to the counts when the stored decision old (nil: none) is
// replaced by d: a turn in an experiment counts once with its latency, and as empty when it
// surfaced nothing; a reward rewrites the decision and moves nothing. The conversation is
// counted by Conversation.
func (t *Tallies) Decision(old, d *Decision) {
	for _, x := range []struct {
		d    *Decision
		sign int
	}{{old, -1}, {d, 1}} {
		if x.d == nil || x.d.Experiment == "" {
			continue
		}
		day := UnixDay(x.d.At)
		c := TallyCounts{Turns: x.sign}
		if x.d.Surfaced == 0 {
			c.EmptyTurns = x.sign
		}
		t.add(TallyCell{x.d.Namespace, x.d.Experiment, x.d.Variant, day, day}, c)
		t.addLatency(LatencyCell{x.d.Namespace, x.d.Experiment, x.d.Variant, day, LatencyTenths(x.d.LatencyMS)}, x.sign)
	}
}

// Conversation adds the change to the conversation counts that the turn d makes, given the
// conversation's first turn seen so far, and returns the first turn to keep and whether it
// changed. A conversation counts once per experiment, on the day of its earliest turn (a
// turn recorded out of order moves it to an earlier day); it is never uncounted.
func (t *Tallies) Conversation(d *Decision, first FirstTurn) (FirstTurn, bool) {
	if d == nil || d.Experiment == "" || (!first.At.IsZero() && !d.At.Before(first.At)) {
		return first, false
	}
	day := UnixDay(d.At)
	if !first.At.IsZero() {
		was := UnixDay(first.At)
		if was == day && first.Variant == d.Variant {
			return FirstTurn{Variant: d.Variant, At: d.At}, true
		}
		t.add(TallyCell{d.Namespace, d.Experiment, first.Variant, was, was}, TallyCounts{Conversations: -1})
	}
	t.add(TallyCell{d.Namespace, d.Experiment, d.Variant, day, day}, TallyCounts{Conversations: 1})
	return FirstTurn{Variant: d.Variant, At: d.At}, true
}

// Empty reports whether t changes nothing.
func (t *Tallies) Empty() bool { return len(t.Counts) == 0 && len(t.Latencies) == 0 }

// AddCounts adds c to the cell (a store reading its counters back).
func (t *Tallies) AddCounts(cell TallyCell, c TallyCounts) { t.add(cell, c) }

// AddLatencies adds n turns to the latency cell (a store reading its counters back).
func (t *Tallies) AddLatencies(cell LatencyCell, n int) { t.addLatency(cell, n) }

func (t *Tallies) add(cell TallyCell, c TallyCounts) {
	if t.Counts == nil {
		t.Counts = map[TallyCell]TallyCounts{}
	}
	sum := t.Counts[cell]
	sum.Turns += c.Turns
	sum.EmptyTurns += c.EmptyTurns
	sum.Conversations += c.Conversations
	sum.Surfaced += c.Surfaced
	sum.Used += c.Used
	sum.Helpful += c.Helpful
	sum.Ignored += c.Ignored
	sum.Dismissed += c.Dismissed
	if sum == (TallyCounts{}) {
		delete(t.Counts, cell)
		return
	}
	t.Counts[cell] = sum
}

func (t *Tallies) addLatency(cell LatencyCell, n int) {
	if t.Latencies == nil {
		t.Latencies = map[LatencyCell]int{}
	}
	if sum := t.Latencies[cell] + n; sum != 0 {
		t.Latencies[cell] = sum
	} else {
		delete(t.Latencies, cell)
	}
}

// Report is TallyExperiment's answer from the counts of one experiment: per variant, in
// the order given (the control first, every variant present even with nothing counted),
// the counts known on a day begun before asOf; days ascending, only days with something
// counted. Counts of a variant not given cannot be (variants never change) and are skipped.
func (t *Tallies) Report(variants []string, asOf time.Time) []*VariantTally {
	out := make([]*VariantTally, len(variants))
	byName := make(map[string]*VariantTally, len(variants))
	days := make(map[string]map[int64]*DayTally, len(variants))
	for i, v := range variants {
		out[i] = &VariantTally{Variant: v}
		byName[v] = out[i]
		days[v] = map[int64]*DayTally{}
	}
	begun := func(d int64) bool { return dayStart(d).Before(asOf) }
	for cell, c := range t.Counts {
		vt := byName[cell.Variant]
		if vt == nil || !begun(cell.Known) {
			continue
		}
		dt := days[cell.Variant][cell.Day]
		if dt == nil {
			dt = &DayTally{Day: dayStart(cell.Day)}
			days[cell.Variant][cell.Day] = dt
		}
		vt.Conversations += c.Conversations
		dt.Turns += c.Turns
		dt.EmptyTurns += c.EmptyTurns
		dt.Surfaced += c.Surfaced
		dt.Used += c.Used
		dt.Helpful += c.Helpful
		dt.Ignored += c.Ignored
		dt.Dismissed += c.Dismissed
	}
	for cell, n := range t.Latencies {
		if vt := byName[cell.Variant]; vt != nil && begun(cell.Day) {
			ms := float64(cell.Tenths) / 10
			for range n {
				vt.LatenciesMS = append(vt.LatenciesMS, ms)
			}
		}
	}
	for _, vt := range out {
		for _, d := range days[vt.Variant] {
			if *d == (DayTally{Day: d.Day}) {
				continue // e.g. only a conversation's first turn moved away
			}
			vt.Days = append(vt.Days, *d)
			vt.Turns += d.Turns
			vt.EmptyTurns += d.EmptyTurns
			vt.Surfaced += d.Surfaced
			vt.Used += d.Used
			vt.Helpful += d.Helpful
			vt.Ignored += d.Ignored
			vt.Dismissed += d.Dismissed
		}
		SortDays(vt.Days)
	}
	return out
}
