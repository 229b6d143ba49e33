// Package maintenance holds six of the scheduled jobs of docs/design.md#decay-and-jobs:
// decay-scan fills the resurfacing queue, edge-decay fades associations that stopped
// co-occurring, dismissal-cooldown halves recent dismissals weekly, implicit-ignore records
// surfacings nobody reported on as ignored, bandit-upkeep feeds settled turns' rewards to the
// threshold bandit (bandit.go), and prune-history deletes the turn history past its retention
// (retention.go; what may go is models/prune.go's rule). The seventh, report-snapshot, is
// package experiment's. The rules are decay's and engagement's; the jobs only walk
// the store in batches, apply the rules inside store transactions and checkpoint, so each is
// idempotent and resumes where an interrupted run stopped.
//
// The package does not depend on the scheduler: a job body takes a Run (what jobs.Run
// offers), and internal/app registers the Tasks with package jobs.
package maintenance

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// Store is the part of models.Store the jobs use.
type Store interface {
	Namespaces(ctx context.Context) ([]string, error)
	FindMemories(ctx context.Context, f models.MemoryFilter) ([]*models.Memory, int, error)
	ScanEdges(ctx context.Context, ns string, after models.EdgeKey, limit int) ([]*models.Edge, error)
	GraphVersion(ctx context.Context, ns string) (uint64, bool, error) // engagement.Store's
	FindSurfacings(ctx context.Context, f models.SurfacingFilter) ([]*models.Surfacing, error)
	FindEvents(ctx context.Context, f models.EventFilter) ([]*models.Event, error)      // engagement.Store's
	CountEvents(ctx context.Context, f models.EventFilter) ([]models.EventTally, error) // engagement.Store's
	GetSurfacing(ctx context.Context, ns, id string) (*models.Surfacing, error)         // engagement.Store's
	FindDecisions(ctx context.Context, f models.DecisionFilter) ([]*models.Decision, error)
	Update(ctx context.Context, fn func(tx models.Tx) error) error
	Enqueue(ctx context.Context, items []*models.ResurfaceItem) error
	Queue(ctx context.Context, ns string, limit int) ([]*models.ResurfaceItem, error)
	Dequeue(ctx context.Context, ns string, memoryIDs []string) error
	PruneHistory(ctx context.Context, cut models.PruneCut) (models.Pruned, error)
}

// Run is what a job body needs of its run (jobs.Run implements it): the clock and
// checkpoints that survive the process.
type Run interface {
	Now() time.Time
	Checkpoint(key string) (string, error)
	SetCheckpoint(key, value string) error
}

// Job names, as configured and shown by the admin API.
const (
	JobDecayScan         = "decay-scan"
	JobEdgeDecay         = "edge-decay"
	JobDismissalCooldown = "dismissal-cooldown"
	JobImplicitIgnore    = "implicit-ignore"
)

// Defaults of Options.
const (
	// DefaultQueueCap is how many due memories one decay scan keeps queued per namespace,
	// the most valuable first: enough to cover every topic a day of conversation touches,
	// few enough that resurfacing stays a trickle.
	DefaultQueueCap = 100
	// DefaultBatchSize is how many memories, edges or surfacings a job reads per store call
	// and checkpoints after.
	DefaultBatchSize = 500
	// DefaultIgnoreAfter is the implicit-ignore timeout (docs/design.md#engagement): a surfacing with no
	// event this long after it was shown counts as ignored.
	DefaultIgnoreAfter = 30 * time.Minute
)

// Options configure a Service; zero values take the defaults.
type Options struct {
	// Policy returns a namespace's decay policy; nil means decay.DefaultPolicy for all.
	Policy func(ns string) decay.Policy
	// Rules are the engagement rules implicit-ignore applies; zero means DefaultRules().
	Rules engagement.Rules
	// QueueCap bounds the resurfacing queue of each namespace; 0 means DefaultQueueCap.
	QueueCap int
	// BatchSize is the page size of store reads; 0 means DefaultBatchSize.
	BatchSize int
	// IgnoreAfter is the implicit-ignore timeout of a namespace whose settings set none; 0
	// means DefaultIgnoreAfter.
	IgnoreAfter time.Duration
	// Settings give each namespace's implicit-ignore timeout (implicit_ignore_after_hours),
	// read by implicit-ignore and bandit-upkeep; nil means IgnoreAfter for all.
	Settings SettingsSource
	// Logger receives per-namespace summaries; nil discards them.
	Logger *slog.Logger
	// Bandit is the threshold bandit bandit-upkeep updates; zero means predict.DefaultBandit().
	Bandit predict.Bandit
	// EmptyReward returns a namespace's reward for a turn that surfaced nothing; nil means
	// engagement.EmptyTurnReward for all (the namespace settings record will set it).
	EmptyReward func(ns string) float64
	// Retention is how long prune-history keeps the turn history; 0 keeps it all. It must
	// pass CheckRetention.
	Retention time.Duration
}

// Service runs the maintenance jobs over a store.
type Service struct {
	store       Store
	policy      func(ns string) decay.Policy
	rules       engagement.Rules
	queueCap    int
	batch       int
	ignoreAfter time.Duration
	settings    SettingsSource
	log         *slog.Logger
	bandit      predict.Bandit
	empty       func(ns string) float64
	retention   time.Duration
	// engagement applies implicit-ignore's events, as it applies the bots' reports.
	engagement *engagement.Service
}

