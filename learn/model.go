// Package learn is the per-namespace relevance model: the probability that a surfaced memory
// will be used, learned online from engagement events by logistic regression, and the rule
// by which a used memory learns the words of the turn that used it (feedback expansion).
// Everything here is pure: state in, state out, no clock and no store.
package learn

import (
	"math"

	"github.com/salience-ai/salience/models"
)

// Version is the feature set's version, recorded on every surfacing (Components.Features)
// and on the stored model. A model stored under another version is reset to the prior
// (Decode), and only surfacings recorded under this version train (Trains), live and in a
// relearn alike, so the two agree after an upgrade.
//
// Version 2 (this one) reads the match on an absolute scale; version 1 (unrecorded, 0)
// read scores relative to each turn's best match, which taught a namespace whose bot
// honestly ignored small talk that every best match goes unused.
const Version = 2

// The features of a surfacing, in the order of Model.W.
//
// Two kinds of turn learn apart: a turn whose latest message (or query) asks a question, and
// one that asks nothing. A bot that honestly ignores what small talk brought up then teaches
// that small talk needs little memory, not that a question's answer goes unused. Each kind has
// its own curve of the absolute match (Components.Match: coverage of the query's information
// and the vector cosine, the same scale in every turn), piecewise linear between knots at
// match 0, ¼, ½, ¾ and 1 and kept non-decreasing, so "not used at a weak match" lowers the
// curve at weak matches and leaves strong ones as they were; and its own weights of rank in
// turn beside it: BM25 over the turn's best text match and the best match's lead over the
// runner-up, which say which memory of a turn the bot uses.
//
// The match measures — coverage, vector, phrase, activation, the query naming the memory's
// speaker — are shared by both kinds of turn, with non-negative weights: vector, phrase,
// activation and speaker start at 0 and can only add; coverage starts at its prior, so small
// talk's ignores can lower it, and with it a question's p_use, but only so far (10,000
// ignored small-talk matches take a strong answer from 0.78 to 0.69, where it levels off).
// The memory's own history — confidence, times used, importance — is multiplied by the
// match, so at a weak match it barely moves, nor learns. Counts are log1p-compressed and
// capped, so one event moves the weights only so far. Nothing here depends on
// presentation: the weighted score a character's weights make is not a feature, so the
// same match has the same p_use under every character.
const (
	FSaid  = 0     // the curve for turns that ask nothing: its knots, FSaid … FSaid+knots−1
	FAsked = knots // the curve for questions: FAsked … FAsked+knots−1
)

// The features besides the curves.
const (
	FCoverage    = 2*knots + iota // share of the query's information the text match covers
	FVector                       // vector cosine
	FPhrase                       // share of the query's word pairs found as phrases
	FActivation                   // spreading activation
	FSpeaker                      // the query names the memory's speaker
	FBestSaid                     // BM25 over the turn's best text match, in a turn that asks nothing
	FBestAsked                    // the same, in a question
	FMarginSaid                   // the best direct match's lead over the runner-up, in a turn that asks nothing
	FMarginAsked                  // the same, in a question
	FConfidence                   // confidence − 0.5 (0 for a memory nobody reported on)
	FUsed                         // log1p(times used), at most capCount
	FImportance                   // importance
	D                             // the number of features
)

// knots is the number of knots of each match curve.
const knots = 5

// FeatureNames name the features in explain and in the metrics, by index.
var FeatureNames = [D]string{"said_match_0", "said_match_25", "said_match_50", "said_match_75", "said_match_100",
	"asked_match_0", "asked_match_25", "asked_match_50", "asked_match_75", "asked_match_100",
	"coverage", "vector", "phrase", "activation", "speaker", "said_bm25", "asked_bm25", "said_margin", "asked_margin", "confidence", "used", "importance"}

// nonNegative marks the weights a stronger match cannot turn negative.
var nonNegative = [D]bool{FCoverage: true, FVector: true, FPhrase: true, FActivation: true,
	FSpeaker: true, FBestSaid: true, FBestAsked: true, FMarginSaid: true, FMarginAsked: true, FUsed: true}

// capCount bounds the log1p of a count: log1p(e^3−1) = 3, about 19 uses.
const capCount = 3.0

// Vector is one surfacing's features.
type Vector [D]float64

