package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/salience-ai/salience/models"
)

// Run is what a job sees of its run: the clock, and checkpoints that survive the process so
// an interrupted run resumes where it stopped.
type Run struct {
	s       *Scheduler
	job     string
	id      string
	trigger string
}

// Now returns the scheduler's clock. Jobs use it instead of time.Now so tests control time.
func (r *Run) Now() time.Time { return r.s.now() }

// ID returns the run's id, as recorded in the run history.
func (r *Run) ID() string { return r.id }

// Trigger returns TriggerCron or TriggerManual.
func (r *Run) Trigger() string { return r.trigger }

// Checkpoint returns the job's checkpoint under key, "" when none is saved.
func (r *Run) Checkpoint(key string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return r.s.store.GetState(ctx, r.stateKey(key))
}

// SetCheckpoint saves value under key for this job ("" clears it). It works after the run's
// context was cancelled, so a job that is stopping can still save where it got to.
func (r *Run) SetCheckpoint(key, value string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return r.s.store.SetState(ctx, r.stateKey(key), value)
}

// stateKey is the store key of a checkpoint: "job/<job>/<key>".
func (r *Run) stateKey(key string) string { return StatePrefix + r.job + "/" + key }

// Reasons a run's context is cancelled, recorded as its error when it stops unfinished.
var (
	errShutdown  = errors.New("interrupted: the scheduler is stopping")
	errLeaseLost = errors.New("interrupted: the lease was lost to another holder")
)

// Tick runs the job now as a cron tick would and waits for the run to end, returning its
// record. A tick that must not run is an error: ECONFLICT when the job is already running in
// this process or another holder has its lease, EUNAVAILABLE once Stop was called,
// ENOTFOUND for an unknown job. The run's context is the scheduler's, not ctx; ctx bounds
// only the lease and record calls made before the run starts.
func (s *Scheduler) Tick(ctx context.Context, name string) (*models.JobRun, error) {
	x, err := s.begin(ctx, name, TriggerCron)
	if err != nil {
		return nil, err
	}
	x.execute()
	return x.final(), nil
}

// Trigger starts a manual run of the job and returns its record as it starts (Finished
// false, End zero); the run goes on in the background. Errors are those of Tick.
func (s *Scheduler) Trigger(ctx context.Context, name string) (*models.JobRun, error) {
	x, err := s.begin(ctx, name, TriggerManual)
	if err != nil {
		return nil, err
	}
	started := *x.rec
	go x.execute()
	return &started, nil
}

// execution is one run in progress.
type execution struct {
	s   *Scheduler
	e   *entry
	rec *models.JobRun
	run *Run
	out models.JobRun // the final record, once execute returned
}

// begin reserves the job, takes its lease and records the run's start.
func (s *Scheduler) begin(ctx context.Context, name, trigger string) (*execution, error) {
	s.mu.Lock()
	e := s.jobs[name]
	switch {
	case e == nil:
		s.mu.Unlock()
		return nil, models.Errorf(models.ENOTFOUND, "no job named %q", models.Clip(name, 60))
	case s.stopping:
		s.mu.Unlock()
		return nil, &models.Error{Code: models.EUNAVAILABLE, Message: "the scheduler is stopping", Safe: true}
	case e.busy:
		s.mu.Unlock()
		return nil, models.Errorf(models.ECONFLICT, "job %s is already running", name)
	}
	e.busy = true
	s.wg.Add(1)
	s.mu.Unlock()

	release := func() {
		s.mu.Lock()
		e.busy = false
		s.mu.Unlock()
		s.wg.Done()
	}
	now := s.now().UTC()
	ok, err := s.store.AcquireLease(ctx, LeasePrefix+name, s.holder, s.ttl, now)
	if err != nil {
		release()
		return nil, fmt.Errorf("jobs: lease of %s: %w", name, err)
	}
	if !ok {
		release()
		return nil, models.Errorf(models.ECONFLICT, "job %s is leased by another holder", name)
	}
	rec := &models.JobRun{ID: runID(now), Job: name, Holder: s.holder, Trigger: trigger, Start: now}
	if err := s.store.RecordJobRun(ctx, rec); err != nil {
		release()
		return nil, fmt.Errorf("jobs: recording the start of %s: %w", name, err)
	}
	s.mu.Lock()
	started := *rec
	e.running = &started
	s.mu.Unlock()
	return &execution{s: s, e: e, rec: rec, run: &Run{s: s, job: name, id: rec.ID, trigger: trigger}}, nil
}

