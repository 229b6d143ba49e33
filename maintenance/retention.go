package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/salience-ai/salience/models"
)

// JobPruneHistory is the job that deletes the turn history older than the retention.
const JobPruneHistory = "prune-history"

// MinRetention is the shortest history retention: a day, so that a turn's surfacings, its
// engagement reports (the ones a bot sends late included) and its bandit reward are all
// settled, and the day's experiment report taken, long before anything of it may go.
const MinRetention = models.MinHistoryRetentionDays * 24 * time.Hour

// CheckRetention reports whether d is a valid history retention: 0 (keep everything) or at
// least MinRetention.
func CheckRetention(d time.Duration) error {
	if d != 0 && d < MinRetention {
		return fmt.Errorf("history retention must be 0 (keep everything) or at least %v, got %v", MinRetention, d)
	}
	return nil
}

// PruneHistory is the prune-history job: it deletes each namespace's turn history —
// surfacings, engagement events, bandit decisions, conversation states — older than the
// run's time minus its retention (history_retention_days in its settings, else
// Options.Retention), and the job runs older than Options.Retention, by the Prunable rules
// of models/prune.go (SurfacingAge, EventAge, DecisionAge, ConversationAge, JobRunAge);
// models.Pruned only counts what went. What the history taught stays: memories, their confidence and schedules,
// edges, learned relevance, the bandit's posteriors. What reads the history reads the
// retained window: engagement metrics, relearn, proactive prediction's turn log. Items is
// the number of rows deleted. With no retention anywhere it does nothing.
func (s *Service) PruneHistory(ctx context.Context, run Run) (int, error) {
	now := run.Now()
	var cut models.PruneCut
	if s.retention > 0 {
		cut.Before = now.Add(-s.retention)
	}
	if s.settings != nil {
		nss, err := s.store.Namespaces(ctx)
		if err != nil {
			return 0, err
		}
		for _, ns := range nss {
			st, err := s.settings.For(ctx, ns)
			if err != nil {
				// Its history stays this run rather than go by a retention it did not set.
				s.log.Warn("prune-history: namespace settings unreadable; its history is kept this run", "namespace", ns, "error", err)
				if cut.Namespaces == nil {
					cut.Namespaces = map[string]time.Time{}
				}
				cut.Namespaces[ns] = time.Time{}
				continue
			}
			if r := st.Retention(0); r > 0 {
				if cut.Namespaces == nil {
					cut.Namespaces = map[string]time.Time{}
				}
				cut.Namespaces[ns] = now.Add(-r)
			}
		}
	}
	if cut.None() {
		return 0, nil
	}
	p, err := s.store.PruneHistory(ctx, cut)
	if p.Total() > 0 {
		s.log.Info("prune-history: deleted", "before", cut.Before.Format(time.RFC3339), "namespaces_with_their_own", len(cut.Namespaces),
			"surfacings", p.Surfacings, "events", p.Events, "decisions", p.Decisions, "conversations", p.Conversations, "job_runs", p.JobRuns)
	}
	return p.Total(), err
}
