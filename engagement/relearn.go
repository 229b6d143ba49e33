package engagement

import (
	"context"

	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// RelearnResult is what Relearn did.
type RelearnResult struct {
	// Events is the number of logged events the model was rebuilt from; Skipped those whose
	// surfacing no longer exists (the online model trained on them, the log cannot). Events
	// on proactive predictions, and on surfacings recorded under an older feature version,
	// which the model never trains on, are in neither.
	Events, Skipped int
	// Version is the rebuilt model's version; MaxDiff the largest difference between a
	// weight of the model as the online updates left it and as rebuilt.
	Version int64
	MaxDiff float64
}

// relearnTries bounds how often Relearn reads the log again because events were applied
// while it replayed the previous read.
const relearnTries = 10

// Relearn rebuilds ns's relevance model from the event log, replayed in sequence order from
// the prior, and stores it. It reads the log outside a transaction, then in one checks that
// the stored model has seen no later event — else it replays the new events and tries
// again — so it is safe while a server applies events to the same database.
//
// A log that no longer starts at its first event (prune-history deleted the oldest) would
// rebuild the model from the kept events only, and forget what the deleted ones taught the
// online model: Relearn refuses it (ECONFLICT) unless fromKept.
func (s *Service) Relearn(ctx context.Context, ns string, fromKept bool) (*RelearnResult, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if !fromKept {
		first, err := s.store.FindEvents(ctx, models.EventFilter{Namespace: ns, BySeq: true, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(first) == 1 && first[0].Seq > 1 {
			return nil, models.Errorf(models.ECONFLICT, "namespace %s's event log was pruned (its oldest kept event is number %d): "+
				"a relearn would rebuild the relevance model from the kept events only and forget what the deleted ones taught; "+
				"ask for from_kept to do so anyway", ns, first[0].Seq)
		}
	}
	m := learn.New(s.learn)
	res := &RelearnResult{}
	for range relearnTries {
		evs, err := s.store.FindEvents(ctx, models.EventFilter{Namespace: ns, BySeq: true, AfterSeq: m.Seq})
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			sf, err := s.store.GetSurfacing(ctx, ns, ev.SurfacingID)
			switch {
			case models.ErrorCode(err) == models.ENOTFOUND:
				res.Skipped++
				m.Seq = ev.Seq
				continue
			case err != nil:
				return nil, err
			}
			if !trains(sf) { // as the online updates skip it
				m.Seq = ev.Seq
				continue
			}
			x := learn.Features(&sf.Components)
			learn.Replay(s.learn, m, []learn.Sample{{X: x, Y: learn.Label(ev.Type), Seq: ev.Seq}})
			res.Events++
		}
		done := false
		err = s.store.Update(ctx, func(tx models.Tx) error {
			cur, err := tx.GetState(learn.Key(ns))
			if err != nil {
				return err
			}
			online, err := learn.Decode(cur, s.learn)
			if err != nil {
				return models.Errorf(models.EINTERNAL, "%v", err)
			}
			if online.Seq > m.Seq {
				return nil // events arrived meanwhile: read them too
			}
			done = true
			res.MaxDiff = learn.MaxDiff(online, m)
			return tx.SetState(learn.Key(ns), learn.Encode(m))
		})
		if err != nil {
			return nil, err
		}
		if done {
			res.Version = m.N
			return res, nil
		}
	}
	return nil, models.Errorf(models.EUNAVAILABLE, "relearn: events kept arriving faster than the log could be replayed; try again")
}
