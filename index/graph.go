package index

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/salience-ai/salience/models"
)

// Graph is the adjacency of one namespace's graph: for every node the edges touching it,
// sorted by key so that Neighbors answers in an order that does not depend on the history
// of writes (a rebuilt index answers exactly like the written-through one), and again
// heaviest first, so the strongest few of a hub's thousands are read off the front instead
// of selected by a scan.
//
// It is compact, because a namespace has about ten edges a memory and they were most of a
// server's heap as *models.Edge values in maps (about 480 bytes an edge with their strings,
// key map and lists): node ids are interned to int32 ordinals, each edge is one 48-byte
// record in a slab, and a node's lists hold int32 slots (about 70 bytes an edge in all). An
// edge is found by its key through its From node's sorted list, not a map. What the record
// cannot hold exactly — a predicate or fact, a namespace other than the graph's, a time
// that is not a plain UTC instant — lives in a side map, so every edge reads back as it was
// put.
type Graph struct {
	mu     sync.RWMutex
	ids    map[string]int32 // node id → ordinal
	names  []string         // ordinal → node id; "" for a free ordinal
	adj    [][]int32        // by ordinal: slots of the edges touching the node, by key
	heavy  [][]int32        // by ordinal: the same slots, heaviest first, then by key
	free   []int32          // ordinals of nodes that lost their last edge
	edges  []gedge          // the slab; a free slot has from = -1
	slots  []int32          // free slots
	n      int              // live edges
	types  []models.EdgeType
	typeID map[models.EdgeType]uint16
	ns     string              // the namespace of the first edge put, shared by most
	extra  map[int32]*edgeRest // by slot: what gedge cannot hold
}

// gedge is one edge. Times are Unix nanoseconds, 0 for the zero time.
type gedge struct {
	from, to        int32
	typ             uint16
	rest            bool  // extra holds the slot's edgeRest
	co              int32 // in the padding after typ and rest: 40 bytes a slot, not 48
	weight          float64
	lastCo, lastDec int64
}

// edgeRest is the part of an edge the compact record does not hold.
type edgeRest struct {
	ns, predicate, fact string
	lastCo, lastDec     *time.Time // when not a plain UTC instant
	co                  *int       // when the count does not fit an int32
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{ids: map[string]int32{}, typeID: map[models.EdgeType]uint16{}, extra: map[int32]*edgeRest{}}
}

// Len returns the number of edges.
func (g *Graph) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.n
}

// Nodes returns the number of distinct nodes touched by an edge.
func (g *Graph) Nodes() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.ids)
}

// packTime returns t as Unix nanoseconds when that reads back as exactly t (0 for the zero
// time), and false otherwise (a location, a monotonic reading, a time outside int64 nanos).
func packTime(t time.Time) (int64, bool) {
	if t == (time.Time{}) {
		return 0, true
	}
	n := t.UnixNano()
	return n, n != 0 && t == time.Unix(0, n).UTC()
}

func unpackTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// node returns id's ordinal, creating it.
func (g *Graph) node(id string) int32 {
	if o, ok := g.ids[id]; ok {
		return o
	}
	var o int32
	if k := len(g.free); k > 0 {
		o, g.free = g.free[k-1], g.free[:k-1]
		g.names[o] = id
	} else {
		o = int32(len(g.names))
		g.names = append(g.names, id)
		g.adj = append(g.adj, nil)
		g.heavy = append(g.heavy, nil)
	}
	// A copy: id is often a slice of a larger string (a store's packed row), which keeping
	// it would keep whole.
	id = strings.Clone(id)
	g.names[o] = id
	g.ids[id] = o
	return o
}

// dropNode frees o's ordinal once it has no edges.
func (g *Graph) dropNode(o int32) {
	if len(g.adj[o]) > 0 {
		return
	}
	delete(g.ids, g.names[o])
	g.names[o], g.adj[o], g.heavy[o] = "", nil, nil
	g.free = append(g.free, o)
}

func (g *Graph) typ(t models.EdgeType) uint16 {
	if id, ok := g.typeID[t]; ok {
		return id
	}
	id := uint16(len(g.types))
	g.types = append(g.types, t)
	g.typeID[t] = id
	return id
}

