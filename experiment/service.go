package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
)

// Store is what the service needs of models.Store.
type Store interface {
	models.ExperimentStore
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error
	Namespaces(ctx context.Context) ([]string, error)
}

// DefaultTTL is how long the running experiment of a namespace is trusted before it is
// read again: a create or stop on this server is seen at once, on another server sharing
// the store within the TTL (a few turns may still be recorded in a just-stopped experiment).
const DefaultTTL = 10 * time.Second

// JobReportSnapshot is the name of the daily job that keeps report snapshots.
const JobReportSnapshot = "report-snapshot"

// Options configure a Service.
type Options struct {
	TTL time.Duration    // 0 = DefaultTTL; negative: no cache, every Running reads the store
	Now func() time.Time // nil = time.Now
}

// Service creates, lists and stops experiments, answers recall which experiment a
// namespace runs (cached), and computes reports: live from the store's tally, or from the
// daily snapshots. It is safe for concurrent use.
type Service struct {
	store Store
	ttl   time.Duration
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cachedRunning
}

type cachedRunning struct {
	e  *models.Experiment
	at time.Time
}

// NewService returns the service over st.
func NewService(st Store, opts Options) *Service {
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{store: st, ttl: opts.TTL, now: opts.Now, cache: map[string]cachedRunning{}}
}

// Create starts an experiment in ns from its name, description and variants: the service
// sets its id, status, creation time and author. EINVALID naming the field for bad
// variants; ECONFLICT when the namespace already runs one (one at a time, so that a
// conversation is in at most one experiment).
func (s *Service) Create(ctx context.Context, ns string, e *models.Experiment, by string) (*models.Experiment, error) {
	now := s.now().UTC()
	c := *e
	c.ID, c.Namespace, c.Status, c.CreatedAt, c.CreatedBy, c.StoppedAt = ids.New(now), ns, models.ExperimentRunning, now, by, time.Time{}
	if c.PrimaryMetric == "" {
		c.PrimaryMetric = models.DefaultPrimaryMetric // stored, so the report never changes its ranking
	}
	if err := s.store.CreateExperiment(ctx, &c); err != nil {
		return nil, err
	}
	s.Forget(ns)
	return &c, nil
}

// Get returns one experiment; ENOTFOUND when missing.
func (s *Service) Get(ctx context.Context, ns, id string) (*models.Experiment, error) {
	return s.store.GetExperiment(ctx, ns, id)
}

// List returns a namespace's experiments, newest first.
func (s *Service) List(ctx context.Context, ns string) ([]*models.Experiment, error) {
	return s.store.FindExperiments(ctx, ns)
}

// Stop stops an experiment (again: no change); its conversations return to the namespace's
// settings at once on this server.
func (s *Service) Stop(ctx context.Context, ns, id string) (*models.Experiment, error) {
	e, err := s.store.StopExperiment(ctx, ns, id, s.now().UTC())
	if err != nil {
		return nil, err
	}
	s.Forget(ns)
	return e, nil
}

// Forget drops ns's cached running experiment (after a stop, or the namespace's deletion):
// the next Running reads the store. Other processes' caches see it within their TTL.
func (s *Service) Forget(ns string) {
	s.mu.Lock()
	delete(s.cache, ns)
	s.mu.Unlock()
}

// Running returns the experiment ns runs, or nil; cached for the TTL (recall asks on every
// turn).
func (s *Service) Running(ctx context.Context, ns string) (*models.Experiment, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.cache[ns]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < s.ttl {
		return c.e, nil
	}
	list, err := s.store.FindExperiments(ctx, ns)
	if err != nil {
		return nil, err
	}
	var running *models.Experiment
	for _, e := range list {
		if e.Status == models.ExperimentRunning {
			running = e
			// A variant created before fixed:<x> took decimals only still runs as it did.
			for i := range e.Variants {
				o := &e.Variants[i].Overrides
				o.ThresholdPolicy = models.UpgradeThresholdPolicy(o.ThresholdPolicy)
			}
			break
		}
	}
	s.mu.Lock()
	if len(s.cache) >= 10000 {
		s.cache = map[string]cachedRunning{}
	}
	s.cache[ns] = cachedRunning{e: running, at: now}
	s.mu.Unlock()
	return running, nil
}

// InputAt tallies an experiment as of asOf into the report's input.
func (s *Service) InputAt(ctx context.Context, e *models.Experiment, asOf time.Time) (Input, error) {
	tallies, err := s.store.TallyExperiment(ctx, e.Namespace, e.ID, asOf)
	if err != nil {
		return Input{}, err
	}
	in := Input{ExperimentID: e.ID, Name: e.Name, Status: e.Status, CreatedAt: e.CreatedAt, StoppedAt: e.StoppedAt, AsOf: asOf.UTC(),
		PrimaryMetric: e.PrimaryMetric}
	if !e.StoppedAt.IsZero() && e.StoppedAt.After(asOf) {
		in.Status, in.StoppedAt = models.ExperimentRunning, time.Time{} // as it was then
	}
	for i, t := range tallies {
		days := make([]DayTally, len(t.Days))
		for j, d := range t.Days {
			days[j] = DayTally{Day: d.Day, Turns: d.Turns, EmptyTurns: d.EmptyTurns, Surfaced: d.Surfaced, Used: d.Used, Helpful: d.Helpful,
				Ignored: d.Ignored, Dismissed: d.Dismissed}
		}
		in.Variants = append(in.Variants, Tally{Variant: t.Variant, Share: e.Variants[i].Share, Conversations: t.Conversations,
			Turns: t.Turns, EmptyTurns: t.EmptyTurns, Surfaced: t.Surfaced, Used: t.Used, Helpful: t.Helpful, Ignored: t.Ignored, Dismissed: t.Dismissed,
			LatenciesMS: t.LatenciesMS, Days: days})
	}
	return in, nil
}

