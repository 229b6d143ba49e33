package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/rerank"
	"github.com/salience-ai/salience/rerank/rerankfake"
)

// evalRerank is the reranking side of `salience-bench eval locomo --rerank`: the configured
// endpoint (--rerank-url, --rerank-model, the key from the environment) or, with
// --rerank-fake-latency, the built-in fake on loopback. Every question asks with rerank
// "on", so the gate's p95 test never skips one and the run measures what reranking adds;
// the budget (--budget, default 10 s) still bounds each call.
type evalRerank struct {
	on          *bool
	cfg         app.RerankConfig
	fakeLatency *time.Duration
	budget      *time.Duration
}

func evalRerankFlags(fs *flag.FlagSet) *evalRerank {
	e := &evalRerank{cfg: app.DefaultRerankConfig()}
	e.on = fs.Bool("rerank", false, "rerank every question through the configured endpoint (or the fake) and report each status's count")
	fs.StringVar(&e.cfg.URL, "rerank-url", "", "reranker: OpenAI-compatible API base URL including /v1 (empty: Anthropic's)")
	fs.StringVar(&e.cfg.Model, "rerank-model", e.cfg.Model, "reranker: chat model")
	fs.StringVar(&e.cfg.Key, "rerank-key", "", "reranker: API key (env SALIENCE_RERANK_KEY or ANTHROPIC_API_KEY)")
	fs.IntVar(&e.cfg.TopN, "rerank-top-n", e.cfg.TopN, "reranker: how many of the best candidates are sent")
	e.fakeLatency = fs.Duration("rerank-fake-latency", -1, "rerank through a built-in fake endpoint on loopback that answers after this long, instead of a real one")
	e.budget = fs.Duration("budget", 10*time.Second, "each question's latency budget: what a rerank call may take")
	return e
}

// start returns the reranker (nil without --rerank) and a function that stops the fake.
func (e *evalRerank) start(log io.Writer) (*rerank.Reranker, func(), error) {
	if !*e.on {
		return nil, func() {}, nil
	}
	stop := func() {}
	if *e.fakeLatency >= 0 {
		url, s, err := rerankfake.Start(*e.fakeLatency)
		if err != nil {
			return nil, nil, err
		}
		e.cfg.URL, stop = url, s
	}
	if e.cfg.URL == "" && e.cfg.Key == "" {
		stop()
		return nil, nil, errors.New("eval locomo --rerank: set SALIENCE_RERANK_KEY or ANTHROPIC_API_KEY for Anthropic's API, give --rerank-url, or use --rerank-fake-latency")
	}
	rr, err := rerank.New(rerank.Options{BaseURL: e.cfg.URL, APIKey: e.cfg.Key, Model: e.cfg.Model, TopN: e.cfg.TopN, Default: rerank.PolicyOn})
	if err != nil {
		stop()
		return nil, nil, err
	}
	where := e.cfg.URL
	if where == "" {
		where = rerank.DefaultBaseURL
	}
	fmt.Fprintf(log, "reranking with %s at %s (top %d, budget %s)\n", e.cfg.Model, where, e.cfg.TopN, *e.budget)
	return rr, stop, nil
}

func (e *evalRerank) options(rr *rerank.Reranker) eval.Options {
	if rr == nil {
		return eval.Options{}
	}
	return eval.Options{Rerank: rerank.ModeOn, LatencyBudget: *e.budget}
}
