package sqlite

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
)

// Namespaces on demand (Options.IndexBudget > 0). A server holding many namespaces keeps in
// memory only the ones in use: Rebuild loads nothing (so the store is ready at once), a
// namespace's indexes and caches are loaded from SQLite on its first use, and once the
// loaded namespaces' estimated size passes the budget the least recently used are dropped,
// to be loaded again when next used. RAM follows the working set, not the total.
//
// Consistency: a write's cache update (under the write mutex) only touches namespaces
// already loaded; one not loaded picks the write up from SQLite when it is, and each
// committed write to a namespace not loaded moves its generation (touchLocked). A reader's
// load (space) starts a read transaction on a connection of its own while it holds the
// write mutex, builds the space from that snapshot without it — other namespaces' writes go
// on meanwhile — and publishes it under the write mutex only if no write touched the
// namespace since: otherwise it loads again holding the mutex (loadSpaceLocked), as an
// Update transaction's load always does. An evicted space a reader still holds stays a
// consistent, if aging, snapshot.

// lazyState is the on-demand loading's configuration and counters.
type lazyState struct {
	budget           int64        // bytes; 0 = load everything in Rebuild
	used             int64        // estimated bytes of the loaded spaces; guarded by Store.mu
	tick             atomic.Int64 // use clock for the LRU order
	loads, evictions atomic.Int64
	loadNanos        atomic.Int64 // total time spent loading
	maxLoadNanos     atomic.Int64
	// raw is the connection loads under the write mutex read through (loadConn), opened by
	// the first and kept; the write mutex guards it.
	raw *loadConn
	// gen counts, per namespace not loaded, the committed writes that touched it; guarded
	// by Store.mu.
	gen map[string]uint64
	// loadMu makes readers' loads one at a time, and guards free, their connection, and
	// closing, set by Close.
	loadMu  sync.Mutex
	free    *loadConn
	closing bool
	// loaded, when set (tests), runs after a reader's load has read its snapshot.
	loaded func(ns string)
}

// touchLocked records a committed write to ns for a load in flight (budget mode). The
// caller holds Store.mu for writing.
func (s *Store) touchLocked(ns string) {
	if s.lazy.budget == 0 || s.spaces[ns] != nil {
		return
	}
	if s.lazy.gen == nil {
		s.lazy.gen = map[string]uint64{}
	}
	s.lazy.gen[ns]++
}

// lazyQuery returns the querier of a namespace load and what to call with its outcome: the
// kept loadConn where the database is a file, dropped after an error so the next load opens
// another; otherwise s.rdb's. The caller holds the write mutex.
func (s *Store) lazyQuery() (loadQuery, func(error)) {
	if s.lazy.raw == nil {
		if s.lazy.raw = s.openLoadConn(); s.lazy.raw == nil {
			return dbQuery(s.rdb.DB), func(error) {}
		}
	}
	return s.lazy.raw.query, func(err error) {
		if err != nil {
			s.closeLazyRaw()
		}
	}
}

// closeLazyRaw closes the loads' connection, if open. The caller holds the write mutex.
func (s *Store) closeLazyRaw() {
	if s.lazy.raw != nil {
		s.lazy.raw.Close()
		s.lazy.raw = nil
	}
}

// IndexStats describes the in-memory indexes: with a budget, how much of it is used and
// what first uses cost.
type IndexStats struct {
	Budget     int64   `json:"budget_bytes"` // 0: every namespace loaded at Rebuild
	Bytes      int64   `json:"bytes"`        // estimated size of the loaded namespaces (budget mode)
	Loaded     int     `json:"loaded"`       // namespaces in memory
	Loads      int64   `json:"loads"`        // namespaces loaded on first use (or after eviction)
	Evictions  int64   `json:"evictions"`
	LoadMeanMS float64 `json:"load_mean_ms"` // first-use latency: the load a first recall waits for
	LoadMaxMS  float64 `json:"load_max_ms"`
	// The conversation cache (convcache.go): states held and their counted bytes.
	ConversationStates int   `json:"conversation_states"`
	ConversationBytes  int64 `json:"conversation_bytes"`
}

