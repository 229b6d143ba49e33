package index

import (
	"cmp"
	"slices"
	"sync"

	"github.com/salience-ai/salience/models"
)

// Graph is the adjacency of one namespace's graph: every edge by key, and for every node the
// edges touching it, sorted by key so that Neighbors answers in an order that does not depend
// on the history of writes (a rebuilt index answers exactly like the written-through one).
type Graph struct {
	mu    sync.RWMutex
	edges map[models.EdgeKey]*models.Edge
	adj   map[string][]*models.Edge
	// heavy holds each node's edges again, heaviest first (then by key), so the strongest
	// few of a hub's thousands are read off the front instead of selected by a scan.
	heavy map[string][]*models.Edge
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{edges: map[models.EdgeKey]*models.Edge{}, adj: map[string][]*models.Edge{}, heavy: map[string][]*models.Edge{}}
}

// Len returns the number of edges.
func (g *Graph) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.edges)
}

// Nodes returns the number of distinct nodes touched by an edge.
func (g *Graph) Nodes() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.adj)
}

func compareEdgeKey(e *models.Edge, k models.EdgeKey) int {
	if c := cmp.Compare(e.From, k.From); c != 0 {
		return c
	}
	if c := cmp.Compare(e.To, k.To); c != 0 {
		return c
	}
	return cmp.Compare(e.Type, k.Type)
}

// Put stores a copy of e, creating the edge or replacing its properties.
func (g *Graph) Put(e *models.Edge) {
	c := *e
	k := c.Key()
	g.mu.Lock()
	defer g.mu.Unlock()
	if old, ok := g.edges[k]; ok {
		if old.Weight == c.Weight {
			*old = c
			return
		}
		// The weight orders the heavy lists: take the edge out, change it, put it back.
		g.unweigh(old)
		*old = c
		g.weigh(old)
		return
	}
	p := &c
	g.edges[k] = p
	g.link(c.From, p)
	if c.To != c.From {
		g.link(c.To, p)
	}
	g.weigh(p)
}

// compareHeavy orders a heavy list: heavier first, then by key.
func compareHeavy(a, b *models.Edge) int {
	if a.Weight != b.Weight {
		return cmp.Compare(b.Weight, a.Weight)
	}
	return compareEdges(a, b)
}

// weigh inserts e into its endpoints' heavy lists.
func (g *Graph) weigh(e *models.Edge) {
	for _, n := range endpoints(e) {
		list := g.heavy[n]
		i, _ := slices.BinarySearchFunc(list, e, compareHeavy)
		g.heavy[n] = slices.Insert(list, i, e)
	}
}

// unweigh removes e (with its current weight) from its endpoints' heavy lists.
func (g *Graph) unweigh(e *models.Edge) {
	for _, n := range endpoints(e) {
		list := g.heavy[n]
		i, ok := slices.BinarySearchFunc(list, e, compareHeavy)
		if !ok {
			continue
		}
		list = slices.Delete(list, i, i+1)
		if len(list) == 0 {
			delete(g.heavy, n)
			continue
		}
		g.heavy[n] = list
	}
}

func endpoints(e *models.Edge) []string {
	if e.From == e.To {
		return []string{e.From}
	}
	return []string{e.From, e.To}
}

func (g *Graph) link(node string, e *models.Edge) {
	list := g.adj[node]
	i, _ := slices.BinarySearchFunc(list, e.Key(), compareEdgeKey)
	g.adj[node] = slices.Insert(list, i, e)
}

func (g *Graph) unlink(node string, k models.EdgeKey) {
	list := g.adj[node]
	i, ok := slices.BinarySearchFunc(list, k, compareEdgeKey)
	if !ok {
		return
	}
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		delete(g.adj, node)
		return
	}
	g.adj[node] = list
}