// runID makes a run id that sorts by start time: the start in UTC to the nanosecond, then
// a random suffix against collisions between replicas.
func runID(start time.Time) string {
	return start.UTC().Format("20060102T150405.000000000Z") + "-" + randomHex(4)
}

// execute runs the job under its own context, renewing the lease while it runs, then
// records the outcome and frees the job.
func (x *execution) execute() {
	s, name := x.s, x.rec.Job
	defer s.wg.Done()
	ctx, cancel := context.WithCancelCause(s.ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.renew(ctx, name, cancel)
	}()

	s.log.Info("jobs: run started", "job", name, "run", x.rec.ID, "trigger", x.rec.Trigger)
	items, err := call(ctx, x.e.job, x.run, s)
	interrupted := context.Cause(ctx) // read before our own cancel below
	cancel(nil)
	<-renewed

	rec := x.rec
	rec.End = s.now().UTC()
	rec.Items = items
	rec.Finished = true
	switch {
	case err != nil && interrupted != nil:
		// The job gave up because it was asked to stop: unfinished, to resume from its
		// checkpoint. A cancellation by the scheduler reads as the reason, not "context
		// canceled".
		cause := interrupted
		if errors.Is(interrupted, context.Canceled) {
			cause = errShutdown
		}
		rec.Finished = false
		rec.Error = cause.Error()
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			rec.Error += ": " + err.Error()
		}
	case err != nil:
		rec.Error = err.Error()
	}
	// The job is free before its end is recorded: whoever reads the run as ended may start it
	// again at once (a job run's record appearing finished used to precede this by a moment,
	// and a run started in it got 409).
	x.out = *rec
	s.mu.Lock()
	x.e.running = nil
	x.e.busy = false
	s.mu.Unlock()
	rctx, rcancel := context.WithTimeout(context.Background(), storeTimeout)
	if rerr := s.store.RecordJobRun(rctx, rec); rerr != nil {
		s.log.Error("jobs: recording a run", "job", name, "run", rec.ID, "error", rerr)
	}
	rcancel()

	level := s.log.Info
	if rec.Error != "" {
		level = s.log.Warn
	}
	level("jobs: run ended", "job", name, "run", rec.ID, "items", rec.Items, "finished", rec.Finished,
		"error", rec.Error, "duration", rec.End.Sub(rec.Start).String())
}

func (x *execution) final() *models.JobRun {
	out := x.out
	return &out
}

// call runs the job, turning a panic into an error with the panic's value; the stack goes to
// the log, not into the run history.
func call(ctx context.Context, j Job, r *Run, s *Scheduler) (items int, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("jobs: run panicked", "job", j.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return j.Run(ctx, r)
}

// renew keeps the job's lease while the run lasts, every TTL/3. When another holder has
// taken the lease (this process stalled past the TTL), the run is cancelled with
// errLeaseLost: two replicas must never run one job at once. A failed renewal is retried at
// the next beat; if the store stays down past the TTL, the lease may be taken and the next
// renewal reports it.
func (s *Scheduler) renew(ctx context.Context, name string, cancel context.CancelCauseFunc) {
	every := max(s.ttl/3, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := s.store.AcquireLease(ctx, LeasePrefix+name, s.holder, s.ttl, s.now().UTC())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.log.Warn("jobs: renewing a lease", "job", name, "error", err)
		case !ok:
			s.log.Error("jobs: lease lost while running; stopping the run", "job", name)
			cancel(errLeaseLost)
			return
		}
	}
}
