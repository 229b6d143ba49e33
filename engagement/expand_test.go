package engagement_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// TestUsedMemoryLearnsFromWhatAsked plays the loop on the real store and pipeline: a memory
// used in turns whose window also held other talk learns from the message that asked, and
// only its words that link to it — not the window's. Three turns: the friend grumbles about
// the landlord's letter, then asks about Priya's bakery shifts; the bot answers from the
// bakery memory and reports it used.
func TestUsedMemoryLearnsFromWhatAsked(t *testing.T) {
	st := openStore(t)
	emb := embed.NewLocal(0)
	ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return t0.Add(-time.Hour) }})
	contents := []string{
		"Priya works night shifts at the bakery on Elm Street.",
		"Priya's landlord wants the rent paid in cash by the first of the month.",
		"The allotment by the canal has a waiting list of two years.",
		"Jonas plays the cello in a quartet on Thursdays.",
	}
	var in []*models.Memory
	for _, c := range contents {
		in = append(in, &models.Memory{Kind: models.KindFact, Content: c})
	}
	created, err := ing.Ingest(ctx, "ns", in)
	must(t, err)
	bakery, landlord := created[0].ID, created[1].ID
	p := recall.New(st, emb, recall.Options{})
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return t0 }})

	window := []recall.Message{
		{Speaker: "Sam", Content: "Ugh, the landlord slipped another letter under my door about the rent."},
		{Speaker: "bot", Content: "That sounds stressful. Do you want to talk it through?"},
		{Speaker: "Sam", Content: "Not now. Is Priya still baking sourdough on her night shifts?"},
	}
	for i := range 3 {
		resp, err := p.Recall(ctx, &recall.Request{Namespace: "ns", ConversationID: "c", Mode: models.ModeSearch,
			Messages: window, Rerank: "off", Now: t0})
		must(t, err)
		var sid string
		for _, r := range resp.Results {
			if r.Memory.ID == bakery {
				sid = r.SurfacingID
			}
		}
		if sid == "" {
			t.Fatalf("turn %d did not surface the bakery memory", i)
		}
		res, err := svc.Apply(ctx, "ns", []*models.Event{{ID: fmt.Sprint("use", i), SurfacingID: sid, Type: models.EventUsed}})
		must(t, err)
		if res.Applied != 1 {
			t.Fatalf("turn %d: %+v", i, res.Results)
		}
	}

	// It learned the asked message's words it lacked, the filler ("still") aside, and none
	// of the window's earlier words.
	m := getMemory(t, st, "ns", bakery)
	var words []string
	for _, lt := range m.Learned {
		words = append(words, lt.Term)
	}
	if !slices.Equal(words, []string{"bake", "sourdough"}) || m.Learned[0].Weight != 3 {
		t.Errorf("the bakery memory learned %+v, want bake and sourdough at weight 3", m.Learned)
	}
	// Nor was it tied to the window's concepts, which would reach it by association.
	for key := range edges(t, st, "ns") {
		for _, c := range []string{"landlord", "rent", "letter", "door"} {
			if key == bakery+"-mentions->"+models.ConceptID(c) {
				t.Errorf("the bakery memory was tied to the window's concept %q", c)
			}
		}
	}

	search := func(query string) []string {
		t.Helper()
		resp, err := p.Recall(ctx, &recall.Request{Namespace: "ns", ConversationID: "q", Mode: models.ModeSearch,
			Query: query, Rerank: "off", Now: t0})
		must(t, err)
		var ids []string
		for _, r := range resp.Results {
			ids = append(ids, r.Memory.ID)
		}
		return ids
	}
	// Not findable by the window's words...
	if got := search("who got a letter under the door?"); slices.Contains(got, bakery) {
		t.Errorf("a question about the letter found the bakery memory: %v", got)
	}
	// ...nor ranked above the memory that answers them.
	got := search("what did the landlord say about the rent?")
	if len(got) == 0 || got[0] != landlord {
		t.Errorf("the landlord question ranked %v, want the landlord memory %s first", got, landlord)
	}
	// Findable by the word that linked to it.
	if got := search("who bakes sourdough?"); len(got) == 0 || got[0] != bakery {
		t.Errorf("the sourdough question ranked %v, want the bakery memory %s first", got, bakery)
	}
}
