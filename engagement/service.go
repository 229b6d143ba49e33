package engagement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
)

// DefaultMaxSkew is how far in the future an event's time may lie: bots' clocks drift a
// little, but a report about the future is a bug on the caller's side.
const DefaultMaxSkew = 5 * time.Minute

// minEventTime is the earliest event time accepted; anything before it is a zero or garbage
// timestamp from the client, not a report.
var minEventTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// maxTurnSurfacings bounds the surfacings read to find a turn's used memories; recall
// returns at most 100 per call, so one turn never holds more unless a client reuses turn ids.
const maxTurnSurfacings = 1000

// ServiceOptions configure a Service; zero values take the defaults.
type ServiceOptions struct {
	// Rules are the learning rules; the zero value means DefaultRules().
	Rules Rules
	// Policy returns a namespace's decay policy; nil means the default policy (FSRS) for all.
	Policy func(ns string) decay.Policy
	// Now is the clock for events without a time and for the future-skew check; nil = time.Now.
	Now func() time.Time
	// MaxSkew is how far ahead of Now an event's time may be; 0 means DefaultMaxSkew.
	MaxSkew time.Duration
}

// Service applies engagement events (DESIGN §5): it validates each event, appends it to the
// log and moves the memory, its decay schedule, the graph's edges and the surfacing's
// outcome, all of a batch in one store transaction (shared with the batches that arrive
// meanwhile: group commit). It is safe for concurrent use; the store serializes the
// transactions, so concurrent reporters never lose an update.
type Service struct {
	store   models.Store
	rules   Rules
	policy  func(ns string) decay.Policy
	now     func() time.Time
	maxSkew time.Duration

	mu      sync.Mutex
	queue   []*request // waiting for the next group transaction
	writing bool       // a group is being written; its writer hands over to queue[0]
}

