package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
)

// JobsConfig configures the scheduled jobs and the decay policy (docs/design.md#decay-and-jobs).
type JobsConfig struct {
	Enabled           bool          // --jobs, SALIENCE_JOBS: tick the jobs on this server
	DecayScan         string        // --schedule-decay-scan
	EdgeDecay         string        // --schedule-edge-decay
	DismissalCooldown string        // --schedule-dismissal-cooldown
	ImplicitIgnore    string        // --schedule-implicit-ignore
	BanditUpkeep      string        // --schedule-bandit-upkeep
	ReportSnapshot    string        // --schedule-report-snapshot
	PruneHistory      string        // --schedule-prune-history
	HistoryRetention  time.Duration // --history-retention; 0 keeps the turn history forever
	IgnoreAfter       time.Duration // --implicit-ignore-after
	ResurfaceCap      int           // --resurface-cap: queue size per namespace
	Policy            string        // --decay-policy: linear or fsrs
	Threshold         float64       // --decay-threshold (linear)
	TargetRetention   float64       // --target-retention (fsrs)
	DismissCooldown   time.Duration // --dismiss-cooldown; 0 disables it
	LeaseTTL          time.Duration // --lease-ttl
}

// DefaultJobsConfig returns the jobs configuration of `salience serve` with no flags.
func DefaultJobsConfig() JobsConfig {
	return JobsConfig{
		Enabled:           true,
		DecayScan:         "@every 1h",
		EdgeDecay:         "@daily",
		DismissalCooldown: "@weekly",
		ImplicitIgnore:    "@every 5m",
		BanditUpkeep:      "@every 1m",
		ReportSnapshot:    "10 0 * * *",
		PruneHistory:      "30 1 * * *",
		IgnoreAfter:       maintenance.DefaultIgnoreAfter,
		ResurfaceCap:      maintenance.DefaultQueueCap,
		Policy:            decay.DefaultPolicy,
		Threshold:         decay.LinearThreshold,
		TargetRetention:   decay.DefaultTargetRetention,
		DismissCooldown:   decay.DefaultCooldown,
		LeaseTTL:          jobs.DefaultLeaseTTL,
	}
}

// flagSet declares the jobs flags on fs, bound to j (which holds the defaults).
func (j *JobsConfig) flagSet(fs *flag.FlagSet) {
	fs.BoolVar(&j.Enabled, "jobs", j.Enabled, "run the scheduled jobs on this server (with false it still lists and triggers them on request)")
	fs.StringVar(&j.DecayScan, "schedule-decay-scan", j.DecayScan, "cron schedule (UTC) of decay-scan, which fills the resurfacing queue")
	fs.StringVar(&j.EdgeDecay, "schedule-edge-decay", j.EdgeDecay, "cron schedule (UTC) of edge-decay")
	fs.StringVar(&j.DismissalCooldown, "schedule-dismissal-cooldown", j.DismissalCooldown, "cron schedule (UTC) of dismissal-cooldown (it acts at most once per ISO week)")
	fs.StringVar(&j.ImplicitIgnore, "schedule-implicit-ignore", j.ImplicitIgnore, "cron schedule (UTC) of implicit-ignore")
	fs.StringVar(&j.BanditUpkeep, "schedule-bandit-upkeep", j.BanditUpkeep, "cron schedule (UTC) of bandit-upkeep, which feeds settled turns' rewards to the threshold bandit")
	fs.StringVar(&j.ReportSnapshot, "schedule-report-snapshot", j.ReportSnapshot, "cron schedule (UTC) of report-snapshot, which keeps each experiment's report as of the end of the last UTC day (run it after midnight)")
	fs.StringVar(&j.PruneHistory, "schedule-prune-history", j.PruneHistory, "cron schedule (UTC) of prune-history, which deletes the turn history older than --history-retention")
	fs.Var(durationDays{&j.HistoryRetention}, "history-retention", "keep the turn history (surfacings, engagement events, bandit decisions, conversation states, job runs) this long, e.g. 30d or 720h; 0 keeps it forever. At least 1d; what it taught (memories, edges, learned models) always stays")
	fs.DurationVar(&j.IgnoreAfter, "implicit-ignore-after", j.IgnoreAfter, "a surfacing with no engagement event this long after it was shown counts as ignored (a namespace's settings may set its own: implicit_ignore_after_hours)")
	fs.IntVar(&j.ResurfaceCap, "resurface-cap", j.ResurfaceCap, "how many memories decay-scan keeps queued per namespace, highest value first")
	fs.StringVar(&j.Policy, "decay-policy", j.Policy, "decay policy of every namespace whose settings name none: fsrs (FSRS-6) or linear")
	fs.Float64Var(&j.Threshold, "decay-threshold", j.Threshold, "linear policy: due when days since last use / (uses + 1) reaches this (default of the settings' decay.threshold)")
	fs.Float64Var(&j.TargetRetention, "target-retention", j.TargetRetention, "fsrs policy: due when the retrievability falls below this (0 to 1; default of the settings' decay.target_retention)")
	fs.DurationVar(&j.DismissCooldown, "dismiss-cooldown", j.DismissCooldown, "a dismissed memory is not resurfaced for this long (0: no cooldown; default of the settings' decay.dismiss_cooldown_hours)")
	fs.DurationVar(&j.LeaseTTL, "lease-ttl", j.LeaseTTL, "job lease duration; another replica takes over a job this long after its runner died")
}

// params are the decay parameters the flags give.
func (j *JobsConfig) params() decay.Params {
	p := decay.Params{Threshold: j.Threshold, TargetRetention: j.TargetRetention, Cooldown: j.DismissCooldown}
	if j.DismissCooldown == 0 {
		p.Cooldown = -1 // decay.Params: zero is "the default", negative is "none"
	}
	return p
}

