package engagement

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// ImplicitPrefix starts the id of every event ApplyImplicit writes: the event of surfacing S
// is "implicit:S", so a rerun of the job finds it logged and changes nothing. Bots may not
// use ids with this prefix.
const ImplicitPrefix = "implicit:"

// Store is the part of models.Store the Service uses: transactions to apply events in, and
// the logs and graph the metrics read.
type Store interface {
	Update(ctx context.Context, fn func(tx models.Tx) error) error
	GetSurfacing(ctx context.Context, ns, id string) (*models.Surfacing, error)
	FindEvents(ctx context.Context, f models.EventFilter) ([]*models.Event, error) // the relearn replay
	MetricsStore
}

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
	// Learn are the relevance model's constants; the zero value means learn.DefaultConfig().
	Learn learn.Config
}

// Service applies engagement events (docs/design.md#engagement): the bots' reports (Apply) and the
// implicit-ignore job's (ApplyImplicit), both through the one function that moves a memory,
// its decay schedule, the graph's edges and the surfacing's outcome (apply.go). Each call's
// events are applied in one store transaction, shared with the calls that arrive meanwhile
// (group commit, group.go). It is safe for concurrent use; the store serializes the
// transactions, so concurrent reporters never lose an update.
type Service struct {
	store   Store
	rules   Rules
	policy  func(ns string) decay.Policy
	now     func() time.Time
	maxSkew time.Duration
	learn   learn.Config

	mu      sync.Mutex
	queue   []*request // waiting for the next group transaction
	writing bool       // a group is being written; its writer hands over to queue[0]

	health healthCache // the metrics' graph health by namespace and graph version
}

// NewService returns a Service over store.
func NewService(store Store, opts ServiceOptions) *Service {
	s := &Service{store: store, rules: opts.Rules, policy: opts.Policy, now: opts.Now, maxSkew: opts.MaxSkew, learn: opts.Learn}
	if s.learn == (learn.Config{}) {
		s.learn = learn.DefaultConfig()
	}
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
	StatusApplied Status = "applied" // logged and applied
	// StatusDuplicate: nothing changed, because the event's id was already logged (an
	// idempotent replay) or its surfacing already has its outcome (one outcome per
	// surfacing: the first report decides).
	StatusDuplicate Status = "duplicate"
	StatusRejected  Status = "rejected" // invalid or pointing at nothing; nothing changed, Err says why
)

// EventResult is the outcome of one event, in the order of the batch.
type EventResult struct {
	ID     string
	Status Status
	// Err is set for rejected events: code EINVALID or ENOTFOUND, or ECONFLICT for an id
	// already recorded for another event, with Field naming the event's field as
	// "events[i].field".
	Err *models.Error
}

// BatchResult is the outcome of a batch: one result per event, in order, and the counts.
type BatchResult struct {
	Applied, Duplicates, Rejected int
	Results                       []EventResult
}

// Apply validates and applies a batch of events reported in namespace ns. Each event:
//   - needs an id (≤ 200 bytes, the idempotency key, not starting with ImplicitPrefix), a
//     type (used, helpful, ignored, dismissed), and a surfacing_id or else memory_id with
//     conversation_id; a memory_id or conversation_id given beside a surfacing_id must match
//     the surfacing's; a chunk's id stands for its memory;
//   - at zero means now (or the surfacing's time, if the server's clock reads earlier); more
//     than MaxSkew ahead of now, or before 1970, is rejected; so is a time before the
//     surfacing's: an event reports on what was shown;
//   - at most 64 concepts, each non-empty UTF-8 of at most 200 bytes.
//
// A nil event is rejected (EINVALID naming "events[i]"): a caller that could not decode an
// event passes nil in its place and reports its own error for it.
//
// An invalid event is rejected (EINVALID naming "events[i].field"); an unknown surfacing
// id, one of another namespace, a memory that does not exist, or a memory never surfaced in
// the conversation, is rejected with ENOTFOUND. Rejected events change nothing; the others
// are applied atomically, in one transaction (which may also carry concurrent batches
// applied before or after this one), as apply describes. One surfacing has one outcome: the
// first report on it decides, and later ones are duplicates that change nothing — unless
// the outcome so far is the implicit-ignore job's, which a report replaces.
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
	for i, e := range events {
		ev, err := s.check(ns, e, now)
		if err != nil {
			early[i] = asError(models.WithFieldPrefix(err, fmt.Sprintf("events[%d].", i)))
			continue
		}
		checked[i] = ev
	}
	res, err := s.applyChecked(ctx, ns, checked, now)
	if err != nil {
		return nil, err
	}
	for i, e := range events {
		if e != nil {
			res.Results[i].ID = e.ID
		}
		if early[i] != nil {
			res.Results[i].Status, res.Results[i].Err = StatusRejected, early[i]
		}
	}
	res.count()
	return res, nil
}

// ApplyImplicit records each surfacing of namespace ns as ignored: the implicit-ignore job's
// verdict on a surfacing nobody reported on in time. The event of surfacing S has id
// ImplicitPrefix+S, is Implicit, and is dated at the surfacing (the turn in which the bot
// passed it over); it is applied as any event, with two differences: a surfacing that has an
// outcome by now (a report arrived after the job listed it) is left alone (StatusDuplicate),
// and a surfacing whose memory was deleted still gets its event and outcome, so the job
// does not find it again. The results are in the order of ss; a surfacing that no longer
// exists is rejected (ENOTFOUND).
func (s *Service) ApplyImplicit(ctx context.Context, ns string, ss []*models.Surfacing) (*BatchResult, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	evs := make([]*models.Event, len(ss))
	for i, sf := range ss {
		evs[i] = &models.Event{ID: ImplicitPrefix + sf.ID, Namespace: ns, SurfacingID: sf.ID, MemoryID: sf.MemoryID,
			ConversationID: sf.ConversationID, Type: models.EventIgnored, At: sf.At.UTC(),
			Concepts: append([]string(nil), sf.Concepts...), Implicit: true}
	}
	res, err := s.applyChecked(ctx, ns, evs, s.now().UTC())
	if err != nil {
		return nil, err
	}
	for i, e := range evs {
		res.Results[i].ID = e.ID
	}
	res.count()
	return res, nil
}

// applyChecked applies the checked events (nil where an event was rejected before) in one
// group transaction and returns a result per event; nil entries are left for the caller.
func (s *Service) applyChecked(ctx context.Context, ns string, checked []*models.Event, now time.Time) (*BatchResult, error) {
	res := &BatchResult{Results: make([]EventResult, len(checked))}
	pending := 0
	for _, ev := range checked {
		if ev != nil {
			pending++
		}
	}
	if pending == 0 {
		return res, nil
	}
	// The policy is resolved here, not inside the transaction: it may read the store.
	r := &request{ctx: ctx, ns: ns, now: now, policy: s.policy(ns), checked: checked, events: pending,
		done: make(chan struct{}), lead: make(chan struct{}, 1)}
	s.write(r)
	if r.err != nil {
		return nil, r.err
	}
	copy(res.Results, r.results)
	return res, nil
}

// count fills the counts from the results; a result without a status is a rejection.
func (res *BatchResult) count() {
	res.Applied, res.Duplicates, res.Rejected = 0, 0, 0
	for i := range res.Results {
		switch r := &res.Results[i]; r.Status {
		case StatusApplied:
			res.Applied++
		case StatusDuplicate:
			res.Duplicates++
		default:
			r.Status = StatusRejected
			res.Rejected++
		}
	}
}