// set writes e's properties into slot s (whose from, to and type are e's key already).
func (g *Graph) set(s int32, e *models.Edge) { g.setRow(&g.edges[s], s, e, false) }

// setRow is set for slot s held at r; fresh says s is a new slot, with nothing in extra.
func (g *Graph) setRow(r *gedge, s int32, e *models.Edge, fresh bool) {
	r.weight, r.co = e.Weight, int32(e.CoOccurrences)
	var rest edgeRest
	need := false
	if g.ns == "" && g.n == 0 {
		g.ns = e.Namespace
	}
	if e.Namespace != g.ns {
		rest.ns, need = e.Namespace, true
	} else {
		rest.ns = g.ns
	}
	if e.Predicate != "" || e.Fact != "" {
		rest.predicate, rest.fact, need = strings.Clone(e.Predicate), strings.Clone(e.Fact), true
	}
	if int(r.co) != e.CoOccurrences {
		co := e.CoOccurrences
		rest.co, r.co, need = &co, 0, true
	}
	var ok bool
	if r.lastCo, ok = packTime(e.LastCoOccurred); !ok {
		t := e.LastCoOccurred
		rest.lastCo, r.lastCo, need = &t, 0, true
	}
	if r.lastDec, ok = packTime(e.LastDecayed); !ok {
		t := e.LastDecayed
		rest.lastDec, r.lastDec, need = &t, 0, true
	}
	r.rest = need
	if need {
		g.extra[s] = &rest
	} else if !fresh {
		delete(g.extra, s)
	}
}

// edge returns slot s as a models.Edge.
func (g *Graph) edge(s int32) models.Edge {
	var e models.Edge
	g.edgeInto(&e, s)
	return e
}

// edgeInto writes slot s into e, which is zero: in place, not copied out of a returned value.
func (g *Graph) edgeInto(e *models.Edge, s int32) {
	r := &g.edges[s]
	e.Namespace, e.From, e.To, e.Type = g.ns, g.names[r.from], g.names[r.to], g.types[r.typ]
	e.Weight, e.CoOccurrences = r.weight, int(r.co)
	e.LastCoOccurred, e.LastDecayed = unpackTime(r.lastCo), unpackTime(r.lastDec)
	if r.rest {
		x := g.extra[s]
		e.Namespace, e.Predicate, e.Fact = x.ns, x.predicate, x.fact
		if x.lastCo != nil {
			e.LastCoOccurred = *x.lastCo
		}
		if x.lastDec != nil {
			e.LastDecayed = *x.lastDec
		}
		if x.co != nil {
			e.CoOccurrences = *x.co
		}
	}
}

// compareSlots orders edges by key: From, To, Type.
func (g *Graph) compareSlots(a, b int32) int {
	ea, eb := &g.edges[a], &g.edges[b]
	if ea.from != eb.from {
		if c := cmp.Compare(g.names[ea.from], g.names[eb.from]); c != 0 {
			return c
		}
	}
	if ea.to != eb.to {
		if c := cmp.Compare(g.names[ea.to], g.names[eb.to]); c != 0 {
			return c
		}
	}
	return cmp.Compare(g.types[ea.typ], g.types[eb.typ])
}

// compareKey orders slot s against key k, as compareSlots does.
func (g *Graph) compareKey(s int32, k models.EdgeKey) int {
	e := &g.edges[s]
	if c := cmp.Compare(g.names[e.from], k.From); c != 0 {
		return c
	}
	if c := cmp.Compare(g.names[e.to], k.To); c != 0 {
		return c
	}
	return cmp.Compare(g.types[e.typ], k.Type)
}

// compareHeavySlots orders a heavy list: heavier first, then by key (models.CompareStrongest).
func (g *Graph) compareHeavySlots(a, b int32) int {
	if wa, wb := g.edges[a].weight, g.edges[b].weight; wa != wb {
		return cmp.Compare(wb, wa)
	}
	return g.compareSlots(a, b)
}

// find returns the slot of the edge with key k.
func (g *Graph) find(k models.EdgeKey) (int32, bool) {
	o, ok := g.ids[k.From]
	if !ok {
		return 0, false
	}
	list := g.adj[o]
	i, ok := slices.BinarySearchFunc(list, k, g.compareKey)
	if !ok {
		return 0, false
	}
	return list[i], true
}

