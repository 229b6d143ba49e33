package app

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/rerank"
)

// RerankConfig configures the LLM reranker (docs/rerank.md).
type RerankConfig struct {
	Policy string // --rerank, SALIENCE_RERANK: on or off, for namespaces whose settings say nothing
	URL    string // --rerank-url, SALIENCE_RERANK_URL: empty means Anthropic's OpenAI-compatible API
	Model  string // --rerank-model, SALIENCE_RERANK_MODEL
	Key    string // --rerank-key, SALIENCE_RERANK_KEY, else ANTHROPIC_API_KEY
	TopN   int    // --rerank-top-n, SALIENCE_RERANK_TOP_N
}

// DefaultRerankConfig is off: memory text goes to a third party only when someone turns
// reranking on, never because a key happens to be in the environment.
func DefaultRerankConfig() RerankConfig {
	return RerankConfig{Policy: rerank.PolicyOff, Model: rerank.DefaultModel, TopN: rerank.DefaultTopN}
}

func (r *RerankConfig) flagSet(fs *flag.FlagSet) {
	fs.StringVar(&r.Policy, "rerank", r.Policy, "LLM reranking of recall results: on or off for every namespace whose settings say nothing (PATCH /v1/namespaces/NS/settings {\"rerank\":\"on\"} turns one on)")
	fs.StringVar(&r.URL, "rerank-url", r.URL, "reranker: OpenAI-compatible API base URL including /v1 (empty: Anthropic's)")
	fs.StringVar(&r.Model, "rerank-model", r.Model, "reranker: chat model")
	fs.StringVar(&r.Key, "rerank-key", r.Key, "reranker: API key (env SALIENCE_RERANK_KEY or ANTHROPIC_API_KEY)")
	fs.IntVar(&r.TopN, "rerank-top-n", r.TopN, "reranker: how many of the best candidates are sent (sensitive memories never are)")
}

func (r *RerankConfig) Validate() error {
	if r.Policy != rerank.PolicyOn && r.Policy != rerank.PolicyOff {
		return fmt.Errorf("--rerank %q: want on or off", r.Policy)
	}
	if r.TopN < 2 || r.TopN > recall.MaxLimit {
		return fmt.Errorf("--rerank-top-n must be between 2 and %d, got %d", recall.MaxLimit, r.TopN)
	}
	if r.Model == "" {
		return fmt.Errorf("--rerank-model must not be empty")
	}
	if r.Policy == rerank.PolicyOn && r.URL == "" && r.Key == "" {
		return fmt.Errorf("--rerank on sends to Anthropic's API and needs a key: set SALIENCE_RERANK_KEY or ANTHROPIC_API_KEY, or point --rerank-url at another endpoint")
	}
	return nil
}

// newReranker builds the reranker, or returns nil when there is nothing to call: no URL and
// no key. With a key but --rerank off it is built and stays off except for namespaces
// whose settings turn it on.
func newReranker(r *RerankConfig, settings rerank.SettingsSource, log *slog.Logger) (*rerank.Reranker, error) {
	if r.URL == "" && r.Key == "" {
		return nil, nil
	}
	rr, err := rerank.New(rerank.Options{BaseURL: r.URL, APIKey: r.Key, Model: r.Model, TopN: r.TopN, Default: r.Policy, Settings: settings, Logger: log})
	if err != nil {
		return nil, err
	}
	url := r.URL
	if url == "" {
		url = rerank.DefaultBaseURL
	}
	log.Info("reranker configured", "model", r.Model, "url", url, "default", r.Policy, "top_n", r.TopN)
	return rr, nil
}

// RecallReranker turns a possibly nil reranker into recall's interface (a nil pointer in a
// non-nil interface would be called).
func RecallReranker(rr *rerank.Reranker) recall.Reranker {
	if rr == nil {
		return nil
	}
	return rr
}
