package maintenance

import (
	"context"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
)

// edgeCursor is edge-decay's checkpoint: the namespace in progress and the last edge key
// done in it.
type edgeCursor struct {
	NS    string         `json:"ns"`
	After models.EdgeKey `json:"after"`
}

// EdgeDecay is the edge-decay job: every learned edge (see learned) of every namespace, in
// key order and in batches, gets decay.DecayEdge at the run's now (six months without co-occurrence → −0.05,
// floor 0.1, at most once per 30 days). Each batch's changes are one store transaction that
// re-reads the edges, so an edge strengthened by engagement meanwhile is judged on its new
// state and that engagement is never lost. The rule's LastDecayed makes the job idempotent
// within 30 days. Items is the number of edges that lost weight.
func (s *Service) EdgeDecay(ctx context.Context, run Run) (int, error) {
	now := run.Now().UTC()
	var cur edgeCursor
	if _, err := loadCheckpoint(run, "cursor", &cur); err != nil {
		return 0, err
	}
	nss, err := s.namespaces(ctx, cur.NS)
	if err != nil {
		return 0, err
	}
	items := 0
	for _, ns := range nss {
		if ns != cur.NS {
			cur = edgeCursor{NS: ns}
		}
		n := 0
		for {
			if err := ctx.Err(); err != nil {
				return items, err
			}
			es, err := s.store.ScanEdges(ctx, ns, cur.After, s.batch)
			if err != nil {
				return items, err
			}
			if len(es) == 0 {
				break
			}
			var stale []models.EdgeKey
			for _, e := range es {
				c := *e
				if learned(e) && decay.DecayEdge(&c, now) {
					stale = append(stale, e.Key())
				}
			}
			if len(stale) > 0 {
				changed, err := s.decayEdges(ctx, ns, stale, now)
				if err != nil {
					return items, err
				}
				n += changed
				items += changed
			}
			cur.After = es[len(es)-1].Key()
			if err := saveCheckpoint(run, "cursor", cur); err != nil {
				return items, err
			}
			if len(es) < s.batch {
				break
			}
		}
		if n > 0 {
			s.log.Info("edge-decay: namespace done", "namespace", ns, "decayed", n)
		}
	}
	return items, saveCheckpoint(run, "cursor", nil)
}

// learned reports whether engagement ever strengthened the edge (engagement.Rules.Strengthen
// counts every co-occurrence). decay.DecayEdge leaves alone edges that never co-occurred,
// recognising them by a zero LastCoOccurred, but ingest stamps its structural edges
// (mentions, temporal, relation) with the memory's creation time; without this check, every
// edge of a memory older than six months — all of an imported history — would fade on the
// first run, although nothing learned is being unlearned.
func learned(e *models.Edge) bool { return e.CoOccurrences > 0 }

// decayEdges applies the rule to the current state of each edge in one transaction and
// returns how many changed.
func (s *Service) decayEdges(ctx context.Context, ns string, keys []models.EdgeKey, now time.Time) (int, error) {
	var changed int
	err := s.store.Update(ctx, func(tx models.Tx) error {
		changed = 0 // fn may be retried
		for _, k := range keys {
			e, err := tx.GetEdge(ns, k)
			switch {
			case models.ErrorCode(err) == models.ENOTFOUND:
				continue // deleted with its memory meanwhile
			case err != nil:
				return err
			}
			if !learned(e) || !decay.DecayEdge(e, now) {
				continue
			}
			if err := tx.PutEdge(e); err != nil {
				return err
			}
			changed++
		}
		return nil
	})
	return changed, err
}
