package jobs

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/salience-ai/salience/models"
)

// Status is what the admin API shows of one job.
type Status struct {
	Name string
	Spec string
	// Scheduled reports whether this process ticks the job (Start was called and Stop was
	// not); a replica started without jobs still lists and triggers them.
	Scheduled bool
	// Next is the next tick after now on the job's schedule (zero when not Scheduled).
	Next time.Time
	// Running is the run in progress in this process, if any.
	Running *models.JobRun
	// Last is the newest recorded run by any holder, if any (it may be Running's record, or
	// an unfinished run of a replica that stopped or died).
	Last *models.JobRun
}

// nextTick is the first tick of sched after now, for a schedule the cron started at start.
// A cron spec's ticks are fixed in the calendar, so that is sched.Next(now). An @every
// schedule's are not: the cron fires it at start + k·delay (each tick computed from the
// previous one, to the second), so sched.Next(now) — now + delay — was wrong by up to a whole
// interval and moved with every call.
func nextTick(sched cron.Schedule, start, now time.Time) time.Time {
	every, ok := sched.(cron.ConstantDelaySchedule)
	if !ok || every.Delay <= 0 {
		return sched.Next(now)
	}
	first := sched.Next(start)
	if first.After(now) {
		return first
	}
	k := now.Sub(first)/every.Delay + 1
	return first.Add(k * every.Delay)
}

// Run-history limits of Runs.
const (
	DefaultRunsLimit = 20
	MaxRunsLimit     = 1000
)

// Jobs returns the status of every job in registration order.
func (s *Scheduler) Jobs(ctx context.Context) ([]Status, error) {
	now := s.now().UTC()
	s.mu.Lock()
	out := make([]Status, len(s.names))
	scheduled := s.started && !s.stopping
	for i, name := range s.names {
		e := s.jobs[name]
		st := Status{Name: name, Spec: e.job.Spec, Scheduled: scheduled}
		if scheduled {
			st.Next = nextTick(e.sched, s.startedAt, now)
		}
		if e.running != nil {
			r := *e.running
			st.Running = &r
		}
		out[i] = st
	}
	s.mu.Unlock()
	for i := range out {
		runs, err := s.store.FindJobRuns(ctx, out[i].Name, 1)
		if err != nil {
			return nil, err
		}
		if len(runs) > 0 {
			out[i].Last = runs[0]
		}
	}
	return out, nil
}

// Runs returns the newest runs of a job, newest first: limit 0 means DefaultRunsLimit, more
// than MaxRunsLimit or negative is EINVALID; an unknown job is ENOTFOUND.
func (s *Scheduler) Runs(ctx context.Context, name string, limit int) ([]*models.JobRun, error) {
	s.mu.Lock()
	e := s.jobs[name]
	s.mu.Unlock()
	if e == nil {
		return nil, models.Errorf(models.ENOTFOUND, "no job named %q", models.Clip(name, 60))
	}
	switch {
	case limit == 0:
		limit = DefaultRunsLimit
	case limit < 0 || limit > MaxRunsLimit:
		return nil, models.Invalid("limit", "limit must be between 1 and %d", MaxRunsLimit)
	}
	return s.store.FindJobRuns(ctx, name, limit)
}