// NewService returns a Service over store.
func NewService(store models.Store, opts ServiceOptions) *Service {
	s := &Service{store: store, rules: opts.Rules, policy: opts.Policy, now: opts.Now, maxSkew: opts.MaxSkew}
	if s.rules == (Rules{}) {
		s.rules = DefaultRules()
	}
	if s.policy == nil {
		p, err := decay.PolicyByName(decay.DefaultPolicy)
		if err != nil {
			panic(err) // the default policy always exists
		}
		s.policy = func(string) decay.Policy { return p }
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxSkew <= 0 {
		s.maxSkew = DefaultMaxSkew
	}
	return s
}

// Status is what became of one event of a batch.
type Status string

// Statuses of an event.
const (
	StatusApplied   Status = "applied"   // logged and applied
	StatusDuplicate Status = "duplicate" // its id was already logged: an idempotent replay, nothing changed
	StatusRejected  Status = "rejected"  // invalid or pointing at nothing; nothing changed, Err says why
)

// EventResult is the outcome of one event, in the order of the batch.
type EventResult struct {
	ID     string
	Status Status
	// Err is set for rejected events: code EINVALID or ENOTFOUND, with Field naming the
	// event's field as "events[i].field".
	Err *models.Error
}

// BatchResult is the outcome of a batch: one result per event, in order, and the counts.
type BatchResult struct {
	Applied, Duplicates, Rejected int
	Results                       []EventResult
}

// Apply validates and applies a batch of events reported in namespace ns. Each event:
//   - needs an id (≤ 200 bytes, the idempotency key), a type (used, helpful, ignored,
//     dismissed), and a surfacing_id or else memory_id with conversation_id; a memory_id or
//     conversation_id given beside a surfacing_id must match the surfacing's; a chunk's id
//     stands for its memory;
//   - at zero means now; more than MaxSkew ahead of now, or before 1970, is rejected;
//   - at most 64 concepts, each non-empty UTF-8 of at most 200 bytes.
//
// An invalid event is rejected (EINVALID naming "events[i].field"); an unknown surfacing
// id, one of another namespace, or a memory that does not exist, is rejected with
// ENOTFOUND. Rejected events change nothing; the others are applied atomically, in one
// transaction (which may also carry concurrent batches applied before or after this one):
//  1. the event is appended to the log, carrying the resolved surfacing (for the
//     memory+conversation form: the memory's latest surfacing in that conversation, if any)
//     and memory ids; an id already logged reports StatusDuplicate and changes nothing else;
//  2. the memory's confidence and counters move (Rules.ApplyToMemory) with the event's
//     concepts or, when it has none, the surfacing's context concepts, then its schedule
//     (the namespace's decay policy, OnEvent);
//  3. a positive event strengthens memory→concept edges for those concepts and, the first
//     time a surfacing turns positive, co_retrieved edges to the memories of the same turn
//     whose surfacings were already used or helpful, so each pair counts once per turn;
//  4. the surfacing's outcome becomes the event unless a later event already set it.
//
// The whole call fails (nothing applied) only for a bad namespace (EINVALID "namespace"),
// an empty batch or one over models.MaxBatch (EINVALID "events"), or a store failure.
func (s *Service) Apply(ctx context.Context, ns string, events []*models.Event) (*BatchResult, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	switch n := len(events); {
	case n == 0:
		return nil, models.Invalid("events", "no events given: the batch is empty")
	case n > models.MaxBatch:
		return nil, models.Invalid("events", "%d events in one batch, over the limit of %d", n, models.MaxBatch)
	}
	now := s.now().UTC()
	checked := make([]*models.Event, len(events))
	early := make([]*models.Error, len(events))
	pending := 0
	for i, e := range events {
		ev, err := s.check(ns, e, now)
		if err != nil {
			early[i] = asError(models.WithFieldPrefix(err, fmt.Sprintf("events[%d].", i)))
			continue
		}
		checked[i] = ev
		pending++
	}

	res := &BatchResult{Results: make([]EventResult, len(events))}
	if pending > 0 {
		// The policy is resolved here, not inside the transaction: it may read the store.
		r := &request{ctx: ctx, ns: ns, policy: s.policy(ns), checked: checked, events: pending,
			done: make(chan struct{}), lead: make(chan struct{}, 1)}
		s.write(r)
		if r.err != nil {
			return nil, r.err
		}
		copy(res.Results, r.results)
	}
	for i, e := range events {
		r := &res.Results[i]
		if e != nil {
			r.ID = e.ID
		}
		if early[i] != nil {
			r.Status, r.Err = StatusRejected, early[i]
		}
		switch r.Status {
		case StatusApplied:
			res.Applied++
		case StatusDuplicate:
			res.Duplicates++
		default:
			r.Status = StatusRejected
			res.Rejected++
		}
	}
	return res, nil
}

// request is the checked events of one Apply call on their way to the store.
type request struct {
	ctx     context.Context
	ns      string
	policy  decay.Policy
	checked []*models.Event // nil where the event was rejected before
	events  int             // non-nil entries of checked
	results []EventResult   // set by the transaction that applies the request
	err     error           // the store's error, when the request could not be applied
	done    chan struct{}   // closed once results or err are set
	lead    chan struct{}   // told to write the next group
}

// maxGroupEvents bounds the events of one group transaction, so a burst does not make one
// transaction (and the wait of every request in it) arbitrarily long.
const maxGroupEvents = 5000

// write applies r and returns once r.results or r.err is set. Concurrent calls share
// transactions (group commit): while one group is written, the requests that arrive queue
// up, and the first of them then writes every queued request in one transaction. The store
// serializes writers anyway, so each request would wait for those ahead of it and pay for
// its own commit; grouped, they pay for one, and each event is still applied exactly as if
// its batch had been alone, in arrival order.
func (s *Service) write(r *request) {
	s.mu.Lock()
	s.queue = append(s.queue, r)
	if s.writing {
		s.mu.Unlock()
		select {
		case <-r.done:
			return
		case <-r.lead: // r is first in the queue: it writes the next group
		}
		s.mu.Lock()
	}
	s.writing = true
	n, events := 0, 0
	for n < len(s.queue) && (n == 0 || events+s.queue[n].events <= maxGroupEvents) {
		events += s.queue[n].events
		n++
	}
	group := slices.Clone(s.queue[:n])
	s.queue = slices.Delete(s.queue, 0, n)
	s.mu.Unlock()

	s.applyGroup(group)

	s.mu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].lead <- struct{}{}
	} else {
		s.writing = false
	}
	s.mu.Unlock()
}

