package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/salience-ai/salience/models"
)

// Enqueue adds or replaces resurfacing queue items, one per (namespace, memory).
func (s *Store) Enqueue(ctx context.Context, items []*models.ResurfaceItem) error {
	if err := models.ValidateEnqueue(items); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	return s.write(ctx, "enqueue", func(tx *wtx) (func(), error) {
		for _, it := range items {
			if _, err := tx.ExecContext(ctx, upsertQueue.sql, upsertQueue.bind(it)...); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
}

// Queue lists a namespace's queue, highest score first (then memory id), at most limit
// (0 = all; EINVALID when negative).
func (s *Store) Queue(ctx context.Context, ns string, limit int) ([]*models.ResurfaceItem, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateLimit(limit); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	return queryAll(ctx, s.rdb, "queue", queueRows.sel+` WHERE ns = ? ORDER BY score DESC, memory_id LIMIT ?`,
		[]any{ns, limit}, scanQueueItem)
}

// Dequeue removes these memories from the namespace's queue; missing ones are ignored.
func (s *Store) Dequeue(ctx context.Context, ns string, memoryIDs []string) error {
	if err := models.ValidateNamespace(ns); err != nil {
		return err
	}
	if len(memoryIDs) == 0 {
		return nil
	}
	return s.write(ctx, "dequeue", func(tx *wtx) (func(), error) {
		for _, id := range memoryIDs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE ns = ? AND memory_id = ?`, ns, id); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
}

// AcquireLease takes or renews the named lease for holder until now+ttl. It succeeds when the
// lease is free, expired (its expiry ≤ now), or already held by holder; it reports false, nil
// when another holder has it. EINVALID for an empty name or holder or a ttl ≤ 0.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (bool, error) {
	if err := models.ValidateLeaseRequest(name, holder, ttl, now); err != nil {
		return false, err
	}
	until := now.Add(ttl)
	var ok bool
	err := s.write(ctx, "acquire lease", func(tx *wtx) (func(), error) {
		var cur string
		var expires int64
		err := tx.QueryRowContext(ctx, `SELECT holder, expires_at FROM leases WHERE name = ?`, name).Scan(&cur, &expires)
		switch {
		case errors.Is(err, errNoRows):
		case err != nil:
			return nil, err
		case models.LeaseTaken(cur, decTime(expires), holder, now):
			return nil, nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`, name, holder, encTime(until))
		ok = err == nil
		return nil, err
	})
	return ok, err
}

// ReleaseLease frees the lease if holder has it; otherwise it does nothing.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := models.ValidateLeaseRelease(name, holder); err != nil {
		return err
	}
	return s.write(ctx, "release lease", func(tx *wtx) (func(), error) {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder)
		return nil, err
	})
}

// RecordJobRun creates or replaces a job run by ID.
func (s *Store) RecordJobRun(ctx context.Context, run *models.JobRun) error {
	if err := models.ValidateStoredJobRun(run); err != nil {
		return err
	}
	return s.write(ctx, "record job run", func(tx *wtx) (func(), error) {
		_, err := tx.ExecContext(ctx, upsertJobRun.sql, upsertJobRun.bind(run)...)
		return nil, err
	})
}

// FindJobRuns lists the runs of a job ("" = all jobs), newest first by Start then id; at
// most limit (0 = all; EINVALID when negative).
func (s *Store) FindJobRuns(ctx context.Context, job string, limit int) ([]*models.JobRun, error) {
	if err := models.ValidateLimit(limit); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = -1
	}
	q := jobRunRows.sel
	args := []any{}
	if job != "" {
		q, args = q+` WHERE job = ?`, append(args, job)
	}
	return queryAll(ctx, s.rdb, "find job runs", q+` ORDER BY started_at DESC, id DESC LIMIT ?`, append(args, limit), scanJobRun)
}
