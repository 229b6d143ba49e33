package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
)

// Period returns the dismissal-cooldown period of t: its ISO week in UTC, "2026-W10". The
// halving happens at most once per period, whatever the job's schedule.
func Period(t time.Time) string {
	y, w := t.UTC().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

// cooldownCursor is dismissal-cooldown's checkpoint while a period's pass is under way.
type cooldownCursor struct {
	Period string   `json:"period"`
	NS     string   `json:"ns"`
	Pos    position `json:"pos"`
}

// DismissalCooldown is the dismissal-cooldown job: once per ISO week (UTC) every memory with
// RecentDismissals > 0 has them halved (decay.HalveDismissals), so the proactive gate
// "RecentDismissals ≤ 2" does not block a memory forever. The period last completed is kept
// in the checkpoint "done": a second run in the same week changes nothing. A pass cut short
// resumes with its own period; if the week turned meanwhile, the old pass is finished first
// and the new week's follows in the same run, since two periods did elapse. Each batch's
// halvings are one transaction over the memories' current state, written once the
// checkpoint has moved past the batch, so even a crash never halves a memory twice in a
// period. Items is the number of memories changed.
func (s *Service) DismissalCooldown(ctx context.Context, run Run) (int, error) {
	period := Period(run.Now())
	done, err := run.Checkpoint("done")
	if err != nil {
		return 0, err
	}
	var cur cooldownCursor
	if _, err := loadCheckpoint(run, "cursor", &cur); err != nil {
		return 0, err
	}
	items := 0
	if cur.Period != "" && cur.Period != done && cur.Period < period {
		n, err := s.halvePeriod(ctx, run, cur)
		items += n
		if err != nil {
			return items, err
		}
		done = cur.Period
	}
	if done == period {
		return items, nil
	}
	if cur.Period != period {
		cur = cooldownCursor{Period: period}
	}
	n, err := s.halvePeriod(ctx, run, cur)
	return items + n, err
}

// halvePeriod runs (or resumes) the pass of cur.Period and marks the period done.
func (s *Service) halvePeriod(ctx context.Context, run Run, cur cooldownCursor) (int, error) {
	nss, err := s.namespaces(ctx, cur.NS)
	if err != nil {
		return 0, err
	}
	items := 0
	for _, ns := range nss {
		if ns != cur.NS {
			cur = cooldownCursor{Period: cur.Period, NS: ns}
		}
		err := s.walkMemories(ctx, ns, cur.Pos, func(ms []*models.Memory, last position) error {
			var ids []string
			for _, m := range ms {
				if m.RecentDismissals != 0 {
					ids = append(ids, m.ID)
				}
			}
			// The checkpoint moves first: a crash between the two skips this batch's
			// halving for the period (its dismissals fade a week later) rather than halving
			// it twice. A stop does not cut the batch: its write ignores the cancellation.
			cur.Pos = last
			if err := saveCheckpoint(run, "cursor", cur); err != nil {
				return err
			}
			n, err := s.halve(context.WithoutCancel(ctx), ns, ids)
			items += n
			return err
		})
		if err != nil {
			return items, err
		}
	}
	if err := run.SetCheckpoint("done", cur.Period); err != nil {
		return items, err
	}
	s.log.Info("dismissal-cooldown: period done", "period", cur.Period, "memories", items)
	return items, saveCheckpoint(run, "cursor", nil)
}

// halve applies decay.HalveDismissals to the current state of the memories in one
// transaction and returns how many changed.
func (s *Service) halve(ctx context.Context, ns string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var changed int
	err := s.store.Update(ctx, func(tx models.Tx) error {
		changed = 0
		for _, id := range ids {
			m, err := tx.GetMemory(ns, id)
			switch {
			case models.ErrorCode(err) == models.ENOTFOUND:
				continue
			case err != nil:
				return err
			}
			if !decay.HalveDismissals(m) {
				continue
			}
			if err := tx.PutMemory(m); err != nil {
				return err
			}
			changed++
		}
		return nil
	})
	return changed, err
}