// applyGroup applies a group of requests in one transaction and tells each its outcome. A
// store failure fails the group; the requests are then applied one by one, so a request
// that cannot be written never fails the others.
func (s *Service) applyGroup(group []*request) {
	// The transaction serves every request of the group: one caller giving up must not
	// abort the others' writes (a request that returns early has nothing to lose either, as
	// a retry of its events reports them as duplicates).
	ctx := context.WithoutCancel(group[0].ctx)
	err := s.store.Update(ctx, func(tx models.Tx) error { return s.applyRequests(tx, group) })
	if err != nil && len(group) > 1 {
		for _, r := range group {
			r.err = s.store.Update(ctx, func(tx models.Tx) error { return s.applyRequests(tx, []*request{r}) })
		}
	} else {
		for _, r := range group {
			r.err = err
		}
	}
	for _, r := range group {
		close(r.done)
	}
}

// applyRequests applies the requests' events in order inside tx. It may run more than once
// (a store that retries transactions, or a group retried request by request), so it starts
// each request's results afresh. Requests of one namespace share a batch: a later request
// must see what an earlier one changed.
func (s *Service) applyRequests(tx models.Tx, rs []*request) error {
	batches := map[string]*batch{}
	var order []*batch
	for _, r := range rs {
		b := batches[r.ns]
		if b == nil {
			b = newBatch(tx, r.ns)
			batches[r.ns] = b
			order = append(order, b)
		}
		r.results = make([]EventResult, len(r.checked))
		for i, ev := range r.checked {
			if ev == nil {
				continue
			}
			e := *ev
			status, rej, err := s.applyOne(b, r.policy, &e)
			if err != nil {
				return err
			}
			r.results[i] = EventResult{Status: status}
			if rej != nil {
				r.results[i].Err = asError(models.WithFieldPrefix(rej, fmt.Sprintf("events[%d].", i)))
			}
		}
	}
	for _, b := range order {
		if err := b.flush(); err != nil {
			return err
		}
	}
	return nil
}

// asError returns err as a *models.Error (every error check and applyOne reject with is one).
func asError(err error) *models.Error {
	if e, ok := err.(*models.Error); ok {
		return e
	}
	return &models.Error{Code: models.ErrorCode(err), Message: models.ErrorMessage(err), Field: models.ErrorField(err)}
}

