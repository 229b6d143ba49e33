package learn

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// Feedback expansion: a memory used in answer to a message learns the words of that message
// it lacks, so the next message with those words finds it even when its own text does not
// have them (the question "what did Dana paint?" used the turn "Dana: I finished the sunset
// piece", which then answers "who painted a sunset?").
//
// What is learned is evidence for the memory, not whatever was said around it (Linked):
//   - only the message that asked — the query, else the latest message (recall records it
//     as Surfacing.Terms) — never the earlier messages of the window, which were about
//     something else as often as not;
//   - only when the memory matched that message by a word of its own that carries
//     information: then the message is about the memory, and its other words are how the
//     asker names it. A memory used for a message it shares no such word with (found by an
//     earlier message, by association, by a vector) teaches nothing: nothing in the message
//     points to it;
//   - only words that carry information (Informative > 0), the MaxTermsPerUse most
//     informative of them, so a long message or its small talk cannot flood the field.
//
// The field is bounded (MaxLearnedTerms per memory, each at most MaxTermWeight) and decaying
// (each weight halves every TermHalfLife since it last grew), and the text index weighs it
// below content (store/sqlite's learnedWeight).
const (
	MaxQueryTerms   = 32                  // words of the asked message a surfacing keeps (Surfacing.Terms)
	MaxTermsPerUse  = 4                   // words one use teaches a memory, the most informative
	MaxLearnedTerms = 48                  // learned words a memory keeps, the heaviest
	MaxTermWeight   = 3.0                 // a word's weight saturates after three uses
	TermHalfLife    = 90 * 24 * time.Hour // an unrenewed word fades in about a season
	minTermWeight   = 0.05                // lighter words are dropped
)

// Informativeness says how much information an analysed word carries: more for a rarer
// word, and ≤ 0 for filler, which never links a message to a memory nor is learned.
type Informativeness func(term string) float64

// Informative is the informativeness feedback expansion uses: 0 for filler — nlp's stop and
// weak chat words, and words common in general English (Zipf frequency above 5.5, more than
// one word in about three thousand: "place", "people", "night") — else the word's general-English
// inverse document frequency (nlp.GeneralIDF), so the rarer words of a message are learned
// first. The namespace's own document frequencies would belong here too, but an engagement
// transaction does not reach the text index.
func Informative(term string) float64 {
	if term == "" || nlp.IsFiller(term) || nlp.Informativeness(term) < fillerInformativeness {
		return 0
	}
	idf, _ := nlp.GeneralIDF(term)
	return idf
}

// fillerInformativeness is about nlp.Informativeness at Zipf 5.5, ((9 − 5.5)/(9 − 4.5))² =
// 0.605: a word more common than that is filler here ("paint", 5.06, is not).
const fillerInformativeness = 0.6

// Linked returns the words a memory whose own analysed words are own learns from being used
// in answer to a message with the analysed words asked: none unless the message holds one
// of the memory's own words with info > 0; else the message's other words with info > 0,
// the MaxTermsPerUse most informative (ties: first said first), distinct, in the message's
// order.
func Linked(asked, own []string, info Informativeness) []string {
	type word struct {
		t   string
		pos int
		inf float64
	}
	if !links(asked, own, info) {
		return nil
	}
	var ws []word
	for i, t := range asked {
		inf := info(t)
		if !(inf > 0) || slices.Contains(own, t) || slices.ContainsFunc(ws, func(w word) bool { return w.t == t }) {
			continue
		}
		ws = append(ws, word{t, i, inf})
	}
	slices.SortStableFunc(ws, func(a, b word) int { return cmp.Compare(b.inf, a.inf) })
	ws = ws[:min(len(ws), MaxTermsPerUse)]
	slices.SortFunc(ws, func(a, b word) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.t
	}
	return out
}

// LinkedConcepts returns the context concepts of a turn (Surfacing.Concepts, normalized
// names) that a memory used in answer to the asked message is tied to (its mentions edges,
// package engagement), by Linked's rule: none unless the message links to the memory, and
// then only the concepts said in that message — each of their analysed words among asked, one
// of them informative — not those of the window before it.
func LinkedConcepts(concepts, asked, own []string, info Informativeness) []string {
	if !links(asked, own, info) {
		return nil
	}
	var out []string
	for _, c := range concepts {
		ts := nlp.Terms(c)
		if len(ts) > 0 && slices.ContainsFunc(ts, func(t string) bool { return info(t) > 0 }) &&
			!slices.ContainsFunc(ts, func(t string) bool { return !slices.Contains(asked, t) }) {
			out = append(out, c)
		}
	}
	return out
}

// links reports whether the asked message holds a word of the memory's own (own) that
// carries information: the message is about the memory.
func links(asked, own []string, info Informativeness) bool {
	return slices.ContainsFunc(asked, func(t string) bool { return info(t) > 0 && slices.Contains(own, t) })
}

// QueryTerms are the distinct analysed words of a message, at most MaxQueryTerms, in order.
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

// Expand returns a memory's learned words after a use at at taught it terms (Linked): the
// old weights decayed to at, each term +1 (at most MaxTermWeight), the words under
// minTermWeight dropped, the MaxLearnedTerms heaviest kept (ties by word). The result is
// sorted by word, so equal inputs store equal values.
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
