package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// Update runs fn in one managed write transaction and commits when it returns nil.
//
// Serializable read-modify-write on a database that reads without locks: the first call of
// a namespace in the transaction takes that namespace's update lock (a write to its
// :UpdateLock node, held to commit), so Updates of one namespace run one at a time, across
// every replica; and each Get also write-locks what it read, so RecordSurfacings' counters
// cannot slip in between a Get and its Put. A deadlock with another writer is a transient
// error: the driver rolls back and runs fn again, which is why fn must be safe to re-run.
func (s *Store) Update(ctx context.Context, fn func(tx models.Tx) error) error {
	return s.write(ctx, "update", func(ntx neo4j.ManagedTransaction) error {
		t := &storeTx{ctx: ctx, tx: ntx, locked: map[string]bool{}}
		err := fn(t)
		t.done = true
		return err
	})
}

type storeTx struct {
	ctx    context.Context
	tx     neo4j.ManagedTransaction
	locked map[string]bool  // namespaces whose update lock this transaction holds
	seqs   map[string]int64 // the last event Seq of each namespace this transaction logged
	done   bool
}

var errTxDone = models.Errorf(models.EINTERNAL, "transaction used after Update returned")

const lockNamespace = `MERGE (l:UpdateLock {ns: $ns}) SET l.n = coalesce(l.n, 0) + 1`

// lock takes ns's update lock once per transaction.
func (t *storeTx) lock(ns string) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateNamespace(ns); err != nil {
		return err
	}
	if t.locked[ns] {
		return nil
	}
	if err := exec(t.ctx, t.tx, lockNamespace, map[string]any{"ns": ns}); err != nil {
		return err
	}
	t.locked[ns] = true
	return nil
}

// wrap gives a driver error its models code but keeps it in the chain, so the driver still
// sees a transient error and retries the transaction.
func (t *storeTx) wrap(err error, what string) error { return translate(err, what) }

const txGetMemory = `MATCH (m:Memory {ns: $ns, id: $id}) SET m.lk = NOT coalesce(m.lk, false) RETURN` + memoryReturn

func (t *storeTx) GetMemory(ns, id string) (*models.Memory, error) {
	if err := t.lock(ns); err != nil {
		return nil, t.wrap(err, "get memory")
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	recs, err := collect(t.ctx, t.tx, txGetMemory, map[string]any{"ns": ns, "id": id})
	if err != nil {
		return nil, t.wrap(err, "get memory")
	}
	ms, err := memoryRecords(recs)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, notFound("memory %s not found", id)
	}
	return ms[0], nil
}

const txPutMemory = `MATCH (m:Memory {ns: $ns, id: $id}) SET m += $meta RETURN count(m) AS n`

func (t *storeTx) PutMemory(m *models.Memory) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateStoredMeta(m); err != nil {
		return err
	}
	if err := t.lock(m.Namespace); err != nil {
		return t.wrap(err, "put memory")
	}
	recs, err := collect(t.ctx, t.tx, txPutMemory, map[string]any{"ns": m.Namespace, "id": m.ID, "meta": metaProps(m)})
	if err != nil {
		return t.wrap(err, "put memory")
	}
	if n, _ := recs[0].Values[0].(int64); n == 0 {
		return notFound("memory %s not found", m.ID)
	}
	return nil
}

// txEditMemory writes the editable fields to a memory and to its chunks (salience_memory_parent).
const txEditMemory = `MATCH (m:Memory {ns: $ns, id: $id}) SET m += $edit
	WITH m OPTIONAL MATCH (c:Memory {ns: $ns, parent: $id}) SET c += $edit
	RETURN count(DISTINCT m) AS n`

func (t *storeTx) EditMemory(m *models.Memory) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateStoredEdit(m); err != nil {
		return err
	}
	if err := t.lock(m.Namespace); err != nil {
		return t.wrap(err, "edit memory")
	}
	recs, err := collect(t.ctx, t.tx, txEditMemory, map[string]any{"ns": m.Namespace, "id": m.ID, "edit": editProps(m)})
	if err != nil {
		return t.wrap(err, "edit memory")
	}
	if n, _ := recs[0].Values[0].(int64); n == 0 {
		return notFound("memory %s not found", m.ID)
	}
	return nil
}

