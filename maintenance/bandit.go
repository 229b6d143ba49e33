package maintenance

import (
	"context"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// JobBanditUpkeep is the job that feeds settled turns' rewards to the threshold bandit.
const JobBanditUpkeep = "bandit-upkeep"

// BanditUpkeep is the bandit-upkeep job: every pending threshold decision whose turn has
// settled is rewarded (RewardTurn). Items is the number of decisions rewarded. It needs no
// checkpoint: a rewarded decision is no longer pending, so a run cut short resumes by itself.
func (s *Service) BanditUpkeep(ctx context.Context, run Run) (int, error) {
	now := run.Now()
	nss, err := s.store.Namespaces(ctx)
	if err != nil {
		return 0, err
	}
	items := 0
	for _, ns := range nss {
		n, err := s.rewardPending(ctx, ns, now)
		items += n
		if err != nil {
			return items, err
		}
	}
	return items, nil
}

// rewardPending rewards a namespace's settled pending decisions, oldest first, a batch at a
// time. It stops at a batch that leaves any decision pending (a turn still settling): those
// come back first in the next run, and turns settle in about the order they were made.
func (s *Service) rewardPending(ctx context.Context, ns string, now time.Time) (int, error) {
	items := 0
	for {
		if err := ctx.Err(); err != nil {
			return items, err
		}
		ds, err := s.store.FindDecisions(ctx, models.DecisionFilter{Namespace: ns, Pending: true, Before: now, Limit: s.batch})
		if err != nil {
			return items, err
		}
		done := 0
		for _, d := range ds {
			ok, err := s.RewardTurn(ctx, ns, d.TurnID, now)
			if err != nil {
				return items, err
			}
			if ok {
				done++
			}
		}
		items += done
		if len(ds) < s.batch || done < len(ds) {
			return items, nil
		}
	}
}

// RewardTurn rewards one turn's decision when the turn has settled — it surfaced nothing,
// every surfacing has an outcome, or the namespace's implicit-ignore timeout has passed since
// it (a surfacing still without an outcome then counts as ignored, as implicit-ignore records
// it).
// In one transaction it computes the turn's reward (docs/design.md#prediction-and-thresholds: the mean of its events'
// rewards, engagement.TurnReward; the namespace's empty-turn reward when it surfaced
// nothing), updates the namespace's posterior when the bandit made the decision, and marks
// the decision rewarded, so concurrent callers (servers sharing a store, the job and an
// evaluation) reward a turn exactly once and lose no update. It reports whether it
// rewarded; ENOTFOUND when the turn has no decision.
func (s *Service) RewardTurn(ctx context.Context, ns, turnID string, now time.Time) (bool, error) {
	ignoreAfter := s.ignoreAfterOf(ctx, ns) // outside the transaction: it may read the store
	rewarded := false
	err := s.store.Update(ctx, func(tx models.Tx) error {
		rewarded = false
		d, err := tx.GetDecision(ns, turnID)
		if err != nil || d.Rewarded {
			return err
		}
		var outcomes []models.EventType
		if d.Surfaced > 0 {
			ss, err := tx.FindSurfacings(models.SurfacingFilter{Namespace: ns, TurnID: turnID, Limit: 1000})
			if err != nil {
				return err
			}
			for _, sf := range ss {
				if sf.Outcome != "" {
					outcomes = append(outcomes, sf.Outcome)
				}
			}
			if len(outcomes) < d.Surfaced && now.Sub(d.At) < ignoreAfter {
				return nil // not settled: reports may still come
			}
		}
		r := s.emptyReward(ns)
		if d.Surfaced > 0 {
			r = engagement.TurnReward(outcomes, d.Surfaced)
		}
		if d.Policy == predict.PolicyBandit && d.Arm >= 0 {
			raw, err := tx.GetState(predict.StateKey(ns))
			if err != nil {
				return err
			}
			p, err := predict.DecodePosteriors(raw)
			if err != nil {
				return models.Errorf(models.EINTERNAL, "%v", err)
			}
			s.bandit.Reward(p, predict.PosteriorKey(d.ConvType, d.Variant), d.ConvType, d.Arm, r, now)
			if err := tx.SetState(predict.StateKey(ns), p.Encode()); err != nil {
				return err
			}
		}
		d.Rewarded, d.Reward, d.RewardedAt = true, r, now
		rewarded = true
		return tx.PutDecision(d)
	})
	return rewarded, err
}

func (s *Service) emptyReward(ns string) float64 {
	if s.empty != nil {
		return s.empty(ns)
	}
	return engagement.EmptyTurnReward
}
