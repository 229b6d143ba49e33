package models

import (
	"testing"
	"time"
)

// The pruning rules, one table each: every condition that keeps a row, alone, and the
// cut's edge (before is strict: a row at the cut itself stays).
var (
	pruneCutAt = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	beforeCut  = pruneCutAt.Add(-time.Nanosecond)
	afterCut   = pruneCutAt.Add(time.Hour)
	longAgo    = pruneCutAt.Add(-48 * time.Hour)
)

func TestSurfacingAgePrunable(t *testing.T) {
	old := SurfacingAge{At: longAgo, Outcome: EventUsed, OutcomeAt: longAgo.Add(time.Minute)}
	with := func(f func(*SurfacingAge)) SurfacingAge { a := old; f(&a); return a }
	for _, tc := range []struct {
		name string
		age  SurfacingAge
		want bool
	}{
		{"shown and decided before the cut", old, true},
		{"ignored counts as decided", with(func(a *SurfacingAge) { a.Outcome = EventIgnored }), true},
		{"shown and decided a nanosecond before the cut", with(func(a *SurfacingAge) { a.At, a.OutcomeAt = beforeCut, beforeCut }), true},
		{"a decision with no time (older rows) is before any cut", with(func(a *SurfacingAge) { a.OutcomeAt = time.Time{} }), true},
		{"awaiting its outcome", with(func(a *SurfacingAge) { a.Outcome, a.OutcomeAt = "", time.Time{} }), false},
		{"decided at the cut", with(func(a *SurfacingAge) { a.OutcomeAt = pruneCutAt }), false},
		{"decided after the cut", with(func(a *SurfacingAge) { a.OutcomeAt = afterCut }), false},
		{"shown at the cut", with(func(a *SurfacingAge) { a.At, a.OutcomeAt = pruneCutAt, beforeCut }), false},
		{"an experiment's", with(func(a *SurfacingAge) { a.Experiment = "e1" }), false},
		{"its turn's decision awaits its reward", with(func(a *SurfacingAge) { a.TurnAwaitsReward = true }), false},
	} {
		if got := tc.age.Prunable(pruneCutAt); got != tc.want {
			t.Errorf("%s: Prunable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEventAgePrunable(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  EventAge
		want bool
	}{
		{"before the cut", EventAge{At: longAgo}, true},
		{"a nanosecond before the cut", EventAge{At: beforeCut}, true},
		{"at the cut", EventAge{At: pruneCutAt}, false},
		{"after the cut", EventAge{At: afterCut}, false},
		{"its namespace's latest", EventAge{At: longAgo, Latest: true}, false},
	} {
		if got := tc.age.Prunable(pruneCutAt); got != tc.want {
			t.Errorf("%s: Prunable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDecisionAgePrunable(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  DecisionAge
		want bool
	}{
		{"rewarded before the cut", DecisionAge{At: longAgo, Rewarded: true}, true},
		{"a nanosecond before the cut", DecisionAge{At: beforeCut, Rewarded: true}, true},
		{"awaiting its reward", DecisionAge{At: longAgo}, false},
		{"an experiment's", DecisionAge{At: longAgo, Rewarded: true, Experiment: "e1"}, false},
		{"at the cut", DecisionAge{At: pruneCutAt, Rewarded: true}, false},
		{"after the cut", DecisionAge{At: afterCut, Rewarded: true}, false},
	} {
		if got := tc.age.Prunable(pruneCutAt); got != tc.want {
			t.Errorf("%s: Prunable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestConversationAgePrunable(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  ConversationAge
		want bool
	}{
		{"updated before the cut", ConversationAge{UpdatedAt: longAgo}, true},
		{"a nanosecond before the cut", ConversationAge{UpdatedAt: beforeCut}, true},
		{"at the cut", ConversationAge{UpdatedAt: pruneCutAt}, false},
		{"after the cut", ConversationAge{UpdatedAt: afterCut}, false},
		{"no update time", ConversationAge{}, false},
	} {
		if got := tc.age.Prunable(pruneCutAt); got != tc.want {
			t.Errorf("%s: Prunable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJobRunAgePrunable(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  JobRunAge
		want bool
	}{
		{"started before the cut", JobRunAge{Start: longAgo}, true},
		{"a nanosecond before the cut", JobRunAge{Start: beforeCut}, true},
		{"at the cut", JobRunAge{Start: pruneCutAt}, false},
		{"after the cut", JobRunAge{Start: afterCut}, false},
		{"its job's latest", JobRunAge{Start: longAgo, Latest: true}, false},
	} {
		if got := tc.age.Prunable(pruneCutAt); got != tc.want {
			t.Errorf("%s: Prunable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPruneCut(t *testing.T) {
	own := longAgo
	c := PruneCut{Before: pruneCutAt, Namespaces: map[string]time.Time{"a": own, "b": {}}}
	for ns, want := range map[string]time.Time{"a": own, "b": {}, "c": pruneCutAt} {
		if got := c.For(ns); !got.Equal(want) {
			t.Errorf("For(%q) = %v, want %v", ns, got, want)
		}
	}
	for _, tc := range []struct {
		cut  PruneCut
		want bool
	}{
		{PruneCut{}, true},
		{PruneCut{Namespaces: map[string]time.Time{"a": {}}}, true},
		{PruneCut{Namespaces: map[string]time.Time{"a": own}}, false},
		{PruneCut{Before: pruneCutAt}, false},
	} {
		if got := tc.cut.None(); got != tc.want {
			t.Errorf("%+v.None() = %v, want %v", tc.cut, got, tc.want)
		}
		err := tc.cut.Check()
		if tc.want && (ErrorCode(err) != EINVALID || ErrorField(err) != "before" || ErrorMessage(err) != "the cut deletes nothing: no cutoff is set") {
			t.Errorf("%+v.Check() = %v, want EINVALID on before", tc.cut, err)
		}
		if !tc.want && err != nil {
			t.Errorf("%+v.Check() = %v, want nil", tc.cut, err)
		}
	}
}
