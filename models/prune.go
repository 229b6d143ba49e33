package models

import "time"

// Pruning the turn history: what Store.PruneHistory is asked (PruneCut), what it reports
// (Pruned), and the one rule of which rows may go, a function per kind of row. A store reads
// a window of its rows from before the cut with the fields below, asks the rule, and deletes
// the rows it chose; conditions of its own mechanics stay in the store, apart from the rule.
//
// Memories, edges, concepts, learned models, the bandit's posteriors and experiment
// reports already taken are never touched: what the turns taught stays.

// PruneCut says what PruneHistory deletes: the history older than Before, or than a
// namespace's own cutoff in Namespaces. A zero time keeps everything (of the namespace, or
// of every namespace not in Namespaces; job runs, which belong to none, follow Before).
type PruneCut struct {
	Before     time.Time
	Namespaces map[string]time.Time
}

// For returns namespace ns's cutoff (zero: keep everything).
func (c PruneCut) For(ns string) time.Time {
	if t, ok := c.Namespaces[ns]; ok {
		return t
	}
	return c.Before
}

// None reports whether the cut deletes nothing anywhere.
func (c PruneCut) None() bool {
	if !c.Before.IsZero() {
		return false
	}
	for _, t := range c.Namespaces {
		if !t.IsZero() {
			return false
		}
	}
	return true
}

// Check refuses a cut that deletes nothing, as PruneHistory does.
func (c PruneCut) Check() error {
	if c.None() {
		return Invalid("before", "the cut deletes nothing: no cutoff is set")
	}
	return nil
}

// Pruned counts what Store.PruneHistory deleted: the rows whose rule below (SurfacingAge,
// EventAge, DecisionAge, ConversationAge, JobRunAge) says they may go.
type Pruned struct {
	Surfacings    int `json:"surfacings"`
	Events        int `json:"events"`
	Decisions     int `json:"decisions"`
	Conversations int `json:"conversations"`
	JobRuns       int `json:"job_runs"`
}

// Total is the number of rows deleted.
func (p Pruned) Total() int {
	return p.Surfacings + p.Events + p.Decisions + p.Conversations + p.JobRuns
}

// SurfacingAge is what the pruning rule reads of a surfacing.
type SurfacingAge struct {
	At         time.Time
	Outcome    EventType // "" while it awaits its outcome
	OutcomeAt  time.Time
	Experiment string
	// TurnAwaitsReward: its turn's decision is stored and not rewarded yet.
	TurnAwaitsReward bool
}

// Prunable reports whether the surfacing may go at cutoff cut: shown and decided before it
// (one awaiting its outcome stays), not an experiment's (its reports read them), and its
// turn's decision not awaiting its reward (bandit upkeep reads the turn's surfacings).
func (a SurfacingAge) Prunable(cut time.Time) bool {
	return a.At.Before(cut) && a.Outcome != "" && a.OutcomeAt.Before(cut) &&
		a.Experiment == "" && !a.TurnAwaitsReward
}

// EventAge is what the pruning rule reads of an engagement event.
type EventAge struct {
	At time.Time
	// Latest: no event of its namespace has a higher sequence number.
	Latest bool
}

// Prunable reports whether the event may go at cutoff cut: it happened before it and is not
// its namespace's latest (the next event's sequence number follows the latest).
func (a EventAge) Prunable(cut time.Time) bool {
	return a.At.Before(cut) && !a.Latest
}

// DecisionAge is what the pruning rule reads of a bandit decision.
type DecisionAge struct {
	At         time.Time
	Rewarded   bool
	Experiment string
}

// Prunable reports whether the decision may go at cutoff cut: made before it, rewarded
// already (bandit upkeep still reads a pending one), and not an experiment's.
func (a DecisionAge) Prunable(cut time.Time) bool {
	return a.At.Before(cut) && a.Rewarded && a.Experiment == ""
}

// ConversationAge is what the pruning rule reads of a conversation's state.
type ConversationAge struct {
	UpdatedAt time.Time
}

// Prunable reports whether the state may go at cutoff cut: last updated before it (a
// conversation that comes back starts afresh). A state with no update time stays: its age
// is unknown.
func (a ConversationAge) Prunable(cut time.Time) bool {
	return !a.UpdatedAt.IsZero() && a.UpdatedAt.Before(cut)
}

// JobRunAge is what the pruning rule reads of a job run.
type JobRunAge struct {
	Start time.Time
	// Latest: no run of its job started later.
	Latest bool
}

// Prunable reports whether the run may go at cutoff cut: started before it and not its
// job's latest (a job's status shows its last run).
func (a JobRunAge) Prunable(cut time.Time) bool {
	return a.Start.Before(cut) && !a.Latest
}
