package recall

import (
	"context"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/graph"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// Weights are the score weights of docs/design.md#score. The score is Σ w·f / Σ w over the
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

// StartupCounts is how many of each kind the startup package holds (seed: PPS). Facts
// counts the important facts and insights together (briefFacts chooses them).
type StartupCounts struct {
	Crystals, Anchors, Summaries, Facts int
}

// Options tune the pipeline; zero values take the defaults in withDefaults (given after
// each field with its unit). Scores, activations and bonuses are on the 0..1 scale of the
// score components.
type Options struct {
	Weights map[models.Mode]Weights

	// Candidates (docs/design.md#candidates, docs/design.md#embedders).

	// Overfetch: candidates asked of each source, as a multiple of the request's limit; 4.
	// Fewer lose answers that rank up once scored; more cost search time for nothing.
	Overfetch int
	// VectorWeight: share of the vector cosine in direct relevance (the rest is BM25 over the
	// query's best). 0 means by embedder (VectorWeightFor): 0.2 for the local embedder, a
	// hashing model whose vectors only repeat the words, SemanticVectorWeight for the others.
	VectorWeight float64
	// VectorFloor: cosine below which a vector hit is no match at all; 0.2.
	VectorFloor float64
	// PhraseWeight: how much a full phrase match adds to direct relevance (as independent
	// evidence, 1−(1−d)(1−w·phrase)); 0.3.
	PhraseWeight float64
	// PhraseChecks: how many of the best direct matches are checked for phrases, as a
	// multiple of the limit; 3. The check tokenizes each text, and a bonus of at most
	// PhraseWeight cannot lift a candidate from further down into the results.
	PhraseChecks int
	// EmbedBudgetShare: the share of the request's LatencyBudget the query's embedding may
	// take before the vector search is given up as unavailable; 0.5. The embedder may be a
	// remote service, and the other half is left for search, association and ranking.
	EmbedBudgetShare float64

	// Association (docs/design.md#candidates, the graph half).

	// ConceptFanout: edges followed from each context concept to the memories tied to it;
	// graph.DefaultMaxFanout (64). Bounds what a hub concept can cost.
	ConceptFanout int
	// MinSpecificity: the least seed strength of a context concept however common it is;
	// 0.05. Seeds scale by ln(1+N/m)/ln(1+N) so a name in half the memories (a speaker's)
	// does not flood the walk, but a common concept still counts a little.
	MinSpecificity float64
	// LendSeeds: the strongest matches that lend relevance to their neighbours; 64.
	LendSeeds int
	// LendEdges: memory-to-memory edges followed from each lending match, strongest first; 8.
	LendEdges int
	// MaxHops: memory-to-memory lending depth in edges; 1. One hop reaches the turn after
	// the one that matched (an answer follows its question); two flood a conversation.
	MaxHops int
	// FocalHops: how far, in edges, proximity to a focal entity is measured; 3. Beyond, a
	// memory has no proximity.
	FocalHops int
	// AssocFloor: search mode admits an associative-only candidate with this activation; 0.1.
	AssocFloor float64
	// MinActivation: ambient mode volunteers an associative-only candidate only with this
	// activation ("multiple semantic paths") unless triggers match; 0.5.
	MinActivation float64
	// ResurfaceScan: queued memories read per ambient turn, highest score first; 200.
	ResurfaceScan int
	// ResurfaceTriggers: trigger matches at which a queued memory counts as fully associated
	// with the turn; 3. The queue admits a memory at two (decay.MinTriggerMatches), whose
	// strength is then 2/3 — volunteered only when confident enough for it.
	ResurfaceTriggers float64

	// Scoring (docs/design.md#score).

	// HalfLife: freshness halves every HalfLife of a memory's age; 14 days.
	HalfLife time.Duration
	// TemporalBonus: relevance added when the memory's time lies in a range the query names
	// ("what did we do last May"); 0.25. A date the question asks about is evidence the
	// words alone miss: on LoCoMo dev, overall recall@10 is 0.674 without the bonus, 0.682
	// at 0.15, 0.685 at 0.25 and 0.687 at 0.35 — the gain flattens, so it stays at 0.25
	// until a larger set says more.
	TemporalBonus float64
	// WallpaperShowings: showings in quick succession that make a memory full wallpaper
	// (novelty 0); 5.
	WallpaperShowings float64
	// WallpaperHalfLife: how fast past showings stop counting as wallpaper; one day. A
	// memory shown five times this morning is stale tonight and fresh again next week.
	WallpaperHalfLife time.Duration

	// Filters and diversity (docs/design.md#filters, docs/design.md#diversity).

	// MMRLambda: the score's share against similarity in ambient diversity; 0.7.
	MMRLambda float64
	// RecentTurns: ambient recall skips memories surfaced in this many recent turns; 20.
	RecentTurns int
	// IrrelevantJaccard: a memory is dropped when the context overlaps a concept set it was
	// dismissed in this much (Jaccard); 0.5.
	IrrelevantJaccard float64

	Startup StartupCounts // 3 crystals, 2 anchors, 2 summaries, 5 facts
	// ThresholdPolicy is the threshold policy of ambient requests that name none: the
	// namespace settings' threshold_policy (WithSettings); "" = PolicyFor, then the bandit.
	ThresholdPolicy string
	// PolicyFor returns a namespace's threshold policy (predict.ParsePolicy) when a request
	// names none; nil or "" = the bandit. The namespace settings record answers it.
	PolicyFor func(ctx context.Context, ns string) (string, error)
	// Seed seeds the bandit's Thompson draws; 0 = from the clock.
	Seed uint64
	// Now is the clock for requests that carry none; nil = time.Now.
	Now func() time.Time
	// Reranker reorders the best candidates after diversity (rerank.go); nil = none configured.
	Reranker Reranker
	// Learn are the relevance model's constants (package learn); the zero value means
	// learn.DefaultConfig(). Engagement must train with the same ones.
	Learn learn.Config
	// Settings returns each namespace's overrides of these options (settings.go); nil = none.
	Settings SettingsSource
	// Experiments returns the experiment each namespace runs (experiment.go); nil = none.
	Experiments ExperimentSource
	// PredictTTL is how long a namespace's proactive prediction models are used before they
	// are rebuilt from its turn log; DefaultPredictTTL (30 s). Negative: rebuilt on every
	// call, so servers sharing a store agree at once.
	PredictTTL time.Duration
	// PredictTurns is how many of a namespace's latest ambient turns the models learn from;
	// DefaultPredictTurns (20,000).
	PredictTurns int
	// NoModel ranks by the weighted score alone, leaving the relevance model out of the
	// order (an experiment variant's relevance_model off); p_use is still computed,
	// recorded and gated on.
	NoModel bool
}

// SemanticVectorWeight is VectorWeight with an embedder that places meanings, not spellings
// (static, or a model behind the openai embedder): its cosine finds what shares no word
// with the query, so it weighs more beside BM25 than a hashing model's. Chosen with the
// static embedder on three of the five LoCoMo dev conversations (26, 30, 41: recall@10
// 0.713 at 0.2, 0.707 at 0.5, 0.718 at 0.6, 0.723 at 0.7, 0.711 at 0.8); all-MiniLM-L6-v2
// there: 0.702 at 0.2, 0.714 at 0.5, 0.705 at 0.7. At 0.2 a question that shares one
// common word with a small-talk turn ranks it above the fact that answers it in other words.
const SemanticVectorWeight = 0.7

// VectorWeightFor is VectorWeight's default for an embedder: 0.2 for the lexical local
// embedder (and for none), SemanticVectorWeight for any other.
func VectorWeightFor(e embed.Embedder) float64 {
	if _, lexical := e.(*embed.Local); lexical || e == nil {
		return 0.2
	}
	return SemanticVectorWeight
}

// DefaultOptions returns the defaults of every tuning constant.
func DefaultOptions() Options { return Options{}.withDefaults() }

func (o Options) withDefaults() Options {
	setInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setFloat := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	setDuration := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Weights == nil {
		o.Weights = DefaultWeights
	}
	setInt(&o.Overfetch, 4)
	setFloat(&o.VectorWeight, 0.2)
	setFloat(&o.VectorFloor, 0.2)
	setFloat(&o.PhraseWeight, 0.3)
	setInt(&o.PhraseChecks, 3)
	setFloat(&o.EmbedBudgetShare, 0.5)
	setInt(&o.ConceptFanout, graph.DefaultMaxFanout)
	setFloat(&o.MinSpecificity, 0.05)
	setInt(&o.LendSeeds, 64)
	setInt(&o.LendEdges, 8)
	setInt(&o.MaxHops, 1)
	setInt(&o.FocalHops, 3)
	setFloat(&o.AssocFloor, 0.1)
	setFloat(&o.MinActivation, 0.5)
	setInt(&o.ResurfaceScan, 200)
	setFloat(&o.ResurfaceTriggers, 3)
	setDuration(&o.HalfLife, 14*24*time.Hour)
	setFloat(&o.TemporalBonus, 0.25)
	setFloat(&o.WallpaperShowings, 5)
	setDuration(&o.WallpaperHalfLife, 24*time.Hour)
	setFloat(&o.MMRLambda, 0.7)
	setInt(&o.RecentTurns, 20)
	setFloat(&o.IrrelevantJaccard, 0.5)
	setDuration(&o.PredictTTL, DefaultPredictTTL)
	setInt(&o.PredictTurns, DefaultPredictTurns)
	if o.Startup == (StartupCounts{}) {
		o.Startup = StartupCounts{Crystals: 3, Anchors: 2, Summaries: 2, Facts: 5}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Learn == (learn.Config{}) {
		o.Learn = learn.DefaultConfig()
	}
	return o
}
