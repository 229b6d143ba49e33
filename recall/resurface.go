package recall

import (
	"context"

	"github.com/salience-ai/salience/decay"
)

// resurfacing adds queued memories whose triggers and concepts match the context in at least
// decay.MinTriggerMatches places (docs/design.md#candidates, docs/design.md#decay-and-jobs). It runs after association, so a
// queued memory the graph also reached keeps its activation and its place among the
// associated ones.
func (p *Pipeline) resurfacing(ctx context.Context, req *Request, in *intake, cs *candidates) error {
	if len(in.concepts) == 0 {
		return nil
	}
	items, err := p.store.Queue(ctx, req.Namespace, p.opts.ResurfaceScan)
	if err != nil || len(items) == 0 {
		return err
	}
	idl := make([]string, len(items))
	for i, it := range items {
		idl[i] = it.MemoryID
	}
	ms, err := p.store.GetMemories(ctx, req.Namespace, idl)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if !m.Resurfaceable(req.Now) {
			// Changed since the scan queued it (dismissed, retired, made sensitive): the
			// queue is rebuilt hourly, the memory as it is now decides.
			continue
		}
		if n := decay.TriggerMatches(m, in.concepts); n >= decay.MinTriggerMatches {
			c := cs.get(m.ID)
			c.resurface = n
			c.mem = m
		}
	}
	return nil
}
