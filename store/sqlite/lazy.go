package sqlite

import (
	"context"
	"sync"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/memindex"
)

// Namespaces on demand (Options.IndexBudget > 0). A server holding many namespaces keeps in
// memory only the ones in use: Rebuild loads nothing (so the store is ready at once), a
// namespace's indexes and caches are loaded from SQLite on its first use, and once the
// loaded namespaces' estimated size passes the budget the least recently used are dropped,
// to be loaded again when next used. RAM follows the working set, not the total.
//
// Consistency: a write's cache update (under the write mutex) only touches namespaces
// already loaded; one not loaded picks the write up from SQLite when it is, and each
// committed write to a namespace moves its generation (memindex.Set.Gen). A reader's
// load (space) starts a read transaction on a connection of its own while it holds the
// write mutex, builds the space from that snapshot without it — other namespaces' writes go
// on meanwhile — and publishes it under the write mutex only if no write touched the
// namespace since: otherwise it loads again holding the mutex (loadSpaceLocked), as an
// Update transaction's load always does. An evicted space a reader still holds stays a
// consistent, if aging, snapshot.

// lazyState holds what on-demand loading reads through.
type lazyState struct {
	// raw is the connection loads under the write mutex read through, opened by the first
	// and kept; the write mutex guards it.
	raw *conn
	// loadMu makes readers' loads one at a time, and guards free, their connection, and
	// closing, set by Close.
	loadMu  sync.Mutex
	free    *conn
	closing bool
	// loaded, when set (tests), runs after a reader's load has read its snapshot.
	loaded func(ns string)
}

// closeLazyRaw closes the loads' connection, if open. The caller holds the write mutex.
func (s *Store) closeLazyRaw() {
	if s.lazy.raw != nil {
		s.lazy.raw.Close()
		s.lazy.raw = nil
	}
}

// IndexStats describes the in-memory indexes.
type IndexStats = memindex.Stats

// IndexStats returns the in-memory indexes' figures.
func (s *Store) IndexStats() IndexStats { return s.mem.Stats() }

// space returns ns's space for a reader that does not hold the write mutex, loading it in
// budget mode; nil when the namespace has none (eager mode).
func (s *Store) space(ctx context.Context, ns string) (*memindex.Space, error) {
	if sp := s.mem.Get(ns); sp != nil || s.mem.Budget() == 0 {
		return sp, nil
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	s.lazy.loadMu.Lock()
	defer s.lazy.loadMu.Unlock()
	if sp := s.mem.Get(ns); sp != nil {
		return sp, nil
	}
	if sp, err := s.loadBeside(ctx, ns); sp != nil || err != nil {
		return sp, err
	}
	s.wmu.Lock() // a write reached ns meanwhile: load again, holding the write mutex
	defer s.wmu.Unlock()
	return s.loadSpaceLocked(ctx, ns, nil)
}

// loadBeside loads ns from a snapshot without holding the write mutex (see the top of this
// file); nil and no error when it could not publish it. The caller holds loadMu.
func (s *Store) loadBeside(ctx context.Context, ns string) (*memindex.Space, error) {
	if s.lazy.closing {
		return nil, unavailable()
	}
	if s.lazy.free == nil {
		c, err := openReader(s.path)
		if err != nil {
			return nil, err
		}
		s.lazy.free = c
	}
	c := s.lazy.free
	fail := func(err error) (*memindex.Space, error) {
		c.ExecContext(ctx, `ROLLBACK`)
		c.Close()
		s.lazy.free = nil
		return nil, err
	}
	s.wmu.Lock()
	if s.closed {
		s.wmu.Unlock()
		return nil, unavailable()
	}
	err := s.foldLocked(ctx) // the counters, read from one table (surfaced.go)
	gen := s.mem.Gen(ns)
	if err == nil { // the snapshot starts while no write can commit
		if _, err = c.ExecContext(ctx, `BEGIN`); err == nil {
			_, err = c.ExecContext(ctx, `SELECT 1 FROM namespaces LIMIT 1`)
		}
	}
	s.wmu.Unlock()
	if err != nil {
		return fail(err)
	}
	t0 := time.Now()
	sp, err := s.buildSpace(ctx, c, ns)
	if err != nil {
		return fail(err)
	}
	if _, err := c.ExecContext(ctx, `COMMIT`); err != nil {
		return fail(err)
	}
	if s.lazy.loaded != nil {
		s.lazy.loaded(ns)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, nil
	}
	sp, ok := s.mem.Publish(ns, sp, gen, time.Since(t0))
	if !ok {
		return nil, nil
	}
	return sp, nil
}

// spaceHeld is space for transaction w's reads (its caller holds the write mutex).
func (s *Store) spaceHeld(ctx context.Context, ns string, w *wtx) (*memindex.Space, error) {
	if sp := s.mem.Get(ns); sp != nil || s.mem.Budget() == 0 {
		return sp, nil
	}
	return s.loadSpaceLocked(ctx, ns, w)
}

// loadSpaceLocked loads ns's space from SQLite and publishes it, evicting the least recently
// used others while the loaded total is over the budget. The caller holds the write mutex,
// and w is its open transaction, if any.
func (s *Store) loadSpaceLocked(ctx context.Context, ns string, w *wtx) (*memindex.Space, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if sp := s.mem.Get(ns); sp != nil {
		return sp, nil
	}
	// The counters are folded first: the load reads them from one table (surfaced.go).
	if w != nil {
		if err := w.foldIfNeeded(ctx); err != nil {
			return nil, err
		}
	} else if err := s.foldLocked(ctx); err != nil {
		return nil, err
	}
	t0, gen := time.Now(), s.mem.Gen(ns) // no write commits meanwhile: the mutex is held
	if s.lazy.raw == nil {
		c, err := openReader(s.path)
		if err != nil {
			return nil, err
		}
		s.lazy.raw = c
	}
	sp, err := s.buildSpace(ctx, s.lazy.raw, ns)
	if err != nil {
		s.closeLazyRaw() // the next load opens another
		return nil, err
	}
	sp, _ = s.mem.Publish(ns, sp, gen, time.Since(t0))
	return sp, nil
}

// buildSpace reads ns's space through q.
func (s *Store) buildSpace(ctx context.Context, q *conn, ns string) (*memindex.Space, error) {
	sp := s.mem.NewSpace()
	spaces := map[string]*memindex.Space{ns: sp}
	_, err := s.loadSpaces(ctx, q, ns, spaces, func(string) *memindex.Space { return sp })
	var g graphLoad
	if err == nil {
		g, err = s.loadGraph(ctx, q, ns)
	}
	if err != nil {
		return nil, err
	}
	sp.SetGraph(g.graphs[ns], g.concepts[ns])
	return sp, nil
}