// ends returns slot s's distinct endpoints.
func (g *Graph) ends(s int32) []int32 {
	e := &g.edges[s]
	if e.from == e.to {
		return []int32{e.from}
	}
	return []int32{e.from, e.to}
}

// Put stores a copy of e, creating the edge or replacing its properties.
func (g *Graph) Put(e *models.Edge) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.putLocked(e)
}

func (g *Graph) putLocked(e *models.Edge) {
	if s, ok := g.find(e.Key()); ok {
		if g.edges[s].weight == e.Weight {
			g.set(s, e)
			return
		}
		// The weight orders the heavy lists: take the edge out, change it, put it back.
		g.unweigh(s)
		g.set(s, e)
		g.weigh(s)
		return
	}
	from, to := g.node(e.From), g.node(e.To)
	var s int32
	if k := len(g.slots); k > 0 {
		s, g.slots = g.slots[k-1], g.slots[:k-1]
	} else {
		s = int32(len(g.edges))
		g.edges = append(g.edges, gedge{})
	}
	g.edges[s] = gedge{from: from, to: to, typ: g.typ(e.Type)}
	g.set(s, e)
	g.n++
	for _, o := range g.ends(s) {
		list := g.adj[o]
		i, _ := slices.BinarySearchFunc(list, s, g.compareSlots)
		g.adj[o] = slices.Insert(list, i, s)
	}
	g.weigh(s)
}

// weigh inserts slot s into its endpoints' heavy lists.
func (g *Graph) weigh(s int32) {
	for _, o := range g.ends(s) {
		list := g.heavy[o]
		i, _ := slices.BinarySearchFunc(list, s, g.compareHeavySlots)
		g.heavy[o] = slices.Insert(list, i, s)
	}
}

// unweigh removes slot s (with its current weight) from its endpoints' heavy lists.
func (g *Graph) unweigh(s int32) {
	for _, o := range g.ends(s) {
		list := g.heavy[o]
		if i, ok := slices.BinarySearchFunc(list, s, g.compareHeavySlots); ok {
			g.heavy[o] = slices.Delete(list, i, i+1)
		}
	}
}

// Load adds edges in bulk, as Put would in their order. The caller keeps the edges (they
// are copied). Into an empty graph, adjacency lists are appended to and sorted once at the
// end, so a load costs O(E log E) at worst and O(E) when edges come in key order (a
// database's primary-key order), instead of a binary search and insertion per edge.
func (g *Graph) Load(edges []*models.Edge) {
	l := g.BeginLoad(len(edges))
	for _, e := range edges {
		l.Add(e)
	}
	l.Finish()
}

// Loader is Load one edge at a time, for a caller that streams edges (a store's rebuild)
// rather than holding them all. The graph is locked from BeginLoad to Finish.
type Loader struct {
	g    *Graph
	bulk bool // the graph was empty: append now, order in Finish
	// A bulk load's edges, in chunks of loadChunk that never grow: the slab is put together
	// once, at its exact size, in Finish. Appended to one slab, a million memories' ten
	// million edges were copied over and over as it grew, and once more to trim it: a sixth
	// of the rebuild's time.
	chunks [][]gedge
	added  int32
	// The last edge's From and its node: a store hands edges over in key order, so an
	// edge's From is nearly always the last one's, and a map lookup a edge is saved.
	lastFrom string
	lastNode int32
	// sorted says every edge so far came after the one before in key order, as a store's
	// primary-key scan hands them over. Then every node's list, a subsequence of the edges,
	// is in key order with no key twice, and Finish neither checks nor sorts it.
	sorted   bool
	lastTo   string
	lastType models.EdgeType
}

// BeginLoad starts a load of about n edges (a hint).
func (g *Graph) BeginLoad(n int) *Loader {
	g.mu.Lock()
	l := &Loader{g: g, bulk: g.n == 0 && len(g.names) == 0, sorted: true}
	if l.bulk {
		if len(g.ids) == 0 {
			g.ids = make(map[string]int32, n/4)
		}
		l.added = int32(len(g.edges)) // 0: an empty graph holds no slots
	}
	return l
}

