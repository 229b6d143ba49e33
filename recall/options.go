package recall

import (
	"time"

	"github.com/salience-ai/salience/models"
)

// Weights are the score weights of DESIGN.md §4.5. The score is Σ w·f / Σ w over the
// features that apply (proximity only with a focal entity), so it stays in 0..1.
type Weights struct {
	Relevance  float64 `json:"relevance"`
	Confidence float64 `json:"confidence"`
	Freshness  float64 `json:"freshness"`
	Proximity  float64 `json:"proximity"`
	Importance float64 `json:"importance"`
	Novelty    float64 `json:"novelty"`
}

// DefaultWeights per mode. An explicit search is about the question, so relevance dominates
// and confidence — what engagement taught — comes second; ambient recall leans more on what
// has proven useful, recent and not over-shown. With every memory at the starting
// confidence, confidence changes no order; on LoCoMo's learning replay a confidence weight
// of 0.08 gave +0.017 held-back recall@10, 0.15 gave +0.021, 0.20 no more.
var DefaultWeights = map[models.Mode]Weights{
	models.ModeSearch:  {Relevance: 0.80, Confidence: 0.15, Freshness: 0.04, Proximity: 0.04, Importance: 0.04},
	models.ModeAmbient: {Relevance: 0.60, Confidence: 0.15, Freshness: 0.08, Proximity: 0.06, Importance: 0.08, Novelty: 0.06},
}

// StartupCounts is how many of each kind the startup package holds (seed: PPS).
type StartupCounts struct {
	Crystals, Anchors, Summaries int
}

// Options tune the pipeline; zero values take the defaults in withDefaults.
type Options struct {
	Weights           map[models.Mode]Weights
	HalfLife          time.Duration // freshness half-life; 14 days
	Overfetch         int           // candidates per source = Overfetch × limit; 4
	VectorWeight      float64       // share of the vector cosine in direct relevance; 0.2
	PhraseWeight      float64       // how much a full phrase match adds to direct relevance; 0.3
	VectorFloor       float64       // minimum cosine for a vector hit to count as a match; 0.2
	MinActivation     float64       // ambient: an associative-only candidate needs this much; 0.5
	AssocFloor        float64       // search: an associative-only candidate needs this much; 0.1
	MaxHops           int           // memory-to-memory spreading depth; 1
	MMRLambda         float64       // diversity trade-off in ambient mode; 0.7
	RecentTurns       int           // ambient: skip memories surfaced in this many recent turns; 20
	IrrelevantJaccard float64       // drop when the context overlaps a dismissed one this much; 0.5
	Startup           StartupCounts // 3 crystals, 2 anchors, 2 summaries
	// Threshold returns the volunteer threshold of a conversation type; nil = the source
	// design's static defaults (predict.DefaultThreshold).
	Threshold func(ns, convType string) float64
	// Now is the clock for requests that carry none; nil = time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Weights == nil {
		o.Weights = DefaultWeights
	}
	if o.HalfLife == 0 {
		o.HalfLife = 14 * 24 * time.Hour
	}
	if o.Overfetch == 0 {
		o.Overfetch = 4
	}
	if o.VectorWeight == 0 {
		o.VectorWeight = 0.2
	}
	if o.PhraseWeight == 0 {
		o.PhraseWeight = 0.3
	}
	if o.AssocFloor == 0 {
		o.AssocFloor = 0.1
	}
	if o.VectorFloor == 0 {
		o.VectorFloor = 0.2
	}
	if o.MinActivation == 0 {
		o.MinActivation = 0.5
	}
	if o.MaxHops == 0 {
		o.MaxHops = 1
	}
	if o.MMRLambda == 0 {
		o.MMRLambda = 0.7
	}
	if o.RecentTurns == 0 {
		o.RecentTurns = 20
	}
	if o.IrrelevantJaccard == 0 {
		o.IrrelevantJaccard = 0.5
	}
	if o.Startup == (StartupCounts{}) {
		o.Startup = StartupCounts{Crystals: 3, Anchors: 2, Summaries: 2}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
