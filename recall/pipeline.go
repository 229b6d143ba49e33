// Package recall is the retrieval pipeline of docs/design.md#recall: intake, candidates from text,
// vectors and the graph, rank fusion, scoring, filters, chunk collapse, diversity,
// thresholds, budget, and the record of what was surfaced.
package recall

import (
	"context"
	"slices"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// Pipeline runs recall over a store. It is safe for concurrent use.
type Pipeline struct {
	store      models.Store
	embedder   embed.Embedder
	opts       Options
	thresholds *thresholds
	arm        *arm // the request's experiment variant (forExperiment); nil outside one
	// predictions caches each namespace's proactive prediction models (predict.go).
	predictions *predictCache
	// speakers caches the analysed words of the speakers' names ranking compares with the
	// query (history).
	speakers *termCache
}

// New returns a pipeline over store using embedder for query vectors (nil: text and graph only).
func New(store models.Store, embedder embed.Embedder, opts Options) *Pipeline {
	if opts.VectorWeight == 0 {
		opts.VectorWeight = VectorWeightFor(embedder)
	}
	opts = opts.withDefaults()
	return &Pipeline{store: store, embedder: embedder, opts: opts, thresholds: newThresholds(opts.Seed), predictions: &predictCache{}, speakers: &termCache{}}
}

// stopwatch records per-stage timings in milliseconds.
type stopwatch struct {
	start, last time.Time
	stages      map[string]float64
}

func newStopwatch() *stopwatch {
	now := time.Now()
	return &stopwatch{start: now, last: now, stages: map[string]float64{}}
}

func (s *stopwatch) lap(stage string) {
	now := time.Now()
	s.stages[stage] += float64(now.Sub(s.last).Microseconds()) / 1000
	s.last = now
}

func (s *stopwatch) total() float64 { return float64(time.Since(s.start).Microseconds()) / 1000 }

// Recall answers one recall request. Invalid requests are EINVALID naming the field. A
// request passes through the pipeline's files in order: request (validation), intake,
// candidates, association, resurface, rank (with score and filters), diversity, budget,
// record, format.
func (p *Pipeline) Recall(ctx context.Context, req *Request) (*Response, error) {
	sw := newStopwatch()
	if err := normalize(req, p.opts.Now()); err != nil {
		return nil, err
	}
	p, version, unread := p.forNamespace(ctx, req.Namespace)
	p, noExperiment, err := p.forExperiment(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := p.run(ctx, req, sw, version)
	if err != nil {
		return nil, err
	}
	for _, why := range []string{unread, noExperiment} {
		if why != "" {
			resp.Degraded = append(resp.Degraded, why)
		}
	}
	return resp, nil
}

// run answers a normalized request with the options of its namespace; version is the
// settings version they came from.
func (p *Pipeline) run(ctx context.Context, req *Request, sw *stopwatch, version int) (*Response, error) {
	if req.Mode == models.ModeStartup {
		resp, err := p.startup(ctx, req)
		if err != nil {
			return nil, err
		}
		resp.SettingsVersion = version
		sw.lap("startup")
		resp.Stages, resp.LatencyMS = sw.stages, sw.total()
		return resp, nil
	}

	in := p.intake(ctx, req)
	p = p.prefetch(ctx, req, in)
	st, err := p.conversation(ctx, req)
	if err != nil {
		return nil, err
	}
	in.state = st
	if in.model, err = p.model(ctx, req.Namespace); err != nil {
		return nil, err
	}
	sw.lap("intake")
	resp := &Response{
		TurnID:           in.turnID,
		ConversationType: in.convType,
		Threshold:        predict.DefaultPUseThreshold(in.convType),
		SettingsVersion:  version,
	}
	resp.Experiment, resp.Variant = p.variant()
	decision, err := p.decide(ctx, req, in)
	if err != nil {
		return nil, err
	}
	if decision != nil {
		resp.Threshold, resp.ArmProb, resp.Policy = decision.Threshold, decision.Prob, decision.Policy
	}

	cs, degraded, err := p.candidates(ctx, req, in)
	if err != nil {
		return nil, err
	}
	resp.Degraded = degraded
	sw.lap("search")
	if err := p.associate(ctx, req, in, cs); err != nil {
		return nil, err
	}
	if req.Mode == models.ModeAmbient {
		if err := p.resurfacing(ctx, req, in, cs); err != nil {
			return nil, err
		}
	}
	sw.lap("graph")

	list, err := p.rank(ctx, req, in, cs, resp.Threshold)
	if err != nil {
		return nil, err
	}
	if len(req.Sources) > 0 {
		if list, err = p.withSources(ctx, req, in, resp, list); err != nil {
			return nil, err
		}
		sw.lap("sources")
	}
	// Duplicates go before diversity and the reranker, which read the whole list; without
	// them the cut dedupes as it goes, reading only the candidates it takes (lazy).
	var lazy *deduper
	if req.Mode == models.ModeAmbient || p.reranks(req) {
		list = dedupe(list)
	} else {
		lazy = newDeduper(req.Limit)
	}
	if req.Mode == models.ModeAmbient {
		if err := p.withVectors(ctx, req, list); err != nil {
			return nil, err
		}
		list = diversify(list, p.opts.MMRLambda, req.Limit)
	}
	list, resp.Rerank = p.rerank(ctx, req, in, list, sw)
	results := cut(req, list, lazy)
	// On a remote store the results' own copies are read while the turn is recorded.
	owned := p.ownLater(ctx, req, results, p.remote())
	if req.Explain {
		explainModel(in.model, p.opts.Learn, results)
		explainLearned(in.text, results)
	}
	sw.lap("rank")
	if req.Proactive {
		// The conversation's previous turns and this one; its recent surfacings and this
		// turn's results are not proposed again.
		var recent [][]string
		var times []time.Time
		if in.state != nil {
			recent, times = cloneTurns(in.state.RecentTurns), slices.Clone(in.state.MessageTimes)
		}
		recent, times = append(recent, in.concepts), append(times, req.Now)
		if resp.Proactive, err = p.proactive(ctx, req, in, recent, times, skipped(in.state, results), resp.Threshold); err != nil {
			return nil, err
		}
		sw.lap("predict")
	}

	resp.LatencyMS = sw.total() // so far: what the surfacings record as the retrieval latency
	if err := p.record(ctx, req, in, resp, results); err != nil {
		return nil, err
	}
	if err := p.recordDecision(ctx, decision, len(results), resp.LatencyMS); err != nil {
		return nil, err
	}
	if err := owned(); err != nil {
		return nil, err
	}
	sw.lap("record")
	resp.Results = results
	resp.Context = Format(results, req.Now)
	resp.Stages, resp.LatencyMS = sw.stages, sw.total()
	return resp, nil
}