// Load adds edges in bulk, as Put would, and takes ownership of them: the caller must not
// use them afterwards. Adjacency lists are appended to and sorted once at the end, so a
// load costs O(E log E) at worst and O(E) when edges come in key order (a database's
// primary-key order), instead of a binary search and insertion per edge.
func (g *Graph) Load(edges []*models.Edge) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.edges) == 0 {
		g.edges = make(map[models.EdgeKey]*models.Edge, len(edges))
	}
	if len(g.adj) == 0 {
		g.adj = make(map[string][]*models.Edge, len(edges)/2)
	}
	if len(g.heavy) == 0 {
		g.heavy = make(map[string][]*models.Edge, len(edges)/2)
	}
	for _, e := range edges {
		k := e.Key()
		if old, ok := g.edges[k]; ok {
			*old = *e
			continue
		}
		g.edges[k] = e
		g.adj[e.From] = append(g.adj[e.From], e)
		g.heavy[e.From] = append(g.heavy[e.From], e)
		if e.To != e.From {
			g.adj[e.To] = append(g.adj[e.To], e)
			g.heavy[e.To] = append(g.heavy[e.To], e)
		}
	}
	for _, list := range g.adj {
		if !slices.IsSortedFunc(list, compareEdges) {
			slices.SortFunc(list, compareEdges)
		}
	}
	for _, list := range g.heavy {
		if !slices.IsSortedFunc(list, compareHeavy) {
			slices.SortFunc(list, compareHeavy)
		}
	}
}

func compareEdges(a, b *models.Edge) int {
	if c := cmp.Compare(a.From, b.From); c != 0 {
		return c
	}
	if c := cmp.Compare(a.To, b.To); c != 0 {
		return c
	}
	return cmp.Compare(a.Type, b.Type)
}

// Get returns a copy of the edge with key k.
func (g *Graph) Get(k models.EdgeKey) (*models.Edge, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	e, ok := g.edges[k]
	if !ok {
		return nil, false
	}
	c := *e
	return &c, true
}

// Remove deletes the edge with key k; it reports whether it existed.
func (g *Graph) Remove(k models.EdgeKey) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.removeLocked(k)
}

func (g *Graph) removeLocked(k models.EdgeKey) bool {
	e, ok := g.edges[k]
	if !ok {
		return false
	}
	g.unweigh(e)
	delete(g.edges, k)
	g.unlink(k.From, k)
	if k.To != k.From {
		g.unlink(k.To, k)
	}
	return true
}

// RemoveNode deletes every edge touching id and returns their keys, sorted.
func (g *Graph) RemoveNode(id string) []models.EdgeKey {
	g.mu.Lock()
	defer g.mu.Unlock()
	list := g.adj[id]
	keys := make([]models.EdgeKey, len(list))
	for i, e := range list {
		keys[i] = e.Key()
	}
	for _, k := range keys {
		g.removeLocked(k)
	}
	return keys
}

// Neighbors returns copies of the edges touching any of ids, each edge once: the edges of
// ids[0] sorted by key, then those of ids[1] not yet returned, and so on.
func (g *Graph) Neighbors(ids []string) []*models.Edge {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := 0
	for _, id := range ids {
		n += len(g.adj[id])
	}
	if n == 0 {
		return nil
	}
	// One block for all copies: two allocations however many edges.
	block := make([]models.Edge, 0, n)
	var seen map[*models.Edge]struct{}
	if len(ids) > 1 {
		seen = make(map[*models.Edge]struct{}, n)
	}
	for _, id := range ids {
		for _, e := range g.adj[id] {
			if seen != nil {
				if _, ok := seen[e]; ok {
					continue
				}
				seen[e] = struct{}{}
			}
			block = append(block, *e)
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
	var out []*models.Edge
	var seen map[*models.Edge]bool
	if len(ids) > 1 {
		seen = map[*models.Edge]bool{}
	}
	for _, id := range ids {
		n := 0
		for _, e := range g.heavy[id] {
			if n >= perNode {
				break
			}
			if types != nil && !types[e.Type] {
				continue
			}
			n++
			if seen != nil {
				if seen[e] {
					continue
				}
				seen[e] = true
			}
			c := *e
			out = append(out, &c)
		}
	}
	return out
}
