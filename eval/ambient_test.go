package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// TestAmbientReplay replays the tiny conversation's three scored questions in ambient mode:
// the evidence is surfaced and counted as used, every turn is rewarded and learned from (the
// bandit's posterior holds three updates), and a withheld twin learns nothing.
func TestAmbientReplay(t *testing.T) {
	ctx := context.Background()
	c, err := eval.Parse([]byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	c.Name = "tiny"
	e, st := openEngine(t, "bandit")
	s, err := eval.Ambient(ctx, e, []*eval.Conversation{c}, predict.PolicyBandit, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 4 evidence turns over 3 questions; at most 6 memories (and 6 turns) to show. Every
	// turn surfaces something, and the kitten's and the marathon's questions their evidence.
	// "Where does Pebble sleep?" is a near tie between its evidence ("She sleeps under the
	// lavender…") and "Does Pebble like the garden?": BM25's general-English prior, worth 300
	// documents in a namespace of six, weighs the rare "pebble" over "sleep" and hands the
	// turn's top to the garden (BM25 over the best 1 against 0.79). How much of that and of
	// the marathon's weak second evidence turn ("One hour fifty…") reaches the threshold is
	// the model's call, so the counts are bounded, and checked exactly against the event log.
	if s.Turns != 3 || s.Hits < 2 || s.NonEmpty != 3 || s.Used < s.Hits || s.Used > 4 || s.Surfaced < s.Used || s.Surfaced > 6 {
		t.Errorf("scores %+v, want 3 turns, 2 or 3 hits, 2 to 4 used of at most 6 surfaced", s)
	}
	// Every surfaced memory was reported, used exactly when it is evidence, and trained the
	// relevance model.
	evs, err := st.FindEvents(ctx, models.EventFilter{Namespace: eval.Namespace(c)})
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, ev := range evs {
		if ev.Type == models.EventUsed {
			used++
		}
	}
	if len(evs) != s.Surfaced || used != s.Used {
		t.Errorf("event log: %d events, %d used; the scores say %d surfaced, %d used", len(evs), used, s.Surfaced, s.Used)
	}
	state, err := st.GetState(ctx, learn.Key(eval.Namespace(c)))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := learn.Decode(state, learn.DefaultConfig()); err != nil || m.N != int64(s.Surfaced) {
		t.Errorf("relevance model %s (%v): want trained on the %d events", state, err, s.Surfaced)
	}
	ds, err := st.FindDecisions(ctx, models.DecisionFilter{Namespace: eval.Namespace(c)})
	if err != nil {
		t.Fatal(err)
	}
	rewarded := 0
	for _, d := range ds {
		if d.Rewarded {
			rewarded++
		}
	}
	if len(ds) != 3 || rewarded != 3 {
		t.Errorf("%d decisions, %d rewarded; want 3, 3", len(ds), rewarded)
	}
	raw, err := st.GetState(ctx, predict.StateKey(eval.Namespace(c)))
	if err != nil {
		t.Fatal(err)
	}
	post, err := predict.DecodePosteriors(raw)
	if err != nil {
		t.Fatal(err)
	}
	var updates int64
	for _, p := range post.Keys {
		updates += p.Updates
	}
	if updates != 3 {
		t.Errorf("posterior updates %d, want 3", updates)
	}
	w, wst := openEngine(t, "withheld")
	ws, err := eval.Ambient(ctx, w, []*eval.Conversation{c}, predict.PolicyBandit, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := wst.GetState(ctx, predict.StateKey(eval.Namespace(c))); raw != "" || ws.Turns != 3 || !ws.Withheld {
		t.Errorf("withheld twin: state %q, scores %+v; want no state, 3 turns", raw, ws)
	}
	if raw, _ := wst.GetState(ctx, learn.Key(eval.Namespace(c))); raw != "" {
		t.Errorf("withheld twin: relevance model %s, want none", raw)
	}
	var buf bytes.Buffer
	(&eval.AmbientReport{Rows: []*eval.AmbientScores{s, ws}}).Print(&buf)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rows); err != nil || len(rows) != 2 {
		t.Errorf("last line %q: %v", lines[len(lines)-1], err)
	}
}

// Compare reads the bandit against off, fixed:default and its withheld twin; Print states it.
func TestAmbientCompare(t *testing.T) {
	rep := &eval.AmbientReport{Rows: []*eval.AmbientScores{
		{Policy: "off", Turns: 10, Surfaced: 100, Used: 8, Reward: 2.5},
		{Policy: "fixed:default", Turns: 10, Surfaced: 5, Used: 2, Reward: 4.2},
		{Policy: "bandit", Turns: 10, Surfaced: 10, Used: 4, Reward: 4.3, NonEmpty: 8},
		{Policy: "bandit", Withheld: true, Turns: 10, Surfaced: 20, Used: 4, Reward: 4.0, NonEmpty: 9},
	}}
	c := rep.Compare()
	want := eval.AmbientComparison{PrecisionRatio: 5, UsedRatio: 0.5, RewardVsDefault: 4.3/4.2 - 1, RewardVsWithheld: 0.03, FreshNonEmpty: 0.9}
	if c == nil || math.Abs(c.PrecisionRatio-want.PrecisionRatio) > 1e-12 || math.Abs(c.UsedRatio-want.UsedRatio) > 1e-12 ||
		math.Abs(c.RewardVsDefault-want.RewardVsDefault) > 1e-12 || math.Abs(c.RewardVsWithheld-want.RewardVsWithheld) > 1e-12 ||
		c.FreshNonEmpty != want.FreshNonEmpty {
		t.Fatalf("Compare = %+v, want %+v", c, want)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	if !strings.Contains(buf.String(), "precision ×5.00, used/turn ×0.50") || !strings.Contains(buf.String(), "on 90.0 % of turns") {
		t.Errorf("Print does not state the comparison:\n%s", buf.String())
	}
	if (&eval.AmbientReport{Rows: rep.Rows[:3]}).Compare() != nil {
		t.Error("Compare without the withheld twin is not nil")
	}
}

// openEngine is a fresh embedded store with the evaluation's pipeline: the local embedder,
// recall seeded 1, engagement, and the bandit's reward of a settled turn.
func openEngine(t *testing.T, name string) (eval.Engine, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), name+".db"), sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	emb := embed.NewLocal(0)
	return eval.Engine{Ingest: ingest.New(st, emb), Recall: recall.New(st, emb, recall.Options{Seed: 1}),
		Engagement: engagement.NewService(st, engagement.ServiceOptions{}),
		Reward:     maintenance.New(st, maintenance.Options{}).RewardTurn}, st
}
