package recall

import (
	"time"

	"github.com/salience-ai/salience/models"
)

// Message is one recent message of the conversation, given as context for ambient recall.
type Message struct {
	Speaker string
	Content string
	At      time.Time
}

// Request is one recall call. Zero values take the documented defaults (see Normalize).
type Request struct {
	Namespace        string
	ConversationID   string
	TurnID           string // optional; one is assigned when empty
	Mode             models.Mode
	Query            string
	Messages         []Message
	Entities         []string
	ConversationType string
	FocalEntity      string
	Limit            int           // default 10 (startup: 100), at most 100
	TokenBudget      int           // bounds the context block (Format), estimated by nlp.EstimateTokens; 0 = no budget
	LatencyBudget    time.Duration // default 300 ms
	Rerank           string        // "auto" (default), "off", "on"
	Kinds            []models.Kind
	Since, Until     time.Time // on the memory's time (ValidAt or CreatedAt)
	IncludeInvalid   bool      // also return facts that stopped being true
	ThresholdPolicy  string    // bandit, fixed:default, fixed:<x>, off; "" = the namespace's (ambient only)
	Explain          bool
	// Sources are more namespaces to recall from, read-only (sources.go): the home
	// Namespace's settings, threshold and conversation state apply to all.
	Sources []string
	// Proactive adds the memories the conversation's predicted topics lead to (ambient
	// only; predict.go), recorded as surfacings of mode predict of this turn.
	Proactive bool
	Now       time.Time // the caller's clock; zero = time.Now()
}

// Fragment says which chunk of a long memory a result shows.
type Fragment struct {
	ParentID string `json:"parent_id"`
	Index    int    `json:"index"` // 1-based, as shown: [Fragment i/n]
	Count    int    `json:"count"`
}

// Result is one recalled memory.
type Result struct {
	Memory      *models.Memory     // the parent memory (for a fragment) or the memory itself
	Content     string             // what is shown: the memory's content, or the chunk's text
	Fragment    *Fragment          // set when Content is one chunk of Memory
	SurfacingID string             // for engagement reports
	Score       float64            // final score
	PUse        float64            // the relevance model's probability that it will be used
	Components  *models.Components // only with Explain
	Reasons     []string           // how it was found: "text", "vector", "association", "resurface"
	// Model is each feature's contribution to the logit of PUse and Lambda how much what
	// the namespace's reports taught moves Score (learn.Model.Shift); only with Explain.
	Model  map[string]float64
	Lambda float64
	// Learned are the memory's learned words (feedback expansion) among the turn's words:
	// how the turn found it by words its content lacks; only with Explain.
	Learned     []models.LearnedTerm
	Volunteered bool // reached only by association, prediction or resurfacing
}

// RerankStatus says whether the LLM reranker ran and, if not, why.
type RerankStatus struct {
	Status string `json:"status"` // applied, skipped_budget, timeout, error, circuit_open, off, unconfigured (package rerank)
	Reason string `json:"reason,omitempty"`
}

// Response is the answer to one recall call.
type Response struct {
	Results          []Result
	Context          string // the formatted context block a bot injects
	TurnID           string
	ConversationType string
	Threshold        float64
	ArmProb          float64 // the probability the threshold's arm had of being chosen (1: fixed)
	Policy           string  // the threshold policy in force (predict.ParsePolicy); "" outside ambient mode
	Variant          string  // the experiment variant the conversation is in ("" outside one)
	Experiment       string  // the experiment's id
	SettingsVersion  int     // the version of the namespace settings the results were ranked under
	Rerank           RerankStatus
	Degraded         []string           // e.g. "embedder: timeout"
	LatencyMS        float64            // server-side, whole pipeline
	Stages           map[string]float64 // per-stage milliseconds
	Startup          *Startup           // startup mode only
	Proactive        *Proactive         // with Request.Proactive
}

// Startup is the extra information of the startup package.
type Startup struct {
	Now      time.Time `json:"now"`
	Memories int       `json:"memories"`
	Concepts int       `json:"concepts"`
	Edges    int       `json:"edges"`
}
