package server_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
)

// What the relevance model learns from honest reports, and what p_use may depend on,
// through the real stack over HTTP. Each fact is a line a user said; each question asks it
// back directly, so the fact is the question's exact answer.

// yusufFacts are what the user Yusuf tells the bot, stored as his turns.
var yusufFacts = []struct{ Fact, Question string }{
	{"I teach chemistry to the older kids at Hollin Park secondary school.", "What subject do I teach?"},
	{"My daughter Amara turns seven on the 12th of July.", "When is Amara's birthday?"},
	{"I drive a blue Skoda estate with a roof box on top.", "What car do I drive?"},
	{"Our allotment is plot number 41, right by the canal.", "Which allotment plot is ours?"},
	{"I play five-a-side football every Tuesday night at the leisure centre.", "When do I play football?"},
	{"My wife Dilnoza works as a pharmacist at the hospital on Crane Road.", "Where does Dilnoza work?"},
	{"We're repainting the kitchen sage green this spring.", "What colour are we painting the kitchen?"},
	{"My mother flies in from Tashkent on the 3rd of June.", "When does my mother arrive?"},
	{"I can't eat shellfish, prawns give me hives.", "What food can't I eat?"},
	{"Someone stole my bike from outside the library last week.", "Where was my bike stolen?"},
}

// smallTalk is a chat between Yusuf and the bot (Ada) that needs none of his facts. Some
// words brush against them (school, spring, kids, night), as small talk does.
var smallTalk = []scriptLine{
	{Speaker: "Yusuf", Text: "Morning! Slow start today, the kettle took ages."},
	{Speaker: "Ada", Text: "Morning. Tea or coffee this time?"},
	{Speaker: "Yusuf", Text: "Coffee, strong. The school run was chaos."},
	{Speaker: "Ada", Text: "Chaos seems to be the default with kids."},
	{Speaker: "Yusuf", Text: "The weather can't make up its mind either."},
	{Speaker: "Ada", Text: "Sun, then hail, then sun again. Typical spring."},
	{Speaker: "Yusuf", Text: "I watched a documentary about octopuses last night."},
	{Speaker: "Ada", Text: "Clever animals. Did it mention they taste with their arms?"},
	{Speaker: "Yusuf", Text: "It did! Honestly wild."},
	{Speaker: "Ada", Text: "Any plans for this evening?"},
	{Speaker: "Yusuf", Text: "Probably leftovers and an early night."},
	{Speaker: "Ada", Text: "Sounds peaceful. Leftovers are underrated."},
	{Speaker: "Yusuf", Text: "Agreed. Anyway, lots on today, talk later."},
	{Speaker: "Ada", Text: "Talk later, have a good one."},
}