// schedules maps each job to its configured cron spec.
func (j *JobsConfig) schedules() map[string]string {
	return map[string]string{
		maintenance.JobDecayScan:         j.DecayScan,
		maintenance.JobEdgeDecay:         j.EdgeDecay,
		maintenance.JobDismissalCooldown: j.DismissalCooldown,
		maintenance.JobImplicitIgnore:    j.ImplicitIgnore,
		maintenance.JobBanditUpkeep:      j.BanditUpkeep,
		experiment.JobReportSnapshot:     j.ReportSnapshot,
		maintenance.JobPruneHistory:      j.PruneHistory,
	}
}

// validate checks the jobs configuration.
func (j *JobsConfig) Validate() error {
	var errs []error
	for _, f := range []struct{ flag, spec string }{
		{"schedule-decay-scan", j.DecayScan}, {"schedule-edge-decay", j.EdgeDecay},
		{"schedule-dismissal-cooldown", j.DismissalCooldown}, {"schedule-implicit-ignore", j.ImplicitIgnore},
		{"schedule-bandit-upkeep", j.BanditUpkeep}, {"schedule-report-snapshot", j.ReportSnapshot},
		{"schedule-prune-history", j.PruneHistory},
	} {
		if _, err := jobs.ParseSpec(f.spec); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %s", f.flag, models.ErrorMessage(err)))
		}
	}
	if j.IgnoreAfter <= 0 {
		errs = append(errs, fmt.Errorf("--implicit-ignore-after must be positive, got %v", j.IgnoreAfter))
	}
	if j.ResurfaceCap < 1 {
		errs = append(errs, fmt.Errorf("--resurface-cap must be at least 1, got %d", j.ResurfaceCap))
	}
	if j.Policy != decay.PolicyLinear && j.Policy != decay.PolicyFSRS {
		errs = append(errs, fmt.Errorf("--decay-policy %q: want fsrs or linear", j.Policy))
	}
	if !(j.Threshold > 0) || j.Threshold > models.MaxDecayThreshold {
		errs = append(errs, fmt.Errorf("--decay-threshold must be positive, got %v", j.Threshold))
	}
	if !(j.TargetRetention > 0 && j.TargetRetention < 1) {
		errs = append(errs, fmt.Errorf("--target-retention must be between 0 and 1, exclusive, got %v", j.TargetRetention))
	}
	if j.DismissCooldown < 0 {
		errs = append(errs, fmt.Errorf("--dismiss-cooldown must not be negative, got %v", j.DismissCooldown))
	}
	if err := maintenance.CheckRetention(j.HistoryRetention); err != nil {
		errs = append(errs, fmt.Errorf("--history-retention: %v", err))
	}
	if j.LeaseTTL < time.Second {
		errs = append(errs, fmt.Errorf("--lease-ttl must be at least 1s, got %v", j.LeaseTTL))
	}
	return errors.Join(errs...)
}

// jobsStore is what the scheduler and the maintenance jobs need of the store.
type jobsStore interface {
	jobs.Store
	maintenance.Store
}

// newScheduler builds the decay policies, the maintenance jobs and the scheduler that runs
// them; it does not start ticking.
func newScheduler(st jobsStore, settings maintenance.SettingsSource, exps *experiment.Service, j *JobsConfig, logger *slog.Logger) (*jobs.Scheduler, *maintenance.Policies, error) {
	policies, err := maintenance.NewPolicies(j.Policy, j.params(), settings, logger)
	if err != nil {
		return nil, nil, err
	}
	svc := maintenance.New(st, maintenance.Options{Policy: policies.For, QueueCap: j.ResurfaceCap,
		IgnoreAfter: j.IgnoreAfter, Settings: settings, Logger: logger, EmptyReward: emptyReward(settings),
		Retention: j.HistoryRetention})
	specs := j.schedules()
	var js []jobs.Job
	for _, t := range svc.Tasks() {
		js = append(js, jobs.Job{Name: t.Name, Spec: specs[t.Name], Run: func(ctx context.Context, r *jobs.Run) (int, error) {
			return t.Run(ctx, r)
		}})
	}
	js = append(js, jobs.Job{Name: experiment.JobReportSnapshot, Spec: specs[experiment.JobReportSnapshot],
		Run: func(ctx context.Context, r *jobs.Run) (int, error) { return exps.SnapshotAll(ctx, r.Now()) }})
	sched, err := jobs.New(jobs.Options{Store: st, LeaseTTL: j.LeaseTTL, Logger: logger}, js...)
	if err != nil {
		return nil, nil, err
	}
	return sched, policies, nil
}

// emptyReward answers bandit-upkeep's EmptyReward hook from the namespace settings: the
// namespace's empty_turn_reward, else engagement.EmptyTurnReward.
func emptyReward(sets maintenance.SettingsSource) func(ns string) float64 {
	return func(ns string) float64 {
		// The settings service caches: a store read at most once per TTL per namespace.
		s, err := sets.For(context.Background(), ns)
		if err != nil || s == nil || s.EmptyTurnReward == nil {
			return engagement.EmptyTurnReward
		}
		return *s.EmptyTurnReward
	}
}

// durationDays is a flag over a time.Duration that also takes days: "30d", "1.5d", or any
// duration time.ParseDuration reads ("720h").
type durationDays struct{ d *time.Duration }

func (v durationDays) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

func (v durationDays) Set(s string) error {
	t := strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(t, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || !(n >= 0) || n > 100*365 {
			return fmt.Errorf("want a duration such as 30d or 720h, got %q", s)
		}
		*v.d = time.Duration(n * 24 * float64(time.Hour))
		return nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return fmt.Errorf("want a duration such as 30d or 720h, got %q", s)
	}
	*v.d = d
	return nil
}
