package recall

import (
	"context"
	"sort"
)

// withSources adds to the home namespace's ranked list the candidates of each source
// namespace of a shared-memory recall, and orders them all by score. A source is searched
// and ranked as the home namespace is (text, vectors, graph), under the home namespace's
// options, threshold and conversation state; its resurfacing queue is its own bot's and is
// not read. Scores are on one 0..1 scale in every namespace, so the merge is by score;
// a calibrated probability of use will be the better key once ranking has one.
func (p *Pipeline) withSources(ctx context.Context, req *Request, in *intake, resp *Response, list []*candidate) ([]*candidate, error) {
	for _, src := range req.Sources {
		if src == req.Namespace {
			continue
		}
		sreq := *req
		sreq.Namespace = src
		cs, degraded, err := p.candidates(ctx, &sreq, in)
		if err != nil {
			return nil, err
		}
		for _, d := range degraded {
			resp.Degraded = append(resp.Degraded, src+": "+d)
		}
		if err := p.associate(ctx, &sreq, in, cs); err != nil {
			return nil, err
		}
		more, err := p.rank(ctx, &sreq, in, cs, resp.Threshold)
		if err != nil {
			return nil, err
		}
		list = append(list, more...)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].id < list[j].id
	})
	return list, nil
}
