package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// The tests run the scheduler over the real SQLite store with an injected clock: leases
// expire by the clock, not by sleeping.

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clock is a settable clock shared by schedulers.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "jobs.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newScheduler(t *testing.T, st jobs.Store, holder string, c *clock, js ...jobs.Job) *jobs.Scheduler {
	t.Helper()
	s, err := jobs.New(jobs.Options{Store: st, Holder: holder, LeaseTTL: time.Minute, Now: c.Now}, js...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
	return s
}

func code(err error) string { return models.ErrorCode(err) }

// counter is a job that counts its runs per holder.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counter) job(name, holder string) jobs.Job {
	return jobs.Job{Name: name, Spec: "@every 1h", Run: func(ctx context.Context, r *jobs.Run) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.runs == nil {
			c.runs = map[string]int{}
		}
		c.runs[holder]++
		return 1, nil
	}}
}

func (c *counter) get(holder string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[holder]
}

func TestLeaseOneRunnerPerTickAndTakeoverAfterTTL(t *testing.T) {
	st := openStore(t)
	clk := newClock()
	var n counter
	a := newScheduler(t, st, "A", clk, n.job("sweep", "A"))
	b := newScheduler(t, st, "B", clk, n.job("sweep", "B"))
	ctx := context.Background()

	run, err := a.Tick(ctx, "sweep")
	if err != nil {
		t.Fatal(err)
	}
	if run.Holder != "A" || !run.Finished || run.Items != 1 || run.Trigger != jobs.TriggerCron || !run.Start.Equal(t0) {
		t.Errorf("A's run = %+v", run)
	}
	// B ticks at the same moment: A keeps the lease after its run, so B is refused.
	if _, err := b.Tick(ctx, "sweep"); code(err) != models.ECONFLICT {
		t.Fatalf("B's tick while A holds the lease: %v, want conflict", err)
	}
	// A ticks again within the TTL: it renews its own lease and runs.
	clk.Advance(30 * time.Second)
	if _, err := a.Tick(ctx, "sweep"); err != nil {
		t.Fatal(err)
	}
	// A dies without releasing (no Stop). Before the TTL from its last tick, B is still refused.
	clk.Advance(59 * time.Second)
	if _, err := b.Tick(ctx, "sweep"); code(err) != models.ECONFLICT {
		t.Fatalf("B's tick before the TTL: %v, want conflict", err)
	}
	// One TTL after A's last renewal, B takes over.
	clk.Advance(time.Second)
	run, err = b.Tick(ctx, "sweep")
	if err != nil {
		t.Fatalf("B's tick after the TTL: %v", err)
	}
	if run.Holder != "B" {
		t.Errorf("run holder = %q, want B", run.Holder)
	}
	if got := []int{n.get("A"), n.get("B")}; got[0] != 2 || got[1] != 1 {
		t.Errorf("runs (A, B) = %v, want [2 1]", got)
	}
	runs, err := st.FindJobRuns(ctx, "sweep", 0)
	if err != nil {
		t.Fatal(err)
	}
	var holders []string
	for _, r := range runs {
		holders = append(holders, r.Holder)
	}
	if got := strings.Join(holders, ","); got != "B,A,A" {
		t.Errorf("recorded holders, newest first = %s, want B,A,A", got)
	}
}

