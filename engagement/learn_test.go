package engagement_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// learnFixture adds to fixture n surfacings of m1–m3 in namespace a with varied components
// and query words, and returns the events that report on them (uses for m1, else ignores).
func learnFixture(t *testing.T, n int) (*sqlite.Store, *engagement.Service, []*models.Event) {
	t.Helper()
	st, svc := fixture(t)
	var evs []*models.Event
	for i := range n {
		mem := fmt.Sprintf("m%d", 1+i%3)
		at := t0.Add(-time.Duration(n-i) * time.Second)
		sf := surfacing("a", fmt.Sprintf("L%d", i), "c2", fmt.Sprintf("T%d", i), mem, models.ModeSearch, at)
		sf.Components = models.Components{Score: 0.3 + 0.05*float64(i%7), BM25: float64(i%5) / 4, Match: 0.3 + 0.05*float64(i%7),
			Coverage: float64(i%5) / 4, Confidence: 0.5, Used: float64(i % 4), Question: float64(i % 2), Features: learn.Version}
		sf.Terms = []string{"memori", "sunset", "paint"} // "memori" links the message to "memory mN"
		must(t, st.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil))
		typ := models.EventIgnored
		if mem == "m1" {
			typ = models.EventUsed
		}
		evs = append(evs, &models.Event{ID: fmt.Sprintf("e%d", i), SurfacingID: sf.ID, Type: typ, At: at})
	}
	return st, svc, evs
}

func modelOf(t *testing.T, st *sqlite.Store) (string, *learn.Model) {
	t.Helper()
	s, err := st.GetState(ctx, learn.Key("a"))
	must(t, err)
	m, err := learn.Decode(s, learn.DefaultConfig())
	must(t, err)
	return s, m
}

// The model trains on every applied event, in the log's sequence order; per batch or per
// event the stored model is the same; a replayed event changes nothing; relearn rebuilds
// the online model from the log.
func TestModelLearnsFromEvents(t *testing.T) {
	st, svc, evs := learnFixture(t, 30)
	for _, ev := range evs[:10] {
		_, err := svc.Apply(ctx, "a", []*models.Event{ev})
		must(t, err)
	}
	_, err := svc.Apply(ctx, "a", evs[10:])
	must(t, err)
	state, m := modelOf(t, st)
	if m.N != 30 || m.Seq != 30 {
		t.Fatalf("model N %d seq %d, want 30 and 30", m.N, m.Seq)
	}
	// Matches 0.3–0.6 lie between knots 1 and 3 of both curves: those knots learn, and each
	// curve stays non-decreasing (from the default's flat prior an ignore that lowers knot 1
	// pools knot 0 with it, so the ends move too). Both kinds of turn train their own BM25
	// weight; the surfacings carry no margin, so neither margin weight moves.
	prior := learn.New(learn.DefaultConfig())
	for _, curve := range []int{learn.FSaid, learn.FAsked} {
		if m.W[curve+1] == prior.W[curve+1] || m.W[curve+2] == prior.W[curve+2] {
			t.Errorf("%s: knots 1 and 2 did not move from the prior: %v", learn.FeatureNames[curve], m.W[curve:curve+5])
		}
		for k := 1; k < 5; k++ {
			if m.W[curve+k] < m.W[curve+k-1] {
				t.Errorf("%s decreases: %v", learn.FeatureNames[curve], m.W[curve:curve+5])
			}
		}
	}
	for _, i := range []int{learn.FBestSaid, learn.FBestAsked, learn.FCoverage} {
		if m.W[i] == prior.W[i] {
			t.Errorf("w[%s] = %v did not move from the prior", learn.FeatureNames[i], m.W[i])
		}
	}
	for _, i := range []int{learn.FMarginSaid, learn.FMarginAsked} {
		if m.W[i] != prior.W[i] {
			t.Errorf("w[%s] = %v moved from the prior %v without a margin", learn.FeatureNames[i], m.W[i], prior.W[i])
		}
	}
	logged, err := st.FindEvents(ctx, models.EventFilter{Namespace: "a", BySeq: true})
	must(t, err)
	for i, ev := range logged {
		if ev.Seq != int64(i+1) || ev.ID != evs[i].ID {
			t.Fatalf("event %d: %s seq %d, want %s seq %d", i, ev.ID, ev.Seq, evs[i].ID, i+1)
		}
	}

	// The same events one batch at a time on a fresh store give the same model.
	st2, svc2, evs2 := learnFixture(t, 30)
	_, err = svc2.Apply(ctx, "a", evs2)
	must(t, err)
	if state2, _ := modelOf(t, st2); state2 != state {
		t.Errorf("one batch and many batches differ:\n%s\n%s", state2, state)
	}

	// A replayed event is a duplicate and leaves the model as it was.
	res, err := svc.Apply(ctx, "a", []*models.Event{evs[3]})
	must(t, err)
	if res.Duplicates != 1 {
		t.Fatalf("replay: %+v", res.Results)
	}
	if again, _ := modelOf(t, st); again != state {
		t.Errorf("a replayed event changed the model:\n%s\n%s", again, state)
	}

	// Relearn from the log.
	rr, err := svc.Relearn(ctx, "a", false)
	must(t, err)
	if rr.Events != 30 || rr.Version != 30 || rr.MaxDiff > 1e-9 {
		t.Errorf("relearn: %+v, want 30 events, version 30, max diff ≤ 1e-9", rr)
	}
	if after, _ := modelOf(t, st); after != state {
		t.Errorf("relearned model differs:\n%s\n%s", after, state)
	}
}

