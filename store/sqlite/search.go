package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// space is the in-memory state of one namespace: the search indexes and a write-through
// cache of every memory and chunk row and every concept, so that the recall hot path
// (search, hydrate ~100 ids, walk the graph) never waits on SQLite. Indexed units are cached
// without their embedding, which lives once, in vecs.
type space struct {
	text     *index.BM25
	learned  *index.Learned // the text index's learned field (feedback expansion)
	vecs     *index.Vectors // nil until the namespace has an embedding dimension
	graph    *index.Graph
	mems     map[string]*models.Memory
	concepts map[string]*models.Concept
	parents  int // memories that are not chunks
	// graphVer changes (under s.mu) whenever a committed write changes the graph's edges;
	// values come from Store.graphSeq, so a replaced space never repeats an old one.
	graphVer uint64

	bytes   int64        // estimated size when loaded on demand (lazy.go)
	lastUse atomic.Int64 // the use clock when last used, for eviction (lazy.go)
}

func newSpace() *space {
	return &space{
		text:     index.NewBM25(),
		learned:  index.NewLearned(),
		graph:    index.NewGraph(),
		mems:     map[string]*models.Memory{},
		concepts: map[string]*models.Concept{},
	}
}

// spaceLocked returns ns's space, creating it; the caller holds s.mu for writing.
func (s *Store) spaceLocked(ns string) *space {
	sp := s.spaces[ns]
	if sp == nil {
		sp = newSpace()
		sp.graphVer = s.graphSeq.Add(1)
		s.spaces[ns] = sp
	}
	return sp
}

// GraphVersion returns a value that changes whenever a write changes the namespace's edges
// (ok is false before Rebuild: then there is none to give). Read it before reading the
// edges: a write that commits meanwhile moves it on afterwards, so whatever was computed
// from the edges is never older than the version it is stored under.
func (s *Store) GraphVersion(ctx context.Context, ns string) (uint64, bool, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return 0, false, err
	}
	if !s.ready.Load() {
		return 0, false, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if sp := s.spaces[ns]; sp != nil {
		return sp.graphVer, true, nil
	}
	if s.lazy.budget > 0 {
		// Not loaded (budget mode): writes to it move no version, so there is none to give.
		return 0, false, nil
	}
	return 0, true, nil // no space yet: the one created later takes a fresh, nonzero version
}

