package neo4j

import (
	"context"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/store/batch"
)

// memoryProps is what a :Memory node stores. Lists of lists and structs are JSON text;
// empty lists are no property.
func memoryProps(m *models.Memory) map[string]any {
	return map[string]any{
		"ns": m.Namespace, "id": m.ID, "parent": m.ParentID, "kind": string(m.Kind), "content": m.Content,
		"created": encTime(m.CreatedAt), "valid": encTime(m.ValidAt), "invalid": encTime(m.InvalidAt),
		"conv": m.Source.ConversationID, "msg": m.Source.MessageID, "speaker": m.Source.Speaker,
		"role":       string(m.Source.Role),
		"importance": m.Importance, "domains": encStrings(m.Domains), "triggers": encStrings(m.Triggers),
		"concepts": encStrings(m.Concepts), "triple": encJSON(m.Triple, m.Triple == nil), "sensitive": m.Sensitive,
		"chunk_index": int64(m.ChunkIndex), "chunk_count": int64(m.ChunkCount),
		"embedding": encVector(m.Embedding),
	}
}

// metaProps is the retrieval metadata and schedule: what Tx.PutMemory may change.
func metaProps(m *models.Memory) map[string]any {
	return map[string]any{
		"confidence": m.Confidence, "usage": int64(m.UsageCount), "last_used": encTime(m.LastUsed),
		"surfaces": int64(m.SurfaceCount), "last_surfaced": encTime(m.LastSurfaced),
		"dismissals": m.RecentDismissals, "irrelevant": encJSON(m.IrrelevantContexts, len(m.IrrelevantContexts) == 0),
		"schedule": encJSON(m.Schedule, m.Schedule == (models.Schedule{})),
		// The learned words (feedback expansion) are kept; SearchText does not search
		// them yet (the embedded store's learned field has no Lucene counterpart here).
		"learned": encJSON(m.Learned, len(m.Learned) == 0),
	}
}

// editProps is what Tx.EditMemory may change, under memoryProps' names.
func editProps(m *models.Memory) map[string]any {
	return map[string]any{"importance": m.Importance, "valid": encTime(m.ValidAt), "invalid": encTime(m.InvalidAt), "sensitive": m.Sensitive}
}

// memoryMap projects a memory node m: the properties memoryProps writes, by name, so the
// index-only ones (terms, ixterms) and the lock are never read, nor the embedding where it
// is not wanted (memoryMapNoVector).
const (
	memoryFields = `.id, .ns, .kind, .content, .created, .valid, .invalid, .conv, .msg, .speaker, .role,
		.importance, .domains, .triggers, .concepts, .triple, .sensitive, .confidence, .usage, .last_used,
		.surfaces, .last_surfaced, .dismissals, .irrelevant, .schedule, .parent, .chunk_count, .chunk_index,
		.learned`
	memoryMap    = ` m {` + memoryFields + `, .embedding}`
	memoryReturn = memoryMap + ` AS m`
	// memoryMapNoVector is memoryMap without the embedding.
	memoryMapNoVector = ` m {` + memoryFields + `}`
)

func decMemory(v any) (*models.Memory, error) {
	p := asProps(v)
	if p.err != nil {
		return nil, p.err
	}
	m := &models.Memory{
		ID: p.str("id"), Namespace: p.str("ns"), Kind: models.Kind(p.str("kind")), Content: p.str("content"),
		CreatedAt: p.time("created"), ValidAt: p.time("valid"), InvalidAt: p.time("invalid"),
		Source:     models.Source{ConversationID: p.str("conv"), MessageID: p.str("msg"), Speaker: p.str("speaker"), Role: models.Role(p.str("role"))},
		Importance: p.f64("importance"), Domains: p.strs("domains"), Triggers: p.strs("triggers"), Concepts: p.strs("concepts"),
		Sensitive: p.bool("sensitive"), ParentID: p.str("parent"), ChunkIndex: p.int("chunk_index"), ChunkCount: p.int("chunk_count"),
		Confidence: p.f64("confidence"), UsageCount: p.int("usage"), LastUsed: p.time("last_used"),
		SurfaceCount: p.int("surfaces"), LastSurfaced: p.time("last_surfaced"), RecentDismissals: p.f64("dismissals"),
		Embedding: p.vector("embedding"),
	}
	if t := p.str("triple"); t != "" {
		m.Triple = new(models.Triple)
		p.json("triple", m.Triple)
	}
	p.json("irrelevant", &m.IrrelevantContexts)
	p.json("schedule", &m.Schedule)
	p.json("learned", &m.Learned)
	return m, p.err
}