// A used memory learns the words of the message it answered that its content lacks (the
// message holds one of its own), and text search finds it by them.
func TestUsedMemoryLearnsQueryWords(t *testing.T) {
	st, svc, evs := learnFixture(t, 3)
	if hits, err := st.SearchText(ctx, "a", "sunset", 10); err != nil || len(hits) != 0 {
		t.Fatalf("before: %v, %v; want no hit", hits, err)
	}
	_, err := svc.Apply(ctx, "a", evs)
	must(t, err)
	m := getMemory(t, st, "a", "m1")
	if len(m.Learned) != 2 || m.Learned[0].Term != "paint" || m.Learned[1].Term != "sunset" || m.Learned[0].Weight != 1 {
		t.Errorf("m1 learned %+v, want paint and sunset at weight 1", m.Learned)
	}
	if m2 := getMemory(t, st, "a", "m2"); len(m2.Learned) != 0 {
		t.Errorf("an ignored memory learned %+v", m2.Learned)
	}
	hits, err := st.SearchText(ctx, "a", "sunset", 10)
	must(t, err)
	if len(hits) != 1 || hits[0].ID != "m1" {
		t.Errorf("search by a learned word: %v, want m1", hits)
	}
}

// Events on proactive predictions (mode predict) are applied — logged, moving the memory —
// but the relevance model does not train on them, online or relearned: they were not ranked.
func TestPredictionsDoNotTrainTheModel(t *testing.T) {
	st, svc, evs := learnFixture(t, 6)
	_, err := svc.Apply(ctx, "a", evs)
	must(t, err)
	before, m := modelOf(t, st)
	if m.N != 6 {
		t.Fatalf("model N %d, want 6", m.N)
	}
	sf := surfacing("a", "P1", "c3", "T-pred", "m2", models.ModePredict, t0.Add(-time.Second))
	sf.Components = models.Components{Confidence: 0.5, Importance: 0.5}
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil))
	res, err := svc.Apply(ctx, "a", []*models.Event{{ID: "p1", SurfacingID: "P1", Type: models.EventUsed, At: t0}})
	must(t, err)
	if res.Applied != 1 {
		t.Fatalf("the event on a prediction was not applied: %+v", res.Results)
	}
	after, m := modelOf(t, st)
	if m.N != 6 || m.Seq != 7 {
		t.Errorf("model N %d seq %d, want N 6 (untrained) at seq 7 (the log read past it)", m.N, m.Seq)
	}
	if _, mb := decodeState(t, before); mb.W != m.W {
		t.Errorf("the weights moved on a prediction's event")
	}
	if got, err := st.GetMemory(ctx, "a", "m2"); err != nil || got.UsageCount == 0 {
		t.Errorf("the predicted memory's use was not counted: %+v, %v", got, err)
	}
	rr, err := svc.Relearn(ctx, "a", false)
	must(t, err)
	if rr.Events != 6 || rr.Skipped != 0 || rr.Version != 6 || rr.MaxDiff > 1e-9 {
		t.Errorf("relearn: %+v, want 6 events, none skipped, version 6, no difference", rr)
	}
	if again, _ := modelOf(t, st); again != after {
		t.Errorf("relearned model differs:\n%s\n%s", again, after)
	}
}

func decodeState(t *testing.T, s string) (string, *learn.Model) {
	t.Helper()
	m, err := learn.Decode(s, learn.DefaultConfig())
	must(t, err)
	return s, m
}

