package sqlite

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/salience-ai/salience/models"
)

// Recall reads its namespace's relevance model (a state key) every turn; a point query of
// the state table cost about 0.1 ms of CPU a call at 100,000 memories. GetState therefore
// answers from a cache: this process's writes go through it as they commit (wtx.putState),
// and an entry is trusted for stateTTL, so that a write by another process on the same
// database (salience relearn, say) is seen within that.

// stateTTL is how long GetState trusts a cached value.
const stateTTL = time.Second

// stateCacheMax bounds the cached values' total size; a value over a sixteenth of it is
// not cached.
const stateCacheMax = 8 << 20

const upsertState = `INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`

type stateEntry struct {
	value string
	until time.Time
}

type stateCache struct {
	mu   sync.Mutex
	m    map[string]stateEntry
	size int
	gen  uint64 // moves with every committed write, so a read that overlapped one is not cached
}

// get returns key's cached value; ok is false when there is none or it has expired.
func (c *stateCache) get(key string, now time.Time) (string, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if ok && now.Before(e.until) {
		return e.value, true, c.gen
	}
	return "", false, c.gen
}

// putLocked caches key's value; the caller holds mu.
func (c *stateCache) putLocked(key string, e stateEntry) {
	if old, ok := c.m[key]; ok {
		c.size -= len(key) + len(old.value)
		delete(c.m, key)
	}
	n := len(key) + len(e.value)
	if n > stateCacheMax/16 {
		return
	}
	if c.size+n > stateCacheMax || c.m == nil {
		c.m, c.size = map[string]stateEntry{}, 0
	}
	c.m[key] = e
	c.size += n
}

// read caches a value read from the database, unless a write committed since gen.
func (c *stateCache) read(key, value string, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.putLocked(key, stateEntry{value: value, until: now.Add(stateTTL)})
	}
}

// wrote caches the values a transaction committed.
func (c *stateCache) wrote(states map[string]string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, v := range states {
		c.putLocked(k, stateEntry{value: v, until: now.Add(stateTTL)})
	}
}

// putState writes key's value in the transaction; the cache takes it once it commits.
func (w *wtx) putState(ctx context.Context, key, value string) error {
	if _, err := w.ExecContext(ctx, upsertState, key, value); err != nil {
		return err
	}
	if w.states == nil {
		w.states = map[string]string{}
	}
	w.states[key] = value
	return nil
}

// GetState returns the value of key, "" when missing.
func (s *Store) GetState(ctx context.Context, key string) (string, error) {
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	now := time.Now()
	v, ok, gen := s.states.get(key, now)
	if ok {
		return v, nil
	}
	// A point lookup, run without the driver's per-statement cancellation watcher (a
	// goroutine) by not cancelling it.
	err := s.rdb.QueryRowContext(context.WithoutCancel(ctx), `SELECT value FROM state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, errNoRows) {
		err = nil
	}
	if err != nil {
		return "", wrap(err, "get state")
	}
	s.states.read(key, v, gen, now)
	return v, nil
}

// SetState stores value under key.
func (s *Store) SetState(ctx context.Context, key, value string) error {
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	return s.write(ctx, "set state", func(tx *wtx) (func(), error) {
		return nil, tx.putState(ctx, key, value)
	})
}
