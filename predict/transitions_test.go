package predict

import (
	"math"
	"slices"
	"testing"
)

func TestTransitionsLearn(t *testing.T) {
	m := NewTransitions()
	// A conversation: [a b] [c] [a] [d] [e].
	turns := [][]string{{"a", "b"}, {"c"}, {"a"}, {"d"}, {"e", "e"}}
	for i, cur := range turns {
		m.Learn(turns[:i], cur)
	}
	// a (turn 0) is followed by c, d within 3 turns (a itself does not count); a (turn 2)
	// by d, e. b (turn 0) by c, a, d.
	want := map[string]map[string]float64{
		"a": {"c": 1, "d": 2, "e": 1},
		"b": {"c": 1, "a": 1, "d": 1},
		"c": {"a": 1, "d": 1, "e": 1},
		"d": {"e": 1},
	}
	for a, fs := range want {
		for b, n := range fs {
			if got := m.Follow[a][b]; got != n {
				t.Errorf("n(%s→%s) = %v, want %v", a, b, got, n)
			}
		}
		if len(m.Follow[a]) != len(fs) {
			t.Errorf("%s followed by %v, want %v", a, m.Follow[a], fs)
		}
	}
	if m.Seen["a"] != 2 || m.Seen["e"] != 1 || m.Turns != 5 {
		t.Errorf("seen a %v, e %v, turns %v; want 2, 1, 5", m.Seen["a"], m.Seen["e"], m.Turns)
	}
	// A follower counts once per window: [x] [y] [y] gives n(x→y) = 1.
	m2 := NewTransitions()
	seq := [][]string{{"x"}, {"y"}, {"y"}}
	for i, cur := range seq {
		m2.Learn(seq[:i], cur)
	}
	if got := m2.Follow["x"]["y"]; got != 1 {
		t.Errorf("n(x→y) = %v, want 1 (a window counts a follower once)", got)
	}
}

// TestTransitionsP checks the Dirichlet-smoothed estimate against hand-computed values.
func TestTransitionsP(t *testing.T) {
	m := NewTransitions()
	turns := [][]string{{"a", "b"}, {"c"}, {"a"}, {"d"}, {"e"}}
	for i, cur := range turns {
		m.Learn(turns[:i], cur)
	}
	// base(d) = 1 − (1 − 1/5)³ = 0.488; P(d | a) = (2 + 2·0.488)/(2 + 2) = 0.744.
	if got := m.P("a", "d"); math.Abs(got-0.744) > 1e-12 {
		t.Errorf("P(d|a) = %v, want 0.744", got)
	}
	// Never seen together: the prior alone. P(e | b) = (0 + 2·0.488)/(1 + 2) = 0.3253…
	if got := m.P("b", "e"); math.Abs(got-0.976/3) > 1e-12 {
		t.Errorf("P(e|b) = %v, want %v", got, 0.976/3)
	}
	// An unknown concept predicts its followers' base rates only.
	if got := m.P("zzz", "d"); math.Abs(got-0.488) > 1e-12 {
		t.Errorf("P(d|zzz) = %v, want 0.488", got)
	}
	got := m.Predict([]string{"a"}, 2)
	if len(got) != 2 || got[0].Concept != "d" || got[0].From != "a" || got[1].Concept != "c" && got[1].Concept != "e" {
		t.Errorf("Predict(a) = %+v, want d first, then c or e", got)
	}
	// Concepts of the turn itself are not predicted.
	for _, tp := range m.Predict([]string{"a", "c"}, 0) {
		if tp.Concept == "a" || tp.Concept == "c" {
			t.Errorf("Predict predicted a concept of the turn: %+v", tp)
		}
	}
}

// TestTransitionsLearnChain: with enough evidence the estimate approaches the true
// follow-up rate, and smoothing keeps an unseen pair above zero.
func TestTransitionsLearnChain(t *testing.T) {
	m := NewTransitions()
	var hist [][]string
	for i := range 400 {
		cur := []string{"ping"}
		if i%2 == 1 {
			cur = []string{"pong"}
		}
		m.Learn(hist, cur)
		hist = append(hist, cur)
	}
	if p := m.P("ping", "pong"); p < 0.99 {
		t.Errorf("P(pong|ping) = %v, want ≈ 1", p)
	}
	names := []string{}
	for _, tp := range m.Predict([]string{"ping"}, 5) {
		names = append(names, tp.Concept)
	}
	if !slices.Equal(names, []string{"pong"}) {
		t.Errorf("Predict(ping) = %v, want [pong]", names)
	}
}

func TestUsage(t *testing.T) {
	u := NewUsage()
	// m used three times: after [a b] [c] / [a] [x] [c] [y] / [z].
	u.Record("m", [][]string{{"a", "b"}, {"c"}})
	u.Record("m", [][]string{{"q"}, {"a"}, {"x"}, {"c"}, {"y"}}) // q is 5 turns back: outside
	u.Record("m", [][]string{{"z"}})
	mu := u.Memories["m"]
	if mu.Uses != 3 {
		t.Fatalf("uses %d, want 3", mu.Uses)
	}
	for c, want := range map[string]ConceptUsage{
		"a": {Count: 1, LeadSum: 2}, // q a x c y: a is 4 back, outside; first use: a 2 back
		"c": {Count: 2, LeadSum: 3}, // 1 back, then 2 back
		"y": {Count: 1, LeadSum: 1},
		"x": {Count: 1, LeadSum: 3},
		"z": {Count: 1, LeadSum: 1},
	} {
		if got := mu.Before[c]; got == nil || *got != want {
			t.Errorf("before %s = %+v, want %+v", c, got, want)
		}
	}
	if _, ok := mu.Before["q"]; ok {
		t.Error("a concept 5 turns before the use was counted")
	}
	// Triggers need ≥ 2 uses and the share: only c (2 of 3).
	if got := u.Triggers("m", 0.5); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Triggers = %v, want [c]", got)
	}
	if got := u.Lead("m", 0.5); got != 1.5 {
		t.Errorf("Lead = %v, want 1.5", got)
	}
	if u.Triggers("none", 0) != nil || u.Lead("none", 0) != 0 {
		t.Error("an unknown memory has triggers or a lead")
	}
}
