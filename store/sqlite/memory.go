package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// memoryColumns is the column list every memory query selects, in memoryRow.dest's order.
const memoryColumns = `ns, id, parent_id, kind, content, created_at, valid_at, invalid_at,
	conversation_id, message_id, speaker, importance, domains, triggers, concepts, triple,
	sensitive, chunk_index, chunk_count, confidence, usage_count, last_used, surface_count,
	last_surfaced, recent_dismissals, irrelevant_contexts, schedule, embedding`

type scanner interface{ Scan(dest ...any) error }

// memoryRow holds the raw columns of one memory row.
type memoryRow struct {
	m                                  models.Memory
	kind                               string
	created, valid, invalid, used, sfc int64
	domains, triggers, concepts        string
	triple, irrelevant, schedule       string
	sensitive                          int
	embedding                          []byte
}

func (r *memoryRow) dest() []any {
	m := &r.m
	return []any{&m.Namespace, &m.ID, &m.ParentID, &r.kind, &m.Content, &r.created, &r.valid, &r.invalid,
		&m.Source.ConversationID, &m.Source.MessageID, &m.Source.Speaker, &m.Importance,
		&r.domains, &r.triggers, &r.concepts, &r.triple,
		&r.sensitive, &m.ChunkIndex, &m.ChunkCount, &m.Confidence, &m.UsageCount, &r.used, &m.SurfaceCount,
		&r.sfc, &m.RecentDismissals, &r.irrelevant, &r.schedule, &r.embedding}
}

// memory decodes the raw columns into a new Memory, with its embedding.
func (r *memoryRow) memory() (*models.Memory, error) {
	m := r.m
	m.Kind = models.Kind(r.kind)
	m.CreatedAt, m.ValidAt, m.InvalidAt = decTime(r.created), decTime(r.valid), decTime(r.invalid)
	m.LastUsed, m.LastSurfaced = decTime(r.used), decTime(r.sfc)
	m.Sensitive = r.sensitive != 0
	var err error
	if m.Domains, err = decStrings(r.domains, "domains"); err != nil {
		return nil, err
	}
	if m.Triggers, err = decStrings(r.triggers, "triggers"); err != nil {
		return nil, err
	}
	if m.Concepts, err = decStrings(r.concepts, "concepts"); err != nil {
		return nil, err
	}
	if r.triple != "" {
		m.Triple = new(models.Triple)
		if err := decJSON(r.triple, m.Triple, "triple"); err != nil {
			return nil, err
		}
	}
	if err := decJSON(r.irrelevant, &m.IrrelevantContexts, "irrelevant_contexts"); err != nil {
		return nil, err
	}
	if err := decJSON(r.schedule, &m.Schedule, "schedule"); err != nil {
		return nil, err
	}
	if m.Embedding, err = decVector(r.embedding); err != nil {
		return nil, err
	}
	return &m, nil
}

func scanMemory(sc scanner) (*models.Memory, error) {
	var r memoryRow
	if err := sc.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.memory()
}

func queryMemories(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]*models.Memory, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*models.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func encSchedule(s models.Schedule) string { return encJSON(s, s == (models.Schedule{})) }

func encIrrelevant(v [][]string) string { return encJSON(v, len(v) == 0) }

func encTriple(t *models.Triple) string { return encJSON(t, t == nil) }

// cloneMemory deep-copies m so that neither the caller nor the cache can change the other.
func cloneMemory(m *models.Memory) *models.Memory {
	c := *m
	c.Domains = slices.Clone(m.Domains)
	c.Triggers = slices.Clone(m.Triggers)
	c.Concepts = slices.Clone(m.Concepts)
	if m.Triple != nil {
		t := *m.Triple
		c.Triple = &t
	}
	if m.IrrelevantContexts != nil {
		c.IrrelevantContexts = make([][]string, len(m.IrrelevantContexts))
		for i, ctx := range m.IrrelevantContexts {
			c.IrrelevantContexts[i] = slices.Clone(ctx)
		}
	}
	c.Embedding = slices.Clone(m.Embedding)
	return &c
}

func validateID(id, field string) error {
	if id == "" {
		return models.Invalid(field, "id is required")
	}
	if len(id) > models.MaxIDBytes {
		return models.Invalid(field, "id is longer than %d bytes", models.MaxIDBytes)
	}
	return nil
}