// loadChunk is how many edges a bulk load's chunk holds.
const loadChunk = 1 << 16

// Add adds one edge (copied), as Put would.
func (l *Loader) Add(e *models.Edge) {
	g := l.g
	if !l.bulk {
		g.putLocked(e)
		return
	}
	from := l.lastNode
	if e.From != l.lastFrom || l.added == 0 {
		l.sorted = l.sorted && (l.added == 0 || l.lastFrom < e.From)
		from = g.node(e.From)
		l.lastFrom, l.lastNode = g.names[from], from
	} else if l.sorted {
		l.sorted = l.lastTo < e.To || l.lastTo == e.To && l.lastType < e.Type
	}
	l.lastTo, l.lastType = e.To, e.Type // strings: the caller reusing e leaves them as they are
	to := g.node(e.To)
	s := l.added
	l.added++
	if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1]) == loadChunk {
		l.chunks = append(l.chunks, make([]gedge, 0, loadChunk))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, gedge{from: from, to: to, typ: g.typ(e.Type)})
	g.setRow(&(*c)[len(*c)-1], s, e, true)
	g.n++
	g.adj[from] = append(g.adj[from], s)
	if to != from {
		g.adj[to] = append(g.adj[to], s)
	}
}

// Finish orders what was added and unlocks the graph.
func (l *Loader) Finish() {
	g := l.g
	defer g.mu.Unlock()
	if !l.bulk {
		return
	}
	// The slab at its exact size, the chunks copied in on every core: at ten million edges
	// it is 400 MB, and first touching its pages is most of the copy's cost.
	base := len(g.edges)
	slab := make([]gedge, int(l.added))
	adviseHuge(slab)
	copy(slab, g.edges)
	eachRangeOf(len(l.chunks), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(slab[base+i*loadChunk:], l.chunks[i])
		}
	})
	g.edges, l.chunks = slab, nil
	// Each list on its own, the lists shared out over the cores (the caller's rebuild waits
	// on this alone): trimmed (appending grew it with room to spare, and a loaded graph
	// keeps exact copies) and, unless the edges came in key order, sorted by key. Equal
	// neighbours mean a key given twice.
	var cmpSlots func(a, b int32) int
	if !l.sorted {
		cmpSlots = g.rankedComparer()
	}
	var dup atomic.Bool
	eachRange(len(g.adj), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			list := g.adj[o]
			if cap(list)-len(list) > 2 {
				list = slices.Clone(list)
				g.adj[o] = list
			}
			if l.sorted {
				continue
			}
			if !slices.IsSortedFunc(list, cmpSlots) {
				slices.SortStableFunc(list, cmpSlots) // stable: equal keys stay in load order
			}
			for i := 1; i < len(list) && !dup.Load(); i++ {
				if cmpSlots(list[i-1], list[i]) == 0 {
					dup.Store(true)
				}
			}
		}
	})
	// A key given twice is one edge: the first slot with the last properties (as Put).
	dead := map[int32]bool{}
	for _, list := range g.adj {
		if !dup.Load() {
			break
		}
		kept := int32(-1)
		for _, s := range list {
			if dead[s] {
				continue
			}
			if kept >= 0 && cmpSlots(kept, s) == 0 {
				e := g.edge(s)
				g.set(kept, &e)
				dead[s] = true
				delete(g.extra, s)
				continue
			}
			kept = s
		}
	}
	if len(dead) > 0 {
		for o, list := range g.adj {
			g.adj[o] = slices.DeleteFunc(list, func(s int32) bool { return dead[s] })
		}
		for s := range dead {
			g.edges[s] = gedge{from: -1, to: -1}
			g.slots = append(g.slots, s)
			g.n--
		}
	}
	eachRange(len(g.adj), func(lo, hi int) {
		var scratch []weighed
		for o := lo; o < hi; o++ {
			g.heavy[o], scratch = g.heaviestFirst(g.adj[o], scratch)
		}
	})
}

// weighed is a list entry's weight and its place in the list.
type weighed struct {
	w float64
	i int32
}