// New returns the maintenance jobs over store.
func New(store Store, opts Options) *Service {
	s := &Service{store: store, policy: opts.Policy, rules: opts.Rules, queueCap: opts.QueueCap,
		batch: opts.BatchSize, ignoreAfter: opts.IgnoreAfter, settings: opts.Settings, log: opts.Logger, bandit: opts.Bandit, empty: opts.EmptyReward,
		retention: opts.Retention}
	if s.bandit == (predict.Bandit{}) {
		s.bandit = predict.DefaultBandit()
	}
	if s.policy == nil {
		p, err := decay.PolicyByName(decay.DefaultPolicy)
		if err != nil {
			panic(err) // the default policy always exists
		}
		s.policy = func(string) decay.Policy { return p }
	}
	if s.rules == (engagement.Rules{}) {
		s.rules = engagement.DefaultRules()
	}
	if s.queueCap <= 0 {
		s.queueCap = DefaultQueueCap
	}
	if s.batch <= 0 {
		s.batch = DefaultBatchSize
	}
	if s.ignoreAfter <= 0 {
		s.ignoreAfter = DefaultIgnoreAfter
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.engagement = engagement.NewService(store, engagement.ServiceOptions{Rules: s.rules, Policy: s.policy})
	return s
}

// Task is one job body with its name; internal/app gives each a schedule.
type Task struct {
	Name string
	Run  func(ctx context.Context, run Run) (items int, err error)
}

// Tasks lists the jobs in the order they are shown.
func (s *Service) Tasks() []Task {
	return []Task{
		{JobDecayScan, s.DecayScan},
		{JobEdgeDecay, s.EdgeDecay},
		{JobDismissalCooldown, s.DismissalCooldown},
		{JobImplicitIgnore, s.ImplicitIgnore},
		{JobBanditUpkeep, s.BanditUpkeep},
		{JobPruneHistory, s.PruneHistory},
	}
}

// loadCheckpoint decodes the JSON checkpoint under key into v; a missing one leaves v as it
// is. A checkpoint that does not decode (written by another version) is dropped: every job
// is idempotent, so starting over is safe.
func loadCheckpoint(run Run, key string, v any) (bool, error) {
	raw, err := run.Checkpoint(key)
	if err != nil || raw == "" {
		return false, err
	}
	if json.Unmarshal([]byte(raw), v) != nil {
		return false, nil
	}
	return true, nil
}

// saveCheckpoint stores v as JSON under key; nil clears it.
func saveCheckpoint(run Run, key string, v any) error {
	if v == nil {
		return run.SetCheckpoint(key, "")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return run.SetCheckpoint(key, string(b))
}

// position is a place in a namespace's memories ordered by (CreatedAt, ID), the order
// FindMemories lists them in with Sort "created_asc".
type position struct {
	CreatedAt time.Time `json:"created_at,omitzero"`
	ID        string    `json:"id,omitempty"`
}

// before reports whether p comes before m in (CreatedAt, ID) order; the zero position comes
// before everything.
func (p position) before(m *models.Memory) bool {
	if p.ID == "" && p.CreatedAt.IsZero() {
		return true
	}
	return m.CreatedAt.After(p.CreatedAt) || (m.CreatedAt.Equal(p.CreatedAt) && m.ID > p.ID)
}

// walkMemories calls fn with each batch of ns's memories (never chunks) after p, in
// (CreatedAt, ID) order, and the position of the batch's last memory. The store lists by
// creation time, so this is keyset paging on (created_at, id): Since narrows the listing to
// the cursor's time, Offset skips the memories at exactly that time already seen in this
// walk, and any memory at or before the cursor that still comes back (after a resume, or
// when a concurrent write shifted the offset) is filtered out, so none is handled twice.
// A memory created at exactly the cursor's time while another at that time is deleted may
// be missed by this walk; the next run sees it. fn's error, or ctx's, ends the walk.
func (s *Service) walkMemories(ctx context.Context, ns string, p position, fn func(ms []*models.Memory, last position) error) error {
	offset := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ms, _, err := s.store.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Sort: "created_asc",
			Since: p.CreatedAt, Limit: s.batch, Offset: offset})
		if err != nil || len(ms) == 0 {
			return err
		}
		last := ms[len(ms)-1]
		if last.CreatedAt.Equal(p.CreatedAt) {
			offset += len(ms) // the whole page shares the cursor's time
		} else {
			offset = 0
			for _, m := range ms {
				if m.CreatedAt.Equal(last.CreatedAt) {
					offset++
				}
			}
		}
		fresh := ms[:0:0]
		for _, m := range ms {
			if p.before(m) && !m.IsChunk() {
				fresh = append(fresh, m)
			}
		}
		if len(fresh) > 0 {
			p = position{CreatedAt: last.CreatedAt, ID: last.ID}
			if err := fn(fresh, p); err != nil {
				return err
			}
		}
		if len(ms) < s.batch {
			return nil
		}
	}
}

// namespaces lists the namespaces to work on, from resume on (all when resume is "").
func (s *Service) namespaces(ctx context.Context, resume string) ([]string, error) {
	all, err := s.store.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(all) // resuming relies on the order
	out := all[:0:0]
	for _, ns := range all {
		if ns >= resume {
			out = append(out, ns)
		}
	}
	return out, nil
}
