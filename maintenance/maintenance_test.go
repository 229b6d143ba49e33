package maintenance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"
)

// The jobs run over the real SQLite store; fakeRun stands in for jobs.Run so a test sets
// the clock and can cut a run short after a number of checkpoints.

var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) // a Wednesday

const day = 24 * time.Hour

// fakeRun is a jobs.Run with a fixed clock and in-memory checkpoints. With stopAfter > 0 it
// cancels the run's context once that many checkpoints were saved, as a shutdown would.
type fakeRun struct {
	now       time.Time
	mu        sync.Mutex
	state     map[string]string
	saves     int
	stopAfter int
	cancel    context.CancelFunc
}

func newRun(now time.Time) *fakeRun { return &fakeRun{now: now, state: map[string]string{}} }

func (r *fakeRun) Now() time.Time { return r.now }

func (r *fakeRun) Checkpoint(key string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state[key], nil
}

func (r *fakeRun) SetCheckpoint(key, value string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state[key] = value
	r.saves++
	if r.stopAfter > 0 && r.saves >= r.stopAfter && r.cancel != nil {
		r.cancel()
	}
	return nil
}

// at returns a context for one run of r at now, cancelled after stopAfter checkpoints.
func (r *fakeRun) at(now time.Time, stopAfter int) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.now, r.saves, r.stopAfter, r.cancel = now, 0, stopAfter, cancel
	r.mu.Unlock()
	return ctx
}

// countingStore counts the memories the jobs read.
type countingStore struct {
	*sqlite.Store
	mu   sync.Mutex
	read int
}

func (c *countingStore) FindMemories(ctx context.Context, f models.MemoryFilter) ([]*models.Memory, int, error) {
	ms, n, err := c.Store.FindMemories(ctx, f)
	c.mu.Lock()
	c.read += len(ms)
	c.mu.Unlock()
	return ms, n, err
}

func (c *countingStore) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.read
	c.read = 0
	return n
}

type env struct {
	st  *countingStore
	ing *ingest.Service
}

func newEnv(t *testing.T) *env { return newEnvT(t) }

func newEnvT(t testing.TB) *env {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &env{st: &countingStore{Store: st}, ing: ingest.New(st, nil, ingest.Options{Now: func() time.Time { return t0 }})}
}

// add stores memories in ns and returns their ids by content.
func (e *env) add(t *testing.T, ns string, ms ...*models.Memory) map[string]string {
	t.Helper()
	return e.addT(t, ns, ms...)
}

func (e *env) addT(t testing.TB, ns string, ms ...*models.Memory) map[string]string {
	t.Helper()
	out, err := e.ing.Ingest(context.Background(), ns, ms)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, m := range out {
		ids[m.Content] = m.ID
	}
	return ids
}

