// Package jobs is Salience's scheduler (docs/design.md#decay-and-jobs): named jobs on cron schedules
// (robfig/cron/v3, UTC), at most one run of a job at a time, a single runner across server
// replicas through a lease in the store, panics recovered and recorded, a run history,
// manual triggers, checkpoints so an interrupted run resumes, and a graceful stop.
//
// The jobs themselves live elsewhere (package maintenance); this package only runs them.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/salience-ai/salience/models"
)

// Store is the part of models.Store the scheduler uses: leases, the run history and the
// key-value state that holds checkpoints.
type Store interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
	RecordJobRun(ctx context.Context, run *models.JobRun) error
	FindJobRuns(ctx context.Context, job string, limit int) ([]*models.JobRun, error)
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error
}

// Job is a named task on a cron schedule.
type Job struct {
	// Name identifies the job in the run history, its lease and its checkpoints.
	Name string
	// Spec is a standard 5-field cron spec ("0 3 * * *") or a descriptor ("@daily",
	// "@every 5m"), evaluated in UTC.
	Spec string
	// Run does the work. It must return soon after ctx is cancelled (shutdown, or the lease
	// was lost), having saved a checkpoint to resume from; items is how many things it
	// processed, for the run history.
	Run func(ctx context.Context, run *Run) (items int, err error)
}

// Triggers recorded in JobRun.Trigger.
const (
	TriggerCron   = "cron"
	TriggerManual = "manual"
)

// Defaults of Options.
const (
	// DefaultLeaseTTL is how long a job's lease lasts without renewal. A running job renews
	// it every TTL/3; a replica that dies loses it after at most this long.
	DefaultLeaseTTL = time.Minute
	// LeasePrefix starts the lease name of every job: "job:decay-scan".
	LeasePrefix = "job:"
	// StatePrefix starts the state key of every checkpoint: "job/decay-scan/cursor".
	StatePrefix = "job/"
	// storeTimeout bounds the store calls made after a run's context ended (its final
	// record, a checkpoint written while stopping).
	storeTimeout = 10 * time.Second
)

// Options configure a Scheduler.
type Options struct {
	// Store keeps leases, runs and checkpoints. Required.
	Store Store
	// Holder names this process in leases and runs; it must differ between replicas.
	// Empty means DefaultHolder().
	Holder string
	// LeaseTTL is the lease duration; 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Now is the clock of leases and run records; nil means time.Now. (Cron ticks follow the
	// wall clock; tests call Tick.)
	Now func() time.Time
	// Logger receives run and skip messages; nil discards them.
	Logger *slog.Logger
}

// DefaultHolder returns a holder name unique to this process: host name, pid and a random
// suffix (a restarted container may reuse both host name and pid).
func DefaultHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "salience"
	}
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + randomHex(4)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// entry is one registered job and its state in this process.
type entry struct {
	job     Job
	sched   cron.Schedule
	running *models.JobRun // the run in progress here, nil when idle; guarded by Scheduler.mu
	busy    bool           // reserved by a starting run, before running is set
}

// Scheduler runs jobs on their schedules. It is safe for concurrent use.
type Scheduler struct {
	store  Store
	holder string
	ttl    time.Duration
	now    func() time.Time
	log    *slog.Logger

	cron *cron.Cron
	// ctx is the parent of every run's context; Stop cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // runs in progress

	mu       sync.Mutex
	jobs     map[string]*entry
	names    []string // in registration order
	started  bool
	stopping bool
	// startedAt is when Start registered the schedules: the origin of @every ticks.
	startedAt time.Time
}

