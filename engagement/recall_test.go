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

// TestRecallSeesEngagement runs the loop on the real store and pipeline: what engagement
// learns (edges, confidence, irrelevant contexts) is visible to the next recall call at once,
// because the store applies committed changes to its in-memory graph and memory cache.
func TestRecallSeesEngagement(t *testing.T) {
	st := openStore(t)
	emb := embed.NewLocal(0)
	ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return t0.Add(-time.Hour) }})
	contents := []string{
		"Nadia keeps her bees on the roof of the old cannery.",
		"Tomas repairs bicycles in the shed behind the bakery.",
		"Honey prices rose at the Saturday market this spring.",
		"The bakery sells rye bread every Saturday morning.",
	}
	var in []*models.Memory
	for _, c := range contents {
		in = append(in, &models.Memory{Kind: models.KindFact, Content: c})
	}
	created, err := ing.Ingest(ctx, "ns", in)
	must(t, err)
	tomas := created[1].ID
	p := recall.New(st, emb, recall.Options{})
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return t0 }})
	ask := func(query string) *recall.Response {
		t.Helper()
		resp, err := p.Recall(ctx, &recall.Request{Namespace: "ns", ConversationID: "c", Mode: models.ModeSearch,
			Query: query, Rerank: "off", Explain: true, Now: t0})
		must(t, err)
		return resp
	}
	find := func(resp *recall.Response, id string) *recall.Result {
		for i := range resp.Results {
			if resp.Results[i].Memory.ID == id {
				return &resp.Results[i]
			}
		}
		return nil
	}

	// Before any feedback a question about honey does not reach the repair shop.
	if r := find(ask("who sells honey"), tomas); r != nil {
		t.Fatalf("before feedback the honey question found Tomas: %+v", r.Reasons)
	}
	// The bot was shown the Tomas memory three times and used it each time while honey was
	// discussed (one outcome per surfacing: three uses need three surfacings).
	var before float64
	var evs []*models.Event
	for i := range 3 {
		r := find(ask("who repairs bicycles"), tomas)
		if r == nil {
			t.Fatal("the bicycle question did not find Tomas")
		}
		before = r.Components.Confidence
		evs = append(evs, &models.Event{ID: fmt.Sprintf("e%d", i), SurfacingID: r.SurfacingID, Type: models.EventUsed, Concepts: []string{"honey"}})
	}
	res, err := svc.Apply(ctx, "ns", evs)
	must(t, err)
	if res.Applied != 3 {
		t.Fatalf("apply: %+v", res.Results)
	}
	// The in-memory adjacency recall walks holds the committed weight.
	es, err := st.Neighbors(ctx, "ns", []string{models.ConceptID("honey")})
	must(t, err)
	var learned *models.Edge
	for _, e := range es {
		if e.Other(models.ConceptID("honey")) == tomas {
			learned = e
		}
	}
	if learned == nil || !near(learned.Weight, 0.5) || learned.CoOccurrences != 3 || learned.Type != models.EdgeMentions {
		t.Fatalf("learned edge = %+v, want mentions at 0.5 after 3 co-occurrences", learned)
	}
	// Recall now reaches Tomas from honey by association, with the raised confidence.
	r := find(ask("who sells honey"), tomas)
	if r == nil || !slices.Contains(r.Reasons, "association") || r.Components.Activation <= 0 {
		t.Fatalf("after feedback the honey question did not reach Tomas by association: %+v", r)
	}
	if !near(r.Components.Confidence, before+0.3) {
		t.Errorf("confidence component %v, want %v", r.Components.Confidence, before+0.3)
	}

	// Dismissed in a context, a memory stops being volunteered in an overlapping one.
	amb := func() *recall.Response {
		t.Helper()
		resp, err := p.Recall(ctx, &recall.Request{Namespace: "ns", ConversationID: fmt.Sprint("amb", time.Now().UnixNano()),
			Mode: models.ModeAmbient, Query: "rye bread at the bakery on Saturday", Rerank: "off", Now: t0})
		must(t, err)
		return resp
	}
	bakery := created[3].ID
	first := find(amb(), bakery)
	if first == nil || find(amb(), bakery) == nil {
		t.Fatal("ambient recall about rye bread did not surface the bakery every time")
	}
	res, err = svc.Apply(ctx, "ns", []*models.Event{{ID: "d", SurfacingID: first.SurfacingID, Type: models.EventDismissed}})
	must(t, err)
	if res.Applied != 1 {
		t.Fatalf("dismiss: %+v", res.Results)
	}
	if again := find(amb(), bakery); again != nil {
		t.Errorf("a memory dismissed in this context was volunteered again")
	}
}