// edit changes a stored memory's metadata.
func (e *env) edit(t *testing.T, ns, id string, fn func(m *models.Memory)) {
	t.Helper()
	err := e.st.Update(context.Background(), func(tx models.Tx) error {
		m, err := tx.GetMemory(ns, id)
		if err != nil {
			return err
		}
		fn(m)
		return tx.PutMemory(m)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) memory(t *testing.T, ns, id string) *models.Memory {
	t.Helper()
	m, err := e.st.GetMemory(context.Background(), ns, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// queue returns ns's queue as "content@score" lines, highest score first.
func (e *env) queue(t *testing.T, ns string, ids map[string]string) []*models.ResurfaceItem {
	t.Helper()
	q, err := e.st.Queue(context.Background(), ns, 0)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func names(q []*models.ResurfaceItem, ids map[string]string) []string {
	byID := map[string]string{}
	for c, id := range ids {
		byID[id] = c
	}
	var out []string
	for _, it := range q {
		out = append(out, byID[it.MemoryID])
	}
	return out
}

func mem(content string) *models.Memory {
	return &models.Memory{Kind: models.KindFact, Content: content, CreatedAt: t0}
}

func linear(t *testing.T) func(string) decay.Policy {
	t.Helper()
	p, err := decay.PolicyByName(decay.PolicyLinear)
	if err != nil {
		t.Fatal(err)
	}
	return func(string) decay.Policy { return p }
}

// TestDecayScanQueuesTheDueMemories uses the linear policy (due 0.7·(n+1) days after the
// last use; score = days since last use / (n+1)) so every number can be checked by hand.
// The memories are facts of confidence 0.5, so decay.Resurface's value is
// 0.5 × (uses + 0.25 × 0.5) × score.
func TestDecayScanQueuesTheDueMemories(t *testing.T) {
	e := newEnv(t)
	ids := e.add(t, "a",
		mem("never used"), mem("used once at t0"), mem("used three times"), mem("used once a day before t0"),
		mem("dismissed, cooling down"), &models.Memory{Kind: models.KindFact, Content: "sensitive", CreatedAt: t0, Sensitive: true},
		&models.Memory{Kind: models.KindFact, Content: "no longer true", CreatedAt: t0, InvalidAt: t0.Add(day)},
		mem("long memory "+strings.Repeat("with many words to chunk ", 60)))
	e.add(t, "b", mem("another namespace"))
	e.edit(t, "a", ids["used once at t0"], func(m *models.Memory) { m.UsageCount, m.LastUsed = 1, t0 })
	e.edit(t, "a", ids["used three times"], func(m *models.Memory) { m.UsageCount, m.LastUsed = 3, t0 })
	e.edit(t, "a", ids["used once a day before t0"], func(m *models.Memory) { m.UsageCount, m.LastUsed = 1, t0.Add(-day) })
	e.edit(t, "a", ids["dismissed, cooling down"], func(m *models.Memory) { m.Schedule.CooldownTo = t0.Add(5 * day) })

	s := maintenance.New(e.st, maintenance.Options{Policy: linear(t), QueueCap: 2})
	run := newRun(t0.Add(2 * day))
	n, err := s.DecayScan(run.at(t0.Add(2*day), 0), run)
	if err != nil {
		t.Fatal(err)
	}
	// used a day before: 0.5 × 1.125 × 3/2; used at t0: 0.5 × 1.125 × 2/2; never used and the
	// long memory (never used): 0.5 × 0.125 × 2/1, left out by the cap of 2; used three
	// times is not due before 2.8 days.
	q := e.queue(t, "a", ids)
	long := "long memory " + strings.Repeat("with many words to chunk ", 60)
	want := []string{"used once a day before t0", "used once at t0"}
	if got := names(q, ids); !slices.Equal(got, want) || n != 3 {
		t.Fatalf("queue = %q (items %d), want %q and 3 items (2 in a, 1 in b)", got, n, want)
	}
	if q[0].Score != 0.5*1.125*1.5 || q[1].Score != 0.5*1.125 || !q[0].DueAt.Equal(t0.Add(-day).Add(time.Duration(1.4*float64(day)))) ||
		!q[0].QueuedAt.Equal(t0.Add(2*day)) {
		t.Errorf("items = %+v %+v", q[0], q[1])
	}
	if qb := e.queue(t, "b", nil); len(qb) != 1 || qb[0].Namespace != "b" {
		t.Errorf("queue of b = %+v", qb)
	}

	// Later: a bigger cap lets "used once at t0" in; the memory that was used meanwhile
	// leaves the queue; those still queued keep the time they were first queued.
	e.edit(t, "a", ids["never used"], func(m *models.Memory) { m.UsageCount, m.LastUsed = 1, t0.Add(2*day) })
	s = maintenance.New(e.st, maintenance.Options{Policy: linear(t)})
	later := t0.Add(2*day + time.Hour)
	if _, err := s.DecayScan(run.at(later, 0), run); err != nil {
		t.Fatal(err)
	}
	q = e.queue(t, "a", ids)
	if got := names(q, ids); !slices.Equal(got, []string{"used once a day before t0", "used once at t0", long}) {
		t.Fatalf("queue after use = %q", got)
	}
	if !q[0].QueuedAt.Equal(t0.Add(2*day)) || !q[2].QueuedAt.Equal(later) {
		t.Errorf("queued at: %v, %v", q[0].QueuedAt, q[2].QueuedAt)
	}
	if cp := run.state["cursor"]; cp != "" {
		t.Errorf("checkpoint after a complete scan = %q", cp)
	}
	// The same scan again at the same time changes nothing.
	before, _ := json.Marshal(q)
	if _, err := s.DecayScan(run.at(later, 0), run); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(e.queue(t, "a", ids))
	if string(before) != string(after) {
		t.Errorf("a second scan changed the queue:\n%s\n%s", before, after)
	}
	// Once the cooldown ends, the dismissed memory is due again.
	if _, err := s.DecayScan(run.at(t0.Add(5*day), 0), run); err != nil {
		t.Fatal(err)
	}
	if got := names(e.queue(t, "a", ids), ids); !slices.Contains(got, "dismissed, cooling down") || slices.Contains(got, "sensitive") ||
		slices.Contains(got, "no longer true") {
		t.Errorf("queue after the cooldown = %q", got)
	}
}

// TestDecayScanResumes cuts a scan short after two batches and checks that the next run
// reads only what is left and ends with the queue an uninterrupted scan gives.
func TestDecayScanResumes(t *testing.T) {
	e := newEnv(t)
	var ms []*models.Memory
	for i := range 9 {
		ms = append(ms, &models.Memory{Kind: models.KindFact, Content: fmt.Sprintf("memory %d", i), CreatedAt: t0.Add(-time.Duration(i) * day)})
	}
	ids := e.add(t, "a", ms...)
	e.add(t, "b", mem("b memory"))
	e.st.reads()
	s := maintenance.New(e.st, maintenance.Options{Policy: linear(t), BatchSize: 2, QueueCap: 4})
	run := newRun(t0)
	now := t0.Add(time.Hour)
	n, err := s.DecayScan(run.at(now, 2), run)
	if err == nil || n != 0 {
		t.Fatalf("interrupted scan = %d, %v; want the context's error", n, err)
	}
	if got := e.st.reads(); got != 4 {
		t.Errorf("memories read before the interruption = %d, want 4", got)
	}
	if q := e.queue(t, "a", ids); len(q) != 0 {
		t.Errorf("an unfinished scan wrote the queue: %+v", q)
	}
	var cp struct {
		NS  string
		Top []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(run.state["cursor"]), &cp); err != nil || cp.NS != "a" || len(cp.Top) != 4 {
		t.Fatalf("checkpoint = %s", run.state["cursor"])
	}
	n, err = s.DecayScan(run.at(now, 0), run)
	if err != nil {
		t.Fatal(err)
	}
	// The oldest are the most overdue; b's memory, created at t0, is not due yet.
	if got := names(e.queue(t, "a", ids), ids); !slices.Equal(got, []string{"memory 8", "memory 7", "memory 6", "memory 5"}) || n != 4 {
		t.Errorf("queue = %q, items %d", got, n)
	}
	if got := e.st.reads(); got != 1+5+1 {
		t.Errorf("memories read by the resumed run = %d, want the checkpoint's own, the 5 left in a and 1 in b", got)
	}
}

// TestDecayScanPagesThroughTies: memories created at the same instant are still each read
// once when they fill several pages.
func TestDecayScanPagesThroughTies(t *testing.T) {
	e := newEnv(t)
	var ms []*models.Memory
	for i := range 7 {
		ms = append(ms, mem(fmt.Sprintf("tie %d", i)))
	}
	e.add(t, "a", ms...)
	s := maintenance.New(e.st, maintenance.Options{Policy: linear(t), BatchSize: 2})
	run := newRun(t0)
	n, err := s.DecayScan(run.at(t0.Add(day), 0), run)
	if err != nil || n != 7 {
		t.Fatalf("scan = %d, %v; want all 7 queued", n, err)
	}
}

func TestEdgeDecayIsIdempotentWithinThirtyDays(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.add(t, "a", mem("Ada writes the compiler"), mem("Grace writes the manual"))
	ada, grace := ids["Ada writes the compiler"], ids["Grace writes the manual"]
	idle := t0.Add(-200 * day)
	learned := []*models.Edge{
		{Namespace: "a", From: ada, To: models.ConceptID("compilers"), Type: models.EdgeMentions, Weight: 0.5, CoOccurrences: 3, LastCoOccurred: idle},
		{Namespace: "a", From: ada, To: grace, Type: models.EdgeCoRetrieved, Weight: 0.12, CoOccurrences: 1, LastCoOccurred: idle},
		{Namespace: "a", From: grace, To: models.ConceptID("manuals"), Type: models.EdgeMentions, Weight: 0.9, CoOccurrences: 9, LastCoOccurred: t0.Add(-10 * day)},
	}
	err := e.st.Update(ctx, func(tx models.Tx) error {
		for _, ed := range learned {
			if err := tx.PutEdge(ed); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	weights := func() map[string]float64 {
		out := map[string]float64{}
		var after models.EdgeKey
		for {
			es, err := e.st.ScanEdges(ctx, "a", after, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, ed := range es {
				out[ed.From+" "+ed.To+" "+string(ed.Type)] = ed.Weight
			}
			if len(es) < 100 {
				return out
			}
			after = es[len(es)-1].Key()
		}
	}
	before := weights()
	s := maintenance.New(e.st, maintenance.Options{BatchSize: 3})
	run := newRun(t0)
	for _, step := range []struct {
		at      time.Time
		items   int
		ada     float64 // the idle mentions edge
		pair    float64 // the idle co_retrieved edge, at its floor
		manuals float64 // the edge that co-occurred 10 days before t0
	}{
		{t0, 2, 0.45, 0.1, 0.9},
		{t0, 0, 0.45, 0.1, 0.9},                 // the same moment again
		{t0.Add(29 * day), 0, 0.45, 0.1, 0.9},   // within 30 days of the last decay
		{t0.Add(30 * day), 1, 0.40, 0.1, 0.9},   // one more step; the floor holds
		{t0.Add(30 * day), 0, 0.40, 0.1, 0.9},   // and again nothing
		{t0.Add(365 * day), 2, 0.35, 0.1, 0.85}, // a year on: one step per run, and the other edge is idle too
	} {
		n, err := s.EdgeDecay(run.at(step.at, 0), run)
		if err != nil {
			t.Fatal(err)
		}
		w := weights()
		if n != step.items || !near(w[ada+" c:compilers mentions"], step.ada) || !near(w[ada+" "+grace+" co_retrieved"], step.pair) ||
			!near(w[grace+" c:manuals mentions"], step.manuals) {
			t.Errorf("at %s: items %d, weights %v; want %d, %.2f, %.2f, %.2f", step.at.Format(time.DateOnly), n, w,
				step.items, step.ada, step.pair, step.manuals)
		}
		// Ingest's structural edges never co-occurred through engagement and never decay.
		for k, v := range before {
			if !strings.HasSuffix(k, "c:compilers mentions") && !strings.HasSuffix(k, "co_retrieved") &&
				!strings.HasSuffix(k, "c:manuals mentions") && w[k] != v {
				t.Errorf("structural edge %s moved %v → %v", k, v, w[k])
			}
		}
	}
	if len(before) < 6 {
		t.Errorf("only %d edges: ingest should have made structural ones too", len(before))
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestEdgeDecayResumes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.add(t, "a", mem("hub"))
	hub := ids["hub"]
	err := e.st.Update(ctx, func(tx models.Tx) error {
		for i := range 7 {
			ed := &models.Edge{Namespace: "a", From: hub, To: models.ConceptID(fmt.Sprintf("topic %d", i)), Type: models.EdgeMentions,
				Weight: 0.5, CoOccurrences: 1, LastCoOccurred: t0.Add(-365 * day)}
			if err := tx.PutEdge(ed); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := maintenance.New(e.st, maintenance.Options{BatchSize: 2})
	run := newRun(t0)
	n1, err := s.EdgeDecay(run.at(t0, 2), run)
	if err == nil {
		t.Fatal("the run was not interrupted")
	}
	n2, err := s.EdgeDecay(run.at(t0, 0), run)
	if err != nil {
		t.Fatal(err)
	}
	if n1+n2 != 7 || n1 == 0 {
		t.Errorf("decayed %d + %d, want 7 in all, split by the interruption", n1, n2)
	}
	es, _ := e.st.ScanEdges(ctx, "a", models.EdgeKey{}, 100)
	for _, ed := range es {
		if !strings.HasPrefix(ed.To, "c:topic") {
			continue // ingest's own edge, never strengthened
		}
		if !near(ed.Weight, 0.45) {
			t.Errorf("edge %s → %s weight %v, want 0.45 (one step each)", ed.From, ed.To, ed.Weight)
		}
	}
}

func TestDismissalCooldownHalvesOncePerWeek(t *testing.T) {
	e := newEnv(t)
	ids := e.add(t, "a", mem("dismissed often"), mem("dismissed once"), mem("never dismissed"))
	often, once, never := ids["dismissed often"], ids["dismissed once"], ids["never dismissed"]
	e.edit(t, "a", often, func(m *models.Memory) { m.RecentDismissals = 6 })
	e.edit(t, "a", once, func(m *models.Memory) { m.RecentDismissals = 0.015 })
	s := maintenance.New(e.st, maintenance.Options{})
	run := newRun(t0)
	dismissals := func() [3]float64 {
		return [3]float64{e.memory(t, "a", often).RecentDismissals, e.memory(t, "a", once).RecentDismissals, e.memory(t, "a", never).RecentDismissals}
	}
	n, err := s.DismissalCooldown(run.at(t0, 0), run)
	if err != nil {
		t.Fatal(err)
	}
	// 6 → 3; 0.015 → 0.0075, under the floor of 0.01 → 0.
	if got := dismissals(); got != [3]float64{3, 0, 0} || n != 2 || run.state["done"] != "2026-W10" {
		t.Fatalf("after the first run: %v, items %d, done %q", got, n, run.state["done"])
	}
	// A dismissal arrives; a second run in the same ISO week (Sunday night) changes nothing.
	e.edit(t, "a", often, func(m *models.Memory) { m.RecentDismissals += 2 })
	n, err = s.DismissalCooldown(run.at(time.Date(2026, 3, 8, 23, 59, 0, 0, time.UTC), 0), run)
	if got := dismissals(); err != nil || got != [3]float64{5, 0, 0} || n != 0 {
		t.Fatalf("second run in the week: %v, items %d, %v", got, n, err)
	}
	// Monday is a new week.
	n, err = s.DismissalCooldown(run.at(time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), 0), run)
	if got := dismissals(); err != nil || got != [3]float64{2.5, 0, 0} || n != 1 || run.state["done"] != "2026-W11" {
		t.Fatalf("next week: %v, items %d, %v, done %q", got, n, err, run.state["done"])
	}
}

// TestDismissalCooldownResumesAcrossWeeks: a pass cut short in one week is finished in the
// next run, and the new week's pass follows, so the memories it had not reached are halved
// twice and those it had, once more.
func TestDismissalCooldownResumesAcrossWeeks(t *testing.T) {
	e := newEnv(t)
	var ms []*models.Memory
	for i := range 4 {
		ms = append(ms, &models.Memory{Kind: models.KindFact, Content: fmt.Sprintf("m%d", i), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	ids := e.add(t, "a", ms...)
	for _, id := range ids {
		e.edit(t, "a", id, func(m *models.Memory) { m.RecentDismissals = 8 })
	}
	s := maintenance.New(e.st, maintenance.Options{BatchSize: 2})
	run := newRun(t0)
	if _, err := s.DismissalCooldown(run.at(t0, 1), run); err == nil {
		t.Fatal("the run was not interrupted")
	}
	got := func() []float64 {
		var out []float64
		for i := range 4 {
			out = append(out, e.memory(t, "a", ids[fmt.Sprintf("m%d", i)]).RecentDismissals)
		}
		return out
	}
	if g := got(); !slices.Equal(g, []float64{4, 4, 8, 8}) || run.state["done"] != "" {
		t.Fatalf("after the interrupted pass: %v, done %q", g, run.state["done"])
	}
	next := t0.Add(7 * day)
	n, err := s.DismissalCooldown(run.at(next, 0), run)
	if err != nil {
		t.Fatal(err)
	}
	if g := got(); !slices.Equal(g, []float64{2, 2, 2, 2}) || n != 6 || run.state["done"] != "2026-W11" {
		t.Errorf("after the next week's run: %v, items %d, done %q", g, n, run.state["done"])
	}
}

func TestImplicitIgnore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.add(t, "a", mem("shown and used"), mem("shown and passed over"), mem("shown, then deleted"))
	e.add(t, "b", mem("shown in b"))
	bID := e.add(t, "b", mem("shown in b, too"))["shown in b, too"]
	used, passed, gone := ids["shown and used"], ids["shown and passed over"], ids["shown, then deleted"]
	shown := t0.Add(time.Hour)
	sf := func(id, ns, memID string, at time.Time) *models.Surfacing {
		return &models.Surfacing{ID: id, Namespace: ns, ConversationID: "c1", TurnID: "t1", MemoryID: memID, Mode: models.ModeAmbient,
			Concepts: []string{"weather", "ferry"}, At: at}
	}
	if err := e.st.RecordSurfacings(ctx, []*models.Surfacing{sf("s1", "a", used, shown), sf("s2", "a", passed, shown), sf("s3", "a", gone, shown)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.st.RecordSurfacings(ctx, []*models.Surfacing{sf("s4", "b", bID, shown.Add(30*time.Second))}, nil); err != nil {
		t.Fatal(err)
	}
	// The bot reported on s1.
	err := e.st.Update(ctx, func(tx models.Tx) error {
		s, err := tx.GetSurfacing("a", "s1")
		if err != nil {
			return err
		}
		s.Outcome, s.OutcomeAt = models.EventUsed, shown.Add(time.Minute)
		return tx.PutSurfacing(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.DeleteMemory(ctx, "a", gone); err != nil {
		t.Fatal(err)
	}

	s := maintenance.New(e.st, maintenance.Options{})
	run := newRun(t0)
	if n, err := s.ImplicitIgnore(run.at(shown.Add(29*time.Minute), 0), run); err != nil || n != 0 {
		t.Fatalf("before the timeout: %d, %v", n, err)
	}
	n, err := s.ImplicitIgnore(run.at(shown.Add(31*time.Minute), 0), run)
	if err != nil || n != 3 {
		t.Fatalf("after the timeout: %d, %v; want s2, s3 and s4", n, err)
	}
	evs, err := e.st.FindEvents(ctx, models.EventFilter{Namespace: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].ID != "implicit:s2" || evs[1].ID != "implicit:s3" || !evs[0].Implicit || evs[0].Type != models.EventIgnored ||
		!evs[0].At.Equal(shown) || evs[0].MemoryID != passed || !slices.Equal(evs[0].Concepts, []string{"weather", "ferry"}) {
		t.Fatalf("events = %+v", evs)
	}
	m := e.memory(t, "a", passed)
	if !near(m.Confidence, 0.48) || m.RecentDismissals != 1 || m.Schedule.Reps != 1 || !m.Schedule.LastReview.Equal(shown) {
		t.Errorf("the passed-over memory: confidence %v, dismissals %v, schedule %+v", m.Confidence, m.RecentDismissals, m.Schedule)
	}
	if u := e.memory(t, "a", used); u.Confidence != 0.5 || u.RecentDismissals != 0 {
		t.Errorf("the used memory was touched: %+v", u)
	}
	for _, c := range []struct{ ns, id string }{{"a", "s2"}, {"a", "s3"}, {"b", "s4"}} {
		got, err := e.st.GetSurfacing(ctx, c.ns, c.id)
		if err != nil || got.Outcome != models.EventIgnored {
			t.Errorf("surfacing %s: %+v, %v", c.id, got, err)
		}
	}
	if got, _ := e.st.GetSurfacing(ctx, "a", "s1"); got.Outcome != models.EventUsed {
		t.Errorf("a reported surfacing became %q", got.Outcome)
	}
	// A rerun, even without the checkpoint, changes nothing.
	delete(run.state, "cursor")
	if n, err := s.ImplicitIgnore(run.at(shown.Add(2*time.Hour), 0), run); err != nil || n != 0 {
		t.Errorf("rerun: %d, %v", n, err)
	}
	if m2 := e.memory(t, "a", passed); m2.Confidence != m.Confidence || m2.RecentDismissals != 1 {
		t.Errorf("rerun moved the memory: %+v", m2)
	}
}

// TestImplicitIgnoreTimeoutPerNamespace: each namespace's implicit_ignore_after_hours sets
// its own timeout, so surfacings shown at the same moment are ignored at different runs:
// "quick" (15 min) first, "plain" (the server's 30 min) next, "slow" (2 h) last. The slow
// one, shown first, is passed over while the others are handled and not lost behind the
// checkpoint.
func TestImplicitIgnoreTimeoutPerNamespace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for ns, raw := range map[string]string{"quick": `{"version":1,"implicit_ignore_after_hours":0.25}`, "slow": `{"version":1,"implicit_ignore_after_hours":2}`} {
		if err := e.st.SetState(ctx, models.SettingsKey(ns), raw); err != nil {
			t.Fatal(err)
		}
	}
	shown := t0.Add(time.Hour)
	var ss []*models.Surfacing
	for i, ns := range []string{"slow", "quick", "plain"} {
		id := e.add(t, ns, mem("shown in "+ns))["shown in "+ns]
		// slow's first in (At, ID) order, so the walk meets it before the others.
		ss = append(ss, &models.Surfacing{ID: "s-" + ns, Namespace: ns, ConversationID: "c1", TurnID: "t-" + ns, MemoryID: id,
			Mode: models.ModeAmbient, At: shown.Add(time.Duration(i) * time.Second)})
	}
	if err := e.st.RecordSurfacings(ctx, ss, nil); err != nil {
		t.Fatal(err)
	}
	s := maintenance.New(e.st, maintenance.Options{Settings: settings.New(e.st, settings.Options{}), BatchSize: 2})
	run := newRun(t0)
	outcome := func(ns string) models.EventType {
		t.Helper()
		sf, err := e.st.GetSurfacing(ctx, ns, "s-"+ns)
		if err != nil {
			t.Fatal(err)
		}
		return sf.Outcome
	}
	for _, step := range []struct {
		after   time.Duration
		n       int
		ignored []string // the namespaces whose surfacing is ignored by now
	}{
		{10 * time.Minute, 0, nil},
		{20 * time.Minute, 1, []string{"quick"}},
		{45 * time.Minute, 1, []string{"quick", "plain"}},
		{110 * time.Minute, 0, []string{"quick", "plain"}},
		{125 * time.Minute, 1, []string{"quick", "plain", "slow"}},
	} {
		n, err := s.ImplicitIgnore(run.at(shown.Add(step.after), 0), run)
		if err != nil || n != step.n {
			t.Errorf("at shown+%v: %d events, %v; want %d", step.after, n, err, step.n)
		}
		for _, ns := range []string{"quick", "plain", "slow"} {
			if got, want := outcome(ns) == models.EventIgnored, slices.Contains(step.ignored, ns); got != want {
				t.Errorf("at shown+%v: %s ignored %v, want %v", step.after, ns, got, want)
			}
		}
	}
}

func TestPolicyOverridePerNamespace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.st.SetState(ctx, "settings/lin", `{"version":1,"decay":{"policy":"linear"}}`); err != nil {
		t.Fatal(err)
	}
	// A hand-written record that is not valid settings: the default applies.
	if err := e.st.SetState(ctx, "settings/bad", `{"decay":{"policy":"sm2"}}`); err != nil {
		t.Fatal(err)
	}
	p, err := maintenance.NewPolicies("fsrs", decay.Params{Threshold: 0.5, TargetRetention: 0.8}, settings.New(e.st, settings.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]string{"lin": "linear", "bad": "fsrs", "plain": "fsrs"} {
		if got := p.For(ns).Name(); got != want {
			t.Errorf("policy of %s = %s, want %s", ns, got, want)
		}
	}
	// The override runs with the configured parameters: threshold 0.5 → due after 0.5 days.
	m := &models.Memory{CreatedAt: t0}
	if got := p.For("lin").NextDue(m); !got.Equal(t0.Add(12 * time.Hour)) {
		t.Errorf("linear override due at %v, want t0+12h", got)
	}
	// Parameters in the settings override the configured ones, each alone: a threshold of
	// 0.25 is due after 6 h; a cooldown of 0 hours is none; an fsrs target retention of
	// 0.95 makes a memory due before the configured 0.8 does.
	for k, v := range map[string]string{
		"settings/lin-quick":   `{"version":1,"decay":{"policy":"linear","threshold":0.25}}`,
		"settings/lin-nocool":  `{"version":1,"decay":{"policy":"linear","dismiss_cooldown_hours":0}}`,
		"settings/fsrs-strict": `{"version":1,"decay":{"target_retention":0.95}}`,
	} {
		if err := e.st.SetState(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.For("lin-quick").NextDue(m); !got.Equal(t0.Add(6 * time.Hour)) {
		t.Errorf("linear with threshold 0.25 due at %v, want t0+6h", got)
	}
	dismissed := func(ns string) time.Time {
		d := &models.Memory{CreatedAt: t0}
		p.For(ns).OnEvent(d, models.EventDismissed, t0)
		return d.Schedule.CooldownTo
	}
	if got := dismissed("lin"); !got.Equal(t0.Add(decay.DefaultCooldown)) {
		t.Errorf("the configured cooldown ends at %v, want t0+%v", got, decay.DefaultCooldown)
	}
	if got := dismissed("lin-nocool"); !got.IsZero() {
		t.Errorf("dismiss_cooldown_hours 0 still set a cooldown to %v", got)
	}
	if strict, plain := p.For("fsrs-strict").NextDue(m), p.For("plain").NextDue(m); !strict.Before(plain) {
		t.Errorf("target retention 0.95 due at %v, not before the configured 0.8's %v", strict, plain)
	}
	if _, err := maintenance.NewPolicies("sm2", decay.Params{}, nil, nil); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("unknown default policy: %v", err)
	}
}

// FuzzCheckpoints: a checkpoint is read back from the store and may come from another
// version or be damaged; whatever it holds, every job runs to the end without an error (a
// checkpoint it cannot use is dropped: the jobs are idempotent, so starting over is safe).
func FuzzCheckpoints(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"ns":"a","pos":{"created_at":"2026-03-04T12:00:00Z","id":"zz"},"top":[{"id":"x","score":1}]}`,
		`{"ns":"zzz","done":true}`, `{"ns":"a","after":{"From":"c:x","To":"","Type":"mentions"}}`,
		`{"period":"2026-W10","ns":"a"}`, `{"period":"9999-W99"}`, `{"at":"0001-01-01T00:00:00Z","id":"s9"}`,
		`{"at":"9999-12-31T23:59:59Z"}`, `{"ns":"a","pos":{"created_at":"1200-01-01T00:00:00Z"}}`, `{"top":[{"score":"NaN"}]}`,
	} {
		f.Add(s)
	}
	e := newEnvT(f)
	ids := e.addT(f, "a", mem("one"), mem("two"), mem("three"))
	if err := e.st.RecordSurfacings(context.Background(), []*models.Surfacing{{ID: "s1", Namespace: "a", ConversationID: "c",
		TurnID: "t", MemoryID: ids["one"], Mode: models.ModeAmbient, At: t0}}, nil); err != nil {
		f.Fatal(err)
	}
	s := maintenance.New(e.st, maintenance.Options{BatchSize: 2})
	f.Fuzz(func(t *testing.T, cp string) {
		for _, task := range s.Tasks() {
			run := newRun(t0)
			run.state["cursor"] = cp
			run.state["done"] = cp
			if _, err := task.Run(run.at(t0.Add(40*day), 0), run); err != nil {
				t.Fatalf("%s with checkpoint %q: %v", task.Name, cp, err)
			}
		}
	})
}

// TestDecayScanDropsWhatTheOldRuleQueued is issue 45's old data: a queue written by the
// earlier rule (every due memory, small talk included) and a checkpoint it left half way —
// namespace "a" marked done, its gathered top holding a turn — are not kept: the next scan
// starts over under decay.Resurface and rewrites every namespace's queue.
func TestDecayScanDropsWhatTheOldRuleQueued(t *testing.T) {
	e := newEnv(t)
	turn := func(c string) *models.Memory { return &models.Memory{Kind: models.KindTurn, Content: c, CreatedAt: t0} }
	a := e.add(t, "a", turn("Ha, that's a great name for a cat!"), mem("Ines is allergic to cats"))
	b := e.add(t, "b", turn("Sure, see you tomorrow."), turn("The ferry leaves at seven"))
	e.edit(t, "b", b["The ferry leaves at seven"], func(m *models.Memory) { m.UsageCount, m.LastUsed = 1, t0 })
	old := func(ns, id string) *models.ResurfaceItem {
		return &models.ResurfaceItem{Namespace: ns, MemoryID: id, DueAt: t0, Score: 0.9, QueuedAt: t0}
	}
	if err := e.st.Enqueue(context.Background(), []*models.ResurfaceItem{
		old("a", a["Ha, that's a great name for a cat!"]), old("b", b["Sure, see you tomorrow."])}); err != nil {
		t.Fatal(err)
	}
	run := newRun(t0.Add(3 * day))
	run.state["cursor"] = fmt.Sprintf(`{"ns":"a","done":true,"top":[{"id":%q,"due":"2026-03-01T00:00:00Z","score":0.9}]}`,
		a["Ha, that's a great name for a cat!"])
	s := maintenance.New(e.st, maintenance.Options{Policy: linear(t)})
	if _, err := s.DecayScan(run.at(t0.Add(3*day), 0), run); err != nil {
		t.Fatal(err)
	}
	if got := names(e.queue(t, "a", a), a); !slices.Equal(got, []string{"Ines is allergic to cats"}) {
		t.Errorf("queue of a = %q, want the fact only", got)
	}
	if got := names(e.queue(t, "b", b), b); !slices.Equal(got, []string{"The ferry leaves at seven"}) {
		t.Errorf("queue of b = %q, want the used turn only", got)
	}
}