// heaviestFirst returns list, which is in key order, as a heavy list: heaviest first, then
// by key (compareHeavySlots). A list's order is its key order, so the sort compares weights
// and places copied next to each other into scratch, which it returns for reuse, instead of
// reading every edge's record and names at each comparison.
func (g *Graph) heaviestFirst(list []int32, scratch []weighed) ([]int32, []weighed) {
	h := slices.Clone(list)
	if len(list) < 2 {
		return h, scratch
	}
	scratch = scratch[:0]
	for i, s := range list {
		scratch = append(scratch, weighed{g.edges[s].weight, int32(i)})
	}
	slices.SortFunc(scratch, func(a, b weighed) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		return cmp.Compare(a.i, b.i)
	})
	for j, x := range scratch {
		h[j] = list[x.i]
	}
	return h, scratch
}

// eachRange calls fn over [0, n) split into one range per core (one call when n is small).
func eachRange(n int, fn func(lo, hi int)) { eachRangeOf(n, 4096, fn) }

// eachRangeOf is eachRange for items of which grain are worth a goroutine.
func eachRangeOf(n, grain int, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), max(n/grain, 1))
	if parts <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { fn(p*n/parts, (p+1)*n/parts) })
	}
	wg.Wait()
}

// ranks returns each name's position in string order.
func ranks[S ~string](names []S) []int32 {
	order := make([]int32, len(names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(names[a], names[b]) })
	r := make([]int32, len(names))
	for i, o := range order {
		r[o] = int32(i)
	}
	return r
}

// rankedComparer returns compareSlots computed on the ranks of the node and type names in
// string order: the same results, without reading the strings. g.mu is held; the ranks hold
// until a node or type is added.
func (g *Graph) rankedComparer() func(a, b int32) int {
	nr, tr := ranks(g.names), ranks(g.types)
	return func(a, b int32) int {
		ea, eb := &g.edges[a], &g.edges[b]
		if ea.from != eb.from {
			return cmp.Compare(nr[ea.from], nr[eb.from])
		}
		if ea.to != eb.to {
			return cmp.Compare(nr[ea.to], nr[eb.to])
		}
		return cmp.Compare(tr[ea.typ], tr[eb.typ])
	}
}

// Get returns a copy of the edge with key k.
func (g *Graph) Get(k models.EdgeKey) (*models.Edge, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s, ok := g.find(k)
	if !ok {
		return nil, false
	}
	e := g.edge(s)
	return &e, true
}

// Remove deletes the edge with key k; it reports whether it existed.
func (g *Graph) Remove(k models.EdgeKey) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.removeLocked(k)
}

func (g *Graph) removeLocked(k models.EdgeKey) bool {
	s, ok := g.find(k)
	if !ok {
		return false
	}
	g.unweigh(s)
	ends := g.ends(s)
	for _, o := range ends {
		list := g.adj[o]
		if i, ok := slices.BinarySearchFunc(list, s, g.compareSlots); ok {
			g.adj[o] = slices.Delete(list, i, i+1)
		}
	}
	g.edges[s] = gedge{from: -1, to: -1}
	delete(g.extra, s)
	g.slots = append(g.slots, s)
	g.n--
	for _, o := range ends {
		g.dropNode(o)
	}
	return true
}

// RemoveNode deletes every edge touching id and returns their keys, sorted.
func (g *Graph) RemoveNode(id string) []models.EdgeKey {
	g.mu.Lock()
	defer g.mu.Unlock()
	o, ok := g.ids[id]
	if !ok {
		return []models.EdgeKey{}
	}
	list := g.adj[o]
	keys := make([]models.EdgeKey, len(list))
	for i, s := range list {
		e := &g.edges[s]
		keys[i] = models.EdgeKey{From: g.names[e.from], To: g.names[e.to], Type: g.types[e.typ]}
	}
	for _, k := range keys {
		g.removeLocked(k)
	}
	return keys
}

// lists returns the lists (adj or heavy) of ids' nodes, nil for an unknown id.
func (g *Graph) lists(of [][]int32, ids []string) [][]int32 {
	out, _ := prefetchedLists(g.ids, of, ids)
	return out
}

