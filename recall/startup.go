package recall

import (
	"context"
	"sort"

	"github.com/salience-ai/salience/ids"

	"github.com/salience-ai/salience/models"
)

// startup builds the startup package (seed: PPS): the newest crystals, anchors and summaries,
// and every turn newer than the newest summary — by listing, with no search at all.
func (p *Pipeline) startup(ctx context.Context, req *Request) (*Response, error) {
	ns := req.Namespace
	newest := func(k models.Kind, n int) ([]*models.Memory, error) {
		if n <= 0 {
			return nil, nil
		}
		ms, _, err := p.store.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Kinds: []models.Kind{k}, Limit: n})
		return ms, err
	}
	c := p.opts.Startup
	crystals, err := newest(models.KindCrystal, c.Crystals)
	if err != nil {
		return nil, err
	}
	anchors, err := newest(models.KindAnchor, c.Anchors)
	if err != nil {
		return nil, err
	}
	summaries, err := newest(models.KindSummary, c.Summaries)
	if err != nil {
		return nil, err
	}
	f := models.MemoryFilter{Namespace: ns, Kinds: []models.Kind{models.KindTurn}, Sort: "created_asc", Limit: 1000}
	if len(summaries) > 0 {
		// Turns after the newest summary: everything before it is summarized.
		f.Since = summaries[0].CreatedAt.Add(1)
	}
	var turns []*models.Memory
	for {
		page, total, err := p.store.FindMemories(ctx, f)
		if err != nil {
			return nil, err
		}
		turns = append(turns, page...)
		f.Offset += len(page)
		if len(page) == 0 || f.Offset >= total {
			break
		}
	}
	sort.SliceStable(turns, func(i, j int) bool { return turns[i].CreatedAt.Before(turns[j].CreatedAt) })

	resp := &Response{Rerank: RerankStatus{Status: "off", Reason: "startup runs no search"}}
	st, err := p.conversation(ctx, req)
	if err != nil {
		return nil, err
	}
	in := &intake{turnID: req.TurnID, convType: req.ConversationType, state: st}
	if in.turnID == "" {
		in.turnID = ids.New(req.Now)
	}
	resp.TurnID = in.turnID
	for _, group := range [][]*models.Memory{anchors, crystals, summaries, turns} {
		for _, m := range group {
			resp.Results = append(resp.Results, Result{Memory: m, Content: m.Content, Score: 1, Reasons: []string{"startup"}})
		}
	}
	nodes, edges, err := p.store.GraphStats(ctx, ns)
	if err != nil {
		return nil, err
	}
	_, total, err := p.store.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Limit: 1})
	if err != nil {
		return nil, err
	}
	resp.Startup = &Startup{Now: req.Now, Memories: total, Concepts: nodes - total, Edges: edges}
	if resp.Startup.Concepts < 0 {
		resp.Startup.Concepts = 0
	}
	if err := p.record(ctx, req, in, resp, resp.Results); err != nil {
		return nil, err
	}
	resp.Context = Format(resp.Results, req.Now)
	return resp, nil
}
