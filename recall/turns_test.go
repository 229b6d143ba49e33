package recall_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// turnStore is a store that tracks recall turns (TurnStarted), and counts the searches made
// outside one.
type turnStore struct {
	models.Store
	started, inFlight, outside atomic.Int32
}

func (s *turnStore) TurnStarted() func() {
	s.started.Add(1)
	s.inFlight.Add(1)
	return func() { s.inFlight.Add(-1) }
}

func (s *turnStore) SearchText(ctx context.Context, ns, q string, k int) ([]models.Hit, error) {
	if s.inFlight.Load() == 0 {
		s.outside.Add(1)
	}
	return s.Store.SearchText(ctx, ns, q, k)
}

// TestRecallTellsTheStoreOfTurns: a store that tracks turns hears of each recall, from
// before its searches until it has returned (the embedded store's journal applier waits for
// the quiet between turns).
func TestRecallTellsTheStoreOfTurns(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a", mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0.Add(-time.Hour)))
	ts := &turnStore{Store: e.store}
	p := recall.New(ts, embed.NewLocal(0), recall.Options{Now: func() time.Time { return t0 }})
	for i := range 2 {
		resp, err := p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "bees", ConversationID: "c1"})
		if err != nil || len(resp.Results) != 1 {
			t.Fatalf("recall: %+v, %v", resp, err)
		}
		if ts.started.Load() != int32(i+1) || ts.inFlight.Load() != 0 || ts.outside.Load() != 0 {
			t.Fatalf("after recall %d: %d turns started, %d in flight, %d searches outside a turn; want %d, 0, 0",
				i+1, ts.started.Load(), ts.inFlight.Load(), ts.outside.Load(), i+1)
		}
	}
}