// prefetchedLists returns of[ord[id]] for each of ids (nil for an id ord lacks) and the
// ordinals (−1 for those). The lists lie at random, so it reads in passes, prefetching what
// the next pass reads: the ordinals, then the lists' headers, then the start of each list.
// The graph's adjacency and the text index's term lists are both read this way.
func prefetchedLists(ord map[string]int32, of [][]int32, ids []string) ([][]int32, []int32) {
	ords := make([]int32, len(ids))
	for i, id := range ids {
		o, ok := ord[id]
		if !ok {
			o = -1
		} else {
			prefetch(unsafe.Pointer(&of[o]))
		}
		ords[i] = o
	}
	out := make([][]int32, len(ids))
	for i, o := range ords {
		if o >= 0 {
			l := of[o]
			if len(l) > 0 {
				prefetch(unsafe.Pointer(&l[0]))
			}
			out[i] = l
		}
	}
	return out, ords
}

// Neighbors returns copies of the edges touching any of ids, each edge once: the edges of
// ids[0] sorted by key, then those of ids[1] not yet returned, and so on.
func (g *Graph) Neighbors(ids []string) []*models.Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	lists := g.lists(g.adj, ids)
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	// One block for all copies: two allocations however many edges.
	block := make([]models.Edge, 0, n)
	var seen map[int32]struct{}
	if len(ids) > 1 {
		seen = make(map[int32]struct{}, n)
	}
	for _, l := range lists {
		for _, s := range l {
			if seen != nil {
				if _, ok := seen[s]; ok {
					continue
				}
				seen[s] = struct{}{}
			}
			block = block[:len(block)+1] // within n: zero, never written
			g.edgeInto(&block[len(block)-1], s)
		}
	}
	out := make([]*models.Edge, len(block))
	for i := range block {
		out[i] = &block[i]
	}
	return out
}

// Strongest returns copies of, for each of ids, at most perNode of the edges touching it
// whose type is in types (nil = all), heaviest first; equal weights in key order, so the
// answer is deterministic. An edge touching two of the ids is returned once. It reads the
// front of each node's heavy list: a hub costs what is returned, not its degree (unless a
// type filter skips most of its edges).
func (g *Graph) Strongest(ids []string, perNode int, types map[models.EdgeType]bool) []*models.Edge {
	if perNode <= 0 {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	// The type filter by ordinal, so the scan compares integers, not strings.
	var allow []bool
	if types != nil {
		allow = make([]bool, len(g.types))
		for i, t := range g.types {
			allow[i] = types[t]
		}
	}
	hint := 1 << 12 // room for what most calls pick, without trusting perNode × len(ids) not to overflow
	if len(ids) > 0 && perNode < hint/len(ids) {
		hint = len(ids) * perNode
	}
	picked := make([]int32, 0, hint)
	var seen map[int32]bool
	if len(ids) > 1 {
		seen = make(map[int32]bool, hint)
	}
	// The lists' records lie at random in the slab: ask for the ones the scan will read
	// before reading any, so their cache misses overlap instead of coming one by one.
	lists := g.lists(g.heavy, ids)
	for _, l := range lists {
		for _, s := range l[:min(len(l), perNode+perNode/2)] {
			prefetch(unsafe.Pointer(&g.edges[s]))
		}
	}
	for _, l := range lists {
		n := 0
		for _, s := range l {
			if n >= perNode {
				break
			}
			if allow != nil && !allow[g.edges[s].typ] {
				continue
			}
			n++
			if seen != nil {
				if seen[s] {
					continue
				}
				seen[s] = true
			}
			picked = append(picked, s)
		}
	}
	if len(picked) == 0 {
		return nil
	}
	for _, s := range picked { // and the names' headers of the picked edges' ends
		r := &g.edges[s]
		prefetch(unsafe.Pointer(&g.names[r.from]))
		prefetch(unsafe.Pointer(&g.names[r.to]))
	}
	block := make([]models.Edge, len(picked))
	out := make([]*models.Edge, len(picked))
	for i, s := range picked {
		e := &block[i]
		g.edgeInto(e, s)
		out[i] = e
		// The caller reads the ends' ids next (to look them up, to hash them), and their
		// bytes lie at random too.
		prefetchString(e.From)
		prefetchString(e.To)
	}
	return out
}

// prefetchString prefetches the first cache line of s's bytes.
func prefetchString(s string) {
	if s != "" {
		prefetch(unsafe.Pointer(unsafe.StringData(s)))
	}
}