// Features builds the feature vector from a surfacing's components (what recall measured
// when it showed the memory).
func Features(c *models.Components) Vector {
	var x Vector
	a := finite01(c.Match)
	pos := a * (knots - 1)
	k := min(int(pos), knots-2)
	f := pos - float64(k)
	curve, best, margin := FSaid, FBestSaid, FMarginSaid
	if c.Question > 0 {
		curve, best, margin = FAsked, FBestAsked, FMarginAsked
	}
	x[curve+k], x[curve+k+1] = 1-f, f
	x[FCoverage] = finite01(c.Coverage)
	x[FVector] = finite01(c.Vector)
	x[FPhrase] = finite01(c.Phrase)
	x[FActivation] = finite01(c.Activation)
	x[FSpeaker] = finite01(c.Speaker)
	x[best] = finite01(c.BM25)
	x[margin] = finite01(c.Margin)
	x[FConfidence] = a * (finite01(c.Confidence) - 0.5)
	x[FUsed] = a * logCount(c.Used)
	x[FImportance] = a * finite01(c.Importance)
	return x
}

// Trains reports whether components were measured for this feature set: a surfacing
// recorded before the last change of features does not train the model.
func Trains(c *models.Components) bool { return c.Features == Version }

func finite01(v float64) float64 {
	if v != v {
		return 0
	}
	return models.Clamp01(v)
}

func logCount(n float64) float64 {
	if n != n || n <= 0 {
		return 0
	}
	return math.Min(capCount, math.Log1p(n))
}

// Config are the model's constants.
type Config struct {
	// PriorBias and PriorSlope are both curves' prior, PriorBias + PriorSlope·match at each
	// knot; PriorBest and PriorMargin are the prior weights of rank in turn, PriorCoverage
	// coverage's. A namespace without events has this prior (see DefaultConfig).
	PriorBias, PriorSlope, PriorBest, PriorMargin, PriorCoverage float64
	// Rate is AdaGrad's base step: each weight moves by Rate·g/√(G0+Σg²), so the steps
	// shrink as a weight's evidence grows, and a replay in the same order gives the same
	// weights.
	Rate float64
	// G0 is AdaGrad's starting sum of squared gradients, the same for every weight: without
	// it the first event moves every weight it touches by the full Rate, whatever its
	// gradient.
	G0 float64
	// L2 pulls every weight towards its prior by L2·(w − w0) per event: with no events the
	// model is the prior exactly, and a feature that stops predicting drifts back.
	L2 float64
	// MaxWeight bounds every weight's distance from its prior whatever the stream.
	MaxWeight float64
	// N0 and Lift make the ranking: a memory's score moves by λ·Lift·(logit − prior logit),
	// λ = n/(n+N0) after n events — by what the namespace's reports taught about it, in
	// units of evidence, and nothing before any (Shift).
	N0, Lift float64
}

// DefaultConfig returns the constants docs/design.md#ranking-in-detail states. The prior was fitted by logistic
// regression (monotone curve, non-negative weights) on the outcomes of LoCoMo's natural
// replay with the gate and learning off (`salience eval locomo --natural`: every dialog turn
// and question shows its top ten), at questions, on dev conversations 26, 30 and 41, and
// rounded: log loss 0.140 on conversations 42 and 43 (the fit's own 0.138; a constant 0.184).
// Both kinds of turn start from it: LoCoMo counts a memory as used at small talk only when a
// question names both turns, far rarer than a bot's real use, so each namespace learns its
// own small talk from its reports. Rate, G0, L2 and N0 are the previous model's; Lift was
// chosen on the learning replay over the five dev conversations (0.03 / 0.05 / 0.08 / 0.1 /
// 0.15 / 0.2 lifted held-back recall@10 by 0.021 / 0.026 / 0.025 / 0.035 / 0.031 / 0.036
// with the previous prior: a plateau, noisy to ±0.003).
func DefaultConfig() Config {
	return Config{PriorBias: -5.5, PriorSlope: 1, PriorBest: 3, PriorMargin: 5, PriorCoverage: 1.5, Rate: 0.5, G0: 25, L2: 0.002, MaxWeight: 8,
		N0: 50, Lift: 0.1}
}

// Model is one namespace's state. The zero Model is not valid: start from New.
type Model struct {
	W Vector `json:"w"` // weights
	G Vector `json:"g"` // AdaGrad's sums of squared gradients
	// N is the number of events trained on; it also identifies the model's state, recorded on
	// each surfacing, since the events are applied in sequence order and replay exactly.
	N int64 `json:"n"`
	// Version is the feature set the weights are for (learn.Version).
	Version int `json:"version"`
	// Seq is the sequence number of the last event trained on (the log's order).
	Seq int64 `json:"seq"`
}

