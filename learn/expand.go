package learn

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
)

// Feedback expansion: a memory used in a turn learns the turn's query words, so the next
// query with those words finds it even when its own text does not have them (the question
// "what did she paint?" used a turn that says "I finished the sunset piece"). The field is
// bounded (MaxLearnedTerms per memory, each at most MaxTermWeight) and decaying (each
// weight halves every TermHalfLife since it last grew), and the text index weighs it below
// content (store/sqlite's learnedWeight).
const (
	MaxQueryTerms   = 32                  // query words a surfacing keeps (Surfacing.Terms)
	MaxLearnedTerms = 48                  // learned words a memory keeps, the heaviest
	MaxTermWeight   = 3.0                 // a word's weight saturates after three uses
	TermHalfLife    = 90 * 24 * time.Hour // an unrenewed word fades in about a season
	minTermWeight   = 0.05                // lighter words are dropped
)

// QueryTerms are the distinct analysed words of a query, at most MaxQueryTerms, in order.
func QueryTerms(terms []string) []string {
	var out []string
	for _, t := range terms {
		if len(out) == MaxQueryTerms {
			break
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Expand returns a memory's learned words after a turn with these query words used it at
// at: the old weights decayed to at, each query word +1 (at most MaxTermWeight), the words
// under minTermWeight dropped, the MaxLearnedTerms heaviest kept (ties by word). The result
// is sorted by word, so equal inputs store equal values.
func Expand(old []models.LearnedTerm, terms []string, at time.Time) []models.LearnedTerm {
	out := make([]models.LearnedTerm, 0, len(old)+len(terms))
	for _, t := range old {
		t.Weight = decayed(t.Weight, t.At, at)
		if t.At.Before(at) {
			t.At = at
		}
		out = append(out, t)
	}
	for _, w := range QueryTerms(terms) {
		i := slices.IndexFunc(out, func(t models.LearnedTerm) bool { return t.Term == w })
		if i < 0 {
			out = append(out, models.LearnedTerm{Term: w, At: at})
			i = len(out) - 1
		}
		out[i].Weight = math.Min(MaxTermWeight, out[i].Weight+1)
	}
	out = slices.DeleteFunc(out, func(t models.LearnedTerm) bool { return !(t.Weight >= minTermWeight) })
	if len(out) > MaxLearnedTerms {
		slices.SortFunc(out, func(a, b models.LearnedTerm) int {
			if a.Weight != b.Weight {
				if a.Weight > b.Weight {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Term, b.Term)
		})
		out = out[:MaxLearnedTerms]
	}
	slices.SortFunc(out, func(a, b models.LearnedTerm) int { return strings.Compare(a.Term, b.Term) })
	return out
}

// decayed is w halved every TermHalfLife from since to at (no growth backwards in time).
func decayed(w float64, since, at time.Time) float64 {
	if w != w || w <= 0 {
		return 0
	}
	w = math.Min(w, MaxTermWeight)
	if since.IsZero() || !at.After(since) {
		return w
	}
	return w * math.Pow(0.5, float64(at.Sub(since))/float64(TermHalfLife))
}

// Missing are the query words the memory's own words (content, analysed) lack: what it
// cannot already be found by.
func Missing(query, own []string) []string {
	var out []string
	for _, t := range query {
		if !slices.Contains(own, t) {
			out = append(out, t)
		}
	}
	return out
}