func memoryRecords(recs []*neo4j.Record) ([]*models.Memory, error) {
	out := make([]*models.Memory, 0, len(recs))
	for _, r := range recs {
		v, err := value(r, "m")
		if err != nil {
			return nil, err
		}
		m, err := decMemory(v)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// nsWrite is the part of a CreateMemories batch in one namespace, ready to send.
type nsWrite struct {
	ns       string
	ids      []string
	units    []map[string]any // memory and chunk rows: {p: props, meta: props, unit: bool, terms, ix}
	counts   termCounts       // the indexed units' terms, for the namespace's text statistics
	parents  int64
	vectors  models.EmbedderIdentity // of the batch's vectors in this namespace (batch.Prepare)
	concepts []map[string]any
	edges    []map[string]any

	conceptAt map[string]int // concept id → its row in concepts
}

// prepare checks a batch (batch.Prepare) and groups it by namespace, in the order
// namespaces appear. ECONFLICT when an id repeats within the batch.
func prepare(writes []*models.MemoryWrite) ([]*nsWrite, error) {
	prep, ids, err := batch.Prepare(writes)
	if err != nil {
		return nil, err
	}
	var out []*nsWrite
	byNS := map[string]*nsWrite{}
	seen := map[[2]string]bool{}
	for _, w := range prep {
		ns := w.Namespace
		p := byNS[ns]
		if p == nil {
			p = &nsWrite{ns: ns, vectors: ids[ns]}
			byNS[ns] = p
			out = append(out, p)
		}
		p.parents++
		for _, c := range w.Units {
			if seen[[2]string{ns, c.ID}] {
				return nil, conflict("memory %s appears twice in the batch", c.ID)
			}
			seen[[2]string{ns, c.ID}] = true
			row := map[string]any{"p": memoryProps(c), "meta": metaProps(c), "unit": c.Indexed(), "terms": nil, "ix": nil}
			if c.Indexed() {
				terms := nlp.Terms(c.Content)
				row["terms"], row["ix"] = strings.Join(terms, " "), ixTerms(ns, terms)
				p.counts.add(terms)
			}
			p.units = append(p.units, row)
			p.ids = append(p.ids, c.ID)
		}
		for _, c := range w.Concepts {
			p.addConcept(conceptRow(c))
		}
		for _, ec := range w.Edges {
			p.edges = append(p.edges, map[string]any{"from": ec.From, "to": ec.To, "rt": relType(ec.Type), "type": string(ec.Type), "p": edgeProps(ec)})
		}
	}
	return out, nil
}

// addConcept adds a concept row, folding a concept the batch already wrote into its first
// row as the upsert would have merged them in turn: one row per concept, so the query can
// tell a new concept from an existing one.
func (p *nsWrite) addConcept(row map[string]any) {
	if p.conceptAt == nil {
		p.conceptAt = map[string]int{}
	}
	i, ok := p.conceptAt[row["id"].(string)]
	if !ok {
		p.conceptAt[row["id"].(string)] = len(p.concepts)
		p.concepts = append(p.concepts, row)
		return
	}
	old := p.concepts[i]
	old["add"] = old["add"].(int64) + row["add"].(int64)
	aliases := old["aliases"].([]any)
	for _, a := range row["aliases"].([]any) {
		if !slices.Contains(aliases, a) {
			aliases = append(aliases, a)
		}
	}
	old["aliases"] = aliases
	if old["first"].(int64) == noTime {
		old["first"] = row["first"]
	}
	old["last"] = max(old["last"].(int64), row["last"].(int64))
}

// conceptRow is the parameters of a checked concept (models.ValidateStoredConcept): its
// node id, and the values the upsert merges.
func conceptRow(cc *models.Concept) map[string]any {
	first, last := cc.FirstSeen, cc.LastSeen
	if first.IsZero() {
		first = last
	}
	if last.IsZero() {
		last = first
	}
	aliases := []any{} // deduplicated, in order: the upsert appends the new ones
	for _, a := range cc.Aliases {
		if !slices.Contains(aliases, any(a)) {
			aliases = append(aliases, a)
		}
	}
	return map[string]any{
		"id": models.ConceptPrefix + cc.Name, "name": cc.Name, "kind": string(cc.Kind), "aliases": aliases,
		"add": int64(max(cc.Mentions, 1)), "first": encTime(first), "last": encTime(last),
	}
}

const (
	// existingMemories returns the ids of the batch that exist already.
	existingMemories = `UNWIND $ids AS id MATCH (m:Memory {ns: $ns, id: id}) RETURN m.id AS id LIMIT 1`

	// claimSpace creates the namespace's :Space — its write lock, embedding dimension and
	// embedder name (absent for vectors written before names were recorded), and the counts
	// GraphStats reads: memories (not chunks), concepts, edges — and returns its dimension
	// and embedder.
	claimSpace = `MERGE (sp:Space {ns: $ns}) ON CREATE SET sp.dims = 0, sp.mems = 0, sp.concepts = 0, sp.edges = 0
		SET sp.lk = NOT coalesce(sp.lk, false) RETURN sp.dims AS dims, coalesce(sp.embedder, '') AS embedder`
	// nameSpace records the embedder of a namespace's vectors.
	nameSpace = `MATCH (sp:Space {ns: $ns}) SET sp.embedder = $embedder`
	// countSpace moves the namespace's counts by what a transaction created or deleted.
	countSpace = `MERGE (sp:Space {ns: $ns}) ON CREATE SET sp.dims = 0, sp.mems = 0, sp.concepts = 0, sp.edges = 0
		SET sp.dims = CASE WHEN $dims > 0 THEN $dims ELSE sp.dims END,
			sp.mems = sp.mems + $mems, sp.concepts = sp.concepts + $concepts, sp.edges = sp.edges + $edges`
	// countText moves the namespace's text statistics (bm25.go) by the units a transaction
	// created or deleted: their number and length on the :Space, and each term's document
	// frequency on its :Term, which goes when no unit holds the term any more.
	countText = `MATCH (sp:Space {ns: $ns})
		SET sp.units = coalesce(sp.units, 0) + $units, sp.tlen = coalesce(sp.tlen, 0) + $tlen
		WITH sp
		UNWIND $rows AS r
		MERGE (t:Term {ns: $ns, t: r.t}) ON CREATE SET t.df = 0
		SET t.df = t.df + r.n
		WITH t WHERE t.df <= 0
		DELETE t`

	// createMemories writes memory and chunk nodes. A node an edge named before keeps its
	// edges and becomes the memory.
	createMemories = `UNWIND $rows AS r
		MERGE (m:Node {ns: $ns, id: r.p.id})
		SET m:Memory, m += r.p, m += r.meta
		WITH m, r WHERE r.unit
		SET m:Unit, m.terms = r.terms, m.ixterms = r.ix`

	// upsertConcepts merges concepts: mentions add up (at least one per write), FirstSeen
	// and Kind stay, new aliases are appended, LastSeen only moves forward.
	upsertConcepts = `UNWIND $rows AS c
		MERGE (n:Node {ns: $ns, id: c.id})
		WITH n, c, n:Concept AS existed
		SET n:Concept, n.name = c.name,
			n.kind = coalesce(n.kind, c.kind),
			n.mentions = coalesce(n.mentions, 0) + c.add,
			n.first = CASE WHEN coalesce(n.first, ` + noTimeCypher + `) = ` + noTimeCypher + ` THEN c.first ELSE n.first END,
			n.last = CASE WHEN c.last > coalesce(n.last, ` + noTimeCypher + `) THEN c.last ELSE n.last END,
			n.aliases = coalesce(n.aliases, []) + [a IN c.aliases WHERE NOT a IN coalesce(n.aliases, [])]
		RETURN count(CASE WHEN existed THEN null ELSE 1 END) AS created`

	// insertEdges creates the edges that are missing and leaves existing ones as they are.
	insertEdges = `UNWIND $rows AS e
		MERGE (a:Node {ns: $ns, id: e.from})
		MERGE (b:Node {ns: $ns, id: e.to})
		MERGE (a)-[r:$(e.rt) {type: e.type}]->(b)
		ON CREATE SET r += e.p, r.key = [e.from, e.to, e.type]`
)

// CreateMemories writes the batch in one transaction: memories, chunks, concepts (upserted)
// and edges (created when missing). ECONFLICT when a memory id exists (also within the
// batch); EINVALID when an embedding's dimension or embedder differs from the namespace's.
func (s *Store) CreateMemories(ctx context.Context, writes []*models.MemoryWrite) error {
	if len(writes) == 0 {
		return nil
	}
	byNS, err := prepare(writes)
	if err != nil {
		return err
	}
	return s.write(ctx, "create memories", func(tx neo4j.ManagedTransaction) error {
		for _, p := range byNS {
			recs, err := collect(ctx, tx, claimSpace, map[string]any{"ns": p.ns})
			if err != nil {
				return err
			}
			dims, _ := recs[0].Values[0].(int64)
			name, _ := recs[0].Values[1].(string)
			next, err := models.EmbedderIdentity{Name: name, Dims: int(dims)}.Admit(p.ns, p.vectors)
			if err != nil {
				return err
			}
			if next.Name != "" && next.Name != name { // countSpace records the dimension
				if err := exec(ctx, tx, nameSpace, map[string]any{"ns": p.ns, "embedder": next.Name}); err != nil {
					return err
				}
			}
			dims = int64(next.Dims)
			// Lists go in slices of maxListParam rows (see GetConcepts).
			for part := range slices.Chunk(p.ids, maxListParam) {
				recs, err = collect(ctx, tx, existingMemories, map[string]any{"ns": p.ns, "ids": part})
				if err != nil {
					return err
				}
				if len(recs) > 0 {
					return conflict("memory %v exists", recs[0].Values[0])
				}
			}
			for part := range slices.Chunk(p.units, maxListParam) {
				if err := exec(ctx, tx, createMemories, map[string]any{"ns": p.ns, "rows": part}); err != nil {
					return err
				}
			}
			var concepts, edges int
			for part := range slices.Chunk(p.concepts, maxListParam) {
				// created counts new concepts, and nodes an edge named that become concepts.
				recs, err := collect(ctx, tx, upsertConcepts, map[string]any{"ns": p.ns, "rows": part})
				if err != nil {
					return err
				}
				n, _ := recs[0].Values[0].(int64)
				concepts += int(n)
			}
			for part := range slices.Chunk(p.edges, maxListParam) {
				c, err := execCount(ctx, tx, insertEdges, map[string]any{"ns": p.ns, "rows": part})
				if err != nil {
					return err
				}
				edges += c.RelationshipsCreated()
			}
			if err := exec(ctx, tx, countSpace, map[string]any{"ns": p.ns, "dims": dims, "mems": p.parents,
				"concepts": int64(concepts), "edges": int64(edges)}); err != nil {
				return err
			}
			if err := countTerms(ctx, tx, p.ns, &p.counts, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// maxListParam bounds the id lists a lookup sends in one query (see GetConcepts).
const maxListParam = 5000

const (
	getMemories = `UNWIND $ids AS id MATCH (m:Memory {ns: $ns, id: id}) RETURN` + memoryReturn
	// viewMemories is getMemories without the embeddings, which a reader that does not
	// ask for them need not be sent.
	viewMemories = `UNWIND $ids AS id MATCH (m:Memory {ns: $ns, id: id}) RETURN` + memoryMapNoVector + ` AS m`
)

// memoryQueries are the reads of memories by id: with their vectors (getMemories) and
// without (viewMemories).
var memoryQueries = [...]string{withVectors: getMemories, withoutVectors: viewMemories}

const (
	withVectors = iota
	withoutVectors
)

// GetMemory returns one memory or chunk; ENOTFOUND when missing.
func (s *Store) GetMemory(ctx context.Context, ns, id string) (*models.Memory, error) {
	return models.GetMemory(ctx, s.GetMemories, ns, id)
}

// GetMemories returns the memories and chunks with these ids in the order asked, skipping
// missing ones; an id asked twice is answered twice.
func (s *Store) GetMemories(ctx context.Context, ns string, ids []string) ([]*models.Memory, error) {
	return s.getMemories(ctx, ns, ids, withVectors)
}

// ViewMemories is GetMemories for a reader (see models.Store). The answers are the
// caller's own copies, as GetMemories', without the embeddings unless vectors is true.
func (s *Store) ViewMemories(ctx context.Context, ns string, ids []string, vectors bool) ([]*models.Memory, error) {
	q := withoutVectors
	if vectors {
		q = withVectors
	}
	return s.getMemories(ctx, ns, ids, q)
}

// getMemories answers GetMemories with memoryQueries[q].
func (s *Store) getMemories(ctx context.Context, ns string, ids []string, q int) ([]*models.Memory, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var ms []*models.Memory
	err := s.read(ctx, "get memories", func(tx runner) error {
		ms = ms[:0]
		for part := range slices.Chunk(slices.Compact(slices.Sorted(slices.Values(ids))), maxListParam) {
			recs, err := collect(ctx, tx, memoryQueries[q], map[string]any{"ns": ns, "ids": part})
			if err != nil {
				return err
			}
			got, err := memoryRecords(recs)
			if err != nil {
				return err
			}
			ms = append(ms, got...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*models.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	return models.MemoriesInOrder(ids, byID), nil
}

// FindMemories queries: one namespace (index-backed) or all, newest or oldest first. Every
// filter is a parameter that is null when unused.
const (
	findMemoriesNS    = `MATCH (m:Memory {ns: $ns}) WHERE m.parent = ''`
	findMemoriesAll   = `MATCH (m:Memory) WHERE m.parent = ''`
	findMemoriesWhere = `
		AND ($kinds IS NULL OR m.kind IN $kinds)
		AND ($conv IS NULL OR m.conv = $conv)
		AND ($since IS NULL OR m.created >= $since)
		AND ($until IS NULL OR m.created < $until)
		AND ($ids IS NULL OR m.id IN $ids)`
	findMemoriesDesc = ` WITH m ORDER BY m.created DESC, m.id DESC`
	findMemoriesAsc  = ` WITH m ORDER BY m.created ASC, m.id ASC`
	findMemoriesPage = ` WITH collect(m) AS ms
		RETURN size(ms) AS total, [m IN ms[$offset..$offset + $limit] |` + memoryMap + `] AS page`
)

// findMemoriesQueries[allNamespaces][ascending].
var findMemoriesQueries = [2][2]string{
	{findMemoriesNS + findMemoriesWhere + findMemoriesDesc + findMemoriesPage, findMemoriesNS + findMemoriesWhere + findMemoriesAsc + findMemoriesPage},
	{findMemoriesAll + findMemoriesWhere + findMemoriesDesc + findMemoriesPage, findMemoriesAll + findMemoriesWhere + findMemoriesAsc + findMemoriesPage},
}

// FindMemories lists memories (never chunks) matching f, with the total ignoring Offset and
// Limit. An empty f.Namespace lists every namespace.
func (s *Store) FindMemories(ctx context.Context, f models.MemoryFilter) ([]*models.Memory, int, error) {
	limit, ascending, err := f.Check()
	if err != nil {
		return nil, 0, err
	}
	params := map[string]any{"ns": nil, "kinds": nil, "conv": optString(f.ConversationID),
		"since": optTime(f.Since), "until": optTime(f.Until), "ids": nil}
	all := 1
	if f.Namespace != "" {
		params["ns"], all = f.Namespace, 0
	}
	if len(f.Kinds) > 0 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		params["kinds"] = kinds
	}
	if len(f.IDs) > 0 {
		params["ids"] = slices.Clone(f.IDs)
	}
	asc := 0
	if ascending {
		asc = 1
	}
	params["offset"], params["limit"] = int64(f.Offset), int64(limit)
	var ms []*models.Memory
	var total int64
	err = s.read(ctx, "find memories", func(tx runner) error {
		recs, err := collect(ctx, tx, findMemoriesQueries[all][asc], params)
		if err != nil {
			return err
		}
		total, _ = recs[0].Values[0].(int64)
		page, _ := recs[0].Values[1].([]any)
		ms = make([]*models.Memory, 0, len(page))
		for _, v := range page {
			m, err := decMemory(v)
			if err != nil {
				return err
			}
			ms = append(ms, m)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return ms, int(total), nil
}

const lastInConversation = `MATCH (m:Memory {ns: $ns, conv: $conv}) WHERE m.parent = ''
	RETURN` + memoryReturn + ` ORDER BY m.created DESC, m.id DESC LIMIT 1`

// LastInConversation returns the newest memory (not chunk) of a conversation by CreatedAt
// then id; ENOTFOUND when there is none.
func (s *Store) LastInConversation(ctx context.Context, ns, conversationID string) (*models.Memory, error) {
	if err := models.ValidateConversationRef(ns, conversationID); err != nil {
		return nil, err
	}
	var ms []*models.Memory
	err := s.read(ctx, "last in conversation", func(tx runner) error {
		recs, err := collect(ctx, tx, lastInConversation, map[string]any{"ns": ns, "conv": conversationID})
		if err != nil {
			return err
		}
		ms, err = memoryRecords(recs)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, notFound("conversation %s has no memories", conversationID)
	}
	return ms[0], nil
}

const (
	memoryParent = `MATCH (m:Memory {ns: $ns, id: $id}) RETURN m.parent AS parent`
	chunkIDs     = `MATCH (m:Memory {ns: $ns, parent: $id}) RETURN m.id AS id`
	dequeueIDs   = `UNWIND $ids AS id MATCH (q:QueueItem {ns: $ns, memory: id}) DELETE q`
	deleteNodes  = `UNWIND $ids AS id MATCH (m:Memory {ns: $ns, id: id}) DETACH DELETE m`
	unitTerms    = `UNWIND $ids AS id MATCH (m:Memory {ns: $ns, id: id}) WHERE m:Unit RETURN m.terms AS terms`
)

// countTerms moves ns's text statistics by c, sign times (countText), in slices of
// maxListParam terms.
func countTerms(ctx context.Context, tx runner, ns string, c *termCounts, sign int) error {
	if c.units == 0 {
		return nil
	}
	rows := c.rows(sign)
	units, tlen := int64(sign*c.units), int64(sign*c.tlen)
	for first := true; first || len(rows) > 0; first = false { // once at least: the counts
		part := rows[:min(len(rows), maxListParam)]
		rows = rows[len(part):]
		if err := exec(ctx, tx, countText, map[string]any{"ns": ns, "units": units, "tlen": tlen, "rows": part}); err != nil {
			return err
		}
		units, tlen = 0, 0
	}
	return nil
}

// DeleteMemory removes a memory with its chunks, their vectors and index entries, every
// edge touching any of them, and their resurfacing queue items. Surfacings and events stay:
// they are the engagement history. ENOTFOUND when missing; EINVALID for a chunk's id.
func (s *Store) DeleteMemory(ctx context.Context, ns, id string) error {
	if err := models.ValidateKey(ns, id, "id"); err != nil {
		return err
	}
	return s.write(ctx, "delete memory", func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, claimSpace, map[string]any{"ns": ns}); err != nil {
			return err
		}
		recs, err := collect(ctx, tx, memoryParent, map[string]any{"ns": ns, "id": id})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return notFound("memory %s not found", id)
		}
		if parent, _ := recs[0].Values[0].(string); parent != "" {
			return models.Invalid("id", "%s is a chunk of %s; delete the parent", id, parent)
		}
		recs, err = collect(ctx, tx, chunkIDs, map[string]any{"ns": ns, "id": id})
		if err != nil {
			return err
		}
		ids := []string{id}
		for _, r := range recs {
			c, _ := r.Values[0].(string)
			ids = append(ids, c)
		}
		params := map[string]any{"ns": ns, "ids": ids}
		if err := exec(ctx, tx, dequeueIDs, params); err != nil {
			return err
		}
		recs, err = collect(ctx, tx, unitTerms, params)
		if err != nil {
			return err
		}
		var gone termCounts
		for _, r := range recs {
			ts, _ := r.Values[0].(string)
			gone.add(strings.Fields(ts))
		}
		if err := countTerms(ctx, tx, ns, &gone, -1); err != nil {
			return err
		}
		c, err := execCount(ctx, tx, deleteNodes, params)
		if err != nil {
			return err
		}
		return exec(ctx, tx, countSpace, map[string]any{"ns": ns, "dims": int64(0), "mems": int64(-1),
			"concepts": int64(0), "edges": int64(-c.RelationshipsDeleted())})
	})
}
