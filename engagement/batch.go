package engagement

import (
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// maxTurnSurfacings bounds the surfacings read to find a turn's used memories; recall
// returns at most 100 per call, so one turn never holds more unless a client reuses turn ids.
const maxTurnSurfacings = 1000

// batch caches the memories, edges and surfacings one transaction reads and changes, so
// what several events of a batch touch is read and written once: bots report a turn's
// surfacings together, and every event of a turn needs the turn. Everything the batch
// changes is written by flush; until then the batch's copies are the truth.
type batch struct {
	tx    models.Tx
	ns    string
	mems  map[string]*models.Memory
	edges map[models.EdgeKey]*models.Edge
	surfs map[string]*models.Surfacing
	turns map[[2]string][]*models.Surfacing // (conversation, turn) → every surfacing of the turn, brief, as read
	// What changed, in the order it first changed, so writes are deterministic.
	memOrder  []string
	memDirty  map[string]bool
	edgeOrder []models.EdgeKey
	edgeDirty map[models.EdgeKey]bool
	surfOrder []string
	surfDirty map[string]bool
	// The namespace's relevance model, read at its first event and written by flush.
	model      *learn.Model
	modelDirty bool
}

func newBatch(tx models.Tx, ns string) *batch {
	return &batch{tx: tx, ns: ns, mems: map[string]*models.Memory{}, edges: map[models.EdgeKey]*models.Edge{},
		surfs: map[string]*models.Surfacing{}, turns: map[[2]string][]*models.Surfacing{},
		memDirty: map[string]bool{}, edgeDirty: map[models.EdgeKey]bool{}, surfDirty: map[string]bool{}}
}

// surfacing returns the batch's copy of a surfacing; ENOTFOUND when missing.
func (b *batch) surfacing(id string) (*models.Surfacing, error) {
	if sf, ok := b.surfs[id]; ok {
		return sf, nil
	}
	sf, err := b.tx.GetSurfacing(b.ns, id)
	if err != nil {
		return nil, err
	}
	b.surfs[id] = sf
	return sf, nil
}

// surfacingsGetter is a transaction that reads many surfacings at once (the SQLite store).
type surfacingsGetter interface {
	GetSurfacings(ns string, ids []string) ([]*models.Surfacing, error)
}

// prefetch reads into the batch, in a few statements, the surfacings the events name by id
// that it does not hold yet; surfacing then finds them without a query each. Ids that do not
// exist are left for surfacing to reject.
func (b *batch) prefetch(events []*models.Event) error {
	g, ok := b.tx.(surfacingsGetter)
	if !ok {
		return nil
	}
	var ids []string
	seen := map[string]bool{}
	for _, ev := range events {
		if ev == nil || ev.SurfacingID == "" || seen[ev.SurfacingID] {
			continue
		}
		if _, have := b.surfs[ev.SurfacingID]; !have {
			seen[ev.SurfacingID] = true
			ids = append(ids, ev.SurfacingID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ss, err := g.GetSurfacings(b.ns, ids)
	if err != nil {
		return err
	}
	for _, sf := range ss {
		b.keepSurfacing(sf)
	}
	return nil
}

// keepSurfacing returns the batch's copy of a surfacing just read, adopting sf when the
// batch has none (a copy it already has may carry an outcome not yet written).
func (b *batch) keepSurfacing(sf *models.Surfacing) *models.Surfacing {
	if have, ok := b.surfs[sf.ID]; ok {
		return have
	}
	b.surfs[sf.ID] = sf
	return sf
}

// turn returns every surfacing of a turn as the batch sees it: the batch's copy where it has
// one (it may carry an outcome not yet written), else the row as read. The rows are read
// Brief — the turn is only asked which memories it holds and their outcomes — and the brief
// rows are never adopted as the batch's copies (surfacing reads a whole row when an event
// needs one), so no write-back ever sees their zeroed fields.
func (b *batch) turn(conv, turn string) ([]*models.Surfacing, error) {
	k := [2]string{conv, turn}
	ss, ok := b.turns[k]
	if !ok {
		var err error
		ss, err = b.tx.FindSurfacings(models.SurfacingFilter{Namespace: b.ns, ConversationID: conv, TurnID: turn,
			Limit: maxTurnSurfacings, Brief: true})
		if err != nil {
			return nil, err
		}
		b.turns[k] = ss
	}
	out := make([]*models.Surfacing, len(ss))
	for i, sf := range ss {
		if have, ok := b.surfs[sf.ID]; ok {
			sf = have
		}
		out[i] = sf
	}
	return out, nil
}

// touchSurfacing marks a surfacing returned by the batch as changed.
func (b *batch) touchSurfacing(sf *models.Surfacing) {
	if !b.surfDirty[sf.ID] {
		b.surfDirty[sf.ID] = true
		b.surfOrder = append(b.surfOrder, sf.ID)
	}
}

// memory returns the batch's copy of a memory; ENOTFOUND when missing.
func (b *batch) memory(id string) (*models.Memory, error) {
	if m, ok := b.mems[id]; ok {
		return m, nil
	}
	m, err := b.tx.GetMemory(b.ns, id)
	if err != nil {
		return nil, err
	}
	m.Embedding = nil // never written back here; no need to keep it
	b.mems[id] = m
	return m, nil
}

// touchMemory marks a memory returned by memory as changed.
func (b *batch) touchMemory(m *models.Memory) {
	if !b.memDirty[m.ID] {
		b.memDirty[m.ID] = true
		b.memOrder = append(b.memOrder, m.ID)
	}
}

// edge returns the batch's view of an edge: the edge and true, or an edge carrying only its
// identity and false when it does not exist yet.
func (b *batch) edge(k models.EdgeKey) (*models.Edge, bool, error) {
	if e, ok := b.edges[k]; ok {
		return e, true, nil
	}
	e, err := b.tx.GetEdge(b.ns, k)
	switch {
	case models.ErrorCode(err) == models.ENOTFOUND:
		return &models.Edge{Namespace: b.ns, From: k.From, To: k.To, Type: k.Type}, false, nil
	case err != nil:
		return nil, false, err
	}
	b.edges[k] = e
	return e, true, nil
}

func (b *batch) putEdge(e *models.Edge) {
	k := e.Key()
	if !b.edgeDirty[k] {
		b.edgeDirty[k] = true
		b.edgeOrder = append(b.edgeOrder, k)
	}
	b.edges[k] = e
}

// train updates the namespace's relevance model with one applied event on sf, loading the
// model at the batch's first event: per batch or per event, the updates are the same
// sequence, so the stored model equals the per-event one.
func (b *batch) train(cfg learn.Config, sf *models.Surfacing, ev *models.Event) error {
	if b.model == nil {
		s, err := b.tx.GetState(learn.Key(b.ns))
		if err != nil {
			return err
		}
		if b.model, err = learn.Decode(s, cfg); err != nil {
			return models.Errorf(models.EINTERNAL, "%v", err)
		}
	}
	if trains(sf) {
		x := learn.Features(&sf.Components)
		b.model.Update(cfg, &x, learn.Label(ev.Type))
	}
	b.model.Seq = ev.Seq
	b.modelDirty = true
	return nil
}

// trains reports whether an event on sf teaches the relevance model. A proactive
// prediction (mode predict) was not ranked: its components carry no match to the turn, so
// its use says nothing about how relevance, text and vector scores predict use, and would
// only pull those weights down. Its outcome still moves the memory and, through the usage
// patterns, the predictions.
//
// A surfacing recorded for another feature set (learn.Trains) does not train either.
func trains(sf *models.Surfacing) bool {
	return sf.Mode != models.ModePredict && learn.Trains(&sf.Components)
}

// edgesPutter is a transaction that writes many edges at once, as PutEdge one by one would
// (the SQLite store, in multi-row statements).
type edgesPutter interface {
	PutEdges(es []*models.Edge) error
}

// flush writes the changed memories, edges and surfacings, in the order they were first
// changed, and the model.
func (b *batch) flush() error {
	if b.modelDirty {
		if err := b.tx.SetState(learn.Key(b.ns), learn.Encode(b.model)); err != nil {
			return err
		}
	}
	for _, id := range b.memOrder {
		if err := b.tx.PutMemory(b.mems[id]); err != nil {
			return err
		}
	}
	if pe, ok := b.tx.(edgesPutter); ok {
		es := make([]*models.Edge, len(b.edgeOrder))
		for i, k := range b.edgeOrder {
			es[i] = b.edges[k]
		}
		if err := pe.PutEdges(es); err != nil {
			return err
		}
	} else {
		for _, k := range b.edgeOrder {
			if err := b.tx.PutEdge(b.edges[k]); err != nil {
				return err
			}
		}
	}
	for _, id := range b.surfOrder {
		if err := b.tx.PutSurfacing(b.surfs[id]); err != nil {
			return err
		}
	}
	return nil
}
