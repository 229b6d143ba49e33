package sqlite

// Loading the in-memory indexes (package memindex) from the database: every namespace at once
// (Rebuild), or one on first use in budget mode (lazy.go).

import (
	"context"
	"slices"
	"time"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/store/memindex"
)

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
	if s.mem.Budget() > 0 {
		// Budget mode: every namespace loads on first use (lazy.go).
		s.mem.Replace(map[string]*memindex.Space{})
		s.ready.Store(true)
		s.log.Info("sqlite: indexes load on demand", "budget_bytes", s.mem.Budget())
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The two halves read at once, each on a connection of its own.
	var memQ, graphQ *conn
	for _, q := range []**conn{&memQ, &graphQ} {
		c, err := openReader(s.path)
		if err != nil {
			return err
		}
		defer c.Close()
		*q = c
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

	spaces := map[string]*memindex.Space{}
	get := func(ns string) *memindex.Space {
		sp := spaces[ns]
		if sp == nil {
			sp = s.mem.NewSpace()
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
		get(ns).SetGraph(gr, nil)
	}
	for ns, cs := range g.concepts {
		get(ns).SetGraph(nil, cs)
	}
	s.mem.Replace(spaces)
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
func (s *Store) loadSpaces(ctx context.Context, q *conn, ns string, spaces map[string]*memindex.Space, get func(string) *memindex.Space) (int, error) {
	where, args := nsFilter(ns)
	for r, err := range rowsOf(q.query(ctx, `SELECT ns, dims FROM namespaces`+where, args...)) {
		var ns string
		var dims int
		if err == nil {
			err = r.Scan(&ns, &dims)
		}
		if err != nil {
			return 0, wrap(err, "rebuild: namespaces")
		}
		get(ns).SetDims(dims)
	}
	// Size every namespace's structures up front: growing them row by row would copy the
	// vectors (150 MB at 100k × 384) several times over.
	for r, err := range rowsOf(q.query(ctx, `SELECT ns, COUNT(*) FROM memories`+where+` GROUP BY ns`, args...)) {
		var ns string
		var n int
		if err == nil {
			err = r.Scan(&ns, &n)
		}
		if err != nil {
			return 0, wrap(err, "rebuild: count")
		}
		get(ns).Grow(n)
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
func (s *Store) loadGraph(ctx context.Context, q *conn, ns string) (graphLoad, error) {
	where, args := nsFilter(ns)
	g := graphLoad{graphs: map[string]*index.Graph{}, concepts: map[string]map[string]*models.Concept{}}
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
	defer func() { // the graphs are whole when loadGraph returns
		close(batches)
		<-added
		for _, l := range loaders {
			l.Finish()
		}
	}()
	var cur []models.Edge
	// One edge is scanned into, its destinations made once (making them per row was two
	// allocations an edge, 20 M at a million memories), and copied into the batch.
	var scanned models.Edge
	dest := edgeRows.dests(&scanned)
	for r, err := range rowsOf(q.query(ctx, edgeRows.sel+where, args...)) {
		if err == nil {
			scanned = models.Edge{}
			err = r.Scan(dest...)
		}
		if err != nil {
			return g, wrap(err, "rebuild: edges")
		}
		if cur == nil {
			select {
			case cur = <-free:
			default:
				cur = make([]models.Edge, 0, edgeBatch)
			}
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
	for r, err := range rowsOf(q.query(ctx, conceptRows.sel+where, args...)) {
		var c *models.Concept
		if err == nil {
			c, err = scanConcept(r)
		}
		if err != nil {
			return g, wrap(err, "rebuild: concepts")
		}
		cs := g.concepts[c.Namespace]
		if cs == nil {
			cs = map[string]*models.Concept{}
			g.concepts[c.Namespace] = cs
		}
		cs[c.Name] = c
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
func (s *Store) loadMemories(ctx context.Context, q *conn, ns string, spaces map[string]*memindex.Space, get func(string) *memindex.Space) (int, error) {
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
		if v := sp.Vectors(); v != nil {
			vecs[ns] = v
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
				if err := get(m.Namespace).Add(m, b.terms[i]); err != nil {
					s.log.Error("sqlite: vector not indexed", "namespace", m.Namespace, "id", m.ID, "err", err)
				}
			}
			n += len(b.mems)
		}
		indexed <- n
	}()

	err := func() error {
		defer close(read)
		// Rows are scanned into one memoryRow, whose destinations are made once (a slice
		// of them a row was a million allocations), and copied into the batch.
		var raw rawBytes
		var scanned memoryRow
		dest := memoryRows.dests(&scanned)
		dest[memoryEmbedding] = &raw // copied once, below, into the batch's block
		cur := &batch{rows: make([]memoryRow, 0, batchRows)}
		for row, err := range rowsOf(q.query(ctx, memoryLoadSelect+where, args...)) {
			if err == nil {
				scanned = memoryRow{} // nothing decoded into a field reuses the last row's
				err = row.Scan(dest...)
			}
			if err != nil {
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
