package predict

import (
	"slices"
	"sort"
)

// Topic-transition defaults (docs/design.md#prediction-and-thresholds).
const (
	// TransitionWindow: a concept "follows" another when it appears within this many turns
	// after it (the source design's 3-turn window).
	TransitionWindow = 3
	// DefaultSmoothing is the Dirichlet prior's strength in pseudo-observations: a concept
	// seen once does not predict its follower with certainty; the estimate starts at the
	// follower's base rate and moves to the observed share as evidence accumulates.
	DefaultSmoothing = 2.0
)

// Transitions is the topic-transition model: for each concept a, how often each concept b
// appeared within Window turns after it. Learned online, one turn at a time.
// P(b within Window turns | a) = (n_ab + s·base_b)/(n_a + s): the Dirichlet posterior mean
// with a prior of strength s centred on b's base rate (the share of windows it appears in),
// so rare pairs neither vanish nor dominate. The zero value is not ready: use NewTransitions.
// Not safe for concurrent use.
type Transitions struct {
	Window    int                           `json:"window"`
	Smoothing float64                       `json:"smoothing"`
	Seen      map[string]float64            `json:"seen"`   // n_a: occurrences of a (windows opened)
	Follow    map[string]map[string]float64 `json:"follow"` // n_ab: of those, windows where b appeared
	TurnsWith map[string]float64            `json:"turns_with"`
	Turns     float64                       `json:"turns"`
}

// NewTransitions returns an empty model with the default window and smoothing.
func NewTransitions() *Transitions {
	return &Transitions{Window: TransitionWindow, Smoothing: DefaultSmoothing, Seen: map[string]float64{},
		Follow: map[string]map[string]float64{}, TurnsWith: map[string]float64{}}
}

// Topic is a predicted concept and its probability of appearing within the window.
type Topic struct {
	Concept string  `json:"concept"`
	P       float64 `json:"p"`
	From    string  `json:"from"` // the recent concept that predicts it best
}

// Learn adds the newest turn of a conversation: hist are the concept sets of its previous
// turns, oldest first (only the last Window matter), cur the newest turn's. Each concept b of
// cur counts once as following each concept a of the window's turns, unless b already
// appeared after that turn of a (a window counts a follower once) or b = a.
func (m *Transitions) Learn(hist [][]string, cur []string) {
	cur = uniq(cur)
	w := m.window()
	if len(hist) > w {
		hist = hist[len(hist)-w:]
	}
	for j, turn := range hist {
		between := hist[j+1:]
		for _, a := range uniq(turn) {
			for _, b := range cur {
				if b == a || slices.ContainsFunc(between, func(t []string) bool { return slices.Contains(t, b) }) {
					continue
				}
				f := m.Follow[a]
				if f == nil {
					f = map[string]float64{}
					m.Follow[a] = f
				}
				f[b]++
			}
		}
	}
	for _, c := range cur {
		m.Seen[c]++
		m.TurnsWith[c]++
	}
	m.Turns++
}

func (m *Transitions) window() int {
	if m.Window <= 0 {
		return TransitionWindow
	}
	return m.Window
}

// base is b's prior probability of appearing within a window: 1 − (1 − r)^Window for its
// share r of turns.
func (m *Transitions) base(b string) float64 {
	if m.Turns == 0 {
		return 0
	}
	r := m.TurnsWith[b] / m.Turns
	q := 1.0
	for range m.window() {
		q *= 1 - r
	}
	return 1 - q
}

// P is the smoothed probability that b appears within Window turns after a.
func (m *Transitions) P(a, b string) float64 {
	s := m.Smoothing
	if s <= 0 {
		s = DefaultSmoothing
	}
	return (m.Follow[a][b] + s*m.base(b)) / (m.Seen[a] + s)
}

// Predict returns the concepts most likely to appear within the next Window turns after a
// turn with these concepts, best first (ties by name), at most k, each with the recent
// concept that predicts it best (its probability is the largest over the recent concepts,
// not a sum: co-occurring concepts of one topic would otherwise count the topic twice).
// Concepts of the turn itself are not predicted.
func (m *Transitions) Predict(recent []string, k int) []Topic {
	best := map[string]Topic{}
	for _, a := range uniq(recent) {
		for b := range m.Follow[a] {
			if slices.Contains(recent, b) {
				continue
			}
			if p := m.P(a, b); p > best[b].P || (p == best[b].P && a < best[b].From) {
				best[b] = Topic{Concept: b, P: p, From: a}
			}
		}
	}
	out := make([]Topic, 0, len(best))
	for _, t := range best {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].P != out[j].P {
			return out[i].P > out[j].P
		}
		return out[i].Concept < out[j].Concept
	})
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out
}

func uniq(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
