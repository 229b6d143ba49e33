package recall

import (
	"context"
	"time"

	"github.com/salience-ai/salience/rerank"
)

// Reranker reorders the best candidates of a recall with a language model behind the
// latency gate of docs/design.md#threshold-and-rerank (rerank.Reranker). It never fails: any outcome but
// applied leaves the order as it was.
type Reranker interface {
	Rerank(ctx context.Context, req *rerank.Request) rerank.Outcome
}

// rerankStatus is the status of a recall that never reached the reranker: off in the
// request, or no reranker configured.
func (p *Pipeline) rerankStatus(req *Request) RerankStatus {
	switch {
	case req.Rerank == rerank.ModeOff:
		return RerankStatus{Status: rerank.StatusOff, Reason: "rerank off in request"}
	case p.opts.Reranker == nil:
		return RerankStatus{Status: rerank.StatusUnconfigured, Reason: "no reranker configured"}
	}
	return RerankStatus{Status: rerank.StatusOff, Reason: "nothing to rerank"}
}

// reranks reports whether rerank offers the request's list to the reranker (when it holds
// two candidates or more); when not, rerank returns the list as it is.
func (p *Pipeline) reranks(req *Request) bool {
	return p.opts.Reranker != nil && req.Rerank != rerank.ModeOff
}

// rerank offers the ranked, diversified list to the reranker, after diversity and before
// the budget cut, and returns the list to cut and what happened. Sensitive memories are
// marked so they never leave the server; the reranker's order is applied only when it says
// applied. The stopwatch says how much of the budget is spent; when the reranker is asked,
// its time is a stage of its own, "rerank".
func (p *Pipeline) rerank(ctx context.Context, req *Request, in *intake, list []*candidate, sw *stopwatch) ([]*candidate, RerankStatus) {
	if !p.reranks(req) || len(list) < 2 {
		return list, p.rerankStatus(req)
	}
	sw.lap("rank")
	defer sw.lap("rerank")
	cands := make([]rerank.Candidate, len(list))
	for i, c := range list {
		text := c.mem.Content
		if u := c.unitMem; u != nil && u.IsChunk() {
			text = u.Content
		}
		cands[i] = rerank.Candidate{ID: c.id, Text: text, Sensitive: c.mem.Sensitive}
	}
	out := p.opts.Reranker.Rerank(ctx, &rerank.Request{
		Namespace:  req.Namespace,
		Query:      in.text,
		Candidates: cands,
		Mode:       req.Rerank,
		Policy:     p.rerankPolicy(),
		Elapsed:    time.Since(sw.start),
		Budget:     req.LatencyBudget,
	})
	status := RerankStatus{Status: out.Status, Reason: out.Reason}
	if out.Status != rerank.StatusApplied || len(out.Order) != len(list) {
		return list, status
	}
	reordered := make([]*candidate, len(list))
	for i, j := range out.Order {
		reordered[i] = list[j]
	}
	return reordered, status
}