// check validates one event and returns a copy in canonical form: namespace ns, time in
// UTC (now when zero), concepts copied. Errors name the event's field.
func (s *Service) check(ns string, e *models.Event, now time.Time) (*models.Event, error) {
	if e == nil {
		return nil, models.Invalid("", "the event is missing")
	}
	if e.ID == "" {
		return nil, models.Invalid("id", "id is required: a client-chosen id makes the report idempotent")
	}
	for _, f := range []struct{ name, val string }{
		{"id", e.ID}, {"surfacing_id", e.SurfacingID}, {"memory_id", e.MemoryID}, {"conversation_id", e.ConversationID},
	} {
		if len(f.val) > models.MaxIDBytes || !utf8.ValidString(f.val) {
			return nil, models.Invalid(f.name, "%s must be UTF-8 text of at most %d bytes", f.name, models.MaxIDBytes)
		}
	}
	switch {
	case e.Type == "":
		return nil, models.Invalid("type", "type is required (one of used, helpful, ignored, dismissed)")
	case !e.Type.Valid():
		return nil, models.Invalid("type", "unknown event type %q (one of used, helpful, ignored, dismissed)", models.Clip(string(e.Type), 40))
	}
	if e.SurfacingID == "" {
		switch {
		case e.MemoryID == "":
			return nil, models.Invalid("surfacing_id", "surfacing_id is required, or memory_id with conversation_id")
		case e.ConversationID == "":
			return nil, models.Invalid("conversation_id", "conversation_id is required with memory_id when no surfacing_id is given")
		}
	}
	at := e.At
	switch {
	case at.IsZero():
		at = now
	case at.After(now.Add(s.maxSkew)):
		return nil, models.Invalid("at", "at %s is more than %s ahead of the server's clock (%s)",
			at.UTC().Format(time.RFC3339), s.maxSkew, now.Format(time.RFC3339))
	case at.Before(minEventTime):
		return nil, models.Invalid("at", "at %s is before 1970", at.UTC().Format(time.RFC3339))
	}
	if len(e.Concepts) > models.MaxListItems {
		return nil, models.Invalid("concepts", "at most %d concepts, got %d", models.MaxListItems, len(e.Concepts))
	}
	for i, c := range e.Concepts {
		if strings.TrimSpace(c) == "" || len(c) > models.MaxListItemBytes || !utf8.ValidString(c) {
			return nil, models.Invalid(fmt.Sprintf("concepts[%d]", i), "a concept must be non-empty UTF-8 text of at most %d bytes", models.MaxListItemBytes)
		}
	}
	out := *e
	out.Namespace = ns
	out.At = at.UTC()
	out.Concepts = append([]string(nil), e.Concepts...)
	return &out, nil
}