// TestConcurrentTicksRunOnce: two replicas tick the same job at the same moment, many times;
// each tick runs exactly once between them.
func TestConcurrentTicksRunOnce(t *testing.T) {
	st := openStore(t)
	clk := newClock()
	var n counter
	a := newScheduler(t, st, "A", clk, n.job("sweep", "A"))
	b := newScheduler(t, st, "B", clk, n.job("sweep", "B"))
	const ticks = 20
	for i := range ticks {
		var wg sync.WaitGroup
		var ran atomic.Int32
		for _, s := range []*jobs.Scheduler{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Tick(context.Background(), "sweep")
				switch code(err) {
				case "":
					ran.Add(1)
				case models.ECONFLICT:
				default:
					t.Errorf("tick %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if ran.Load() != 1 {
			t.Fatalf("tick %d ran %d times, want exactly once", i, ran.Load())
		}
		clk.Advance(2 * time.Minute) // past the TTL: the next tick is a fresh race
	}
	if got := n.get("A") + n.get("B"); got != ticks {
		t.Errorf("total runs = %d, want %d", got, ticks)
	}
}

func TestPanicsAndErrorsAreRecordedAndTheSchedulerGoesOn(t *testing.T) {
	st := openStore(t)
	clk := newClock()
	var okRuns atomic.Int32
	s := newScheduler(t, st, "A", clk,
		jobs.Job{Name: "boom", Spec: "@daily", Run: func(context.Context, *jobs.Run) (int, error) { panic("boom at item 3") }},
		jobs.Job{Name: "fail", Spec: "@daily", Run: func(context.Context, *jobs.Run) (int, error) {
			return 2, errors.New("store unavailable")
		}},
		jobs.Job{Name: "ok", Spec: "@daily", Run: func(context.Context, *jobs.Run) (int, error) { okRuns.Add(1); return 7, nil }},
	)
	ctx := context.Background()
	for range 2 { // a panicking job can run again: it is not left marked as running
		run, err := s.Tick(ctx, "boom")
		if err != nil {
			t.Fatal(err)
		}
		if run.Error != "panic: boom at item 3" || !run.Finished {
			t.Errorf("boom run = %+v", run)
		}
	}
	run, err := s.Tick(ctx, "fail")
	if err != nil {
		t.Fatal(err)
	}
	if run.Error != "store unavailable" || run.Items != 2 || !run.Finished {
		t.Errorf("fail run = %+v", run)
	}
	run, err = s.Tick(ctx, "ok")
	if err != nil || run.Error != "" || run.Items != 7 || okRuns.Load() != 1 {
		t.Errorf("ok run after the failures = %+v, %v", run, err)
	}
	got, err := s.Runs(ctx, "boom", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Error != "panic: boom at item 3" || got[0].End.IsZero() {
		t.Errorf("recorded boom runs = %+v", got)
	}
}

// TestCronTicksSurviveAPanic runs the real cron: a job that panics on every tick keeps being
// ticked, and each run is recorded.
func TestCronTicksSurviveAPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two cron ticks")
	}
	st := openStore(t)
	var ticks atomic.Int32
	s, err := jobs.New(jobs.Options{Store: st, Holder: "A"}, jobs.Job{Name: "boom", Spec: "@every 1s",
		Run: func(context.Context, *jobs.Run) (int, error) {
			ticks.Add(1)
			panic("boom")
		}})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	deadline := time.Now().Add(5 * time.Second)
	for ticks.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A tick counts as it begins; stopping before its run is recorded would interrupt it
	// (a run that ends while the scheduler stops is recorded as interrupted). Wait for the
	// record; the next tick is a second away.
	for time.Now().Before(deadline) {
		runs, err := st.FindJobRuns(ctx, "boom", 0)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, r := range runs {
			if r.Finished {
				done++
			}
		}
		if done >= int(ticks.Load()) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if ticks.Load() < 2 {
		t.Fatalf("ticks = %d after 5 s of @every 1s, want at least 2", ticks.Load())
	}
	runs, err := st.FindJobRuns(ctx, "boom", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != int(ticks.Load()) {
		t.Errorf("recorded %d runs for %d ticks", len(runs), ticks.Load())
	}
	for _, r := range runs {
		if r.Error != "panic: boom" || r.Trigger != jobs.TriggerCron || !r.Finished {
			t.Errorf("run = %+v", r)
		}
	}
	// After Stop nothing ticks any more.
	n := ticks.Load()
	time.Sleep(1200 * time.Millisecond)
	if ticks.Load() != n {
		t.Errorf("ticks went on after Stop: %d → %d", n, ticks.Load())
	}
}

// walker is a resumable job over the items 0..n-1: it checkpoints the next item after each
// one, and the first time it reaches stopAt it waits for its context to end.
type walker struct {
	n, stopAt int
	reached   chan struct{}
	mu        sync.Mutex
	done      []int
	blocked   bool
}

func (w *walker) run(ctx context.Context, r *jobs.Run) (int, error) {
	next := 0
	if v, err := r.Checkpoint("next"); err != nil {
		return 0, err
	} else if v != "" {
		next, _ = strconv.Atoi(v)
	}
	items := 0
	for i := next; i < w.n; i++ {
		if i == w.stopAt && !w.blocked {
			w.blocked = true
			close(w.reached)
			<-ctx.Done()
		}
		if err := ctx.Err(); err != nil {
			return items, err
		}
		w.mu.Lock()
		w.done = append(w.done, i)
		w.mu.Unlock()
		items++
		if err := r.SetCheckpoint("next", strconv.Itoa(i+1)); err != nil {
			return items, err
		}
	}
	return items, r.SetCheckpoint("next", "")
}

func TestStopInterruptsARunThatResumesFromItsCheckpoint(t *testing.T) {
	st := openStore(t)
	clk := newClock()
	w := &walker{n: 10, stopAt: 4, reached: make(chan struct{})}
	job := jobs.Job{Name: "walk", Spec: "@hourly", Run: w.run}
	a, err := jobs.New(jobs.Options{Store: st, Holder: "A", Now: clk.Now}, job)
	if err != nil {
		t.Fatal(err)
	}
	started, err := a.Trigger(context.Background(), "walk")
	if err != nil {
		t.Fatal(err)
	}
	if started.Finished || !started.End.IsZero() || started.Trigger != jobs.TriggerManual {
		t.Errorf("trigger returned %+v, want a started manual run", started)
	}
	<-w.reached
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err := st.FindJobRuns(ctx, "walk", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != started.ID || runs[0].Finished || runs[0].Items != 4 ||
		runs[0].Error != "interrupted: the scheduler is stopping" || runs[0].End.IsZero() {
		t.Fatalf("interrupted run = %+v", runs[0])
	}
	if cp, _ := st.GetState(ctx, "job/walk/next"); cp != "4" {
		t.Errorf("checkpoint = %q, want 4", cp)
	}
	if _, err := a.Trigger(ctx, "walk"); code(err) != models.EUNAVAILABLE {
		t.Errorf("trigger after stop: %v, want unavailable", err)
	}

	// The next process (another holder: Stop released the lease) resumes at item 4.
	clk.Advance(time.Second)
	b := newScheduler(t, st, "B", clk, job)
	run, err := b.Tick(ctx, "walk")
	if err != nil {
		t.Fatal(err)
	}
	if !run.Finished || run.Items != 6 || run.Error != "" {
		t.Errorf("resumed run = %+v, want 6 items finished", run)
	}
	if got := fmt.Sprint(w.done); got != "[0 1 2 3 4 5 6 7 8 9]" {
		t.Errorf("items processed = %s, want each once in order", got)
	}
	if cp, _ := st.GetState(ctx, "job/walk/next"); cp != "" {
		t.Errorf("checkpoint after a complete run = %q, want cleared", cp)
	}
}

func TestNoOverlappingRuns(t *testing.T) {
	st := openStore(t)
	clk := newClock()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	s := newScheduler(t, st, "A", clk, jobs.Job{Name: "slow", Spec: "*/5 * * * *", Run: func(ctx context.Context, r *jobs.Run) (int, error) {
		entered <- struct{}{}
		<-release
		return 1, nil
	}})
	ctx := context.Background()
	first, err := s.Trigger(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	if _, err := s.Trigger(ctx, "slow"); code(err) != models.ECONFLICT {
		t.Errorf("second trigger: %v, want conflict", err)
	}
	if _, err := s.Tick(ctx, "slow"); code(err) != models.ECONFLICT {
		t.Errorf("tick while running: %v, want conflict", err)
	}
	sts, err := s.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 1 || sts[0].Running == nil || sts[0].Running.ID != first.ID || sts[0].Last == nil || sts[0].Last.ID != first.ID ||
		sts[0].Scheduled || !sts[0].Next.IsZero() {
		t.Errorf("status while running = %+v", sts)
	}
	close(release)
	clk.Advance(time.Minute) // runs are listed by start time
	// Once the run ends the job runs again; skipped attempts left no record.
	deadline := time.Now().Add(5 * time.Second)
	for {
		run, err := s.Tick(ctx, "slow")
		if err == nil {
			<-entered
			runs, _ := s.Runs(ctx, "slow", 0)
			if len(runs) != 2 || runs[1].ID != first.ID || !runs[1].Finished || run.ID != runs[0].ID {
				t.Errorf("runs = %+v", runs)
			}
			break
		}
		if code(err) != models.ECONFLICT || time.Now().After(deadline) {
			t.Fatalf("tick after the run: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStatusShowsScheduleAndLastRun(t *testing.T) {
	st := openStore(t)
	clk := newClock() // Monday 2026-03-02 09:00 UTC
	var n counter
	s := newScheduler(t, st, "A", clk, n.job("hourly", "A"),
		jobs.Job{Name: "nightly", Spec: "30 2 * * *", Run: func(context.Context, *jobs.Run) (int, error) { return 0, nil }},
		jobs.Job{Name: "weekly", Spec: "@weekly", Run: func(context.Context, *jobs.Run) (int, error) { return 0, nil }})
	if _, err := s.Tick(context.Background(), "nightly"); err != nil {
		t.Fatal(err)
	}
	s.Start()
	sts, err := s.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"hourly":  "2026-03-02T10:00:00Z", // @every 1h from Start
		"nightly": "2026-03-03T02:30:00Z",
		"weekly":  "2026-03-08T00:00:00Z", // Sunday midnight, UTC
	}
	if len(sts) != 3 {
		t.Fatalf("statuses = %+v", sts)
	}
	for _, st := range sts {
		if got := st.Next.Format(time.RFC3339); got != want[st.Name] || !st.Scheduled {
			t.Errorf("%s: next = %s (scheduled %v), want %s", st.Name, got, st.Scheduled, want[st.Name])
		}
		if (st.Last != nil) != (st.Name == "nightly") {
			t.Errorf("%s: last = %+v", st.Name, st.Last)
		}
	}

	// An @every job ticks at Start + k·interval, whenever it is asked: the status used to
	// say now + interval (10:30 here), which moved with every call.
	for _, tc := range []struct {
		advance time.Duration
		want    string
	}{
		{30 * time.Minute, "2026-03-02T10:00:00Z"},
		{30 * time.Minute, "2026-03-02T11:00:00Z"}, // at 10:00 exactly, that tick is due now
		{150*time.Minute + time.Second, "2026-03-02T13:00:00Z"},
	} {
		clk.Advance(tc.advance)
		sts, err := s.Jobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := sts[0].Next.Format(time.RFC3339); got != tc.want {
			t.Errorf("at %s: hourly next = %s, want %s", clk.Now().Format(time.TimeOnly), got, tc.want)
		}
	}
}

// TestLostLeaseStopsTheRun: a run whose process stalled past the TTL, so that another
// replica took the lease, is cancelled at its next renewal and recorded unfinished.
func TestLostLeaseStopsTheRun(t *testing.T) {
	st := openStore(t)
	clk := newClock()
	entered := make(chan struct{})
	s, err := jobs.New(jobs.Options{Store: st, Holder: "A", LeaseTTL: 30 * time.Millisecond, Now: clk.Now},
		jobs.Job{Name: "long", Spec: "@daily", Run: func(ctx context.Context, r *jobs.Run) (int, error) {
			close(entered)
			<-ctx.Done()
			return 0, ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	done := make(chan *models.JobRun)
	go func() {
		run, err := s.Tick(context.Background(), "long")
		if err != nil {
			t.Error(err)
		}
		done <- run
	}()
	<-entered
	ctx := context.Background()
	for stolen := false; !stolen; {
		clk.Advance(time.Hour) // A's lease has expired by the clock; the thief may take it
		ok, err := st.AcquireLease(ctx, "job:long", "thief", time.Hour, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		stolen = ok
	}
	select {
	case run := <-done:
		if run.Finished || run.Error != "interrupted: the lease was lost to another holder" {
			t.Errorf("run = %+v", run)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run went on after its lease was lost")
	}
}

func TestErrors(t *testing.T) {
	st := openStore(t)
	noop := func(context.Context, *jobs.Run) (int, error) { return 0, nil }
	for _, tc := range []struct {
		jobs  []jobs.Job
		field string
	}{
		{[]jobs.Job{{Name: "a", Spec: "every day", Run: noop}}, "jobs[0].spec"},
		{[]jobs.Job{{Name: "a", Spec: "61 * * * *", Run: noop}}, "jobs[0].spec"},
		{[]jobs.Job{{Name: "a", Spec: "@daily", Run: noop}, {Name: "a", Spec: "@daily", Run: noop}}, "jobs[1].name"},
		{[]jobs.Job{{Name: "", Spec: "@daily", Run: noop}}, "jobs[0].name"},
		{[]jobs.Job{{Name: "a", Spec: "@daily"}}, "jobs[0].run"},
	} {
		_, err := jobs.New(jobs.Options{Store: st}, tc.jobs...)
		if code(err) != models.EINVALID || models.ErrorField(err) != tc.field {
			t.Errorf("New(%+v) = %v, want invalid %s", tc.jobs, err, tc.field)
		}
	}
	if _, err := jobs.New(jobs.Options{}); code(err) != models.EINVALID {
		t.Errorf("New without a store = %v", err)
	}
	clk := newClock()
	s := newScheduler(t, st, "", clk, jobs.Job{Name: "a", Spec: "@daily", Run: noop})
	if h := s.Holder(); !strings.Contains(h, "-") || len(h) < 10 {
		t.Errorf("default holder = %q", h)
	}
	ctx := context.Background()
	if _, err := s.Trigger(ctx, "nope"); code(err) != models.ENOTFOUND {
		t.Errorf("trigger unknown = %v", err)
	}
	if _, err := s.Runs(ctx, "nope", 0); code(err) != models.ENOTFOUND {
		t.Errorf("runs unknown = %v", err)
	}
	if _, err := s.Runs(ctx, "a", 1001); code(err) != models.EINVALID {
		t.Errorf("runs limit 1001 = %v", err)
	}
	if runs, err := s.Runs(ctx, "a", 0); err != nil || len(runs) != 0 {
		t.Errorf("runs of a job never run = %v, %v", runs, err)
	}
}

func TestParseSpec(t *testing.T) {
	from := time.Date(2026, 3, 2, 9, 17, 0, 0, time.UTC) // a Monday
	for _, tt := range []struct{ spec, next string }{
		{"@every 5m", "2026-03-02T09:22:00Z"},
		{"@hourly", "2026-03-02T10:00:00Z"},
		{"@daily", "2026-03-03T00:00:00Z"},
		{"@weekly", "2026-03-08T00:00:00Z"},
		{"30 3 * * *", "2026-03-03T03:30:00Z"},
		{"*/10 * * * *", "2026-03-02T09:20:00Z"},
		{"0 12 * * MON-FRI", "2026-03-02T12:00:00Z"},
	} {
		s, err := jobs.ParseSpec(tt.spec)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if got := s.Next(from).Format(time.RFC3339); got != tt.next {
			t.Errorf("%q: next after %s = %s, want %s", tt.spec, from.Format(time.RFC3339), got, tt.next)
		}
	}
	for _, spec := range []string{"", "hourly", "* * * *", "61 * * * *", "@every", "@every soon", "TZ=UTC", "CRON_TZ=Nowhere/City * * * * *"} {
		if _, err := jobs.ParseSpec(spec); code(err) != models.EINVALID {
			t.Errorf("%q: %v, want invalid", spec, err)
		}
	}
}

// FuzzParseSpec: cron specs come from flags and the environment; no spec may crash the
// server at start.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"@every 5m", "@daily", "30 3 * * *", "*/10 1-5 * JAN MON", "TZ=UTC", "CRON_TZ=Europe/Paris 0 0 * * *",
		"@every -1s", "0 0 31 2 *", "", "* * * * * *", "@every 1000000h"} {
		f.Add(s)
	}
	from := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := jobs.ParseSpec(spec)
		if err != nil {
			if code(err) != models.EINVALID {
				t.Fatalf("%q: %v is not EINVALID", spec, err)
			}
			return
		}
		if next := s.Next(from); !next.IsZero() && !next.After(from) {
			t.Fatalf("%q: next %v is not after %v", spec, next, from)
		}
	})
}

// endWatcher is the store, with a hook that runs once, as a run's end is recorded.
type endWatcher struct {
	*sqlite.Store
	ended func()
}

func (w *endWatcher) RecordJobRun(ctx context.Context, run *models.JobRun) error {
	if f := w.ended; run.Finished && f != nil {
		w.ended = nil
		f()
	}
	return w.Store.RecordJobRun(ctx, run)
}

// TestAJobIsFreeOnceItsEndIsRecorded: whoever reads a run as ended — a script polling the job
// runs, as the resurfacing test does — may start the job again at once: no 409 for a run
// that has finished.
func TestAJobIsFreeOnceItsEndIsRecorded(t *testing.T) {
	var c counter
	w := &endWatcher{Store: openStore(t)}
	s := newScheduler(t, w, "A", newClock(), c.job("count", "A"))
	var again error
	w.ended = func() { _, again = s.Trigger(context.Background(), "count") }
	if _, err := s.Tick(context.Background(), "count"); err != nil {
		t.Fatal(err)
	}
	if again != nil {
		t.Fatalf("starting the job as its end is recorded: %v (code %s)", again, code(again))
	}
}
