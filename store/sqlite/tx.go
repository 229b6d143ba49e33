package sqlite

import (
	"context"
	"errors"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/memindex"
)

// Update runs fn in one write transaction and commits when fn returns nil. Writers are
// serialized (one write connection behind a mutex), so updates are serializable: concurrent
// callers never lose each other's writes. After the commit the changed memories and edges are
// applied to the in-memory caches and adjacency. fn must not call the Store itself (it would
// wait for its own lock) and must not keep the Tx.
func (s *Store) Update(ctx context.Context, fn func(tx models.Tx) error) error {
	var t *storeTx
	err := s.write(ctx, "update", func(tx *wtx) (func(), error) {
		t = &storeTx{s: s, ctx: ctx, tx: tx,
			mems: map[[2]string]*models.Memory{}, edges: map[edgeID]*models.Edge{}, edits: map[[2]string]*models.Memory{}}
		err := fn(t)
		t.done = true
		if err != nil {
			return nil, err
		}
		return func() {
			ms := make([]*models.Memory, 0, len(t.mems))
			for _, m := range t.mems {
				ms = append(ms, m)
			}
			es := make([]*models.Edge, 0, len(t.edges))
			for _, e := range t.edges {
				es = append(es, e)
			}
			s.mem.Meta(ms, es)
			for _, m := range t.edits {
				s.mem.Edit(m)
			}
		}, nil
	})
	if t != nil {
		t.done = true
	}
	return err
}

type edgeID struct {
	ns string
	k  models.EdgeKey
}

// storeTx implements models.Tx over one SQL transaction. It remembers the memories and edges
// written so they reach the in-memory state after the commit.
type storeTx struct {
	s     *Store
	ctx   context.Context
	tx    *wtx
	done  bool
	mems  map[[2]string]*models.Memory
	edges map[edgeID]*models.Edge
	edits map[[2]string]*models.Memory // EditMemory's, by parent: laid over its chunks too
	seqs  map[string]int64             // the last event Seq of each namespace this transaction logged
}

var errTxDone = models.Errorf(models.EINTERNAL, "transaction used after Update returned")

// use fails once Update has returned; with fold it first folds the stored surfacings into
// the counters (surfaced.go), which anything reading or writing memory rows or surfacings
// needs whole.
func (t *storeTx) use(fold bool) error {
	if t.done {
		return errTxDone
	}
	if fold {
		return t.tx.foldIfNeeded(t.ctx)
	}
	return nil
}

