package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
)

// Issue 45, acceptance 1, over HTTP: resurfacing is for what earned it. Thirty turns of an
// evening's chat are stored, and the facts a bot drew from them (two marked important);
// nothing is used. A week on, decay-scan queues no turn and its head is the important facts.
// Then the bot uses three memories; once their schedules come due they lead the queue in
// order of value (decay.Worth × 1 − R).

// eveningChat is the evening: each line a turn; fact, when set, is what a bot would keep of it
// as a fact, with its importance.
var eveningChat = []struct {
	speaker, text string
	fact          string
	importance    float64
}{
	{"Ines", "Evening! Long day, finally home.", "", 0},
	{"Theo", "Welcome back. How was it?", "", 0},
	{"Ines", "Busy. The quarterly numbers are due Thursday and nobody has started.", "Ines's quarterly numbers are due on Thursday", 0},
	{"Theo", "That sounds stressful.", "", 0},
	{"Ines", "It's fine, it always works out. Oh, guess what, we got a puppy!", "", 0},
	{"Theo", "That's amazing! What are you going to call it?", "", 0},
	{"Ines", "Biscuit. He's a beagle, very loud.", "Ines's puppy is a beagle called Biscuit", 0},
	{"Theo", "Ha, a good name.", "", 0},
	{"Ines", "My son picked it. He is eight and obsessed with dogs.", "Ines's son is eight years old", 0},
	{"Theo", "Eight is a great age for a first dog.", "", 0},
	{"Ines", "Ugh. By the way, I'm allergic to cats, so it had to be a dog.", "Ines is allergic to cats", 0.9},
	{"Theo", "Good to know.", "", 0},
	{"Ines", "Lol yes.", "", 0},
	{"Theo", "Anything planned for the weekend?", "", 0},
	{"Ines", "My sister Lena flies in on Friday, I pick her up at six.", "Ines picks up her sister Lena at six on Friday", 0},
	{"Theo", "Nice, how long is she staying?", "", 0},
	{"Ines", "Ten days. She is vegetarian, so no barbecue this time.", "Lena is vegetarian", 0.9},
	{"Theo", "Noted.", "", 0},
	{"Ines", "Haha okay.", "", 0},
	{"Theo", "Anything else on your mind?", "", 0},
	{"Ines", "The weather has been awful, right?", "", 0},
	{"Theo", "Grey all week.", "", 0},
	{"Ines", "We switched the car insurance to Nordwest, it was cheaper.", "Ines's car insurance is with Nordwest", 0},
	{"Theo", "Smart move.", "", 0},
	{"Ines", "Anyway, I should sleep.", "", 0},
	{"Theo", "Good night then.", "", 0},
	{"Ines", "Night!", "", 0},
	{"Theo", "Sleep well.", "", 0},
	{"Ines", "Thanks :)", "", 0},
	{"Theo", "Talk tomorrow.", "", 0},
}