// Report computes an experiment's report as of now from the store.
func (s *Service) Report(ctx context.Context, ns, id string) (Report, error) {
	e, err := s.store.GetExperiment(ctx, ns, id)
	if err != nil {
		return Report{}, err
	}
	in, err := s.InputAt(ctx, e, s.now())
	if err != nil {
		return Report{}, err
	}
	return Analyze(in), nil
}

// Snapshot is one day's stored report of an experiment: the report as of the end of that
// UTC day, and its input (latencies are not kept: the report holds their percentiles).
type Snapshot struct {
	Day    string `json:"day"` // YYYY-MM-DD
	Input  Input  `json:"input"`
	Report Report `json:"report"`
}

// indexKey is the state key of an experiment's snapshot days (a sorted JSON list), so the
// nearest snapshot before a date is two reads.
func indexKey(ns, id string) string { return models.ExperimentKeyPrefix + ns + "/" + id }

func (s *Service) snapshotDays(ctx context.Context, ns, id string) ([]string, error) {
	raw, err := s.store.GetState(ctx, indexKey(ns, id))
	if err != nil || raw == "" {
		return nil, err
	}
	var days []string
	if err := json.Unmarshal([]byte(raw), &days); err != nil {
		return nil, models.Errorf(models.EINTERNAL, "snapshot index of experiment %s: %v", id, err)
	}
	return days, nil
}

// SnapshotOn returns the latest snapshot taken for a UTC day at or before day (the report
// as of the end of that day). ENOTFOUND naming as_of when there is none.
func (s *Service) SnapshotOn(ctx context.Context, ns, id string, day time.Time) (Snapshot, error) {
	if _, err := s.store.GetExperiment(ctx, ns, id); err != nil {
		return Snapshot{}, err
	}
	days, err := s.snapshotDays(ctx, ns, id)
	if err != nil {
		return Snapshot{}, err
	}
	want := day.UTC().Format(time.DateOnly)
	i, found := slices.BinarySearch(days, want)
	if !found {
		i--
	}
	if i < 0 {
		return Snapshot{}, &models.Error{Code: models.ENOTFOUND, Field: "as_of",
			Message: fmt.Sprintf("experiment %s has no report snapshot on or before %s (report-snapshot keeps one per day)", id, want)}
	}
	raw, err := s.store.GetState(ctx, models.SnapshotKey(ns, id, mustDay(days[i])))
	if err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	if err := json.Unmarshal([]byte(raw), &snap); err != nil {
		return Snapshot{}, models.Errorf(models.EINTERNAL, "snapshot %s of experiment %s: %v", days[i], id, err)
	}
	return snap, nil
}

func mustDay(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s) // the index holds only days this code wrote
	return t
}

// SnapshotAll is the report-snapshot job: for every experiment that ran during the last
// complete UTC day before now, it stores the report as of that day's end, unless stored
// already — so the job is idempotent, and a run missed for a few days is made up by the
// next only for the last day (a snapshot is what was known then; it is not recomputed
// later, when late reports and implicit ignores have changed the tally). It walks the
// namespaces that hold memories: an experiment elsewhere has surfaced nothing.
func (s *Service) SnapshotAll(ctx context.Context, now time.Time) (int, error) {
	end := now.UTC().Truncate(24 * time.Hour)
	start := end.Add(-24 * time.Hour)
	day := start.Format(time.DateOnly)
	nss, err := s.store.Namespaces(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ns := range nss {
		list, err := s.store.FindExperiments(ctx, ns)
		if err != nil {
			return n, err
		}
		for _, e := range list {
			if !e.CreatedAt.Before(end) || (!e.StoppedAt.IsZero() && e.StoppedAt.Before(start)) {
				continue // did not run that day
			}
			done, err := s.snapshot(ctx, e, day, end)
			if err != nil {
				return n, fmt.Errorf("experiment %s of %s: %w", e.ID, ns, err)
			}
			if done {
				n++
			}
		}
	}
	return n, nil
}

// snapshot stores e's report as of end under day, unless the day has one.
func (s *Service) snapshot(ctx context.Context, e *models.Experiment, day string, end time.Time) (bool, error) {
	days, err := s.snapshotDays(ctx, e.Namespace, e.ID)
	if err != nil {
		return false, err
	}
	if _, found := slices.BinarySearch(days, day); found {
		return false, nil
	}
	in, err := s.InputAt(ctx, e, end)
	if err != nil {
		return false, err
	}
	b, err := json.Marshal(Snapshot{Day: day, Input: in, Report: Analyze(in)})
	if err != nil {
		return false, err
	}
	// The snapshot first, then the index: a crash between leaves an unlisted snapshot that
	// the next run writes again, never a listed day without its snapshot.
	if err := s.store.SetState(ctx, models.SnapshotKey(e.Namespace, e.ID, mustDay(day)), string(b)); err != nil {
		return false, err
	}
	days = append(days, day)
	slices.Sort(days)
	idx, _ := json.Marshal(days)
	return true, s.store.SetState(ctx, indexKey(e.Namespace, e.ID), string(idx))
}
