package maintenance_test

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"
)

// clock is the one clock of the whole stack in the end-to-end test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// TestDecayAndResurfacingEndToEnd is the acceptance scenario over the real store,
// ingest, recall, engagement and scheduler with one injected clock and the default FSRS
// policy: store memories, dismiss one, let three days pass, run decay-scan, see the due
// memories queued but not the dismissed one, see a queued memory join an ambient recall
// whose context matches its triggers (mode resurface), report it used, and see its next due
// date move out and it leave the queue; the dismissed memory comes back once its cooldown
// ends, not before.
func TestDecayAndResurfacingEndToEnd(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: t0}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "e2e.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	policies, err := maintenance.NewPolicies("fsrs", decay.Params{}, settings.New(st, settings.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	emb := embed.NewLocal(0)
	ing := ingest.New(st, emb, ingest.Options{Now: clk.Now})
	rec := recall.New(st, emb, recall.Options{Now: clk.Now})
	eng := engagement.NewService(st, engagement.ServiceOptions{Policy: policies.For, Now: clk.Now})
	svc := maintenance.New(st, maintenance.Options{Policy: policies.For})
	var js []jobs.Job
	for _, task := range svc.Tasks() {
		js = append(js, jobs.Job{Name: task.Name, Spec: "@every 1h", Run: func(ctx context.Context, r *jobs.Run) (int, error) {
			return task.Run(ctx, r)
		}})
	}
	sched, err := jobs.New(jobs.Options{Store: st, Holder: "e2e", Now: clk.Now}, js...)
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Stop(ctx)

	const ns = "harbor"
	stored, err := ing.Ingest(ctx, ns, []*models.Memory{
		{Kind: models.KindFact, Content: "Mara keeps the tide tables for the harbor master", Triggers: []string{"tide", "harbor", "ferry"}},
		{Kind: models.KindFact, Content: "The lighthouse lamp was replaced with an LED array", Triggers: []string{"lighthouse", "lamp"}},
		{Kind: models.KindFact, Content: "The bakery on Quay Street opens at six", Triggers: []string{"bakery", "bread"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tide, lamp, bakery := stored[0].ID, stored[1].ID, stored[2].ID
	name := map[string]string{tide: "tide", lamp: "lamp", bakery: "bakery"}
	queued := func() []string {
		t.Helper()
		q, err := st.Queue(ctx, ns, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range q {
			out = append(out, name[it.MemoryID])
		}
		slices.Sort(out)
		return out
	}
	scan := func(at time.Time) {
		t.Helper()
		clk.Set(at)
		run, err := sched.Tick(ctx, maintenance.JobDecayScan)
		if err != nil || run.Error != "" || !run.Finished {
			t.Fatalf("decay-scan at %s: %+v, %v", at, run, err)
		}
	}
	report := func(surfacing string, typ models.EventType) {
		t.Helper()
		res, err := eng.Apply(ctx, ns, []*models.Event{{ID: "ev-" + surfacing, SurfacingID: surfacing, Type: typ}})
		if err != nil || res.Applied != 1 {
			t.Fatalf("reporting %s on %s: %+v, %v", typ, surfacing, res, err)
		}
	}

	// A minute in, the bot searches for the lamp and dismisses it.
	clk.Set(t0.Add(time.Minute))
	resp, err := rec.Recall(ctx, &recall.Request{Namespace: ns, ConversationID: "c1", Mode: models.ModeSearch, Query: "lighthouse lamp", Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].Memory.ID != lamp {
		t.Fatalf("search for the lamp: %+v", resp.Results)
	}
	report(resp.Results[0].SurfacingID, models.EventDismissed)

	// Nothing is due a day later; three days later the two untouched facts are (FSRS: a fact
	// never reviewed is queued on the prior curve of a Good review when stored, due after
	// S0 = 2.31 days), the dismissed one is not: its cooldown runs for a week.
	scan(t0.Add(24 * time.Hour))
	if q := queued(); len(q) != 0 {
		t.Fatalf("queue after one day = %q, want empty", q)
	}
	scan(t0.Add(3 * 24 * time.Hour))
	if q := queued(); !slices.Equal(q, []string{"bakery", "tide"}) {
		t.Fatalf("queue after three days = %q, want bakery and tide", q)
	}

	// An ambient recall whose context matches three of tide's triggers, and none of its
	// words, brings it back from the queue (at the type's default threshold: the bandit's
	// exploration is not what this test is about).
	clk.Set(t0.Add(3*24*time.Hour + time.Minute))
	resp, err = rec.Recall(ctx, &recall.Request{Namespace: ns, ConversationID: "c2", Mode: models.ModeAmbient,
		ThresholdPolicy: predict.PolicyFixedDefault, ConversationType: models.ConvHelpSeeking, Entities: []string{"tide", "harbor", "ferry"},
		Messages: []recall.Message{{Speaker: "user", Content: "What should I pack for the crossing tomorrow?"}}, Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var surfaced string
	for _, r := range resp.Results {
		if (r.Memory.ID == bakery || r.Memory.ID == lamp) && slices.Contains(r.Reasons, "resurface") {
			t.Errorf("%s resurfaced in a context its triggers do not match: %+v", name[r.Memory.ID], r)
		}
		if r.Memory.ID == tide {
			surfaced = r.SurfacingID
			if !slices.Contains(r.Reasons, "resurface") || !r.Volunteered {
				t.Errorf("tide came back as %v (volunteered %v), want a volunteered resurface", r.Reasons, r.Volunteered)
			}
		}
	}
	if surfaced == "" {
		t.Fatalf("tide did not join the ambient recall: %+v", resp.Results)
	}
	sf, err := st.GetSurfacing(ctx, ns, surfaced)
	if err != nil || sf.Mode != models.ModeResurface {
		t.Fatalf("tide's surfacing = %+v, %v; want mode resurface", sf, err)
	}

	// The bot uses it: that is its first real review (S0(Good) = 2.31 days from the use,
	// not from its storing), and the scan drops it until the new date.
	policy := policies.For(ns)
	before := policy.NextDue(mustMemory(t, st, ns, tide))
	clk.Set(t0.Add(3*24*time.Hour + 2*time.Minute))
	report(surfaced, models.EventUsed)
	m := mustMemory(t, st, ns, tide)
	after := policy.NextDue(m)
	if math.Abs(m.Schedule.Stability-2.3065) > 0.001 || m.Schedule.Reps != 1 || m.UsageCount != 1 {
		t.Errorf("tide's schedule after use = %+v (usage %d), want S ≈ 2.31 after 1 review", m.Schedule, m.UsageCount)
	}
	if !before.Before(clk.Now()) || after.Sub(clk.Now()) < 55*time.Hour {
		t.Errorf("next due %s → %s; want overdue before the use and ~2.3 days out after", before, after)
	}
	scan(t0.Add(3*24*time.Hour + 3*time.Minute))
	if q := queued(); !slices.Equal(q, []string{"bakery"}) {
		t.Fatalf("queue after tide was used = %q, want bakery only", q)
	}

	// The dismissed lamp stays out for its 7-day cooldown (an FSRS lapse alone would have
	// brought it back within a day), then returns.
	scan(t0.Add(7 * 24 * time.Hour))
	if q := queued(); slices.Contains(q, "lamp") {
		t.Fatalf("the dismissed lamp is queued before its cooldown ended: %q", q)
	}
	scan(t0.Add(7*24*time.Hour + 2*time.Minute))
	if q := queued(); !slices.Equal(q, []string{"bakery", "lamp", "tide"}) {
		t.Fatalf("queue after the cooldown = %q, want bakery, lamp and tide (used, and due again)", q)
	}
	// The used tide leads: a use outweighs a fact's importance (decay.Worth).
	if q, err := st.Queue(ctx, ns, 0); err != nil || len(q) == 0 || q[0].MemoryID != tide {
		t.Errorf("queue head = %+v, %v; want tide", q, err)
	}

	// The run history holds every scan, all finished.
	runs, err := sched.Runs(ctx, maintenance.JobDecayScan, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 || runs[0].Items != 3 || runs[len(runs)-1].Items != 0 {
		t.Errorf("decay-scan runs = %d, newest %+v", len(runs), runs[0])
	}
}

func mustMemory(t *testing.T, st models.Store, ns, id string) *models.Memory {
	t.Helper()
	m, err := st.GetMemory(context.Background(), ns, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
