package settings_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"
)

var ctx = context.Background()

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func set(div float64) func(*models.Settings) (*models.Settings, error) {
	return func(cur *models.Settings) (*models.Settings, error) {
		cur.Diversity = &div
		return cur, nil
	}
}

// TestForCachesUntilTheTTL: a write on this service is seen at once; one by another server
// sharing the store (a second service) is seen once the TTL has passed.
func TestForCachesUntilTheTTL(t *testing.T) {
	st := openStore(t)
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	here := settings.New(st, settings.Options{Now: clk.Now})
	there := settings.New(st, settings.Options{Now: clk.Now})

	if s, err := here.For(ctx, "a"); err != nil || s.Version != 0 {
		t.Fatalf("unwritten = %+v, %v", s, err)
	}
	if _, err := here.Update(ctx, "a", "ops", set(0.5)); err != nil {
		t.Fatal(err)
	}
	if s, _ := here.For(ctx, "a"); s.Version != 1 || *s.Diversity != 0.5 {
		t.Errorf("after its own write: %+v, want version 1", s)
	}
	if _, err := there.For(ctx, "a"); err != nil { // caches version 1 there
		t.Fatal(err)
	}
	if _, err := here.Update(ctx, "a", "ops", set(0.25)); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(settings.DefaultTTL - time.Millisecond)
	if s, _ := there.For(ctx, "a"); s.Version != 1 {
		t.Errorf("the other server within the TTL: version %d, want its cached 1", s.Version)
	}
	clk.t = clk.t.Add(time.Millisecond)
	if s, _ := there.For(ctx, "a"); s.Version != 2 || *s.Diversity != 0.25 {
		t.Errorf("the other server after the TTL: %+v, want version 2", s)
	}
}

func TestUpdateRejectsInvalidAndKeepsTheRecord(t *testing.T) {
	st := openStore(t)
	s := settings.New(st, settings.Options{})
	_, err := s.Update(ctx, "a", "ops", set(2))
	if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != "diversity" {
		t.Fatalf("diversity 2: %v, want invalid naming diversity", err)
	}
	if raw, _ := st.GetState(ctx, "settings/a"); raw != "" {
		t.Errorf("stored %q after a rejected write", raw)
	}
	if h, _ := s.History(ctx, "a", 0); len(h) != 0 {
		t.Errorf("history %+v after a rejected write", h)
	}
}

func TestParseReadsTheRerankOnlyRecordsOfBefore(t *testing.T) {
	s, err := settings.Parse(`{"rerank":"on"}`)
	if err != nil || s.Version != 0 || s.Rerank != "on" {
		t.Errorf("legacy record = %+v, %v", s, err)
	}
	if _, err := settings.Parse(`{"rerank":"on","other":1}`); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("unknown field: %v, want invalid", err)
	}
	if _, err := settings.Parse(`{"rerank":"on"} {}`); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("two values: %v, want invalid", err)
	}
}