// New returns a scheduler for jobs. Names must be unique and non-empty, specs must parse
// and Run must be set; otherwise the error is EINVALID naming the job. The scheduler does
// not tick until Start; Trigger and Tick work before that.
func New(opts Options, jobs ...Job) (*Scheduler, error) {
	if opts.Store == nil {
		return nil, models.Invalid("store", "jobs: a store is required")
	}
	s := &Scheduler{
		store:  opts.Store,
		holder: opts.Holder,
		ttl:    opts.LeaseTTL,
		now:    opts.Now,
		log:    opts.Logger,
		cron:   cron.New(cron.WithLocation(time.UTC)),
		jobs:   map[string]*entry{},
	}
	if s.holder == "" {
		s.holder = DefaultHolder()
	}
	if s.ttl <= 0 {
		s.ttl = DefaultLeaseTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for i, j := range jobs {
		field := fmt.Sprintf("jobs[%d]", i)
		switch {
		case j.Name == "":
			return nil, models.Invalid(field+".name", "jobs: a job needs a name")
		case s.jobs[j.Name] != nil:
			return nil, models.Invalid(field+".name", "jobs: job %q is registered twice", j.Name)
		case j.Run == nil:
			return nil, models.Invalid(field+".run", "jobs: job %q has no Run function", j.Name)
		}
		sched, err := ParseSpec(j.Spec)
		if err != nil {
			return nil, models.Invalid(field+".spec", "jobs: job %q: %s", j.Name, models.ErrorMessage(err))
		}
		s.jobs[j.Name] = &entry{job: j, sched: sched}
		s.names = append(s.names, j.Name)
	}
	return s, nil
}

// ParseSpec parses a cron spec as the scheduler does: 5 fields or a descriptor, in UTC.
// A bad spec is EINVALID. A time-zone prefix (TZ=, CRON_TZ=) is refused: schedules are UTC
// so that replicas in different zones agree, and robfig/cron panics on a prefix without a
// spec after it.
func ParseSpec(spec string) (sched cron.Schedule, err error) {
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, models.Invalid("spec", "bad cron spec %q: schedules are in UTC; remove the time-zone prefix", models.Clip(spec, 80))
	}
	defer func() {
		if p := recover(); p != nil { // a parser bug must not take the server down at start
			sched, err = nil, models.Invalid("spec", "bad cron spec %q", models.Clip(spec, 80))
		}
	}()
	sched, err = cron.ParseStandard(spec)
	if err != nil {
		return nil, models.Invalid("spec", "bad cron spec %q: %v", models.Clip(spec, 80), err)
	}
	return sched, nil
}

// Holder returns the name this scheduler holds leases under.
func (s *Scheduler) Holder() string { return s.holder }

// Start begins ticking every job on its schedule. Calling it again, or after Stop, does
// nothing.
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.stopping {
		return
	}
	s.started = true
	s.startedAt = s.now().UTC()
	for _, name := range s.names {
		e := s.jobs[name]
		s.cron.Schedule(utcSchedule{e.sched}, cron.FuncJob(func() { s.cronTick(name) }))
	}
	s.cron.Start()
	s.log.Info("jobs: scheduler started", "holder", s.holder, "jobs", len(s.names))
}

// utcSchedule evaluates a schedule in UTC whatever the location of the time it is given,
// so descriptors (@daily), which robfig/cron parses in time.Local, fire at UTC midnight.
type utcSchedule struct{ cron.Schedule }

func (u utcSchedule) Next(t time.Time) time.Time { return u.Schedule.Next(t.UTC()) }

// cronTick is what the cron calls: a tick that is skipped (the job is running here, or
// another replica holds its lease) is logged and leaves no record.
func (s *Scheduler) cronTick(name string) {
	run, err := s.Tick(s.ctx, name)
	switch code := models.ErrorCode(err); {
	case err == nil:
		_ = run
	case code == models.ECONFLICT:
		s.log.Debug("jobs: tick skipped", "job", name, "reason", models.ErrorMessage(err))
	case code == models.EUNAVAILABLE:
	default:
		s.log.Error("jobs: tick failed", "job", name, "error", err)
	}
}

// Stop stops the scheduler gracefully: no new ticks or triggers, every running job's context
// is cancelled so it can checkpoint and return, and Stop waits for them until ctx ends (then
// it returns ctx's error, and the runs are left to finish on their own). Finally it releases
// the leases it holds, so another replica takes over at once. Calling it again waits again.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	first := !s.stopping
	s.stopping = true
	started := s.started
	s.mu.Unlock()
	if first && started {
		s.cron.Stop() // no new ticks; ticks in flight are runs, awaited below
	}
	s.cancel()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("jobs: stop: %w", ctx.Err())
	}
	if first {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		for _, name := range s.names {
			if err := s.store.ReleaseLease(rctx, LeasePrefix+name, s.holder); err != nil {
				s.log.Warn("jobs: releasing lease", "job", name, "error", err)
			}
		}
		s.log.Info("jobs: scheduler stopped", "holder", s.holder)
	}
	return nil
}

// Names lists the registered jobs in registration order.
func (s *Scheduler) Names() []string { return slices.Clone(s.names) }