// Once prune-history has deleted the log's oldest events, relearn refuses to rebuild the
// model from what is left unless asked to (from kept), and then learns from the kept events.
func TestRelearnRefusesPrunedLog(t *testing.T) {
	st, svc, evs := learnFixture(t, 30)
	_, err := svc.Apply(ctx, "a", evs)
	must(t, err)
	online, _ := modelOf(t, st)
	p, err := st.PruneHistory(ctx, models.PruneCut{Before: evs[20].At}) // events 0–19 go
	must(t, err)
	if p.Events != 20 {
		t.Fatalf("pruned %+v, want 20 events", p)
	}
	_, err = svc.Relearn(ctx, "a", false)
	if models.ErrorCode(err) != models.ECONFLICT || !strings.Contains(models.ErrorMessage(err), "pruned") {
		t.Fatalf("relearn of a pruned log: %v, want a conflict naming the pruning", err)
	}
	if still, _ := modelOf(t, st); still != online {
		t.Error("a refused relearn changed the model")
	}
	rr, err := svc.Relearn(ctx, "a", true)
	must(t, err)
	if rr.Events != 10 || rr.Version != 10 {
		t.Errorf("relearn from the kept events: %+v, want 10 events, version 10", rr)
	}
}

// A surfacing recorded before feature set 2 (Components.Features 0) trains nothing, live or
// in a relearn, while its event is still applied: logged, and moving the memory. A model
// stored under feature set 1 (no version) is the prior again, from its log position on.
func TestOldSurfacingsDoNotTrain(t *testing.T) {
	st, svc, evs := learnFixture(t, 6)
	_, err := svc.Apply(ctx, "a", evs)
	must(t, err)
	before, m := modelOf(t, st)
	if m.N != 6 {
		t.Fatalf("model N %d, want 6", m.N)
	}
	old := surfacing("a", "OLD", "c3", "T-old", "m2", models.ModeSearch, t0.Add(-time.Second))
	old.Components = models.Components{Score: 0.9, BM25: 1, Relevance: 0.9, Confidence: 0.5, Top: 1} // as v1 recorded it
	must(t, st.RecordSurfacings(ctx, []*models.Surfacing{old}, nil))
	usesBefore := getMemory(t, st, "a", "m2").UsageCount
	res, err := svc.Apply(ctx, "a", []*models.Event{{ID: "o1", SurfacingID: "OLD", Type: models.EventUsed, At: t0}})
	must(t, err)
	if res.Applied != 1 {
		t.Fatalf("the event on an old surfacing was not applied: %+v", res.Results)
	}
	if got := getMemory(t, st, "a", "m2").UsageCount; got != usesBefore+1 {
		t.Errorf("m2's uses %d → %d, want one more", usesBefore, got)
	}
	after, m := modelOf(t, st)
	if m.N != 6 || m.Seq != 7 {
		t.Errorf("model N %d seq %d, want N 6 (untrained) at seq 7 (the log read past it)", m.N, m.Seq)
	}
	if _, mb := decodeState(t, before); mb.W != m.W || mb.G != m.G {
		t.Error("the weights moved on an old surfacing's event")
	}
	rr, err := svc.Relearn(ctx, "a", false)
	must(t, err)
	if rr.Events != 6 || rr.Skipped != 0 || rr.Version != 6 || rr.MaxDiff > 1e-9 {
		t.Errorf("relearn: %+v, want 6 events, none skipped, version 6, no difference", rr)
	}
	if again, _ := modelOf(t, st); again != after {
		t.Errorf("relearned model differs:\n%s\n%s", again, after)
	}

	// A namespace whose model and surfacings are all v1: the stored model reads as the
	// prior at its log position, an old surfacing's event leaves it there, and the first v2
	// surfacing's event trains it from the prior.
	st2, svc2, evs2 := learnFixture(t, 1)
	must(t, st2.SetState(ctx, learn.Key("a"), `{"w":[-3,4,0.5,0,0,0,0,0,0,0,0,0,0],"g":[1,1,0,0,0,0,0,0,0,0,0,0,0],"n":40,"seq":0}`))
	must(t, st2.RecordSurfacings(ctx, []*models.Surfacing{old}, nil))
	_, err = svc2.Apply(ctx, "a", []*models.Event{{ID: "o1", SurfacingID: "OLD", Type: models.EventIgnored, At: t0}})
	must(t, err)
	state, m2 := modelOf(t, st2)
	prior := learn.New(learn.DefaultConfig())
	prior.Seq = 1
	if *m2 != *prior || !strings.Contains(state, `"version":2`) {
		t.Errorf("after a v1 model and a v1 surfacing's event: %s, want the prior at seq 1", state)
	}
	_, err = svc2.Apply(ctx, "a", evs2)
	must(t, err)
	if _, m2 = modelOf(t, st2); m2.N != 1 || m2.Seq != 2 || m2.W == prior.W {
		t.Errorf("after a v2 event: N %d seq %d, weights moved %v; want N 1 at seq 2, trained", m2.N, m2.Seq, m2.W != prior.W)
	}
}