// storeFacts stores Yusuf's facts as his turns of one conversation, a minute apart, and
// returns their ids in order.
func storeFacts(t *testing.T, ns *client.Namespace, clock *testClock) []string {
	t.Helper()
	var ids []string
	for i, f := range yusufFacts {
		m, err := ns.Store(context.Background(), api.MemoryInput{Kind: "turn", Content: f.Fact, CreatedAt: clock.Add(time.Minute),
			Source: &api.Source{ConversationID: "first-chat", MessageID: fmt.Sprintf("f%02d", i+1), Speaker: "Yusuf", Role: client.RoleUser}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// probe asks q as the only message of a conversation of its own (so no answer is held
// back as recently shown) and returns the answer's result, nil when it is not among them.
func probe(t *testing.T, ns *client.Namespace, conv, mode, policy, q, answer string) (*api.RecallResult, *api.RecallResponse) {
	t.Helper()
	rec, err := ns.Recall(context.Background(), api.RecallRequest{ConversationID: conv, TurnID: conv, Mode: mode,
		ThresholdPolicy: policy, Messages: []api.Message{{Speaker: "Yusuf", Content: q}}, Limit: 10, Explain: true})
	if err != nil {
		t.Fatalf("%s: %v", conv, err)
	}
	for i := range rec.Results {
		if rec.Results[i].ID == answer {
			return &rec.Results[i], rec
		}
	}
	return nil, rec
}

// answersPUse returns each question's answer's p_use in ambient recall with no gate, and
// whether the answer surfaces under the default threshold.
func answersPUse(t *testing.T, ns *client.Namespace, ids []string, round string) (pUse []float64, gated []bool, comps []*api.Components) {
	t.Helper()
	for i, f := range yusufFacts {
		r, _ := probe(t, ns, fmt.Sprintf("%s-open-%02d", round, i+1), client.ModeAmbient, "off", f.Question, ids[i])
		if r == nil {
			t.Fatalf("%s: %q does not find its answer even with no threshold", round, f.Question)
		}
		pUse, comps = append(pUse, r.PUse), append(comps, r.Components)
		g, _ := probe(t, ns, fmt.Sprintf("%s-gate-%02d", round, i+1), client.ModeAmbient, "fixed:default", f.Question, ids[i])
		gated = append(gated, g != nil)
	}
	return pUse, gated, comps
}

// TestIgnoredSmallTalkKeepsExactAnswers (issue 41, failure 1): a bot that honestly reports
// ignored for whatever small talk surfaced must not teach recall to doubt its exact answers.
// Two namespaces hold the same facts and hear the same fourteen small-talk turns; in each,
// ambient recall runs with the gate off, so every match surfaces (five a turn), and the
// honest one reports every one of them ignored while its twin reports nothing. Afterwards
// each direct question's exact answer has at least half its twin's p_use, and every answer
// that clears the default ambient threshold in the twin clears it in the honest namespace.
// (Comparing with a twin, not with before, leaves out what the small talk changes by being
// stored: more memories compete.)
func TestIgnoredSmallTalkKeepsExactAnswers(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 4, 6, 8, 0, 0, 0, time.UTC)}
	honest := startStack(t, clock).Namespace("yusuf")
	twin := startStack(t, clock).Namespace("yusuf")
	ctx := context.Background()
	start := clock.Now()
	ids := storeFacts(t, honest, clock)
	clock.Set(start) // the twin's facts at the same times
	twinIDs := storeFacts(t, twin, clock)

	// The next day's small talk: recall before each line (gate off), store it, and in the
	// honest namespace report every surfaced memory ignored (none of them was needed).
	clock.Add(24 * time.Hour)
	var history []api.Message
	ignored := 0
	for i, l := range smallTalk {
		now := clock.Add(2 * time.Minute)
		msg := api.Message{Speaker: l.Speaker, Content: l.Text, At: now}
		window := append(append([]api.Message(nil), lastMessages(history, 2)...), msg)
		roleOf := client.RoleUser
		if l.Speaker == "Ada" {
			roleOf = client.RoleAssistant
		}
		for _, ns := range []*client.Namespace{honest, twin} {
			rec, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "small-talk", TurnID: fmt.Sprintf("chat-%02d", i+1),
				Mode: client.ModeAmbient, Messages: window, Limit: 5, ThresholdPolicy: "off"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ns.Store(ctx, api.MemoryInput{Kind: "turn", Content: l.Text, CreatedAt: now,
				Source: &api.Source{ConversationID: "small-talk", MessageID: fmt.Sprintf("s%02d", i+1), Speaker: l.Speaker, Role: roleOf}}); err != nil {
				t.Fatal(err)
			}
			if ns != honest || len(rec.Results) == 0 {
				continue
			}
			var events []api.EngagementEvent
			for _, r := range rec.Results {
				events = append(events, api.EngagementEvent{ID: r.SurfacingID + "-ignored", SurfacingID: r.SurfacingID, Type: client.EventIgnored})
			}
			rep, err := ns.Report(ctx, events...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rejected > 0 {
				t.Fatalf("small talk line %d: %d reports rejected: %+v", i+1, rep.Rejected, rep.Results)
			}
			ignored += len(events)
		}
		history = append(history, msg)
	}
	// Ambient recall does not repeat what the conversation was shown in its last turns, so
	// the gate off shows each of the ten facts about once.
	if ignored < 10 {
		t.Fatalf("small talk: %d surfaced memories reported ignored, want at least 10: the test teaches nothing", ignored)
	}
	clock.Add(24 * time.Hour)
	after, gatedAfter, comps := answersPUse(t, honest, ids, "after")
	twinP, gatedTwin, _ := answersPUse(t, twin, twinIDs, "twin")

	t.Logf("small talk: %d turns, %d surfaced memories reported ignored", len(smallTalk), ignored)
	foundHonest, foundTwin := 0, 0
	for i, f := range yusufFacts {
		c := comps[i]
		t.Logf("  %-42q p_use honest %.2f twin %.2f  surfaces honest %v twin %v  (honest model %s)",
			f.Question, after[i], twinP[i], gatedAfter[i], gatedTwin[i], terms(c.Model))
		if gatedAfter[i] {
			foundHonest++
		}
		if gatedTwin[i] {
			foundTwin++
		}
		if after[i] < twinP[i]/2 {
			t.Errorf("%q: the answer's p_use is %.2f after ignored small talk, its silent twin's %.2f: want at least half", f.Question, after[i], twinP[i])
		}
		if gatedTwin[i] && !gatedAfter[i] {
			t.Errorf("%q: the answer surfaces in the silent twin and not in the honest namespace (p_use %.2f)", f.Question, after[i])
		}
	}
	t.Logf("answers surfacing under the default threshold: honest %d/%d, twin %d/%d", foundHonest, len(yusufFacts), foundTwin, len(yusufFacts))
}

// terms prints a model's contributions to the logit in a stable order.
func terms(m map[string]float64) string {
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %+.2f ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// characters are two bots' presentation weights (a namespace's settings weights of both
// modes): one leans on relevance, the other on freshness, importance and novelty.
var characters = map[string]api.ScoreWeights{
	"archivist": {Relevance: 0.9, Confidence: 0.05, Freshness: 0.02, Proximity: 0.01, Importance: 0.01, Novelty: 0.01},
	"sprinter":  {Relevance: 0.3, Confidence: 0.1, Freshness: 0.3, Proximity: 0.05, Importance: 0.15, Novelty: 0.1},
}

// TestPUseDoesNotMoveWithCharacter (issue 41, failure 6): p_use is the probability that a
// memory would be used if shown now. Two namespaces hold the same memories, stored at the
// same times, and differ only in their character's weights; neither has learned anything.
// The same question must give the same exact answer the same p_use in both, in search and
// in ambient recall; and a memory read as shared memory must have the p_use its own
// namespace gives it, whatever the character of the namespace that reads it.
func TestPUseDoesNotMoveWithCharacter(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 5, 11, 9, 0, 0, 0, time.UTC)}
	c := startStack(t, clock)
	ctx := context.Background()
	ids := map[string][]string{}
	start := clock.Now()
	for _, name := range []string{"archivist", "sprinter"} {
		w := characters[name]
		ns := c.Namespace(name)
		if _, err := ns.PutSettings(ctx, api.Settings{Weights: map[string]api.ScoreWeights{client.ModeAmbient: w, client.ModeSearch: w}}); err != nil {
			t.Fatal(err)
		}
		clock.Set(start) // the same memories at the same times in both
		ids[name] = storeFacts(t, ns, clock)
	}
	clock.Add(time.Hour)
	const tol = 0.005
	for _, mode := range []string{client.ModeSearch, client.ModeAmbient} {
		for i, f := range yusufFacts {
			p := map[string]float64{}
			for name := range characters {
				r, _ := probe(t, c.Namespace(name), fmt.Sprintf("%s-%s-%02d", name, mode, i+1), mode, "off", f.Question, ids[name][i])
				if r == nil {
					t.Fatalf("%s %s: %q does not find its answer", name, mode, f.Question)
				}
				p[name] = r.PUse
			}
			t.Logf("  %-7s %-42q p_use archivist %.2f sprinter %.2f", mode, f.Question, p["archivist"], p["sprinter"])
			if math.Abs(p["archivist"]-p["sprinter"]) > tol {
				t.Errorf("%s %q: p_use %.2f under the archivist's weights, %.2f under the sprinter's, want the same",
					mode, f.Question, p["archivist"], p["sprinter"])
			}
		}
	}

	// Shared memory: Yusuf's facts also live in a namespace of their own, "family", with the
	// server's default weights, which two bots of these characters read as shared memory
	// (their own namespaces hold nothing, so only the weights differ). Each answer must have the p_use there
	// that "family" itself gives it.
	clock.Set(start)
	shared := storeFacts(t, c.Namespace("family"), clock)
	for _, name := range []string{"archivist", "sprinter"} {
		reader := c.Namespace("reads-as-" + name)
		if _, err := reader.PutSettings(ctx, api.Settings{Weights: map[string]api.ScoreWeights{client.ModeAmbient: characters[name], client.ModeSearch: characters[name]}}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(start.Add(time.Hour))
	for i, f := range yusufFacts {
		own, _ := probe(t, c.Namespace("family"), fmt.Sprintf("family-%02d", i+1), client.ModeSearch, "", f.Question, shared[i])
		if own == nil {
			t.Fatalf("%q: the answer is missing asked in its own namespace", f.Question)
		}
		p := map[string]float64{}
		for _, name := range []string{"archivist", "sprinter"} {
			rec, err := c.Namespace("reads-as-"+name).Recall(ctx, api.RecallRequest{ConversationID: fmt.Sprintf("shared-%02d", i+1), Mode: client.ModeSearch,
				Messages: []api.Message{{Speaker: "Yusuf", Content: f.Question}}, Namespaces: []string{"family"}, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			j := slices.IndexFunc(rec.Results, func(r api.RecallResult) bool { return r.ID == shared[i] })
			if j < 0 {
				t.Fatalf("%q: the shared answer is missing read as the %s", f.Question, name)
			}
			p[name] = rec.Results[j].PUse
		}
		t.Logf("  shared  %-42q p_use in family %.2f, read as the archivist %.2f, as the sprinter %.2f", f.Question, own.PUse, p["archivist"], p["sprinter"])
		for _, name := range []string{"archivist", "sprinter"} {
			if math.Abs(own.PUse-p[name]) > tol {
				t.Errorf("shared %q: the answer has p_use %.2f asked in its namespace and %.2f read as the %s, want the same",
					f.Question, own.PUse, p[name], name)
			}
		}
	}
}