// validateMemory checks what the store relies on; content rules are ingest's (Memory.Validate).
func validateMemory(m *models.Memory, field string) error {
	if m == nil {
		return models.Invalid(field, "memory is missing")
	}
	if err := models.ValidateNamespace(m.Namespace); err != nil {
		return models.WithFieldPrefix(err, field+".")
	}
	if err := validateID(m.ID, field+".id"); err != nil {
		return err
	}
	// Concept node ids start with "c:"; memory ids never hold ':' so the two cannot collide.
	if strings.ContainsRune(m.ID, ':') {
		return models.Invalid(field+".id", "memory ids must not contain ':'")
	}
	if !m.Kind.Valid() {
		return models.Invalid(field+".kind", "unknown kind %q", m.Kind)
	}
	if m.CreatedAt.IsZero() {
		return models.Invalid(field+".created_at", "created_at is required")
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{
		{"created_at", m.CreatedAt}, {"valid_at", m.ValidAt}, {"invalid_at", m.InvalidAt},
		{"last_used", m.LastUsed}, {"last_surfaced", m.LastSurfaced},
	} {
		if err := checkTime(field+"."+t.name, t.t); err != nil {
			return err
		}
	}
	if !finite(m.Importance) || !finite(m.Confidence) || !finite(m.RecentDismissals) {
		return models.Invalid(field, "importance, confidence and recent_dismissals must be finite")
	}
	return nil
}

// unit is one memory or chunk ready to write: a private copy with its normalized embedding
// and, for indexed units, its BM25 terms.
type unit struct {
	m     *models.Memory
	terms []string
}

// preparedWrite is one validated MemoryWrite, with everything the indexes need computed
// before the write lock is taken.
type preparedWrite struct {
	ns       string
	units    []unit
	concepts []*models.Concept
	edges    []*models.Edge
}

func prepareWrites(writes []*models.MemoryWrite) ([]preparedWrite, map[string]int, error) {
	out := make([]preparedWrite, len(writes))
	dims := map[string]int{} // per namespace, 0 = no embedding in the batch
	for i, w := range writes {
		f := fmt.Sprintf("writes[%d]", i)
		if w == nil || w.Memory == nil {
			return nil, nil, models.Invalid(f+".memory", "memory is missing")
		}
		m := w.Memory
		if err := validateMemory(m, f+".memory"); err != nil {
			return nil, nil, err
		}
		if m.ParentID != "" {
			return nil, nil, models.Invalid(f+".memory.parent_id", "a chunk cannot be written without its parent")
		}
		if m.ChunkCount != len(w.Chunks) {
			return nil, nil, models.Invalid(f+".memory.chunk_count", "chunk_count is %d but %d chunks were given", m.ChunkCount, len(w.Chunks))
		}
		ns := m.Namespace
		p := preparedWrite{ns: ns}
		for j, um := range append([]*models.Memory{m}, w.Chunks...) {
			uf := f + ".memory"
			if j > 0 {
				uf = fmt.Sprintf("%s.chunks[%d]", f, j-1)
				if err := validateMemory(um, uf); err != nil {
					return nil, nil, err
				}
				if um.ParentID != m.ID || um.Namespace != ns || um.ChunkCount != 0 {
					return nil, nil, models.Invalid(uf+".parent_id", "a chunk must belong to its memory's namespace, name it as parent and have no chunks")
				}
			}
			c := cloneMemory(um)
			if len(c.Embedding) > 0 {
				v, err := index.Normalize(c.Embedding)
				if err != nil {
					return nil, nil, models.Invalid(uf+".embedding", "embedding has a NaN or infinite component")
				}
				c.Embedding = v // c's own copy, or a new normalized one
				if d := dims[ns]; d != 0 && d != len(v) {
					return nil, nil, models.Invalid(uf+".embedding", "embedding has %d dimensions, others in the batch %d", len(v), d)
				}
				dims[ns] = len(v)
			} else if _, ok := dims[ns]; !ok {
				dims[ns] = 0
			}
			u := unit{m: c}
			if c.Indexed() {
				u.terms = nlp.Terms(c.Content)
			}
			p.units = append(p.units, u)
		}
		for j, c := range w.Concepts {
			cf := fmt.Sprintf("%s.concepts[%d]", f, j)
			if c == nil {
				return nil, nil, models.Invalid(cf, "concept is missing")
			}
			cc := *c
			cc.Aliases = slices.Clone(c.Aliases)
			cc.Name = models.NormalizeConcept(c.Name)
			if cc.Namespace == "" {
				cc.Namespace = ns
			}
			switch {
			case cc.Namespace != ns:
				return nil, nil, models.Invalid(cf+".namespace", "concept of another namespace")
			case cc.Name == "":
				return nil, nil, models.Invalid(cf+".name", "concept name is empty")
			case cc.Kind == "":
				return nil, nil, models.Invalid(cf+".kind", "concept kind is required")
			case cc.Mentions < 0:
				return nil, nil, models.Invalid(cf+".mentions", "mentions must not be negative")
			}
			if err := errors.Join(checkTime(cf+".first_seen", cc.FirstSeen), checkTime(cf+".last_seen", cc.LastSeen)); err != nil {
				return nil, nil, err
			}
			p.concepts = append(p.concepts, &cc)
		}
		for j, e := range w.Edges {
			ef := fmt.Sprintf("%s.edges[%d]", f, j)
			ec, err := validateEdge(e, ns, ef)
			if err != nil {
				return nil, nil, err
			}
			p.edges = append(p.edges, ec)
		}
		out[i] = p
	}
	return out, dims, nil
}

// validateEdge checks e and returns a copy with its namespace set to ns when empty.
func validateEdge(e *models.Edge, ns, field string) (*models.Edge, error) {
	if e == nil {
		return nil, models.Invalid(field, "edge is missing")
	}
	c := *e
	if c.Namespace == "" {
		c.Namespace = ns
	}
	switch {
	case c.Namespace != ns:
		return nil, models.Invalid(field+".namespace", "edge of another namespace")
	case c.From == "" || c.To == "":
		return nil, models.Invalid(field, "an edge needs both ends")
	case c.Type == "":
		return nil, models.Invalid(field+".type", "edge type is required")
	case !(c.Weight >= 0 && c.Weight <= 1):
		return nil, models.Invalid(field+".weight", "weight must be between 0 and 1")
	case c.CoOccurrences < 0:
		return nil, models.Invalid(field+".co_occurrences", "co_occurrences must not be negative")
	case hasControl(c.From) || hasControl(c.To) || hasControl(string(c.Type)) || hasControl(c.Fact):
		return nil, models.Invalid(field, "edge ends, type and fact must not contain control characters")
	}
	if err := errors.Join(checkTime(field+".last_co_occurred", c.LastCoOccurred), checkTime(field+".last_decayed", c.LastDecayed)); err != nil {
		return nil, err
	}
	return &c, nil
}

const insertMemorySQL = `INSERT INTO memories (` + memoryColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func memoryArgs(m *models.Memory) []any {
	return []any{m.Namespace, m.ID, m.ParentID, string(m.Kind), m.Content, encTime(m.CreatedAt), encTime(m.ValidAt), encTime(m.InvalidAt),
		m.Source.ConversationID, m.Source.MessageID, m.Source.Speaker, m.Importance,
		encStrings(m.Domains), encStrings(m.Triggers), encStrings(m.Concepts), encTriple(m.Triple),
		boolInt(m.Sensitive), m.ChunkIndex, m.ChunkCount, m.Confidence, m.UsageCount, encTime(m.LastUsed), m.SurfaceCount,
		encTime(m.LastSurfaced), m.RecentDismissals, encIrrelevant(m.IrrelevantContexts), encSchedule(m.Schedule), encVector(m.Embedding)}
}

// CreateMemories writes the batch in one transaction: memories, chunks, concepts (upserted:
// Mentions grows by the written concept's Mentions, at least 1; FirstSeen, Kind and existing
// aliases are kept; LastSeen moves forward) and edges (inserted when missing). The in-memory
// indexes are updated after the commit. ECONFLICT when a memory id exists (also within the
// batch); EINVALID when an embedding's dimension differs from the namespace's.
func (s *Store) CreateMemories(ctx context.Context, writes []*models.MemoryWrite) error {
	if len(writes) == 0 {
		return nil
	}
	prep, dims, err := prepareWrites(writes)
	if err != nil {
		return err
	}
	return s.write(ctx, "create memories", func(tx *sql.Tx) (func(), error) {
		nsDims, err := fixDims(ctx, tx, dims)
		if err != nil {
			return nil, err
		}
		ins, err := tx.PrepareContext(ctx, insertMemorySQL)
		if err != nil {
			return nil, err
		}
		defer ins.Close()
		for _, p := range prep {
			for _, u := range p.units {
				if _, err := ins.ExecContext(ctx, memoryArgs(u.m)...); err != nil {
					if isConstraintUnique(err) {
						return nil, models.Errorf(models.ECONFLICT, "memory %s exists", u.m.ID)
					}
					return nil, fmt.Errorf("insert memory %s: %w", u.m.ID, err)
				}
			}
		}
		cu, err := newConceptUpserter(ctx, tx)
		if err != nil {
			return nil, err
		}
		defer cu.close()
		var merged []*models.Concept
		for _, p := range prep {
			for _, c := range p.concepts {
				m, err := cu.upsert(ctx, c)
				if err != nil {
					return nil, err
				}
				merged = append(merged, m)
			}
		}
		insEdge, err := tx.PrepareContext(ctx, `INSERT INTO edges (`+edgeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
		if err != nil {
			return nil, err
		}
		defer insEdge.Close()
		var created []*models.Edge
		for _, p := range prep {
			for _, e := range p.edges {
				res, err := insEdge.ExecContext(ctx, edgeArgs(e)...)
				if err != nil {
					return nil, fmt.Errorf("insert edge: %w", err)
				}
				if n, _ := res.RowsAffected(); n == 1 {
					created = append(created, e)
				}
			}
		}
		return func() { s.applyCreate(prep, nsDims, merged, created) }, nil
	})
}

// fixDims checks each namespace's embedding dimension against the batch and records it for
// namespaces that had none; it returns the dimension of every namespace of the batch.
func fixDims(ctx context.Context, tx *sql.Tx, dims map[string]int) (map[string]int, error) {
	out := make(map[string]int, len(dims))
	for ns, d := range dims {
		var cur int
		err := tx.QueryRowContext(ctx, `SELECT dims FROM namespaces WHERE ns = ?`, ns).Scan(&cur)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO namespaces (ns, dims) VALUES (?, ?)`, ns, d); err != nil {
				return nil, err
			}
			cur = d
		case err != nil:
			return nil, err
		case d != 0 && cur == 0:
			if _, err := tx.ExecContext(ctx, `UPDATE namespaces SET dims = ? WHERE ns = ?`, d, ns); err != nil {
				return nil, err
			}
			cur = d
		case d != 0 && cur != d:
			return nil, models.Invalid("embedding", "embedding has %d dimensions; namespace %s uses %d", d, ns, cur)
		}
		out[ns] = cur
	}
	return out, nil
}

// GetMemory returns one memory or chunk; ENOTFOUND when missing.
func (s *Store) GetMemory(ctx context.Context, ns, id string) (*models.Memory, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := validateID(id, "id"); err != nil {
		return nil, err
	}
	ms, err := s.GetMemories(ctx, ns, []string{id})
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, notFound("memory %s not found", id)
	}
	return ms[0], nil
}

// GetMemories returns the memories and chunks with these ids in the order asked, skipping
// missing ones. Once the indexes are loaded it answers from memory without touching SQLite.
func (s *Store) GetMemories(ctx context.Context, ns string, ids []string) ([]*models.Memory, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if s.ready.Load() {
		return s.cachedMemories(ns, ids), nil
	}
	return s.sqlMemories(ctx, ns, ids)
}

// sqlMemories reads memories from SQLite, in the order of ids.
func (s *Store) sqlMemories(ctx context.Context, ns string, ids []string) ([]*models.Memory, error) {
	byID := make(map[string]*models.Memory, len(ids))
	for chunk := range slices.Chunk(slices.Compact(slices.Sorted(slices.Values(ids))), 500) {
		args := append([]any{ns}, anys(chunk)...)
		ms, err := queryMemories(ctx, s.rdb, `SELECT `+memoryColumns+` FROM memories WHERE ns = ? AND id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, wrap(err, "get memories")
		}
		for _, m := range ms {
			byID[m.ID] = m
		}
	}
	out := make([]*models.Memory, 0, len(byID))
	seen := make(map[string]bool, len(byID))
	for _, id := range ids {
		m, ok := byID[id]
		if !ok {
			continue
		}
		if seen[id] { // asked twice: each answer is the caller's own copy
			m = cloneMemory(m)
		}
		seen[id] = true
		out = append(out, m)
	}
	return out, nil
}

// FindMemories lists memories (never chunks) matching f, with the total ignoring Offset and
// Limit. An empty f.Namespace lists every namespace. EINVALID for an unknown kind or sort, a
// negative offset, or a limit over 1000.
func (s *Store) FindMemories(ctx context.Context, f models.MemoryFilter) ([]*models.Memory, int, error) {
	where := []string{"parent_id = ''"}
	var args []any
	if f.Namespace != "" {
		if err := models.ValidateNamespace(f.Namespace); err != nil {
			return nil, 0, err
		}
		where, args = append(where, "ns = ?"), append(args, f.Namespace)
	}
	if len(f.Kinds) > 0 {
		for i, k := range f.Kinds {
			if !k.Valid() {
				return nil, 0, models.Invalid(fmt.Sprintf("kinds[%d]", i), "unknown kind %q", k)
			}
			args = append(args, string(k))
		}
		where = append(where, "kind IN ("+placeholders(len(f.Kinds))+")")
	}
	if f.ConversationID != "" {
		where, args = append(where, "conversation_id = ?"), append(args, f.ConversationID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, filterTime(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, filterTime(f.Until))
	}
	if len(f.IDs) > 0 {
		where = append(where, "id IN ("+placeholders(len(f.IDs))+")")
		args = append(args, anys(f.IDs)...)
	}
	order := "created_at DESC, id DESC"
	switch f.Sort {
	case "", "created_desc":
	case "created_asc":
		order = "created_at ASC, id ASC"
	default:
		return nil, 0, models.Invalid("sort", "sort must be created_desc or created_asc")
	}
	limit := f.Limit
	switch {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > 1000:
		return nil, 0, models.Invalid("limit", "limit must be between 1 and 1000")
	}
	if f.Offset < 0 {
		return nil, 0, models.Invalid("offset", "offset must not be negative")
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM memories WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap(err, "count memories")
	}
	ms, err := queryMemories(ctx, s.rdb, `SELECT `+memoryColumns+` FROM memories WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, limit, f.Offset)...)
	if err != nil {
		return nil, 0, wrap(err, "find memories")
	}
	return ms, total, nil
}

// LastInConversation returns the newest memory (not chunk) of a conversation by CreatedAt
// then id; ENOTFOUND when there is none.
func (s *Store) LastInConversation(ctx context.Context, ns, conversationID string) (*models.Memory, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if conversationID == "" {
		return nil, models.Invalid("conversation_id", "conversation id is required")
	}
	ms, err := queryMemories(ctx, s.rdb, `SELECT `+memoryColumns+` FROM memories
		WHERE ns = ? AND conversation_id = ? AND parent_id = '' ORDER BY created_at DESC, id DESC LIMIT 1`, ns, conversationID)
	if err != nil {
		return nil, wrap(err, "last in conversation")
	}
	if len(ms) == 0 {
		return nil, notFound("conversation %s has no memories", conversationID)
	}
	return ms[0], nil
}

// DeleteMemory removes a memory with its chunks, their vectors and index entries, every edge
// touching any of them, and their resurfacing queue items. Surfacings and events stay: they
// are the engagement history. ENOTFOUND when missing; EINVALID for a chunk's id (delete the
// parent).
func (s *Store) DeleteMemory(ctx context.Context, ns, id string) error {
	if err := models.ValidateNamespace(ns); err != nil {
		return err
	}
	if err := validateID(id, "id"); err != nil {
		return err
	}
	return s.write(ctx, "delete memory", func(tx *sql.Tx) (func(), error) {
		var parent string
		err := tx.QueryRowContext(ctx, `SELECT parent_id FROM memories WHERE ns = ? AND id = ?`, ns, id).Scan(&parent)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("memory %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		if parent != "" {
			return nil, models.Invalid("id", "%s is a chunk of %s; delete the parent", id, parent)
		}
		ids := []string{id}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM memories WHERE ns = ? AND parent_id = ?`, ns, id)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, err
			}
			ids = append(ids, c)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
		in := placeholders(len(ids))
		idArgs := anys(ids)
		rows, err = tx.QueryContext(ctx, `DELETE FROM edges WHERE ns = ? AND (src IN (`+in+`) OR dst IN (`+in+`)) RETURNING src, dst, type`,
			append(append([]any{ns}, idArgs...), idArgs...)...)
		if err != nil {
			return nil, err
		}
		var keys []models.EdgeKey
		for rows.Next() {
			var k models.EdgeKey
			if err := rows.Scan(&k.From, &k.To, &k.Type); err != nil {
				rows.Close()
				return nil, err
			}
			keys = append(keys, k)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE ns = ? AND memory_id IN (`+in+`)`, append([]any{ns}, idArgs...)...); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE ns = ? AND id IN (`+in+`)`, append([]any{ns}, idArgs...)...); err != nil {
			return nil, err
		}
		return func() { s.applyDelete(ns, ids, keys) }, nil
	})
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// hasControl reports whether s holds an ASCII control character (the rebuild packs edge
// fields with one as separator).
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
