package recall_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// phraseSpy is the SQLite store with its Phrases calls counted.
type phraseSpy struct {
	*sqlite.Store
	calls atomic.Int32
}

func (s *phraseSpy) Phrases(ctx context.Context, ns string, pairs [][2]string, ids []string) ([]float64, []bool, error) {
	s.calls.Add(1)
	return s.Store.Phrases(ctx, ns, pairs, ids)
}

// TestIndexedPhrasesEqualAnalysed: the phrase check a store answers from its text index
// (models.PhraseIndex) gives every candidate the phrase score that analysing its content
// gives — memories and a long memory's fragments alike. The test env's counting store
// hides Phrases, so its pipeline analyses the content.
func TestIndexedPhrasesEqualAnalysed(t *testing.T) {
	e := newEnv(t)
	spy := &phraseSpy{Store: e.store.Store.(*sqlite.Store)}
	indexed := recall.New(spy, e.emb, recall.Options{Now: func() time.Time { return t0 }})
	var b strings.Builder
	for i := 0; b.Len() < 4000; i++ {
		fmt.Fprintf(&b, "Entry %d: the old cannery roof held bees, and the honey market opened on Saturday morning. ", i)
	}
	e.add(t, "a",
		mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0),
		mem(models.KindFact, "The old cannery sells rye bread at the Saturday market.", t0),
		mem(models.KindFact, "Bees keep the roof garden busy; honey from the cannery roof is sold at market.", t0),
		mem(models.KindFact, "Tomas bakes rye bread every Saturday morning before the market.", t0),
		mem(models.KindDocument, b.String(), t0),
	)
	partial, checked := 0, 0
	for i, q := range []string{
		"bees on the old cannery roof",
		"rye bread at the Saturday market",
		"honey market Saturday morning",
		"cannery roof honey bees market bread",
		"where does Nadia keep her bees",
	} {
		req := func(conv string) *recall.Request {
			return &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: q, Explain: true, Limit: 10, ConversationID: conv}
		}
		analysed, err := e.p.Recall(context.Background(), req(fmt.Sprint("analysed-", i)))
		if err != nil {
			t.Fatal(err)
		}
		before := spy.calls.Load()
		got, err := indexed.Recall(context.Background(), req(fmt.Sprint("indexed-", i)))
		if err != nil {
			t.Fatal(err)
		}
		if spy.calls.Load() == before {
			t.Fatalf("query %q: the store's Phrases was not asked", q)
		}
		want := map[string]float64{}
		for _, r := range analysed.Results {
			want[unitOf(r)] = r.Components.Phrase
		}
		for _, r := range got.Results {
			w, ok := want[unitOf(r)]
			if !ok {
				continue
			}
			checked++
			if r.Components.Phrase != w {
				t.Fatalf("query %q, %s: phrase %v from the index, %v from the content", q, unitOf(r), r.Components.Phrase, w)
			}
			if w > 0 && w < 1 {
				partial++
			}
		}
	}
	t.Logf("%d compared, %d partial", checked, partial)
	if checked < 15 || partial < 3 {
		t.Fatalf("%d results compared, %d with a partial phrase match: the comparison tested little", checked, partial)
	}
}

// unitOf names a result by its memory and fragment.
func unitOf(r recall.Result) string {
	if r.Fragment != nil {
		return fmt.Sprintf("%s#%d", r.Memory.ID, r.Fragment.Index)
	}
	return r.Memory.ID
}