// IndexStats returns the in-memory indexes' figures.
func (s *Store) IndexStats() IndexStats {
	s.mu.RLock()
	st := IndexStats{Budget: s.lazy.budget, Bytes: s.lazy.used, Loaded: len(s.spaces)}
	s.mu.RUnlock()
	st.Loads, st.Evictions = s.lazy.loads.Load(), s.lazy.evictions.Load()
	if st.Loads > 0 {
		st.LoadMeanMS = float64(s.lazy.loadNanos.Load()) / float64(st.Loads) / 1e6
	}
	st.LoadMaxMS = float64(s.lazy.maxLoadNanos.Load()) / 1e6
	n, b := s.convs.size()
	st.ConversationStates, st.ConversationBytes = n, int64(b)
	return st
}

// space returns ns's space for a reader that does not hold the write mutex, loading it in
// budget mode; nil when the namespace has none (eager mode).
func (s *Store) space(ctx context.Context, ns string) (*space, error) {
	if sp := s.loadedSpace(ns); sp != nil || s.lazy.budget == 0 {
		return sp, nil
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	s.lazy.loadMu.Lock()
	defer s.lazy.loadMu.Unlock()
	if sp := s.loadedSpace(ns); sp != nil {
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
func (s *Store) loadBeside(ctx context.Context, ns string) (*space, error) {
	if s.lazy.closing {
		return nil, unavailable()
	}
	if s.lazy.free == nil {
		if s.lazy.free = s.openLoadConn(); s.lazy.free == nil {
			return nil, nil // not a file: the load under the mutex reads through s.rdb
		}
	}
	c := s.lazy.free
	fail := func(err error) (*space, error) {
		c.exec(`ROLLBACK`)
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
	s.mu.RLock()
	gen := s.lazy.gen[ns]
	s.mu.RUnlock()
	if err == nil { // the snapshot starts while no write can commit
		if err = c.exec(`BEGIN`); err == nil {
			err = c.exec(`SELECT 1 FROM namespaces LIMIT 1`)
		}
	}
	s.wmu.Unlock()
	if err != nil {
		return fail(err)
	}
	t0 := time.Now()
	sp, err := s.buildSpace(ctx, c.query, ns)
	if err != nil {
		return fail(err)
	}
	if err := c.exec(`COMMIT`); err != nil {
		return fail(err)
	}
	if s.lazy.loaded != nil {
		s.lazy.loaded(ns)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	have, moved := s.spaces[ns], s.lazy.gen[ns] != gen
	s.mu.RUnlock()
	switch {
	case have != nil: // an Update transaction loaded it meanwhile
		return have, nil
	case moved || s.closed:
		return nil, nil
	}
	s.publishLocked(ns, sp, t0)
	return sp, nil
}

// spaceHeld is space for transaction w's reads (its caller holds the write mutex).
func (s *Store) spaceHeld(ctx context.Context, ns string, w *wtx) (*space, error) {
	if sp := s.loadedSpace(ns); sp != nil || s.lazy.budget == 0 {
		return sp, nil
	}
	return s.loadSpaceLocked(ctx, ns, w)
}

// loadedSpace returns ns's space if it is in memory, marking it used.
func (s *Store) loadedSpace(ns string) *space {
	s.mu.RLock()
	sp := s.spaces[ns]
	s.mu.RUnlock()
	if sp != nil && s.lazy.budget > 0 {
		sp.lastUse.Store(s.lazy.tick.Add(1))
	}
	return sp
}

// applySpaceLocked returns the space a committed write updates: ns's, created if missing in
// eager mode; in budget mode nil unless loaded (SQLite has the write for its next load).
// The caller holds s.mu for writing.
func (s *Store) applySpaceLocked(ns string) *space {
	s.touchLocked(ns)
	if s.lazy.budget > 0 {
		return s.spaces[ns]
	}
	return s.spaceLocked(ns)
}

// loadSpaceLocked loads ns's space from SQLite and publishes it, evicting the least recently
// used others while the loaded total is over the budget. The caller holds the write mutex,
// and w is its open transaction, if any.
func (s *Store) loadSpaceLocked(ctx context.Context, ns string, w *wtx) (*space, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if sp := s.loadedSpace(ns); sp != nil {
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
	t0 := time.Now()
	q, done := s.lazyQuery()
	sp, err := s.buildSpace(ctx, q, ns)
	if done(err); err != nil {
		return nil, err
	}
	s.publishLocked(ns, sp, t0)
	return sp, nil
}

// buildSpace reads ns's space through q.
func (s *Store) buildSpace(ctx context.Context, q loadQuery, ns string) (*space, error) {
	spaces := map[string]*space{}
	get := func(n string) *space {
		sp := spaces[n]
		if sp == nil {
			sp = newSpace()
			sp.graphVer = s.graphSeq.Add(1) // fresh: a reloaded space never repeats a version
			spaces[n] = sp
		}
		return sp
	}
	_, err := s.loadSpaces(ctx, q, ns, spaces, get)
	var g graphLoad
	if err == nil {
		g, err = s.loadGraph(ctx, q, ns)
	}
	if err != nil {
		return nil, err
	}
	sp := get(ns)
	if gr := g.graphs[ns]; gr != nil {
		sp.graph = gr
	}
	if cs := g.concepts[ns]; cs != nil {
		sp.concepts = cs
	}
	sp.bytes = estimateBytes(sp)
	sp.lastUse.Store(s.lazy.tick.Add(1))
	return sp, nil
}

// publishLocked puts a loaded space in memory and evicts the least recently used others
// while the loaded total is over the budget. The caller holds the write mutex.
func (s *Store) publishLocked(ns string, sp *space, t0 time.Time) {
	s.mu.Lock()
	s.spaces[ns] = sp
	delete(s.lazy.gen, ns)
	s.lazy.used += sp.bytes
	for s.lazy.used > s.lazy.budget && len(s.spaces) > 1 {
		victim, oldest := "", int64(0)
		for n, o := range s.spaces {
			if u := o.lastUse.Load(); n != ns && (victim == "" || u < oldest) {
				victim, oldest = n, u
			}
		}
		s.lazy.used -= s.spaces[victim].bytes
		delete(s.spaces, victim)
		s.lazy.evictions.Add(1)
	}
	s.mu.Unlock()

	took := int64(time.Since(t0))
	s.lazy.loads.Add(1)
	s.lazy.loadNanos.Add(took)
	for {
		m := s.lazy.maxLoadNanos.Load()
		if took <= m || s.lazy.maxLoadNanos.CompareAndSwap(m, took) {
			break
		}
	}
}

// Heap a loaded space retains, measured by TestEstimateTracksHeap (the live heap after a
// forced collection, before and after loading namespaces of 100 to 50,000 memories of
// `bench namespaces`' corpus: 256-dimension local vectors, ten edges and three to four
// concepts a memory). Component by component it is linear in what the space holds, so the
// estimate is too; it came within 2 % of the measured heap at every size. There is little
// fixed cost: a namespace of 100 memories retains about 630 KB, 6.3 KB a memory.
const (
	spaceFixedBytes   = 2048 // the space and its empty indexes' maps
	memoryBytes       = 1235 // per memory or chunk: the cached row, its map entry, BM25 document (ordinal, length, postings)
	termBytes         = 145  // per distinct BM25 term: dictionary entry and posting list
	edgeBytes         = 64   // per graph edge (compact slab)
	nodeBytes         = 175  // per graph node: id string, ordinal map entry, adjacency
	conceptBytes      = 210  // per concept in the concept table
	vectorExtraBytes  = 88   // per vector beyond its float32 row (or codes): id and row map entry
	vectorCodeExtra   = 12   // per vector beyond its codes, once coded: two scales and a weight
	vectorCodeMinRows = index.ApproxMinRows
)

// estimateBytes estimates a loaded space's heap (the constants above).
func estimateBytes(sp *space) int64 {
	b := int64(spaceFixedBytes)
	for _, m := range sp.mems {
		b += int64(len(m.Content)) + memoryBytes
	}
	if sp.text != nil {
		b += int64(sp.text.Terms()) * termBytes
	}
	if sp.vecs != nil {
		d, n := int64(sp.vecs.Dims()), int64(sp.vecs.Len())
		b += n * vectorExtraBytes
		if n >= vectorCodeMinRows { // coded from ApproxMinRows rows on: 4-bit and int8 codes
			b += n * int64(index.CodedRowBytes(int(d))+vectorCodeExtra)
		} else {
			b += n * 4 * d
		}
	}
	if sp.graph != nil {
		b += int64(sp.graph.Len())*edgeBytes + int64(sp.graph.Nodes())*nodeBytes
	}
	return b + int64(len(sp.concepts))*conceptBytes
}
