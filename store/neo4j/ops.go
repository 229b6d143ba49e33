package neo4j

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

const (
	enqueue = `UNWIND $rows AS it MERGE (q:QueueItem {ns: it.ns, memory: it.memory})
		SET q.due = it.due, q.score = it.score, q.queued = it.queued`
	queue = `MATCH (q:QueueItem {ns: $ns})
		RETURN q.memory AS memory, q.due AS due, q.score AS score, q.queued AS queued
		ORDER BY score DESC, memory ASC LIMIT $limit`
)

// Enqueue adds or replaces resurfacing queue items (one per memory).
func (s *Store) Enqueue(ctx context.Context, items []*models.ResurfaceItem) error {
	if err := models.ValidateEnqueue(items); err != nil {
		return err
	}
	rows := make([]map[string]any, 0, len(items))
	for _, it := range items {
		rows = append(rows, map[string]any{"ns": it.Namespace, "memory": it.MemoryID, "due": encTime(it.DueAt),
			"score": it.Score, "queued": encTime(it.QueuedAt)})
	}
	if len(rows) == 0 {
		return nil
	}
	return s.write(ctx, "enqueue", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, enqueue, map[string]any{"rows": rows})
	})
}

// Queue lists a namespace's queue, highest score first (then by memory id), at most limit
// (0 = all).
func (s *Store) Queue(ctx context.Context, ns string, limit int) ([]*models.ResurfaceItem, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateLimit(limit); err != nil {
		return nil, err
	}
	lim := noLimit
	if limit > 0 {
		lim = int64(limit)
	}
	var out []*models.ResurfaceItem
	err := s.read(ctx, "queue", func(tx runner) error {
		recs, err := collect(ctx, tx, queue, map[string]any{"ns": ns, "limit": lim})
		if err != nil {
			return err
		}
		out = make([]*models.ResurfaceItem, 0, len(recs))
		for _, r := range recs {
			p := props{m: r.AsMap()}
			out = append(out, &models.ResurfaceItem{Namespace: ns, MemoryID: p.str("memory"), DueAt: p.time("due"),
				Score: p.f64("score"), QueuedAt: p.time("queued")})
			if p.err != nil {
				return p.err
			}
		}
		return nil
	})
	return out, err
}

// Dequeue removes these memories from the queue; missing ones are ignored.
func (s *Store) Dequeue(ctx context.Context, ns string, memoryIDs []string) error {
	if err := models.ValidateNamespace(ns); err != nil {
		return err
	}
	if len(memoryIDs) == 0 {
		return nil
	}
	return s.write(ctx, "dequeue", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, dequeueIDs, map[string]any{"ns": ns, "ids": memoryIDs})
	})
}

const (
	// lockLease creates the lease when missing and write-locks it, so the read that follows
	// sees the latest committed holder and no other acquirer can decide concurrently.
	lockLease = `MERGE (l:Lease {name: $name}) ON CREATE SET l.holder = '', l.expires = 0
		SET l.lk = NOT coalesce(l.lk, false)
		RETURN l.holder AS holder, l.expires AS expires`
	takeLease    = `MATCH (l:Lease {name: $name}) SET l.holder = $holder, l.expires = $until`
	releaseLease = `MATCH (l:Lease {name: $name, holder: $holder}) SET l.holder = '', l.expires = 0`
)

// AcquireLease takes or renews the named lease for holder until now+ttl: it succeeds when
// the lease is free, expired, or already holder's, and reports false, nil when another
// holder has it. The decision runs in one transaction holding the lease's lock, so across
// any number of replicas one acquirer wins.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (bool, error) {
	if err := models.ValidateLeaseRequest(name, holder, ttl, now); err != nil {
		return false, err
	}
	until := now.Add(ttl)
	var ok bool
	err := s.write(ctx, "acquire lease", func(tx neo4j.ManagedTransaction) error {
		ok = false
		recs, err := collect(ctx, tx, lockLease, map[string]any{"name": name})
		if err != nil {
			return err
		}
		p := props{m: recs[0].AsMap()}
		cur, expires := p.str("holder"), p.i64("expires")
		if p.err != nil {
			return p.err
		}
		if models.LeaseTaken(cur, decTime(expires), holder, now) {
			return nil
		}
		if err := exec(ctx, tx, takeLease, map[string]any{"name": name, "holder": holder, "until": encTime(until)}); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}

// ReleaseLease frees the lease if holder has it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := models.ValidateLeaseRelease(name, holder); err != nil {
		return err
	}
	return s.write(ctx, "release lease", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, releaseLease, map[string]any{"name": name, "holder": holder})
	})
}

const (
	recordJobRun = `MERGE (r:JobRun {id: $id}) SET r += $p`
	findJobRuns  = `MATCH (r:JobRun) WHERE $job IS NULL OR r.job = $job
		RETURN r {.*} AS r ORDER BY r.start DESC, r.id DESC LIMIT $limit`
)

// RecordJobRun creates or replaces a job run (by ID).
func (s *Store) RecordJobRun(ctx context.Context, run *models.JobRun) error {
	if err := models.ValidateStoredJobRun(run); err != nil {
		return err
	}
	p := map[string]any{"job": run.Job, "holder": run.Holder, "trigger": run.Trigger, "start": encTime(run.Start),
		"end": encTime(run.End), "items": int64(run.Items), "error": run.Error, "finished": run.Finished}
	return s.write(ctx, "record job run", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, recordJobRun, map[string]any{"id": run.ID, "p": p})
	})
}

// FindJobRuns lists the newest runs of a job ("" = all jobs), newest first (then by id).
func (s *Store) FindJobRuns(ctx context.Context, job string, limit int) ([]*models.JobRun, error) {
	if err := models.ValidateLimit(limit); err != nil {
		return nil, err
	}
	lim := noLimit
	if limit > 0 {
		lim = int64(limit)
	}
	var out []*models.JobRun
	err := s.read(ctx, "find job runs", func(tx runner) error {
		recs, err := collect(ctx, tx, findJobRuns, map[string]any{"job": optString(job), "limit": lim})
		if err != nil {
			return err
		}
		out = make([]*models.JobRun, 0, len(recs))
		for _, r := range recs {
			p := asProps(r.Values[0])
			out = append(out, &models.JobRun{ID: p.str("id"), Job: p.str("job"), Holder: p.str("holder"),
				Trigger: p.str("trigger"), Start: p.time("start"), End: p.time("end"), Items: p.int("items"),
				Error: p.str("error"), Finished: p.bool("finished")})
			if p.err != nil {
				return p.err
			}
		}
		return nil
	})
	return out, err
}

const (
	getState = `MATCH (s:State {key: $key}) RETURN s.value AS value`
	setState = `MERGE (s:State {key: $key}) SET s.value = $value`
)

// GetState returns a small opaque value; "" and no error for a missing key.
func (s *Store) GetState(ctx context.Context, key string) (string, error) {
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	var v string
	err := s.read(ctx, "get state", func(tx runner) error {
		recs, err := collect(ctx, tx, getState, map[string]any{"key": key})
		if err != nil {
			return err
		}
		v = ""
		if len(recs) > 0 {
			v, _ = recs[0].Values[0].(string)
		}
		return nil
	})
	return v, err
}

// SetState stores a small opaque value.
func (s *Store) SetState(ctx context.Context, key, value string) error {
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	return s.write(ctx, "set state", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, setState, map[string]any{"key": key, "value": value})
	})
}