const (
	txGetEdge = `MATCH (a:Node {ns: $ns, id: $from})-[r:$($rt) {type: $type}]->(b:Node {ns: $ns, id: $to})
		SET r.lk = NOT coalesce(r.lk, false)
		RETURN a.id AS from, b.id AS to, r {.*, lk: null} AS r`
	txPutEdge = `MERGE (a:Node {ns: $ns, id: $from})
		MERGE (b:Node {ns: $ns, id: $to})
		MERGE (a)-[r:$($rt) {type: $type}]->(b)
		ON CREATE SET r.key = [$from, $to, $type]
		SET r += $p`
)

func (t *storeTx) GetEdge(ns string, k models.EdgeKey) (*models.Edge, error) {
	if err := t.lock(ns); err != nil {
		return nil, t.wrap(err, "get edge")
	}
	recs, err := collect(t.ctx, t.tx, txGetEdge, map[string]any{"ns": ns, "from": k.From, "to": k.To,
		"rt": relType(k.Type), "type": string(k.Type)})
	if err != nil {
		return nil, t.wrap(err, "get edge")
	}
	es, err := edgeRows(ns, recs)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, notFound("edge %s -%s-> %s not found", k.From, k.Type, k.To)
	}
	return es[0], nil
}

func (t *storeTx) PutEdge(e *models.Edge) error {
	if t.done {
		return errTxDone
	}
	c, err := models.ValidatePutEdge(e)
	if err != nil {
		return err
	}
	if err := t.lock(c.Namespace); err != nil {
		return t.wrap(err, "put edge")
	}
	cs, err := execCount(t.ctx, t.tx, txPutEdge, map[string]any{"ns": c.Namespace, "from": c.From, "to": c.To,
		"rt": relType(c.Type), "type": string(c.Type), "p": edgeProps(c)})
	if err != nil {
		return t.wrap(err, "put edge")
	}
	if n := cs.RelationshipsCreated(); n > 0 {
		err = exec(t.ctx, t.tx, countSpace, map[string]any{"ns": c.Namespace, "dims": int64(0), "mems": int64(0),
			"concepts": int64(0), "edges": int64(n)})
	}
	return t.wrap(err, "put edge")
}

const (
	txGetSurfacing = `MATCH (s:Surfacing {ns: $ns, id: $id}) SET s.lk = NOT coalesce(s.lk, false) RETURN` + surfacingReturn
	txPutSurfacing = `MATCH (s:Surfacing {ns: $ns, id: $id}) SET s += $p RETURN count(s) AS n`
)

func (t *storeTx) GetSurfacing(ns, id string) (*models.Surfacing, error) {
	if err := t.lock(ns); err != nil {
		return nil, t.wrap(err, "get surfacing")
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	recs, err := collect(t.ctx, t.tx, txGetSurfacing, map[string]any{"ns": ns, "id": id})
	if err != nil {
		return nil, t.wrap(err, "get surfacing")
	}
	out, err := surfacingRecords(recs)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, notFound("surfacing %s not found", id)
	}
	return out[0], nil
}

func (t *storeTx) PutSurfacing(sf *models.Surfacing) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateStoredSurfacing(sf, "surfacing"); err != nil {
		return err
	}
	if err := t.lock(sf.Namespace); err != nil {
		return t.wrap(err, "put surfacing")
	}
	recs, err := collect(t.ctx, t.tx, txPutSurfacing, map[string]any{"ns": sf.Namespace, "id": sf.ID, "p": surfacingProps(sf)})
	if err != nil {
		return t.wrap(err, "put surfacing")
	}
	if n, _ := recs[0].Values[0].(int64); n == 0 {
		return notFound("surfacing %s not found", sf.ID)
	}
	return nil
}

