package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
)

func TestJobsFlagsAndEnvironment(t *testing.T) {
	env := map[string]string{
		"SALIENCE_DECAY_POLICY":             "linear",
		"SALIENCE_DECAY_THRESHOLD":          "0.5",
		"SALIENCE_SCHEDULE_DECAY_SCAN":      "@every 10m", // loses to the flag
		"SALIENCE_SCHEDULE_EDGE_DECAY":      "0 3 * * *",
		"SALIENCE_IMPLICIT_IGNORE_AFTER":    "45m",
		"SALIENCE_JOBS":                     "false",
		"SALIENCE_LEASE_TTL":                "2m",
		"SALIENCE_TARGET_RETENTION":         "0.85",
		"SALIENCE_DISMISS_COOLDOWN":         "72h",
		"SALIENCE_RESURFACE_CAP":            "25",
		"SALIENCE_SCHEDULE_IMPLICIT_IGNORE": "*/10 * * * *",
		"SALIENCE_SCHEDULE_BANDIT_UPKEEP":   "@every 2m",
		"SALIENCE_SCHEDULE_REPORT_SNAPSHOT": "30 1 * * *",
		"SALIENCE_SCHEDULE_PRUNE_HISTORY":   "0 4 * * *",
		"SALIENCE_HISTORY_RETENTION":        "30d",
	}
	m, err := parse(t, env, "--schedule-decay-scan", "@hourly", "--schedule-dismissal-cooldown", "@midnight")
	if err != nil {
		t.Fatal(err)
	}
	want := JobsConfig{
		Enabled: false, DecayScan: "@hourly", EdgeDecay: "0 3 * * *", DismissalCooldown: "@midnight", ImplicitIgnore: "*/10 * * * *",
		BanditUpkeep: "@every 2m", ReportSnapshot: "30 1 * * *", PruneHistory: "0 4 * * *", HistoryRetention: 720 * time.Hour, IgnoreAfter: 45 * time.Minute, ResurfaceCap: 25, Policy: "linear", Threshold: 0.5, TargetRetention: 0.85,
		DismissCooldown: 72 * time.Hour, LeaseTTL: 2 * time.Minute,
	}
	if m.Config.Jobs != want {
		t.Errorf("jobs config = %+v, want %+v", m.Config.Jobs, want)
	}
	// --dismiss-cooldown 0 means no cooldown, which decay.Params spells as negative.
	m, err = parse(t, nil, "--dismiss-cooldown", "0")
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Config.Jobs.params(); p.Cooldown >= 0 {
		t.Errorf("cooldown 0 gives params %+v, want a negative (disabled) cooldown", p)
	}
}

func TestJobsConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--schedule-decay-scan", "hourly"}, "--schedule-decay-scan"},
		{[]string{"--schedule-edge-decay", "61 * * * *"}, "--schedule-edge-decay"},
		{[]string{"--schedule-implicit-ignore", ""}, "--schedule-implicit-ignore"},
		{[]string{"--decay-policy", "sm2"}, "--decay-policy"},
		{[]string{"--decay-threshold", "0"}, "--decay-threshold"},
		{[]string{"--target-retention", "1"}, "--target-retention"},
		{[]string{"--implicit-ignore-after", "0s"}, "--implicit-ignore-after"},
		{[]string{"--dismiss-cooldown", "-1h"}, "--dismiss-cooldown"},
		{[]string{"--lease-ttl", "10ms"}, "--lease-ttl"},
		{[]string{"--resurface-cap", "0"}, "--resurface-cap"},
		{[]string{"--jobs=maybe"}, "jobs"},
		{[]string{"--history-retention", "1h"}, "--history-retention"},
		{[]string{"--history-retention", "0.5d"}, "--history-retention"},
		{[]string{"--history-retention", "monthly"}, "history-retention"},
		{[]string{"--history-retention", "-1d"}, "history-retention"},
		{[]string{"--history-retention", "-24h"}, "--history-retention"},
		{[]string{"--schedule-prune-history", "daily"}, "--schedule-prune-history"},
	} {
		if _, err := parse(t, nil, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want it to mention %q", tt.args, err, tt.want)
		}
	}
}