// TestMigrateDecayPolicies: the hidden policy/<ns> override moves into the settings,
// audited as the migration, and the old key is emptied; settings that already name a
// policy win; a second run does nothing.
func TestMigrateDecayPolicies(t *testing.T) {
	st := openStore(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, ns := range []string{"lin", "kept", "junk", "plain"} {
		if err := st.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: ns, Kind: models.KindFact, Content: "x", CreatedAt: now, Confidence: 0.5}}}); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{"policy/lin": "linear", "policy/kept": "linear", "policy/junk": "sm2", "settings/kept": `{"version":3,"decay":{"policy":"fsrs"}}`} {
		if err := st.SetState(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	s := settings.New(st, settings.Options{Now: func() time.Time { return now }})
	moved, err := s.MigrateDecayPolicies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || moved[0] != "kept" || moved[1] != "lin" {
		t.Errorf("moved %v, want [kept lin]", moved)
	}
	for ns, want := range map[string]string{"lin": "linear", "kept": "fsrs", "junk": "", "plain": ""} {
		got, err := s.Get(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		policy := ""
		if got.Decay != nil {
			policy = got.Decay.Policy
		}
		if policy != want {
			t.Errorf("%s: decay policy %q, want %q", ns, policy, want)
		}
		if raw, _ := st.GetState(ctx, "policy/"+ns); raw != "" {
			t.Errorf("%s: legacy key still holds %q", ns, raw)
		}
	}
	h, err := s.History(ctx, "lin", 0)
	if err != nil || len(h) != 1 || h[0].By != settings.MigrationBy || h[0].Version != 1 || len(h[0].Changes) != 1 ||
		h[0].Changes[0].Field != "decay.policy" || string(h[0].Changes[0].New) != `"linear"` {
		t.Errorf("history of lin = %+v, %v; want one migration entry setting decay.policy to linear", h, err)
	}
	if h, _ := s.History(ctx, "kept", 0); len(h) != 0 {
		t.Errorf("kept: %+v, want no entry (its settings already chose)", h)
	}
	again, err := s.MigrateDecayPolicies(ctx)
	if err != nil || len(again) != 0 {
		t.Errorf("second run moved %v, %v; want nothing", again, err)
	}
}

// TestNegativeTTLReadsEveryTime: with no cache (salience serve --settings-ttl 0), another
// server sharing the store sees a write on its next read, with no time passing.
func TestNegativeTTLReadsEveryTime(t *testing.T) {
	st := openStore(t)
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	here := settings.New(st, settings.Options{Now: clk.Now})
	there := settings.New(st, settings.Options{Now: clk.Now, TTL: -1})
	if s, err := there.For(ctx, "a"); err != nil || s.Version != 0 {
		t.Fatalf("unwritten = %+v, %v", s, err)
	}
	if _, err := here.Update(ctx, "a", "ops", set(0.5)); err != nil {
		t.Fatal(err)
	}
	if s, _ := there.For(ctx, "a"); s.Version != 1 || *s.Diversity != 0.5 {
		t.Errorf("the other server, uncached, right after the write: %+v, want version 1", s)
	}
}

// holdWrite starts an Update of ns on s whose change blocks until release is closed, and
// returns once it holds the namespace's write; done receives its result.
func holdWrite(t *testing.T, s *settings.Service, ns string, div float64) (release chan struct{}, done chan error) {
	t.Helper()
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	go func() {
		_, err := s.Update(ctx, ns, "holder", func(cur *models.Settings) (*models.Settings, error) {
			once.Do(func() { close(held) })
			<-release
			cur.Diversity = &div
			return cur, nil
		})
		done <- err
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the holder never got the write")
	}
	return release, done
}

// TestUpdateWaitsThenUnavailable: a write of a namespace another writer holds waits
// WriteWait, then is EUNAVAILABLE with a message for the caller, having written nothing; once
// the holder lets go, the write goes through.
func TestUpdateWaitsThenUnavailable(t *testing.T) {
	st := openStore(t)
	s := settings.New(st, settings.Options{WriteWait: 100 * time.Millisecond})
	unlock, err := s.Hold(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err = s.Update(ctx, "a", "ops", set(0.25))
	waited := time.Since(start)
	var me *models.Error
	if models.ErrorCode(err) != models.EUNAVAILABLE || !errors.As(err, &me) || !me.Safe {
		t.Fatalf("write behind a holder: %v, want EUNAVAILABLE written for the caller", err)
	}
	if waited < 100*time.Millisecond || waited > 5*time.Second {
		t.Errorf("gave up after %v, want about the 100ms WriteWait", waited)
	}
	if raw, _ := st.GetState(ctx, "settings/a"); raw != "" {
		t.Errorf("stored %q after a write that gave up", raw)
	}

	unlock()
	got, err := s.Update(ctx, "a", "ops", set(0.25))
	if err != nil || got.Version != 1 || *got.Diversity != 0.25 {
		t.Fatalf("after the holder = %+v, %v; want version 1 with diversity 0.25", got, err)
	}
	hist, err := s.History(ctx, "a", 0)
	if err != nil || len(hist) != 1 || hist[0].Version != 1 {
		t.Errorf("history = %+v, %v; want version 1 only (the refused write left none)", hist, err)
	}
}

// TestUpdateAppliesToTheVersionInForce: a writer that waited for another sees its write: the
// change runs on the latest record, so neither change is lost.
func TestUpdateAppliesToTheVersionInForce(t *testing.T) {
	st := openStore(t)
	s := settings.New(st, settings.Options{})
	release, done := holdWrite(t, s, "a", 0.5)
	waiter := make(chan error, 1)
	go func() {
		_, err := s.Update(ctx, "a", "ops", func(cur *models.Settings) (*models.Settings, error) {
			cur.FreshnessHalfLifeHours = 48
			return cur, nil
		})
		waiter <- err
	}()
	time.Sleep(50 * time.Millisecond) // the waiter queues behind the holder
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-waiter; err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "a")
	if err != nil || got.Version != 2 || got.Diversity == nil || *got.Diversity != 0.5 || got.FreshnessHalfLifeHours != 48 {
		t.Errorf("settings = %+v, %v; want version 2 with both changes", got, err)
	}
}

// stuckStore is a store whose transactions wait for their context, as one does behind a lock
// another server holds.
type stuckStore struct{ *sqlite.Store }

func (s stuckStore) Update(ctx context.Context, fn func(models.Tx) error) error {
	<-ctx.Done()
	return fmt.Errorf("stuck: %w", ctx.Err())
}

// TestUpdateUnavailableBehindAnotherServer: a write whose store transaction waits (another
// server holds the record) gives up after WriteWait with EUNAVAILABLE; a caller that gave up
// first gets its own context's error.
func TestUpdateUnavailableBehindAnotherServer(t *testing.T) {
	s := settings.New(stuckStore{openStore(t)}, settings.Options{WriteWait: 50 * time.Millisecond})
	if _, err := s.Update(ctx, "a", "ops", set(0.5)); models.ErrorCode(err) != models.EUNAVAILABLE {
		t.Errorf("behind another server: %v, want EUNAVAILABLE", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Update(cctx, "a", "ops", set(0.5)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: %v, want context.Canceled", err)
	}
}

// TestParseUpgradesRecordsOfBefore: records valid when written, before fixed:<x> took
// decimals only and the half-life had a minimum, still load, respelled and raised.
func TestParseUpgradesRecordsOfBefore(t *testing.T) {
	s, err := settings.Parse(`{"version":3,"threshold_policy":"fixed:1e-1","freshness_half_life_hours":1e-9}`)
	if err != nil {
		t.Fatal(err)
	}
	if s.ThresholdPolicy != "fixed:0.1" || s.FreshnessHalfLifeHours != models.MinHalfLifeHours || s.Version != 3 {
		t.Errorf("upgraded = policy %q, half-life %v, version %d; want fixed:0.1, %d, 3", s.ThresholdPolicy, s.FreshnessHalfLifeHours, s.Version, models.MinHalfLifeHours)
	}
	if s, err := settings.Parse(`{"threshold_policy":"fixed:0x1p-2"}`); err != nil || s.ThresholdPolicy != "fixed:0.25" {
		t.Errorf("fixed:0x1p-2 = %+v, %v; want fixed:0.25", s, err)
	}
	// What was never valid stays refused.
	if _, err := settings.Parse(`{"threshold_policy":"fixed:2e0"}`); models.ErrorField(err) != "threshold_policy" {
		t.Errorf("fixed:2e0: %v, want invalid naming threshold_policy", err)
	}
}