// indexes returns ns's search structures (nil when the namespace has none), loading the
// namespace in budget mode. They lock themselves; the fields are read under s.mu because
// applyCreate may set vecs.
func (s *Store) indexes(ctx context.Context, ns string) (*index.BM25, *index.Vectors, *index.Graph, error) {
	sp, err := s.space(ctx, ns)
	if sp == nil || err != nil {
		return nil, nil, nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sp.text, sp.vecs, sp.graph, nil
}

// Ready reports whether Rebuild has loaded the in-memory indexes.
func (s *Store) Ready() bool { return s.ready.Load() }

// addUnit puts a memory or chunk (a private copy) into sp's cache and indexes; terms are
// its BM25 terms when it is indexed. For a space that is not published yet (Rebuild).
func (s *Store) addUnit(sp *space, m *models.Memory, terms []string) {
	s.indexUnit(sp.text, sp.vecs, m, terms)
	cacheUnit(sp, m)
}

// indexUnit adds an indexed unit to BM25 and its embedding to vecs, leaving m.Embedding nil
// (the vector lives once, in the index). Other units are left as they are.
func (s *Store) indexUnit(text *index.BM25, vecs *index.Vectors, m *models.Memory, terms []string) {
	if !m.Indexed() {
		return
	}
	text.Add(m.ID, terms)
	if len(m.Embedding) > 0 && vecs != nil {
		if err := vecs.Add(m.ID, m.Embedding); err != nil {
			// Dimensions are checked before every commit; this is a bug if it happens.
			s.log.Error("sqlite: vector not indexed", "namespace", m.Namespace, "id", m.ID, "err", err)
		}
		m.Embedding = nil
	}
}

// cacheUnit stores m in sp's cache; the caller holds s.mu for writing (or owns sp).
func cacheUnit(sp *space, m *models.Memory) {
	if _, ok := sp.mems[m.ID]; !ok && !m.IsChunk() {
		sp.parents++
	}
	sp.mems[m.ID] = m
	if len(m.Learned) > 0 {
		sp.learned.Set(m.ID, m.Learned)
	}
}

// applyCreate publishes a committed CreateMemories. The indexes lock themselves, so the
// cache lock is taken only to create spaces and, at the end, to add the rows: readers of
// the cache never wait for a batch to be indexed. A search may briefly return an id that
// GetMemories does not have yet, as with any concurrent write.
func (s *Store) applyCreate(prep []preparedWrite, dims map[string]int, concepts []*models.Concept, edges []*models.Edge) {
	spaces := map[string]*space{}
	s.mu.Lock()
	for _, p := range prep {
		sp := s.applySpaceLocked(p.ns)
		if sp == nil {
			continue // not loaded (budget mode): its next load reads the write
		}
		if d := dims[p.ns]; d > 0 && sp.vecs == nil {
			sp.vecs = index.NewVectors(d)
		}
		spaces[p.ns] = sp
	}
	for _, e := range edges {
		if sp := s.applySpaceLocked(e.Namespace); sp != nil {
			sp.graphVer = s.graphSeq.Add(1)
			spaces[e.Namespace] = sp
		}
	}
	s.mu.Unlock()

	for _, p := range prep {
		sp := spaces[p.ns]
		if sp == nil {
			continue
		}
		for _, u := range p.units {
			s.indexUnit(sp.text, sp.vecs, u.m, u.terms)
		}
	}
	for _, e := range edges {
		if sp := spaces[e.Namespace]; sp != nil {
			sp.graph.Put(e)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range prep {
		sp := spaces[p.ns]
		if sp == nil {
			continue
		}
		for _, u := range p.units {
			cacheUnit(sp, u.m)
		}
	}
	for _, c := range concepts {
		if sp := s.applySpaceLocked(c.Namespace); sp != nil {
			sp.concepts[c.Name] = c
		}
	}
}

func (s *Store) applyDelete(ns string, ids []string, edges []models.EdgeKey) {
	s.mu.Lock()
	s.touchLocked(ns)
	sp := s.spaces[ns]
	if sp == nil {
		s.mu.Unlock()
		return
	}
	for _, id := range ids {
		if m, ok := sp.mems[id]; ok {
			if !m.IsChunk() {
				sp.parents--
			}
			delete(sp.mems, id)
		}
	}
	text, vecs, graph, learned := sp.text, sp.vecs, sp.graph, sp.learned
	if len(edges) > 0 {
		sp.graphVer = s.graphSeq.Add(1)
	}
	s.mu.Unlock()
	for _, id := range ids {
		text.Remove(id)
		learned.Remove(id)
		if vecs != nil {
			vecs.Remove(id)
		}
	}
	for _, k := range edges {
		graph.Remove(k)
	}
}

// applyMeta copies the retrieval metadata and schedule PutMemory wrote into the cache.
func (s *Store) applyMeta(ms []*models.Memory, edges []*models.Edge) {
	s.mu.Lock()
	for _, m := range ms {
		s.touchLocked(m.Namespace)
		sp := s.spaces[m.Namespace]
		if sp == nil {
			continue
		}
		old, ok := sp.mems[m.ID]
		if !ok {
			continue
		}
		n := *old
		setMeta(&n, m)
		sp.mems[m.ID] = &n
		if !sameLearned(old.Learned, n.Learned) { // most events leave the words as they were
			sp.learned.Set(m.ID, n.Learned)
		}
	}
	graphs := make([]*index.Graph, len(edges))
	for i, e := range edges {
		if sp := s.applySpaceLocked(e.Namespace); sp != nil {
			sp.graphVer = s.graphSeq.Add(1)
			graphs[i] = sp.graph
		}
	}
	s.mu.Unlock()
	for i, e := range edges {
		if graphs[i] != nil {
			graphs[i].Put(e)
		}
	}
}

// applyEdit copies the fields Tx.EditMemory wrote into the cache: into the memory and each
// of its chunks.
func (s *Store) applyEdit(e *models.Memory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touchLocked(e.Namespace)
	sp := s.spaces[e.Namespace]
	if sp == nil {
		return
	}
	old, ok := sp.mems[e.ID]
	if !ok {
		return
	}
	for i := -1; i < old.ChunkCount; i++ {
		id := e.ID
		if i >= 0 {
			id = ids.Chunk(e.ID, i)
		}
		if c, ok := sp.mems[id]; ok {
			n := *c
			setEdit(&n, e)
			sp.mems[id] = &n
		}
	}
}

// setEdit copies the fields Tx.EditMemory may change from src into dst.
func setEdit(dst, src *models.Memory) {
	dst.Importance, dst.ValidAt, dst.InvalidAt, dst.Sensitive = src.Importance, src.ValidAt, src.InvalidAt, src.Sensitive
}

// sameLearned reports whether two lists of learned words are the same words, weights and
// times, in order.
func sameLearned(a, b []models.LearnedTerm) bool {
	return slices.EqualFunc(a, b, func(x, y models.LearnedTerm) bool {
		return x.Term == y.Term && x.Weight == y.Weight && x.At.Equal(y.At)
	})
}

// setMeta copies the fields Tx.PutMemory may change from src into dst (deeply).
func setMeta(dst, src *models.Memory) {
	dst.Confidence = src.Confidence
	dst.UsageCount = src.UsageCount
	dst.LastUsed = src.LastUsed
	dst.SurfaceCount = src.SurfaceCount
	dst.LastSurfaced = src.LastSurfaced
	dst.RecentDismissals = src.RecentDismissals
	dst.IrrelevantContexts = cloneMemory(&models.Memory{IrrelevantContexts: src.IrrelevantContexts}).IrrelevantContexts
	dst.Schedule = src.Schedule
	dst.Learned = slices.Clone(src.Learned)
}

// cachedMemories answers GetMemories from sp's cache (nil: none): copies, with embeddings.
func (s *Store) cachedMemories(sp *space, ids []string) []*models.Memory {
	if sp == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*models.Memory, 0, len(ids))
	var indexed []string // ids of out's indexed units, whose vectors live in sp.vecs
	var at []int         // their places in out
	for _, id := range ids {
		m, ok := sp.mems[id]
		if !ok {
			continue
		}
		c := cloneMemory(m)
		if c.Indexed() && sp.vecs != nil {
			indexed, at = append(indexed, id), append(at, len(out))
		}
		out = append(out, c)
	}
	if len(indexed) > 0 {
		for i, vec := range sp.vecs.GetMany(indexed) {
			out[at[i]].Embedding = vec
		}
	}
	return out
}

// viewedMemories answers ViewMemories from sp's cache (nil: none): the cached memories
// themselves, or a shallow copy of one where its Embedding differs from what was asked
// (decoded from sp.vecs for an indexed unit, or dropped).
func (s *Store) viewedMemories(sp *space, ids []string, vectors bool) []*models.Memory {
	if sp == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*models.Memory, 0, len(ids))
	var indexed []string // with vectors: ids of out's indexed units, whose vectors live in sp.vecs
	var at []int         // their places in out
	for _, id := range ids {
		m, ok := sp.mems[id]
		if !ok {
			continue
		}
		switch {
		case vectors && m.Indexed() && sp.vecs != nil:
			indexed, at = append(indexed, id), append(at, len(out))
		case !vectors && m.Embedding != nil:
			c := *m
			c.Embedding = nil
			m = &c
		}
		out = append(out, m)
	}
	if len(indexed) > 0 {
		for i, vec := range sp.vecs.GetMany(indexed) {
			c := *out[at[i]]
			c.Embedding = vec
			out[at[i]] = &c
		}
	}
	return out
}

// Rebuild loads the in-memory indexes and caches of every namespace from the database:
// BM25 over the content of indexed units (memories without chunks, and chunks), their
// vectors, the graph's adjacency and the concepts. Writers wait while it runs; searches
// return EUNAVAILABLE until it has finished once. Memories load in a pipeline while edges
// and concepts load beside it on a second connection.
func (s *Store) Rebuild(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// The counters are folded first (surfaced.go): the load reads them from one table.
	if err := s.foldLocked(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	if s.lazy.budget > 0 {
		// Budget mode: every namespace loads on first use (lazy.go).
		s.mu.Lock()
		s.spaces, s.lazy.used = map[string]*space{}, 0
		s.mu.Unlock()
		s.ready.Store(true)
		s.log.Info("sqlite: indexes load on demand", "budget_bytes", s.lazy.budget)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The two halves read on connections of their own (loadConn) where the database is a
	// file: both run at once, and each is faster there than through database/sql.
	memQ, graphQ := dbQuery(s.rdb.DB), dbQuery(s.rdb.DB)
	for _, q := range []*loadQuery{&memQ, &graphQ} {
		if c := s.openLoadConn(); c != nil {
			defer c.Close()
			*q = c.query
		}
	}

	graphDone := make(chan graphLoad, 1)
	go func() {
		t := time.Now()
		g, err := s.loadGraph(ctx, graphQ, "")
		if err != nil {
			cancel()
		}
		g.err, g.took = err, time.Since(t)
		graphDone <- g
	}()

	spaces := map[string]*space{}
	get := func(ns string) *space {
		sp := spaces[ns]
		if sp == nil {
			sp = newSpace()
			sp.graphVer = s.graphSeq.Add(1)
			spaces[ns] = sp
		}
		return sp
	}
	nMem, err := s.loadSpaces(ctx, memQ, "", spaces, get)
	tMem := time.Since(t0)
	if err != nil {
		cancel()
	}
	g := <-graphDone
	if err == nil {
		err = g.err
	}
	if err != nil {
		return err
	}
	for ns, gr := range g.graphs {
		get(ns).graph = gr
	}
	for ns, cs := range g.concepts {
		get(ns).concepts = cs
	}

	s.mu.Lock()
	s.spaces = spaces
	s.mu.Unlock()
	s.ready.Store(true)
	s.log.Info("sqlite: indexes rebuilt", "namespaces", len(spaces), "memories", nMem, "edges", g.edges,
		"memories_took", tMem.Round(time.Millisecond), "graph_took", g.took.Round(time.Millisecond),
		"elapsed", time.Since(t0).Round(time.Millisecond))
	return nil
}

// nsFilter returns the WHERE clause and arguments restricting a load to namespace ns, or
// nothing for "" (every namespace).
func nsFilter(ns string) (string, []any) {
	if ns == "" {
		return "", nil
	}
	return ` WHERE ns = ?`, []any{ns}
}

// loadSpaces creates the namespaces' spaces (ns's only, unless "") sized to their row
// counts and loads every memory into them.
func (s *Store) loadSpaces(ctx context.Context, q loadQuery, ns string, spaces map[string]*space, get func(string) *space) (int, error) {
	where, args := nsFilter(ns)
	rows, err := q(ctx, `SELECT ns, dims FROM namespaces`+where, args...)
	if err != nil {
		return 0, wrap(err, "rebuild: namespaces")
	}
	for rows.Next() {
		var ns string
		var dims int
		if err := rows.Scan(&ns, &dims); err != nil {
			rows.Close()
			return 0, wrap(err, "rebuild: namespaces")
		}
		if dims > 0 {
			get(ns).vecs = index.NewVectors(dims)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, wrap(err, "rebuild: namespaces")
	}

	// Size every namespace's structures up front: growing them row by row would copy the
	// vectors (150 MB at 100k × 384) several times over.
	rows, err = q(ctx, `SELECT ns, COUNT(*) FROM memories`+where+` GROUP BY ns`, args...)
	if err != nil {
		return 0, wrap(err, "rebuild: count")
	}
	for rows.Next() {
		var ns string
		var n int
		if err := rows.Scan(&ns, &n); err != nil {
			rows.Close()
			return 0, wrap(err, "rebuild: count")
		}
		sp := get(ns)
		sp.mems = make(map[string]*models.Memory, n)
		sp.text.Grow(n)
		if sp.vecs != nil {
			sp.vecs.Grow(n)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, wrap(err, "rebuild: count")
	}
	n, err := s.loadMemories(ctx, q, ns, spaces, get)
	if err != nil {
		return 0, err
	}
	if err := s.loadSurfaced(ctx, q, ns, spaces); err != nil {
		return 0, wrap(err, "rebuild: surfaced")
	}
	return n, nil
}

// graphLoad is what loadGraph read, by namespace.
type graphLoad struct {
	graphs   map[string]*index.Graph
	concepts map[string]map[string]*models.Concept
	edges    int
	took     time.Duration
	err      error
}

// loadGraph reads every edge and concept (of ns only, unless ""), by namespace.
func (s *Store) loadGraph(ctx context.Context, q loadQuery, ns string) (graphLoad, error) {
	where, args := nsFilter(ns)
	g := graphLoad{graphs: map[string]*index.Graph{}, concepts: map[string]map[string]*models.Concept{}}
	rows, err := q(ctx, edgeRows.sel+where, args...)
	if err != nil {
		return g, wrap(err, "rebuild: edges")
	}
	// A pipeline: this goroutine steps through the rows (SQLite's work) into batches of
	// reused edges, a second adds them to the graphs as they come, so the two overlap and no
	// edge outlives its batch (a million memories' 10 M edges were once all held at once).
	const edgeBatch = 1024
	batches, free := make(chan []models.Edge, 4), make(chan []models.Edge, 6)
	loaders := map[string]*index.Loader{}
	added := make(chan struct{})
	go func() {
		defer close(added)
		for b := range batches {
			for i := range b {
				e := &b[i]
				l := loaders[e.Namespace]
				if l == nil {
					gr := index.NewGraph()
					g.graphs[e.Namespace] = gr
					l = gr.BeginLoad(0)
					loaders[e.Namespace] = l
				}
				l.Add(e) // copied
			}
			select {
			case free <- b[:0]:
			default:
			}
		}
	}()
	finish := func() {
		close(batches)
		<-added
		for _, l := range loaders {
			l.Finish()
		}
	}
	var cur []models.Edge
	// One edge is scanned into, its destinations made once (making them per row was two
	// allocations an edge, 20 M at a million memories), and copied into the batch.
	var scanned models.Edge
	dest := edgeRows.dests(&scanned)
	for rows.Next() {
		if cur == nil {
			select {
			case cur = <-free:
			default:
				cur = make([]models.Edge, 0, edgeBatch)
			}
		}
		scanned = models.Edge{}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			finish()
			return g, wrap(err, "rebuild: edges")
		}
		cur = append(cur, scanned)
		g.edges++
		if len(cur) == edgeBatch {
			batches <- cur
			cur = nil
		}
	}
	if len(cur) > 0 {
		batches <- cur
	}
	finish()
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return g, wrap(err, "rebuild: edges")
	}

	rows, err = q(ctx, conceptRows.sel+where, args...)
	if err != nil {
		return g, wrap(err, "rebuild: concepts")
	}
	for rows.Next() {
		c, err := scanConcept(rows)
		if err != nil {
			rows.Close()
			return g, wrap(err, "rebuild: concepts")
		}
		cs := g.concepts[c.Namespace]
		if cs == nil {
			cs = map[string]*models.Concept{}
			g.concepts[c.Namespace] = cs
		}
		cs[c.Name] = c
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return g, wrap(err, "rebuild: concepts")
	}
	return g, nil
}

// maxInterned bounds the strings a rebuild keeps once (loadMemories): enough for every
// conversation of a large namespace, few enough that a corpus of unique values costs little.
const maxInterned = 1 << 16

// loadMemories streams every memory row into the spaces in a three-stage pipeline: this
// goroutine steps through the rows (SQLite's work, the slowest stage); a second decodes
// them, analyses their text (nlp.Terms) and puts embeddings straight into the vector
// indexes; a third fills the caches and BM25. Rows are handed over in batches, their
// embedding bytes in one block.
func (s *Store) loadMemories(ctx context.Context, q loadQuery, ns string, spaces map[string]*space, get func(string) *space) (int, error) {
	where, args := nsFilter(ns)
	type batch struct {
		rows  []memoryRow
		bytes []byte // the embeddings of rows, back to back
		mems  []*models.Memory
		terms [][]string
	}
	const batchRows = 256
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Every namespace with vectors has its index already (loadSpaces); this read-only view
	// lets the decoding stage fill them while the indexing stage owns the spaces map.
	vecs := map[string]*index.Vectors{}
	for ns, sp := range spaces {
		if sp.vecs != nil {
			vecs[ns] = sp.vecs
		}
	}

	read := make(chan *batch, 4)
	decoded := make(chan *batch, 4)
	var decodeErr error
	go func() {
		defer close(decoded)
		var scratch []float32
		// The few distinct values of a namespace's kind, speaker and conversation columns,
		// and of the namespace itself, are kept once, not once a memory: the driver
		// allocates every column of every row afresh (about 80 MB at a million memories).
		seen := map[string]string{}
		intern := func(p *string) {
			if v, ok := seen[*p]; ok {
				*p = v
			} else if len(seen) < maxInterned {
				seen[*p] = *p
			}
		}
		for b := range read {
			if decodeErr != nil || ctx.Err() != nil {
				continue // drain so the reader never blocks
			}
			b.mems = make([]*models.Memory, len(b.rows))
			b.terms = make([][]string, len(b.rows))
			for i := range b.rows {
				r := &b.rows[i]
				indexed := r.m.ParentID != "" || r.m.ChunkCount == 0
				var emb []byte
				if v := vecs[r.m.Namespace]; indexed && v != nil && len(r.embedding) == 4*v.Dims() {
					emb, r.embedding = r.embedding, nil
				}
				m, err := r.memory()
				if err != nil {
					decodeErr = err
					cancel()
					break
				}
				if emb != nil {
					v := vecs[m.Namespace]
					scratch = slices.Grow(scratch[:0], v.Dims())[:v.Dims()]
					decVectorInto(scratch, emb)
					if err := v.Add(m.ID, scratch); err != nil {
						s.log.Error("sqlite: vector not indexed", "namespace", m.Namespace, "id", m.ID, "err", err)
					}
				}
				for _, p := range []*string{&m.Namespace, (*string)(&m.Kind), &m.Source.Speaker, (*string)(&m.Source.Role), &m.Source.ConversationID} {
					intern(p)
				}
				b.mems[i] = m
				if indexed {
					b.terms[i] = nlp.Terms(m.Content)
				}
			}
			b.rows, b.bytes = nil, nil
			if decodeErr == nil {
				decoded <- b
			}
		}
	}()
	indexed := make(chan int, 1)
	go func() {
		n := 0
		for b := range decoded {
			for i, m := range b.mems {
				s.addUnit(get(m.Namespace), m, b.terms[i])
			}
			n += len(b.mems)
		}
		indexed <- n
	}()

	err := func() error {
		defer close(read)
		rows, err := q(ctx, memoryLoadSelect+where, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		// Rows are scanned into one memoryRow, whose destinations are made once (a slice
		// of them a row was a million allocations), and copied into the batch.
		var raw sql.RawBytes
		var scanned memoryRow
		dest := memoryRows.dests(&scanned)
		dest[memoryEmbedding] = &raw // copied once, below, not by database/sql
		cur := &batch{rows: make([]memoryRow, 0, batchRows)}
		for rows.Next() {
			scanned = memoryRow{} // nothing decoded into a field reuses the last row's
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			cur.rows = append(cur.rows, scanned)
			r := &cur.rows[len(cur.rows)-1]
			if len(raw) > 0 {
				if cur.bytes == nil {
					cur.bytes = make([]byte, 0, batchRows*len(raw))
				}
				at := len(cur.bytes)
				cur.bytes = append(cur.bytes, raw...)
				r.embedding = cur.bytes[at:len(cur.bytes):len(cur.bytes)]
			}
			if len(cur.rows) == batchRows {
				read <- cur
				cur = &batch{rows: make([]memoryRow, 0, batchRows)}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(cur.rows) > 0 {
			read <- cur
		}
		return nil
	}()
	if err != nil {
		cancel()
	}
	n := <-indexed
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return 0, wrap(err, "rebuild: memories")
	}
	return n, nil
}

// learnedWeight is the learned field's weight against content in SearchText
// (index.BM25.SearchLearned): a word learned once counts 0.3 of a content occurrence. On the
// LoCoMo learning replay (tuned on three dev conversations) 0.3 and 0.6 gave the same lift,
// 1.0 less.
const learnedWeight = 0.3

// SearchText returns the top k indexed units of ns by BM25 over nlp.Terms of the query, plus
// the learned field (learnedWeight); empty when the query has no terms. EUNAVAILABLE before Rebuild; EINVALID when k < 1.
func (s *Store) SearchText(ctx context.Context, ns, query string, k int) ([]models.Hit, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, models.Invalid("k", "k must be at least 1")
	}
	if !s.ready.Load() {
		return nil, unavailable()
	}
	terms := nlp.Terms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	sp, err := s.space(ctx, ns)
	if sp == nil || err != nil {
		return nil, err
	}
	return sp.text.SearchLearned(terms, k, sp.learned, learnedWeight), nil
}

// Phrases answers recall's phrase check from ns's text index (models.PhraseIndex).
func (s *Store) Phrases(ctx context.Context, ns string, pairs [][2]string, ids []string) ([]float64, []bool, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, nil, err
	}
	if !s.ready.Load() {
		return nil, nil, unavailable()
	}
	sp, err := s.space(ctx, ns)
	if sp == nil || err != nil {
		return make([]float64, len(ids)), make([]bool, len(ids)), err
	}
	shares, found := sp.text.Phrases(pairs, ids)
	return shares, found, nil
}

// SearchVector returns the top k indexed units of ns by cosine similarity to vec.
// EUNAVAILABLE before Rebuild; EINVALID when k < 1, vec is empty or not finite, or its
// dimension differs from the namespace's.
func (s *Store) SearchVector(ctx context.Context, ns string, vec []float32, k int) ([]models.Hit, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, models.Invalid("k", "k must be at least 1")
	}
	if len(vec) == 0 {
		return nil, models.Invalid("vector", "the query vector is empty")
	}
	if _, err := index.Normalize(vec); err != nil {
		return nil, models.Invalid("vector", "the query vector has a NaN or infinite component")
	}
	if !s.ready.Load() {
		return nil, unavailable()
	}
	_, vecs, _, err := s.indexes(ctx, ns)
	if vecs == nil || err != nil {
		return nil, err
	}
	if d := vecs.Dims(); d != len(vec) {
		return nil, models.Invalid("vector", "the query vector has %d dimensions; namespace %s uses %d", len(vec), ns, d)
	}
	return vecs.Search(vec, k), nil
}

// Neighbors returns copies of every edge touching any of ids, each once.
// EUNAVAILABLE before Rebuild.
func (s *Store) Neighbors(ctx context.Context, ns string, ids []string) ([]*models.Edge, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if !s.ready.Load() {
		return nil, unavailable()
	}
	if len(ids) == 0 {
		return nil, nil
	}
	_, _, graph, err := s.indexes(ctx, ns)
	if graph == nil || err != nil {
		return nil, err
	}
	return graph.Neighbors(ids), nil
}

// StrongestNeighbors returns, per node, at most perNode of its edges of the given types,
// heaviest first (see models.Store). EUNAVAILABLE before Rebuild.
func (s *Store) StrongestNeighbors(ctx context.Context, ns string, ids []string, perNode int, types []models.EdgeType) ([]*models.Edge, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if !s.ready.Load() {
		return nil, unavailable()
	}
	if len(ids) == 0 || perNode <= 0 {
		return nil, nil
	}
	_, _, graph, err := s.indexes(ctx, ns)
	if graph == nil || err != nil {
		return nil, err
	}
	var set map[models.EdgeType]bool
	if len(types) > 0 {
		set = make(map[models.EdgeType]bool, len(types))
		for _, t := range types {
			set[t] = true
		}
	}
	return graph.Strongest(ids, perNode, set), nil
}
