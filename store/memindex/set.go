// Package memindex holds the embedded store's in-memory state, one Space per namespace: the
// search indexes (package index) and a cache of every memory, chunk and concept, so that
// recall's hot path — search, hydrate ~100 ids, walk the graph — never waits on the
// database. It never reads or writes the database itself: the store builds a Space from what
// it reads and Publishes it (or Replaces them all), and after each commit tells the Set what
// changed (Create, Delete, Meta, Edit, Surfaced, Drop), in commit order.
//
// With a budget only the namespaces in use are held: the store loads one on first use, and
// past the budget the least recently used are dropped, to be loaded again when next used,
// so RAM follows the working set. Each committed change to a namespace moves its generation
// (Gen); a load read from a snapshot older than a change is refused (Publish), and the store
// loads again.
package memindex

import (
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
)

// Set is every held namespace's Space.
type Set struct {
	budget int64 // bytes; 0 holds every namespace, loaded at once
	log    *slog.Logger

	mu     sync.RWMutex
	spaces map[string]*Space
	used   int64             // estimated bytes of the held spaces (budget mode)
	gen    map[string]uint64 // budget mode: per namespace, the committed changes that touched it

	graphSeq                                  atomic.Uint64 // numbers the graphs' versions
	tick                                      atomic.Int64  // use clock for the LRU order
	loads, evictions, loadNanos, maxLoadNanos atomic.Int64
}

// NewSet returns an empty set; budget > 0 holds namespaces on demand within that many bytes.
// log receives the errors a change could not apply (a bug if it happens).
func NewSet(budget int64, log *slog.Logger) *Set {
	return &Set{budget: max(budget, 0), log: log, spaces: map[string]*Space{}}
}

// Budget returns the set's budget in bytes (0: every namespace held).
func (set *Set) Budget() int64 { return set.budget }

// NewSpace returns an empty space for a load to fill, with a graph version never used before.
func (set *Set) NewSpace() *Space {
	sp := &Space{
		text:     index.NewBM25(),
		learned:  index.NewLearned(),
		graph:    index.NewGraph(),
		mems:     map[string]packed{},
		concepts: map[string]*models.Concept{},
	}
	sp.graphVer.Store(set.graphSeq.Add(1))
	return sp
}

// Replace holds exactly the spaces given (a full load; none in budget mode).
func (set *Set) Replace(spaces map[string]*Space) {
	set.mu.Lock()
	defer set.mu.Unlock()
	set.spaces, set.used = spaces, 0
}

// Get returns ns's space if it is held (nil if not), marking it used.
func (set *Set) Get(ns string) *Space {
	set.mu.RLock()
	sp := set.spaces[ns]
	set.mu.RUnlock()
	if sp != nil && set.budget > 0 {
		sp.lastUse.Store(set.tick.Add(1))
	}
	return sp
}

// Gen returns ns's generation; a load reads it before its snapshot begins.
func (set *Set) Gen(ns string) uint64 {
	set.mu.RLock()
	defer set.mu.RUnlock()
	return set.gen[ns]
}

// Publish holds sp, loaded from a snapshot begun at generation gen, as ns's space, and drops
// the least recently used others while the held total is over the budget. It returns the
// space now held — another load's, if one was published meanwhile — or false when a change
// reached ns after gen (sp is stale: load again).
func (set *Set) Publish(ns string, sp *Space, gen uint64, took time.Duration) (*Space, bool) {
	sp.bytes = estimateBytes(sp)
	sp.lastUse.Store(set.tick.Add(1))
	set.mu.Lock()
	if have := set.spaces[ns]; have != nil {
		set.mu.Unlock()
		return have, true
	}
	if set.gen[ns] != gen {
		set.mu.Unlock()
		return nil, false
	}
	set.spaces[ns] = sp
	set.used += sp.bytes
	for set.used > set.budget && len(set.spaces) > 1 {
		victim, oldest := "", int64(0)
		for n, o := range set.spaces {
			if u := o.lastUse.Load(); n != ns && (victim == "" || u < oldest) {
				victim, oldest = n, u
			}
		}
		set.used -= set.spaces[victim].bytes
		delete(set.spaces, victim)
		set.evictions.Add(1)
	}
	set.mu.Unlock()

	set.loads.Add(1)
	set.loadNanos.Add(int64(took))
	for {
		m := set.maxLoadNanos.Load()
		if int64(took) <= m || set.maxLoadNanos.CompareAndSwap(m, int64(took)) {
			return sp, true
		}
	}
}