// TestJobsEndToEnd runs the real server: memories stored with old creation times are due,
// an admin triggers decay-scan, the run is recorded and the namespace's queue lists them.
func TestJobsEndToEnd(t *testing.T) {
	s := startServer(t, "", "--schedule-edge-decay", "30 3 * * *")

	var list api.JobsResponse
	s.must("GET", "/v1/admin/jobs", "", "", 200, &list)
	var names []string
	for _, j := range list.Jobs {
		names = append(names, j.Name+" "+j.Spec)
		if !j.Scheduled || j.NextRun.IsZero() || j.Running || j.LastRun != nil {
			t.Errorf("job before any run: %+v", j)
		}
	}
	if got := strings.Join(names, ", "); got != "decay-scan @every 1h, edge-decay 30 3 * * *, dismissal-cooldown @weekly, implicit-ignore @every 5m, bandit-upkeep @every 1m, prune-history 30 1 * * *, report-snapshot 10 0 * * *" {
		t.Errorf("jobs = %s", got)
	}

	old := time.Now().UTC().Add(-30 * 24 * time.Hour).Format(time.RFC3339)
	mems := s.ingest("a", `{"memories":[
		{"kind":"fact","content":"The ferry to the island leaves at seven.","created_at":"`+old+`","triggers":["ferry","island"]},
		{"kind":"fact","content":"Mara keeps the tide tables.","created_at":"`+old+`"},
		{"kind":"fact","content":"Stored just now, not due yet."}]}`, "")

	var started api.JobRunResponse
	s.must("POST", "/v1/admin/jobs/decay-scan/run", "", "", 202, &started)
	if started.Run.Job != "decay-scan" || started.Run.Trigger != "manual" || started.Run.Finished {
		t.Errorf("started run = %+v", started.Run)
	}
	var runs api.JobRunsResponse
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.must("GET", "/v1/admin/jobs/decay-scan/runs", "", "", 200, &runs)
		if len(runs.Runs) == 1 && runs.Runs[0].Finished {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish: %+v", runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := runs.Runs[0]; r.ID != started.Run.ID || r.Items != 2 || r.Error != "" || r.End.IsZero() {
		t.Errorf("finished run = %+v", r)
	}

	var q api.ResurfacingResponse
	s.must("GET", "/v1/namespaces/a/resurfacing", "", "", 200, &q)
	got := map[string]bool{}
	for _, it := range q.Items {
		got[it.MemoryID] = true
		if it.Memory.ID != it.MemoryID || it.Memory.Content == "" || it.Score <= 0 || it.DueAt.After(time.Now()) {
			t.Errorf("item = %+v", it)
		}
	}
	if len(q.Items) != 2 || !got[mems[0].ID] || !got[mems[1].ID] {
		t.Errorf("queue = %+v, want the two old memories", q.Items)
	}
	s.must("GET", "/v1/namespaces/other/resurfacing", "", "", 200, &q)
	if len(q.Items) != 0 {
		t.Errorf("another namespace's queue = %+v", q.Items)
	}
	status, _ := s.do("POST", "/v1/admin/jobs/compact/run", "", "")
	if status != 404 {
		t.Errorf("unknown job run = %d, want 404", status)
	}
}

func TestJobsDisabledStillListAndRun(t *testing.T) {
	s := startServer(t, "", "--jobs=false")
	var list api.JobsResponse
	s.must("GET", "/v1/admin/jobs", "", "", 200, &list)
	if len(list.Jobs) != 7 || list.Jobs[0].Scheduled || !list.Jobs[0].NextRun.IsZero() {
		t.Errorf("jobs with --jobs=false = %+v", list.Jobs)
	}
	var started api.JobRunResponse
	s.must("POST", "/v1/admin/jobs/implicit-ignore/run", "", "", 202, &started)
	if started.Run.Job != "implicit-ignore" {
		t.Errorf("run = %+v", started.Run)
	}
}

// settingsMap is a settings source over a map, for the hooks that read namespace settings.
type settingsMap map[string]*models.Settings

func (m settingsMap) For(_ context.Context, ns string) (*models.Settings, error) {
	if ns == "broken" {
		return nil, errors.New("unreadable record")
	}
	if s := m[ns]; s != nil {
		return s, nil
	}
	return &models.Settings{}, nil
}

// bandit-upkeep's empty-turn reward is the namespace's empty_turn_reward, else 0.4 — also
// when the record cannot be read — and a setting of 0 is 0, not the default.
func TestEmptyRewardFromSettings(t *testing.T) {
	zero, quarter := 0.0, 0.25
	f := emptyReward(settingsMap{"q": {EmptyTurnReward: &quarter}, "z": {EmptyTurnReward: &zero}})
	for ns, want := range map[string]float64{"q": 0.25, "z": 0, "none": 0.4, "broken": 0.4} {
		if got := f(ns); got != want {
			t.Errorf("emptyReward(%s) = %v, want %v", ns, got, want)
		}
	}
}

func TestHistoryRetentionTakesDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 720 * time.Hour, "1.5d": 36 * time.Hour, "0": 0, "48h": 48 * time.Hour, " 2d ": 48 * time.Hour} {
		m, err := parse(t, nil, "--history-retention", in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := m.Config.Jobs.HistoryRetention; got != want {
			t.Errorf("--history-retention %q = %v, want %v", in, got, want)
		}
	}
}
