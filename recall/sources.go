package recall

import (
	"context"
	"sort"

	"github.com/salience-ai/salience/learn"
)

// withSources adds to the home namespace's ranked list the candidates of each source
// namespace of a shared-memory recall, and orders them all by p_use. A source is searched
// and ranked as the home namespace is (text, vectors, graph), under the home namespace's
// options, threshold and conversation state, but each candidate's probability of use comes
// from the relevance model of the namespace it lives in — the one its engagement trains. A
// probability means the same in every namespace, where raw scores need not (BM25 is
// relative to each namespace's best match), so the merge orders by p_use, then score, then
// id. A source's resurfacing queue is its own bot's and is not read.
func (p *Pipeline) withSources(ctx context.Context, req *Request, in *intake, resp *Response, list []*candidate) ([]*candidate, error) {
	for _, src := range req.Sources {
		if src == req.Namespace {
			continue
		}
		sreq := *req
		sreq.Namespace = src
		model, err := p.model(ctx, src)
		if err != nil {
			return nil, err
		}
		if in.sourceModels == nil {
			in.sourceModels = map[string]*learn.Model{}
		}
		in.sourceModels[src] = model
		sin := *in
		sin.model = model
		cs, degraded, err := p.candidates(ctx, &sreq, &sin)
		if err != nil {
			return nil, err
		}
		for _, d := range degraded {
			resp.Degraded = append(resp.Degraded, src+": "+d)
		}
		if err := p.associate(ctx, &sreq, &sin, cs); err != nil {
			return nil, err
		}
		more, err := p.rank(ctx, &sreq, &sin, cs, resp.Threshold)
		if err != nil {
			return nil, err
		}
		list = append(list, more...)
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		switch {
		case a.pUse != b.pUse:
			return a.pUse > b.pUse
		case a.score != b.score:
			return a.score > b.score
		}
		return a.id < b.id
	})
	return list, nil
}
