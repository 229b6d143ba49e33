package recall

import (
	"math"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// The arithmetic of ranking (docs/design.md#fusion, docs/design.md#score, docs/design.md#threshold-and-rerank): pure functions over values, their
// constants in Options, so each is tested with known numbers and no store.

// fuse returns a candidate's BM25 relative to the query's best text score (top; 0 when the
// candidate was not a text hit) and its direct relevance, that relative BM25 blended with
// the vector cosine: (1−w)·bm + w·cosine. Score fusion keeps the size of a match, which rank
// fusion throws away; on LoCoMo it measured better than RRF (docs/design.md#fusion).
func fuse(textScore, top float64, textHit bool, cosine, vectorWeight float64) (bm, direct float64) {
	if top > 0 && textHit {
		bm = textScore / top
	}
	return bm, (1-vectorWeight)*bm + vectorWeight*cosine
}

// coverage is a text hit's share of the query's information, score/norm at most 1: the
// same scale in every turn, unlike BM25 over the turn's best (fuse). A store that does not
// measure the query's information (norm 0) gives the score over the best, top.
func coverage(score, norm, top float64) float64 {
	switch {
	case norm > 0:
		return math.Min(1, score/norm)
	case top > 0:
		return math.Min(1, score/top)
	}
	return 0
}

// signals are what the sources measured of one candidate: the inputs of its score besides
// the memory itself.
type signals struct {
	bm, vector    float64 // BM25 over the query's best; vector cosine
	cover         float64 // BM25 over the query's information (coverage)
	direct        float64 // fused direct relevance (fuse)
	activation    float64 // spreading activation reaching the memory
	phrase        float64 // share of the query's adjacent term pairs adjacent in its text
	phraseChecked bool    // phrase was measured (only the best direct matches are)
	inTimeRange   bool    // its time lies in a range the query names
	restates      float64 // how much the memory only restates the question asked (restates)
	hops          int     // edges from the focal entity's node; < 0: not reached, or no focal entity
}

// components computes the features of docs/design.md#score, each in 0..1.
func components(o Options, m *models.Memory, now time.Time, s signals) models.Components {
	c := models.Components{
		Confidence: models.Clamp01(m.Confidence),
		Freshness:  freshness(m.Time(), now, o.HalfLife),
		Importance: models.Clamp01(m.Importance),
		Novelty:    1 - wallpaper(m.SurfaceCount, m.LastSurfaced, now, o.WallpaperHalfLife, o.WallpaperShowings),
		Activation: strength(s.activation),
		BM25:       s.bm,
		Vector:     s.vector,
	}
	direct := s.direct
	// An echo — a stored question, or the bot's reply, that restates the question asked —
	// matches by the question's own words, and is associated with it by the question's own
	// concepts: that is no evidence, so every match measure keeps only what the memory says
	// beyond the question.
	echo := 1 - s.restates
	c.BM25, c.Vector, direct = echo*c.BM25, echo*c.Vector, echo*direct
	c.Coverage = echo * s.cover
	c.Activation *= echo
	// match is direct relevance on the absolute scale: coverage in BM25's place.
	match := (1-o.VectorWeight)*c.Coverage + o.VectorWeight*math.Max(0, c.Vector)
	if s.phraseChecked {
		// A query's words next to each other in the text are a phrase match, worth more
		// than the same words scattered ("high-trust bot pairs" vs "bots … pair … trust").
		c.Phrase = echo * s.phrase
		direct = orEvidence(direct, o.PhraseWeight*c.Phrase)
		match = orEvidence(match, o.PhraseWeight*c.Phrase)
	}
	c.Relevance = relevance(direct, c.Activation, s.inTimeRange, o.TemporalBonus)
	// The match leaves association out: a graph whose concepts include the speakers' names
	// associates every turn with every turn; the model reads activation beside it.
	c.Match = relevance(match, 0, s.inTimeRange, o.TemporalBonus)
	if s.hops >= 0 {
		c.Proximity = proximity(s.hops)
	}
	return c
}

// orEvidence combines two pieces of evidence as independent: either alone counts, both
// count more, and the result stays in 0..1: 1 − (1−a)(1−b), a clamped to 0..1.
func orEvidence(a, b float64) float64 { return 1 - (1-models.Clamp01(a))*(1-b) }

// relevance is direct relevance and association combined as independent evidence, plus
// the temporal bonus when the query named a time the memory is from — that is relevance
// too — at most 1.
func relevance(direct, association float64, inTimeRange bool, temporalBonus float64) float64 {
	r := orEvidence(direct, association)
	if inTimeRange {
		r = models.Clamp01(r + temporalBonus)
	}
	return r
}

// strength is how strongly the graph associates a memory with the context: its activation,
// at most 1 (several paths can sum past 1).
func strength(activation float64) float64 { return math.Min(1, activation) }

// proximity to the focal entity: 1/(1+hops).
func proximity(hops int) float64 { return 1 / (1 + float64(hops)) }

// freshness is a true half-life decay, 0.5^(age/half-life): two weeks 50 %, a month 25 %.
// (The source wrote exp(−days/14) while describing these figures; we implement the figures.)
// Age counts from t, the memory's ValidAt or CreatedAt; a zero t is 0.5 (unknown age), a
// memory from the future counts as new.
func freshness(t, now time.Time, halfLife time.Duration) float64 {
	if t.IsZero() {
		return 0.5
	}
	age := now.Sub(t)
	if age <= 0 {
		return 1
	}
	return math.Pow(0.5, float64(age)/float64(halfLife))
}

// wallpaper is the penalty for being shown over and over: the surface count, decaying with
// halfLife since the last surfacing, over showings; it saturates at 1.
func wallpaper(count int, last, now time.Time, halfLife time.Duration, showings float64) float64 {
	if count == 0 || last.IsZero() {
		return 0
	}
	h := now.Sub(last).Hours() / halfLife.Hours()
	if h < 0 {
		h = 0
	}
	return math.Min(1, float64(count)*math.Pow(0.5, h)/showings)
}

// weighted is the score: Σ w·f / Σ w over the features that apply — proximity only with a
// focal entity — so it stays in 0..1 whatever the weights.
func weighted(w Weights, c models.Components, focal bool) float64 {
	sum := w.Relevance*c.Relevance + w.Confidence*c.Confidence + w.Freshness*c.Freshness +
		w.Importance*c.Importance + w.Novelty*c.Novelty
	tot := w.Relevance + w.Confidence + w.Freshness + w.Importance + w.Novelty
	if focal {
		sum += w.Proximity * c.Proximity
		tot += w.Proximity
	}
	if tot == 0 {
		return 0
	}
	return sum / tot
}

// volunteerScore is what a volunteered memory brings to the threshold (docs/design.md#threshold-and-rerank): its
// confidence × the strength of its association with the turn — its activation, or for a
// queued memory whose triggers matched, triggers/fullTriggers if that is more, each at most 1.
func volunteerScore(confidence, activation float64, triggers int, fullTriggers float64) float64 {
	s := strength(activation)
	if triggers > 0 {
		s = math.Max(s, math.Min(1, float64(triggers)/fullTriggers))
	}
	return confidence * s
}

// volunteerGates are ambient recall's volunteer gates, the same predict.Gates proactive
// surfacing uses: the threshold; two trigger matches (the resurfacing queue's rule) or
// MinActivation; no dismissal's cooldown. Momentum and the dismissal count do not gate
// ambient recall: the bot asked for memories this turn, and the cooldown already holds a
// dismissed memory back.
func volunteerGates(o Options) predict.Gates {
	return predict.Gates{MinTriggers: decay.MinTriggerMatches, MinActivation: o.MinActivation,
		MaxMomentum: predict.NoLimit, MaxRecentDismissals: predict.NoLimit}
}

// volunteer decides on a memory no source matched directly — reached only by association or
// from the resurfacing queue — and returns its volunteer score (0 in search). In an explicit
// search nothing is volunteered: it competes on its score once its activation clears
// AssocFloor. In ambient recall it is volunteered, so it must pass volunteerGates with its
// volunteer score against the conversation type's threshold.
func volunteer(o Options, mode models.Mode, threshold float64, m *models.Memory, activation float64, triggers int, now time.Time) (score float64, ok bool) {
	if mode == models.ModeSearch {
		return 0, activation >= o.AssocFloor
	}
	score = volunteerScore(m.Confidence, activation, triggers, o.ResurfaceTriggers)
	ok, _ = volunteerGates(o).Check(threshold, predict.Signals{
		Score: score, Triggers: triggers, Activation: activation, InCooldown: m.Schedule.CooldownTo.After(now),
	})
	return score, ok
}