func TestResurfacingIsForWhatEarnedIt(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 19, 0, 0, 0, time.UTC)
	clock := &testClock{t: t0}
	c := startStack(t, clock)
	ns := c.Namespace("ines")

	turns := map[string]string{} // id → text
	facts := map[string]string{}
	important := map[string]bool{}
	idOf := map[string]string{} // text → id
	for i, l := range eveningChat {
		now := clock.Add(2 * time.Minute)
		m, err := ns.Store(ctx, api.MemoryInput{Kind: "turn", Content: l.text, CreatedAt: now,
			Source: &api.Source{ConversationID: "evening", MessageID: fmt.Sprintf("m%02d", i+1), Speaker: l.speaker, Role: role(l.speaker)}})
		if err != nil {
			t.Fatal(err)
		}
		turns[m.ID], idOf[l.text] = l.text, m.ID
		if l.fact == "" {
			continue
		}
		f, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: l.fact, CreatedAt: now, Importance: l.importance})
		if err != nil {
			t.Fatal(err)
		}
		facts[f.ID], idOf[l.fact] = l.fact, f.ID
		important[f.ID] = l.importance >= 0.7
	}
	if len(turns) != 30 || len(facts) != 7 {
		t.Fatalf("stored %d turns and %d facts, want 30 and 7", len(turns), len(facts))
	}
	label := func(id string) string {
		if s, ok := facts[id]; ok {
			return "fact: " + s
		}
		return "turn: " + turns[id]
	}

	// A week on, nothing used: every turn is long past FSRS's 2.3 days, yet none is queued;
	// the seven facts are, the two marked important first.
	clock.Set(t0.Add(7 * 24 * time.Hour))
	q := scanAndList(t, c, ns)
	logQueue(t, "a week on, nothing used", q, label)
	if len(q) != 7 {
		t.Errorf("queue holds %d items, want the 7 facts", len(q))
	}
	for i, it := range q {
		if _, isTurn := turns[it.MemoryID]; isTurn {
			t.Errorf("item %d is a turn never used: %q", i, turns[it.MemoryID])
		}
	}
	if len(q) < 2 || !important[q[0].MemoryID] || !important[q[1].MemoryID] {
		t.Errorf("the queue's head is not the two important facts")
	}

	// The bot searches and uses: Lena's pick-up line three times, the cat allergy fact and
	// the puppy's name turn once each.
	use := func(query, text string, times int) {
		t.Helper()
		want := idOf[text]
		for n := range times {
			clock.Add(time.Minute)
			rec, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "week-two", TurnID: fmt.Sprintf("use-%s-%d", want, n),
				Mode: client.ModeSearch, Query: query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var sid string
			for _, r := range rec.Results {
				if r.ID == want {
					sid = r.SurfacingID
				}
			}
			if sid == "" {
				t.Fatalf("search %q did not find %q", query, text)
			}
			rep, err := ns.Report(ctx, api.EngagementEvent{ID: sid + "-used", SurfacingID: sid, Type: client.EventUsed})
			if err != nil || rep.Rejected > 0 {
				t.Fatalf("reporting %q used: %+v, %v", text, rep, err)
			}
		}
	}
	lena := "My sister Lena flies in on Friday, I pick her up at six."
	cats := "Ines is allergic to cats"
	biscuit := "Biscuit. He's a beagle, very loud."
	use("when does Lena fly in, pick her up Friday", lena, 3)
	use("allergic to cats", cats, 1)
	use("Biscuit beagle", biscuit, 1)

	// Just used, they are not due (S0(Good) = 2.3 days from the use): the queue is the facts'
	// less the cat fact.
	q = scanAndList(t, c, ns)
	logQueue(t, "right after the uses", q, label)
	for _, it := range q {
		if id := it.MemoryID; id == idOf[lena] || id == idOf[cats] || id == idOf[biscuit] {
			t.Errorf("%s is queued right after its use", label(id))
		}
	}

	// Three days later their schedules have come due: they lead, in order of value — three
	// uses, then one use of a fact marked important, then one use of a turn — ahead of the
	// facts never used, and still no turn that was never used.
	clock.Set(t0.Add(10 * 24 * time.Hour))
	q = scanAndList(t, c, ns)
	logQueue(t, "three days after the uses", q, label)
	var head []string
	for _, it := range q[:min(3, len(q))] {
		head = append(head, it.MemoryID)
	}
	if want := []string{idOf[lena], idOf[cats], idOf[biscuit]}; fmt.Sprint(head) != fmt.Sprint(want) {
		t.Errorf("queue head = %q, want Lena's pick-up, the cat allergy, Biscuit", labels(head, label))
	}
	for i, it := range q {
		if _, isTurn := turns[it.MemoryID]; isTurn && it.Memory.UsageCount == 0 {
			t.Errorf("item %d is a turn never used: %q", i, turns[it.MemoryID])
		}
		if i > 0 && it.Score > q[i-1].Score {
			t.Errorf("item %d scores %v above item %d's %v", i, it.Score, i-1, q[i-1].Score)
		}
	}
	if len(q) != 9 {
		t.Errorf("queue holds %d items, want 9: the 3 used memories and the 6 facts never used", len(q))
	}
}

// scanAndList runs decay-scan over HTTP at the clock's time, waits for it to finish, and
// returns the namespace's queue.
func scanAndList(t *testing.T, c *client.Client, ns *client.Namespace) []api.ResurfaceItem {
	t.Helper()
	ctx := context.Background()
	run, err := c.RunJob(ctx, "decay-scan")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		runs, err := c.JobRuns(ctx, "decay-scan", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].ID == run.ID && runs[0].Finished {
			if runs[0].Error != "" {
				t.Fatalf("decay-scan failed: %s", runs[0].Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decay-scan did not finish: %+v", runs)
		}
	}
	q, err := ns.Resurfacing(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func logQueue(t *testing.T, when string, q []api.ResurfaceItem, label func(string) string) {
	t.Helper()
	var b strings.Builder
	for i, it := range q {
		fmt.Fprintf(&b, "\n  %2d. %.4f  %s (uses %d)", i+1, it.Score, label(it.MemoryID), it.Memory.UsageCount)
	}
	t.Logf("queue %s:%s", when, b.String())
}

func labels(ids []string, label func(string) string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = label(id)
	}
	return out
}