func (t *storeTx) FindSurfacings(f models.SurfacingFilter) ([]*models.Surfacing, error) {
	if t.done {
		return nil, errTxDone
	}
	out, err := findSurfacings(t.ctx, t.tx, f)
	return out, t.wrap(err, "find surfacings")
}

const (
	txEventExists = `MATCH (e:Event {ns: $ns, id: $id}) RETURN count(e) AS n`
	txGetEvent    = `MATCH (e:Event {ns: $ns, id: $id}) RETURN e {.*} AS e`
	txInsertEvent = `CREATE (e:Event) SET e = $p`
	txLastSeq     = `MATCH (e:Event {ns: $ns}) RETURN coalesce(max(e.seq), 0) AS n`
	// txGetState write-locks the state node it reads, as the other Gets do, so a
	// read-modify-write of a key (the relevance model) cannot lose a concurrent one.
	txGetState = `MERGE (s:State {key: $key}) SET s.lk = NOT coalesce(s.lk, false) RETURN s.value AS value`
)

// GetEvent reads an event under the namespace's update lock, as InsertEvent checks for one.
func (t *storeTx) GetEvent(ns, id string) (*models.Event, error) {
	if t.done {
		return nil, errTxDone
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	if err := t.lock(ns); err != nil {
		return nil, t.wrap(err, "get event")
	}
	recs, err := collect(t.ctx, t.tx, txGetEvent, map[string]any{"ns": ns, "id": id})
	if err != nil {
		return nil, t.wrap(err, "get event")
	}
	if len(recs) == 0 {
		return nil, notFound("event %s not found", id)
	}
	return decEvent(recs[0].Values[0])
}

// InsertEvent appends an event; EDUPLICATE when its id exists in the namespace. The check
// runs under the namespace's update lock, so a concurrent replay waits for the first
// insert to commit and then sees it; the transaction stays usable either way.
func (t *storeTx) InsertEvent(e *models.Event) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateStoredEvent(e); err != nil {
		return err
	}
	if err := t.lock(e.Namespace); err != nil {
		return t.wrap(err, "insert event")
	}
	recs, err := collect(t.ctx, t.tx, txEventExists, map[string]any{"ns": e.Namespace, "id": e.ID})
	if err != nil {
		return t.wrap(err, "insert event")
	}
	if n, _ := recs[0].Values[0].(int64); n > 0 {
		return models.Errorf(models.EDUPLICATE, "event %s was already recorded", e.ID)
	}
	// The namespace's update lock, held to commit, makes max + 1 the next number.
	last, ok := t.seqs[e.Namespace]
	if !ok {
		recs, err := collect(t.ctx, t.tx, txLastSeq, map[string]any{"ns": e.Namespace})
		if err != nil {
			return t.wrap(err, "insert event")
		}
		last, _ = recs[0].Values[0].(int64)
	}
	e.Seq = last + 1
	if err := exec(t.ctx, t.tx, txInsertEvent, map[string]any{"p": eventProps(e)}); err != nil {
		e.Seq = 0
		return t.wrap(err, "insert event")
	}
	if t.seqs == nil {
		t.seqs = map[string]int64{}
	}
	t.seqs[e.Namespace] = e.Seq
	return nil
}

// GetState and SetState read and write the store's state inside the transaction.
func (t *storeTx) GetState(key string) (string, error) {
	if t.done {
		return "", errTxDone
	}
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	recs, err := collect(t.ctx, t.tx, txGetState, map[string]any{"key": key})
	if err != nil {
		return "", t.wrap(err, "get state")
	}
	v := ""
	if len(recs) > 0 {
		v, _ = recs[0].Values[0].(string)
	}
	return v, nil
}

func (t *storeTx) SetState(key, value string) error {
	if t.done {
		return errTxDone
	}
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	return t.wrap(exec(t.ctx, t.tx, setState, map[string]any{"key": key, "value": value}), "set state")
}
