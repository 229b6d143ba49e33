package maintenance

import (
	"context"
	"fmt"
	"time"
)

// JobPruneHistory is the job that deletes the turn history older than the retention.
const JobPruneHistory = "prune-history"

// MinRetention is the shortest history retention: a day, so that a turn's surfacings, its
// engagement reports (the ones a bot sends late included) and its bandit reward are all
// settled, and the day's experiment report taken, long before anything of it may go.
const MinRetention = 24 * time.Hour

// CheckRetention reports whether d is a valid history retention: 0 (keep everything) or at
// least MinRetention.
func CheckRetention(d time.Duration) error {
	if d != 0 && d < MinRetention {
		return fmt.Errorf("history retention must be 0 (keep everything) or at least %v, got %v", MinRetention, d)
	}
	return nil
}

// PruneHistory is the prune-history job: with a retention set (Options.Retention), it deletes
// the turn history — surfacings, engagement events, bandit decisions, conversation states and
// job runs — older than the run's time minus the retention, by the rules of models.Pruned.
// What the history taught stays: memories, their confidence and schedules, edges, learned
// relevance, the bandit's posteriors. What reads the history reads the retained window:
// engagement metrics, relearn, proactive prediction's turn log. Items is the number of rows
// deleted. With no retention it does nothing.
func (s *Service) PruneHistory(ctx context.Context, run Run) (int, error) {
	if s.retention <= 0 {
		return 0, nil
	}
	before := run.Now().Add(-s.retention)
	p, err := s.store.PruneHistory(ctx, before)
	if p.Total() > 0 {
		s.log.Info("prune-history: deleted", "before", before.Format(time.RFC3339), "surfacings", p.Surfacings,
			"events", p.Events, "decisions", p.Decisions, "conversations", p.Conversations, "job_runs", p.JobRuns)
	}
	return p.Total(), err
}
