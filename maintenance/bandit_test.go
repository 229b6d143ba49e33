package maintenance_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"
)

func openBanditStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func mustCreateMemory(t *testing.T, st models.Store, ns, id string) {
	t.Helper()
	m := &models.Memory{ID: id, Namespace: ns, Kind: models.KindTurn, Content: "memory " + id, CreatedAt: t0,
		Importance: 0.5, Confidence: models.DefaultConfidence}
	if err := st.CreateMemories(context.Background(), []*models.MemoryWrite{{Memory: m}}); err != nil {
		t.Fatal(err)
	}
}

func putDecision(t *testing.T, st models.Store, d *models.Decision) {
	t.Helper()
	if err := st.Update(context.Background(), func(tx models.Tx) error { return tx.PutDecision(d) }); err != nil {
		t.Fatal(err)
	}
}

func posterior(t *testing.T, st models.Store, ns, key string) *predict.Posterior {
	t.Helper()
	raw, err := st.GetState(context.Background(), predict.StateKey(ns))
	if err != nil {
		t.Fatal(err)
	}
	p, err := predict.DecodePosteriors(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p.Keys[key]
}

// TestBanditUpkeep rewards settled turns once (empty turns 0.4, others the mean of their
// events), leaves a turn awaiting reports pending until the implicit-ignore timeout, updates
// the posterior only for the bandit's own decisions, and keeps it across a restart.
func TestBanditUpkeep(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "salience.db")
	st := openBanditStore(t, path)
	const ns = "bot"
	mustCreateMemory(t, st, ns, "m1")
	mustCreateMemory(t, st, ns, "m2")
	dec := func(turn string, surfaced int, policy string, arm int) *models.Decision {
		return &models.Decision{Namespace: ns, TurnID: turn, ConversationID: "c", ConvType: models.ConvDebugging,
			Policy: policy, Arm: arm, Threshold: 0.6, Prob: 0.5, Surfaced: surfaced, At: t0}
	}
	putDecision(t, st, dec("t-empty", 0, predict.PolicyBandit, 1))
	putDecision(t, st, dec("t-reported", 2, predict.PolicyBandit, 1))
	putDecision(t, st, dec("t-waiting", 2, predict.PolicyBandit, 1))
	putDecision(t, st, dec("t-fixed", 0, predict.PolicyFixedDefault, 1))
	sf := func(id, turn, mem string, outcome models.EventType) *models.Surfacing {
		return &models.Surfacing{ID: id, Namespace: ns, ConversationID: "c", TurnID: turn, MemoryID: mem,
			Mode: models.ModeAmbient, At: t0, Outcome: outcome}
	}
	if err := st.RecordSurfacings(ctx, []*models.Surfacing{
		sf("s1", "t-reported", "m1", models.EventUsed), sf("s2", "t-reported", "m2", models.EventDismissed),
		sf("s3", "t-waiting", "m1", models.EventUsed), sf("s4", "t-waiting", "m2", ""),
	}, nil); err != nil {
		t.Fatal(err)
	}
	svc := maintenance.New(st, maintenance.Options{})
	n, err := svc.BanditUpkeep(ctx, newRun(t0.Add(time.Minute)))
	if err != nil || n != 3 {
		t.Fatalf("first run rewarded %d (%v), want 3", n, err)
	}
	// Arm 0.6 of debugging starts at Beta(6, 4); two rewards of 0.4 (the empty turn, and
	// used 0.8 + dismissed 0): α = 6 + 0.9995·0.4 + 0.4 = 6.7998, β = 4 + 0.9995·0.6 + 0.6 = 5.1997.
	p := posterior(t, st, ns, models.ConvDebugging)
	if p == nil || p.Updates != 2 || math.Abs(p.Arms[1].Alpha-6.7998) > 1e-9 || math.Abs(p.Arms[1].Beta-5.1997) > 1e-9 {
		t.Fatalf("posterior after the first run: %+v", p)
	}
	ds, err := st.FindDecisions(ctx, models.DecisionFilter{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	rewards := map[string]float64{}
	for _, d := range ds {
		if d.Rewarded {
			rewards[d.TurnID] = d.Reward
		}
	}
	if len(rewards) != 3 || rewards["t-empty"] != 0.4 || math.Abs(rewards["t-reported"]-0.4) > 1e-12 || rewards["t-fixed"] != 0.4 {
		t.Errorf("rewards %v, want t-empty 0.4, t-reported 0.4, t-fixed 0.4, t-waiting pending", rewards)
	}
	// A second run at once changes nothing.
	if n, err := svc.BanditUpkeep(ctx, newRun(t0.Add(2*time.Minute))); err != nil || n != 0 {
		t.Fatalf("second run rewarded %d (%v), want 0", n, err)
	}
	// Restart: the posterior is still there, and after the timeout the waiting turn counts
	// its silent surfacing as ignored: (0.8 + 0.2)/2 = 0.5.
	st.Close()
	st = openBanditStore(t, path)
	defer st.Close()
	if p := posterior(t, st, ns, models.ConvDebugging); p == nil || p.Updates != 2 {
		t.Fatalf("posterior after restart: %+v", p)
	}
	svc = maintenance.New(st, maintenance.Options{})
	if n, err := svc.BanditUpkeep(ctx, newRun(t0.Add(31*time.Minute))); err != nil || n != 1 {
		t.Fatalf("run after the timeout rewarded %d (%v), want 1", n, err)
	}
	if p := posterior(t, st, ns, models.ConvDebugging); p.Updates != 3 || math.Abs(p.Arms[1].Alpha-(6+0.9995*0.7998+0.5)) > 1e-9 {
		t.Errorf("posterior after the third reward: %+v", p)
	}
	// A fixed policy's turns never move the posterior; a missing turn is ENOTFOUND.
	if _, err := svc.RewardTurn(ctx, ns, "no-such-turn", t0); models.ErrorCode(err) != models.ENOTFOUND {
		t.Errorf("missing turn: %v, want ENOTFOUND", err)
	}
}

// TestBanditSettlesOnTheNamespaceTimeout: a turn awaiting a report settles when its own
// namespace's implicit-ignore timeout has passed, not the server's.
func TestBanditSettlesOnTheNamespaceTimeout(t *testing.T) {
	ctx := context.Background()
	st := openBanditStore(t, filepath.Join(t.TempDir(), "salience.db"))
	defer st.Close()
	if err := st.SetState(ctx, models.SettingsKey("quick"), `{"version":1,"implicit_ignore_after_hours":0.25}`); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"quick", "plain"} {
		mustCreateMemory(t, st, ns, "m1")
		putDecision(t, st, &models.Decision{Namespace: ns, TurnID: "t1", ConversationID: "c", ConvType: models.ConvCasual,
			Policy: predict.PolicyBandit, Arm: 1, Threshold: 0.6, Prob: 0.5, Surfaced: 1, At: t0})
		if err := st.RecordSurfacings(ctx, []*models.Surfacing{{ID: "s1", Namespace: ns, ConversationID: "c", TurnID: "t1",
			MemoryID: "m1", Mode: models.ModeAmbient, At: t0}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	svc := maintenance.New(st, maintenance.Options{Settings: settings.New(st, settings.Options{})})
	for _, c := range []struct {
		ns   string
		want bool
	}{{"quick", true}, {"plain", false}} {
		if ok, err := svc.RewardTurn(ctx, c.ns, "t1", t0.Add(20*time.Minute)); err != nil || ok != c.want {
			t.Errorf("%s at t0+20m: rewarded %v, %v; want %v", c.ns, ok, err, c.want)
		}
	}
}

// TestBanditRewardsConcurrent rewards 200 turns from 16 goroutines, each turn by two of
// them: every turn is rewarded exactly once and the posterior keeps every update. The order
// of discounted updates varies, but the total evidence does not: after N updates the arms
// hold Σ γ^i (i < N) = (1 − γ^N)/(1 − γ) turns, and with every reward 0.4, 0.4 of that in α.
func TestBanditRewardsConcurrent(t *testing.T) {
	ctx := context.Background()
	st := openBanditStore(t, filepath.Join(t.TempDir(), "salience.db"))
	defer st.Close()
	const ns, turns, workers = "busy", 200, 16
	mustCreateMemory(t, st, ns, "m1")
	for i := range turns {
		putDecision(t, st, &models.Decision{Namespace: ns, TurnID: fmt.Sprintf("t%03d", i), ConvType: models.ConvCasual,
			Policy: predict.PolicyBandit, Arm: i % len(predict.Arms), Threshold: 0.9, Prob: 0.3, At: t0})
	}
	svc := maintenance.New(st, maintenance.Options{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	rewarded := 0
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			// Workers w and w + workers/2 take the same turns: every turn twice.
			for i := w % (workers / 2); i < turns; i += workers / 2 {
				ok, err := svc.RewardTurn(ctx, ns, fmt.Sprintf("t%03d", i), t0.Add(time.Minute))
				if err != nil {
					errs <- err
					return
				}
				if ok {
					mu.Lock()
					rewarded++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if rewarded != turns {
		t.Fatalf("%d rewards applied, want %d (each turn exactly once)", rewarded, turns)
	}
	p := posterior(t, st, ns, models.ConvCasual)
	prior := predict.DefaultBandit().NewArms(models.ConvCasual)
	var evidence, alpha float64
	for k, a := range p.Arms {
		evidence += a.Alpha + a.Beta - prior[k].Alpha - prior[k].Beta
		alpha += a.Alpha - prior[k].Alpha
	}
	g := predict.DefaultGamma
	want := (1 - math.Pow(g, turns)) / (1 - g)
	if p.Updates != turns || math.Abs(evidence-want) > 1e-9 || math.Abs(alpha-0.4*want) > 1e-9 {
		t.Errorf("updates %d, evidence %.9f, α evidence %.9f; want %d, %.9f, %.9f: an update was lost",
			p.Updates, evidence, alpha, turns, want, 0.4*want)
	}
}