func (t *storeTx) GetMemory(ns, id string) (*models.Memory, error) {
	if err := t.use(true); err != nil {
		return nil, err
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	if m, ok := t.cachedMemory(ns, id); ok {
		return m, nil
	}
	m, err := scanMemory(t.tx.QueryRowContext(t.ctx, selectMemory, ns, id))
	if errors.Is(err, errNoRows) {
		return nil, notFound("memory %s not found", id)
	}
	return m, wrap(err, "get memory")
}

// The transaction reads memories and edges from the in-memory cache and graph once the
// indexes are loaded (engagement reads hundreds per transaction). That is exact: every
// commit and the cache update that follows it happen under the write mutex this transaction
// holds, so the cache equals the database as of the transaction's start, and the
// transaction's own writes (t.mems, t.edges) are laid over it. Before the indexes are
// loaded, and for a memory the cache does not hold, SQL answers.

// cachedMemory answers GetMemory from the cache; false when it cannot.
func (t *storeTx) cachedMemory(ns, id string) (*models.Memory, bool) {
	if !t.s.ready.Load() {
		return nil, false
	}
	sp, err := t.s.spaceHeld(t.ctx, ns, t.tx)
	if err != nil {
		return nil, false // SQL answers, or fails with the error
	}
	ms := sp.Memories([]string{id})
	if len(ms) == 0 {
		return nil, false
	}
	m := ms[0]
	if w, ok := t.mems[[2]string{ns, id}]; ok {
		memindex.SetMeta(m, w)
	}
	parent := id
	if p, ok := ids.Parent(id); ok {
		parent = p
	}
	if e, ok := t.edits[[2]string{ns, parent}]; ok {
		memindex.SetEdit(m, e)
	}
	return m, true
}

func (t *storeTx) PutMemory(m *models.Memory) error {
	if err := t.use(true); err != nil {
		return err
	}
	if err := models.ValidateStoredMeta(m); err != nil {
		return err
	}
	n, err := t.tx.ExecContext(t.ctx, updateMemoryMeta.sql, updateMemoryMeta.bind(&memoryRow{m: *m})...)
	if err != nil {
		return wrap(err, "put memory")
	}
	if n == 0 {
		return notFound("memory %s not found", m.ID)
	}
	if err := putSurfaced(t.ctx, t.tx, m); err != nil {
		return wrap(err, "put memory")
	}
	c := &models.Memory{Namespace: m.Namespace, ID: m.ID}
	memindex.SetMeta(c, m)
	t.mems[[2]string{m.Namespace, m.ID}] = c
	return nil
}

// editMemory writes the editable fields of a memory and of its chunks (their parent_id).
const editMemory = `UPDATE memories SET importance = ?, valid_at = ?, invalid_at = ?, sensitive = ?
	WHERE ns = ? AND (id = ? OR parent_id = ?)`

func (t *storeTx) EditMemory(m *models.Memory) error {
	if err := models.ValidateStoredEdit(m); err != nil {
		return err
	}
	if err := t.use(true); err != nil {
		return err
	}
	n, err := t.tx.ExecContext(t.ctx, editMemory, m.Importance, encTime(m.ValidAt), encTime(m.InvalidAt), boolInt(m.Sensitive),
		m.Namespace, m.ID, m.ID)
	if err != nil {
		return wrap(err, "edit memory")
	}
	if n == 0 {
		return notFound("memory %s not found", m.ID)
	}
	e := &models.Memory{Namespace: m.Namespace, ID: m.ID}
	memindex.SetEdit(e, m)
	t.edits[[2]string{m.Namespace, m.ID}] = e
	return nil
}

func (t *storeTx) GetEdge(ns string, k models.EdgeKey) (*models.Edge, error) {
	if t.done {
		return nil, errTxDone
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if t.s.ready.Load() {
		if e, ok := t.edges[edgeID{ns, k}]; ok {
			c := *e
			return &c, nil
		}
		sp, err := t.s.spaceHeld(t.ctx, ns, t.tx)
		if err != nil {
			return nil, err
		}
		if sp != nil {
			g := sp.Graph()
			if e, ok := g.Get(k); ok {
				return e, nil
			}
		}
		return nil, notFound("edge %s -%s-> %s not found", k.From, k.Type, k.To)
	}
	e, err := scanEdge(t.tx.QueryRowContext(t.ctx, selectEdge,
		ns, k.From, k.To, string(k.Type)))
	if errors.Is(err, errNoRows) {
		return nil, notFound("edge %s -%s-> %s not found", k.From, k.Type, k.To)
	}
	return e, wrap(err, "get edge")
}

func (t *storeTx) PutEdge(e *models.Edge) error { return t.PutEdges([]*models.Edge{e}) }

// PutEdges creates or replaces each edge, in order: later edges win over earlier ones with
// the same key. Nothing is written when an edge is invalid.
func (t *storeTx) PutEdges(es []*models.Edge) error {
	if t.done {
		return errTxDone
	}
	cs := make([]*models.Edge, len(es))
	for i, e := range es {
		c, err := models.ValidatePutEdge(e)
		if err != nil {
			return err
		}
		cs[i] = c
	}
	for _, c := range cs {
		if _, err := t.tx.ExecContext(t.ctx, upsertEdge.sql, upsertEdge.bind(c)...); err != nil {
			return wrap(err, "put edges")
		}
	}
	for _, c := range cs {
		t.edges[edgeID{c.Namespace, c.Key()}] = c
	}
	return nil
}

func (t *storeTx) GetSurfacing(ns, id string) (*models.Surfacing, error) {
	if err := t.use(true); err != nil {
		return nil, err
	}
	return getSurfacing(t.ctx, t.tx, ns, id)
}

// GetSurfacings returns the surfacings of namespace ns with the given ids that exist, in no
// particular order, in one statement (engagement reads every surfacing a batch reports on
// before applying it).
func (t *storeTx) GetSurfacings(ns string, ids []string) ([]*models.Surfacing, error) {
	if err := t.use(true); err != nil {
		return nil, err
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	return queryAll(t.ctx, t.tx, "get surfacings", surfacingRows.sel+` WHERE ns = ? AND id IN `+inList,
		[]any{ns, jsonList(ids)}, scanSurfacing)
}

func (t *storeTx) PutSurfacing(sf *models.Surfacing) error {
	if err := t.use(true); err != nil {
		return err
	}
	if err := models.ValidateStoredSurfacing(sf, "surfacing"); err != nil {
		return err
	}
	old, err := tallyOutcomeBefore(t.ctx, t.tx, sf) // the experiment counters (experiment_tally.go)
	if err != nil {
		return err
	}
	// The outcome first (see updateSurfacingOutcome), every column when no row matched.
	n, err := t.tx.ExecContext(t.ctx, updateSurfacingOutcome.sql, updateSurfacingOutcome.bind(sf)...)
	if err == nil && n == 0 {
		n, err = t.tx.ExecContext(t.ctx, updateSurfacing.sql, updateSurfacing.bind(sf)...)
	}
	if err != nil {
		return wrap(err, "put surfacing")
	}
	if n == 0 {
		return notFound("surfacing %s not found", sf.ID)
	}
	return tallyOutcome(t.ctx, t.tx, old, sf)
}

func (t *storeTx) FindSurfacings(f models.SurfacingFilter) ([]*models.Surfacing, error) {
	if err := t.use(true); err != nil {
		return nil, err
	}
	return findSurfacings(t.ctx, t.tx, f)
}

func (t *storeTx) InsertEvent(e *models.Event) error {
	if err := t.use(true); err != nil {
		return err
	}
	if err := models.ValidateStoredEvent(e); err != nil {
		return err
	}
	last, ok := t.seqs[e.Namespace]
	if !ok {
		if err := t.tx.QueryRowContext(t.ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE ns = ?`, e.Namespace).Scan(&last); err != nil {
			return wrap(err, "insert event")
		}
	}
	e.Seq = last + 1
	_, err := t.tx.ExecContext(t.ctx, insertEvent.sql, insertEvent.bind(e)...)
	if isConstraintUnique(err) {
		e.Seq = 0
		return models.Errorf(models.EDUPLICATE, "event %s was already recorded", e.ID)
	}
	if err != nil {
		e.Seq = 0
		return wrap(err, "insert event")
	}
	if t.seqs == nil {
		t.seqs = map[string]int64{}
	}
	t.seqs[e.Namespace] = e.Seq
	return nil
}

func (t *storeTx) GetEvent(ns, id string) (*models.Event, error) {
	if err := t.use(true); err != nil {
		return nil, err
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	e, err := scanEvent(t.tx.QueryRowContext(t.ctx, selectEvent, ns, id))
	if errors.Is(err, errNoRows) {
		return nil, notFound("event %s not found", id)
	}
	return e, wrap(err, "get event")
}

func (t *storeTx) GetState(key string) (string, error) {
	if t.done {
		return "", errTxDone
	}
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	var v string
	err := t.tx.QueryRowContext(t.ctx, `SELECT value FROM state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, errNoRows) {
		return "", nil
	}
	return v, wrap(err, "get state")
}

func (t *storeTx) SetState(key, value string) error {
	if t.done {
		return errTxDone
	}
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	return wrap(t.tx.putState(t.ctx, key, value), "set state")
}