// applyOne applies one checked event inside the batch's transaction. It returns the event's
// status, or a rejection (with status StatusRejected), or an error that must abort the batch.
func (s *Service) applyOne(b *batch, policy decay.Policy, ev *models.Event) (Status, *models.Error, error) {
	var sf *models.Surfacing
	if ev.SurfacingID != "" {
		got, err := b.surfacing(ev.SurfacingID)
		switch {
		case models.ErrorCode(err) == models.ENOTFOUND:
			return StatusRejected, &models.Error{Code: models.ENOTFOUND, Field: "surfacing_id",
				Message: fmt.Sprintf("surfacing %s not found in namespace %s", models.Clip(ev.SurfacingID, 60), b.ns)}, nil
		case err != nil:
			return "", nil, err
		}
		sf = got
		if ev.MemoryID != "" && ev.MemoryID != sf.MemoryID {
			return StatusRejected, models.Invalid("memory_id", "memory_id does not match the surfacing's memory %s", sf.MemoryID), nil
		}
		if ev.ConversationID != "" && ev.ConversationID != sf.ConversationID {
			return StatusRejected, models.Invalid("conversation_id", "conversation_id does not match the surfacing's conversation"), nil
		}
		ev.MemoryID, ev.ConversationID = sf.MemoryID, sf.ConversationID
	}
	m, err := b.memory(ev.MemoryID)
	if err == nil && m.IsChunk() {
		// A chunk stands for its memory, as everywhere in the API.
		m, err = b.memory(m.ParentID)
	}
	switch {
	case models.ErrorCode(err) == models.ENOTFOUND && sf != nil:
		return StatusRejected, &models.Error{Code: models.ENOTFOUND, Field: "surfacing_id",
			Message: fmt.Sprintf("the memory %s of surfacing %s no longer exists", sf.MemoryID, sf.ID)}, nil
	case models.ErrorCode(err) == models.ENOTFOUND:
		return StatusRejected, &models.Error{Code: models.ENOTFOUND, Field: "memory_id",
			Message: fmt.Sprintf("memory %s not found in namespace %s", models.Clip(ev.MemoryID, 60), b.ns)}, nil
	case err != nil:
		return "", nil, err
	}
	ev.MemoryID = m.ID
	if sf == nil {
		// The memory+conversation form: tie the event to the memory's latest surfacing in the
		// conversation, so its outcome, turn and context are known; there may be none.
		ss, err := b.tx.FindSurfacings(models.SurfacingFilter{Namespace: b.ns, ConversationID: ev.ConversationID,
			MemoryID: ev.MemoryID, Desc: true, Limit: 1})
		if err != nil {
			return "", nil, err
		}
		if len(ss) > 0 {
			sf = b.keepSurfacing(ss[0])
			ev.SurfacingID = sf.ID
		}
	}

	switch err := b.tx.InsertEvent(ev); {
	case models.ErrorCode(err) == models.EDUPLICATE:
		return StatusDuplicate, nil, nil
	case err != nil:
		return "", nil, err
	}

	concepts := ev.Concepts
	if len(concepts) == 0 && sf != nil {
		concepts = sf.Concepts
	}
	s.rules.ApplyToMemory(m, ev.Type, concepts, ev.At)
	policy.OnEvent(m, ev.Type, ev.At)
	b.touchMemory(m)

	var coUsed []string
	if ev.Type.Positive() && sf != nil && sf.TurnID != "" && !sf.Outcome.Positive() {
		turn, err := b.turn(sf.ConversationID, sf.TurnID)
		if err != nil {
			return "", nil, err
		}
		for _, o := range turn {
			if o.ID != sf.ID && o.Outcome.Positive() {
				coUsed = append(coUsed, o.MemoryID)
			}
		}
	}
	for _, k := range s.rules.EdgesFor(b.ns, m.ID, ev.Type, concepts, coUsed) {
		e, found, err := b.edge(k)
		if err != nil {
			return "", nil, err
		}
		b.putEdge(s.rules.Strengthen(e, found, ev.At))
	}

	if sf != nil && (sf.OutcomeAt.IsZero() || !ev.At.Before(sf.OutcomeAt)) {
		sf.Outcome, sf.OutcomeAt = ev.Type, ev.At
		b.touchSurfacing(sf)
	}
	return StatusApplied, nil, nil
}

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
	turns map[[2]string][]*models.Surfacing // (conversation, turn) → every surfacing of the turn
	// What changed, in the order it first changed, so writes are deterministic.
	memOrder  []string
	memDirty  map[string]bool
	edgeOrder []models.EdgeKey
	edgeDirty map[models.EdgeKey]bool
	surfOrder []string
	surfDirty map[string]bool
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

// keepSurfacing returns the batch's copy of a surfacing just read, adopting sf when the
// batch has none (a copy it already has may carry an outcome not yet written).
func (b *batch) keepSurfacing(sf *models.Surfacing) *models.Surfacing {
	if have, ok := b.surfs[sf.ID]; ok {
		return have
	}
	b.surfs[sf.ID] = sf
	return sf
}

// turn returns the batch's copies of every surfacing of a turn.
func (b *batch) turn(conv, turn string) ([]*models.Surfacing, error) {
	k := [2]string{conv, turn}
	if ss, ok := b.turns[k]; ok {
		return ss, nil
	}
	ss, err := b.tx.FindSurfacings(models.SurfacingFilter{Namespace: b.ns, ConversationID: conv, TurnID: turn, Limit: maxTurnSurfacings})
	if err != nil {
		return nil, err
	}
	for i, sf := range ss {
		ss[i] = b.keepSurfacing(sf)
	}
	b.turns[k] = ss
	return ss, nil
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

// flush writes the changed memories, edges and surfacings, in the order they were first
// changed.
func (b *batch) flush() error {
	for _, id := range b.memOrder {
		if err := b.tx.PutMemory(b.mems[id]); err != nil {
			return err
		}
	}
	for _, k := range b.edgeOrder {
		if err := b.tx.PutEdge(b.edges[k]); err != nil {
			return err
		}
	}
	for _, id := range b.surfOrder {
		if err := b.tx.PutSurfacing(b.surfs[id]); err != nil {
			return err
		}
	}
	return nil
}