// GraphVersion returns a value that changes whenever a committed write changes ns's edges;
// false when ns is not held in budget mode (writes to it move no version meanwhile).
func (set *Set) GraphVersion(ns string) (uint64, bool) {
	set.mu.RLock()
	defer set.mu.RUnlock()
	if sp := set.spaces[ns]; sp != nil {
		return sp.graphVer.Load(), true
	}
	// No space yet: the one created later takes a fresh, nonzero version.
	return 0, set.budget == 0
}

// Namespaces returns the held namespaces that hold any memory, sorted.
func (set *Set) Namespaces() []string {
	set.mu.RLock()
	defer set.mu.RUnlock()
	var out []string
	for ns, sp := range set.spaces {
		if sp.Len() > 0 {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// Stats describes the held spaces: with a budget, how much of it is used and what loads cost.
type Stats struct {
	Budget     int64   `json:"budget_bytes"` // 0: every namespace loaded at once
	Bytes      int64   `json:"bytes"`        // estimated size of the held namespaces (budget mode)
	Loaded     int     `json:"loaded"`       // namespaces held
	Loads      int64   `json:"loads"`        // namespaces loaded on first use (or after eviction)
	Evictions  int64   `json:"evictions"`
	LoadMeanMS float64 `json:"load_mean_ms"` // first-use latency: the load a first recall waits for
	LoadMaxMS  float64 `json:"load_max_ms"`
}

// Stats returns the set's figures.
func (set *Set) Stats() Stats {
	set.mu.RLock()
	st := Stats{Budget: set.budget, Bytes: set.used, Loaded: len(set.spaces)}
	set.mu.RUnlock()
	st.Loads, st.Evictions = set.loads.Load(), set.evictions.Load()
	if st.Loads > 0 {
		st.LoadMeanMS = float64(set.loadNanos.Load()) / float64(st.Loads) / 1e6
	}
	st.LoadMaxMS = float64(set.maxLoadNanos.Load()) / 1e6
	return st
}

// The committed changes, which the store passes on in commit order.

// Unit is one memory or chunk a Create adds: the space's own copy, with its normalized
// embedding and, for an indexed unit, its BM25 terms.
type Unit struct {
	M     *models.Memory
	Terms []string
}

// forWriteLocked returns the space a committed change to ns updates: in budget mode ns's if
// held (the store has the change for its next load), and the change moves ns's generation;
// otherwise ns's, created when missing and create is set. set.mu is held for writing.
func (set *Set) forWriteLocked(ns string, create bool) *Space {
	if set.budget > 0 {
		if set.gen == nil {
			set.gen = map[string]uint64{}
		}
		set.gen[ns]++
		return set.spaces[ns]
	}
	sp := set.spaces[ns]
	if sp == nil && create {
		sp = set.NewSpace()
		set.spaces[ns] = sp
	}
	return sp
}

// forWrite is forWriteLocked for each namespace named, once, creating spaces.
func (set *Set) forWrite(names func(yield func(string) bool)) map[string]*Space {
	out := map[string]*Space{}
	set.mu.Lock()
	defer set.mu.Unlock()
	for ns := range names {
		if _, ok := out[ns]; !ok {
			out[ns] = set.forWriteLocked(ns, true)
		}
	}
	return out
}

// held is forWriteLocked for a change that never creates a space.
func (set *Set) held(ns string) *Space {
	if set.budget == 0 {
		set.mu.RLock()
		defer set.mu.RUnlock()
		return set.spaces[ns]
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	return set.forWriteLocked(ns, false)
}

// Create adds committed memories, concepts and edges; dims gives each namespace's vector
// dimension. The indexes lock themselves, so the caches are locked only to add the rows:
// readers never wait for a batch to be indexed. A search may briefly return an id that
// Memories does not have yet, as with any concurrent write.
func (set *Set) Create(units []Unit, dims map[string]int, concepts []*models.Concept, edges []*models.Edge) {
	spaces := set.forWrite(func(yield func(string) bool) {
		for _, u := range units {
			yield(u.M.Namespace)
		}
		for _, e := range edges {
			yield(e.Namespace)
		}
		for _, c := range concepts {
			yield(c.Namespace)
		}
	})
	for ns, sp := range spaces {
		if sp != nil {
			sp.SetDims(dims[ns])
		}
	}
	for _, u := range units {
		if sp := spaces[u.M.Namespace]; sp != nil {
			if err := sp.index(u.M, u.Terms, sp.Vectors()); err != nil {
				// Dimensions are checked before every commit.
				set.log.Error("memindex: vector not indexed", "namespace", u.M.Namespace, "id", u.M.ID, "err", err)
			}
		}
	}
	for _, e := range edges {
		if sp := spaces[e.Namespace]; sp != nil {
			sp.graphVer.Store(set.graphSeq.Add(1))
			sp.Graph().Put(e)
		}
	}
	for _, u := range units {
		if sp := spaces[u.M.Namespace]; sp != nil {
			sp.mu.Lock()
			sp.cache(u.M)
			sp.mu.Unlock()
		}
	}
	for _, c := range concepts {
		if sp := spaces[c.Namespace]; sp != nil {
			sp.mu.Lock()
			sp.concepts[c.Name] = c
			sp.mu.Unlock()
		}
	}
}

// Delete removes committed deletions: units by id, and edges.
func (set *Set) Delete(ns string, ids []string, edges []models.EdgeKey) {
	sp := set.held(ns)
	if sp == nil {
		return
	}
	sp.mu.Lock()
	for _, id := range ids {
		if p, ok := sp.mems[id]; ok {
			if !p.memory().IsChunk() {
				sp.parents--
			}
			delete(sp.mems, id)
		}
	}
	vecs, graph := sp.vecs, sp.graph
	sp.mu.Unlock()
	if len(edges) > 0 {
		sp.graphVer.Store(set.graphSeq.Add(1))
	}
	for _, id := range ids {
		sp.text.Remove(id)
		sp.learned.Remove(id)
		if vecs != nil {
			vecs.Remove(id)
		}
	}
	for _, k := range edges {
		graph.Remove(k)
	}
}

// Meta applies committed engagement updates: each memory's metadata and schedule
// (SetMeta), and edges put.
func (set *Set) Meta(ms []*models.Memory, edges []*models.Edge) {
	for _, m := range ms {
		sp := set.held(m.Namespace)
		if sp == nil {
			continue
		}
		sp.mu.Lock()
		if p, ok := sp.mems[m.ID]; ok {
			n := p.memory()
			old := n.Learned
			SetMeta(n, m)
			sp.mems[m.ID] = pack(n)
			if !sameLearned(old, n.Learned) { // most events leave the words as they were
				sp.learned.Set(m.ID, n.Learned)
			}
		}
		sp.mu.Unlock()
	}
	spaces := set.forWrite(func(yield func(string) bool) {
		for _, e := range edges {
			yield(e.Namespace)
		}
	})
	for _, e := range edges {
		if sp := spaces[e.Namespace]; sp != nil {
			sp.graphVer.Store(set.graphSeq.Add(1))
			sp.Graph().Put(e)
		}
	}
}

// Edit applies a committed edit (SetEdit) to the memory and each of its chunks.
func (set *Set) Edit(e *models.Memory) {
	sp := set.held(e.Namespace)
	if sp == nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	old, ok := sp.mems[e.ID]
	if !ok {
		return
	}
	for i := -1; i < old.memory().ChunkCount; i++ {
		id := e.ID
		if i >= 0 {
			id = ids.Chunk(e.ID, i)
		}
		if p, ok := sp.mems[id]; ok {
			n := p.memory()
			SetEdit(n, e)
			sp.mems[id] = pack(n)
		}
	}
}

// Surfaced moves the counters of the memories a recorded turn surfaced.
func (set *Set) Surfaced(ss []*models.Surfacing) {
	for _, sf := range ss {
		sp := set.held(sf.Namespace)
		if sp == nil {
			continue
		}
		sp.mu.Lock()
		if p, ok := sp.mems[sf.MemoryID]; ok {
			n := p.memory()
			n.SurfaceCount++
			if sf.At.After(n.LastSurfaced) {
				n.LastSurfaced = sf.At
			}
			sp.mems[sf.MemoryID] = pack(n)
		}
		sp.mu.Unlock()
	}
}

// Drop forgets ns's space (a deleted namespace).
func (set *Set) Drop(ns string) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if sp := set.spaces[ns]; sp != nil {
		set.used -= sp.bytes
		delete(set.spaces, ns)
	}
	if set.budget > 0 {
		set.forWriteLocked(ns, false) // a load in flight read it before the deletion
	}
}