// New returns the prior model.
func New(cfg Config) *Model {
	m := &Model{Version: Version}
	m.W = cfg.prior()
	return m
}

func (cfg Config) prior() Vector {
	var w Vector
	for k := range knots {
		w[FSaid+k] = cfg.PriorBias + cfg.PriorSlope*float64(k)/(knots-1)
		w[FAsked+k] = w[FSaid+k]
	}
	w[FCoverage] = cfg.PriorCoverage
	w[FBestSaid], w[FBestAsked] = cfg.PriorBest, cfg.PriorBest
	w[FMarginSaid], w[FMarginAsked] = cfg.PriorMargin, cfg.PriorMargin
	return w
}

// Logit returns w·x.
func (m *Model) Logit(x *Vector) float64 {
	z := 0.0
	for i := range x {
		z += m.W[i] * x[i]
	}
	return z
}

// P returns the model's probability of use for x.
func (m *Model) P(x *Vector) float64 { return sigmoid(m.Logit(x)) }

// Contributions returns each feature's share of the logit, w_i·x_i, for explain.
func (m *Model) Contributions(x *Vector) Vector {
	var c Vector
	for i := range x {
		c[i] = m.W[i] * x[i]
	}
	return c
}

// Lambda is the share of p_use in the ranking score after the model's events.
func (m *Model) Lambda(cfg Config) float64 {
	if m == nil || m.N <= 0 {
		return 0
	}
	return float64(m.N) / (float64(m.N) + cfg.N0)
}

// Shift is how far the namespace's reports move a candidate's ranking score: λ·Lift times
// how much the model's logit for x exceeds the prior's. With no events it is 0 and recall
// ranks by its score alone; a memory the reports favour rises, one they disfavour sinks.
func (m *Model) Shift(cfg Config, x *Vector) float64 {
	lambda := m.Lambda(cfg)
	if lambda == 0 {
		return 0
	}
	w0 := cfg.prior()
	d := 0.0
	for i := range x {
		d += (m.W[i] - w0[i]) * x[i]
	}
	return lambda * cfg.Lift * d
}

// Update trains the model on one outcome (y = 1 used or helpful, 0 ignored or dismissed):
// one AdaGrad step on the log loss plus L2/2·‖w − w0‖², then each weight held within
// MaxWeight of its prior. It counts the event.
func (m *Model) Update(cfg Config, x *Vector, y float64) {
	p := m.P(x)
	w0 := cfg.prior()
	for i := range x {
		g := (p-y)*x[i] + cfg.L2*(m.W[i]-w0[i])
		if g == 0 {
			continue
		}
		m.G[i] += g * g
		step := cfg.Rate * g / math.Sqrt(cfg.G0+m.G[i])
		if math.IsNaN(step) || math.IsInf(step, 0) {
			continue // a gradient so small its square underflows (found by FuzzUpdate)
		}
		m.W[i] -= step
		m.W[i] = math.Max(w0[i]-cfg.MaxWeight, math.Min(w0[i]+cfg.MaxWeight, m.W[i]))
		if nonNegative[i] {
			m.W[i] = math.Max(0, m.W[i])
		}
	}
	monotone(m.W[FSaid : FSaid+knots])
	monotone(m.W[FAsked : FAsked+knots])
	m.N++
}

// monotone makes w non-decreasing by pooling adjacent violators (each violating run takes
// its mean): the closest non-decreasing sequence in squared distance.
func monotone(w []float64) {
	type block struct{ sum, n float64 }
	var bs []block
	for _, v := range w {
		bs = append(bs, block{v, 1})
		for len(bs) > 1 && bs[len(bs)-2].sum/bs[len(bs)-2].n > bs[len(bs)-1].sum/bs[len(bs)-1].n {
			last := bs[len(bs)-1]
			bs = bs[:len(bs)-1]
			bs[len(bs)-1].sum += last.sum
			bs[len(bs)-1].n += last.n
		}
	}
	i := 0
	for _, b := range bs {
		for range int(b.n) {
			w[i] = b.sum / b.n
			i++
		}
	}
}

// Label is an event type's training target.
func Label(t models.EventType) float64 {
	if t.Positive() {
		return 1
	}
	return 0
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
