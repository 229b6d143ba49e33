package memindex

import (
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mem(ns, id, content string) *models.Memory {
	return &models.Memory{Namespace: ns, ID: id, Kind: models.KindFact, Content: content,
		Embedding: []float32{1, 0, 0}, Confidence: 0.5}
}

// loaded returns a space of ns holding the given memories, as a load would build it.
func loaded(set *Set, ms ...*models.Memory) *Space {
	sp := set.NewSpace()
	sp.SetDims(3)
	for _, m := range ms {
		if err := sp.Add(m, []string{m.Content}); err != nil {
			panic(err)
		}
	}
	return sp
}

// A change that commits after a load's snapshot began makes Publish refuse the load, even
// when the namespace was held (and then dropped) in between: the stale load would otherwise
// hide the change until the next eviction.
func TestPublishRefusesALoadOlderThanAChange(t *testing.T) {
	set := NewSet(1, quiet()) // a budget of one byte: each publish evicts the others
	gen := set.Gen("a")
	stale := loaded(set, mem("a", "m1", "old"))

	// Meanwhile a transaction loads a, an engagement update commits to it, and b's load
	// evicts it.
	if _, ok := set.Publish("a", loaded(set, mem("a", "m1", "old")), set.Gen("a"), time.Millisecond); !ok {
		t.Fatal("a fresh load was refused")
	}
	up := mem("a", "m1", "old")
	up.Confidence = 0.9
	set.Meta([]*models.Memory{up}, nil)
	if _, ok := set.Publish("b", loaded(set, mem("b", "m1", "b")), set.Gen("b"), time.Millisecond); !ok {
		t.Fatal("b's load was refused")
	}
	if set.Get("a") != nil {
		t.Fatal("a is still held past the budget")
	}

	if sp, ok := set.Publish("a", stale, gen, time.Millisecond); ok || sp != nil {
		t.Fatalf("a load older than a change was published: %v %v", sp, ok)
	}
	if st := set.Stats(); st.Loads != 2 || st.Evictions != 1 || st.Loaded != 1 {
		t.Fatalf("stats %+v: want 2 loads, 1 eviction, 1 held", st)
	}
}

// Past the budget the least recently used space goes, never the one just published.
func TestPublishEvictsTheLeastRecentlyUsed(t *testing.T) {
	one := estimateBytes(loaded(NewSet(0, quiet()), mem("x", "m1", "x")))
	set := NewSet(2*one+one/2, quiet()) // room for two
	for _, ns := range []string{"a", "b"} {
		set.Publish(ns, loaded(set, mem(ns, "m1", ns)), set.Gen(ns), 0)
	}
	set.Get("a") // b is now the least recently used
	set.Publish("c", loaded(set, mem("c", "m1", "c")), set.Gen("c"), 0)
	if set.Get("a") == nil || set.Get("b") != nil || set.Get("c") == nil {
		t.Fatalf("held a=%v b=%v c=%v; want a and c", set.Get("a") != nil, set.Get("b") != nil, set.Get("c") != nil)
	}
	if st := set.Stats(); st.Bytes != 2*one || st.Budget != 2*one+one/2 {
		t.Fatalf("stats %+v: want %d bytes held", st, 2*one)
	}
}

// Every committed change shows in what the space answers.
func TestChangesReachTheReads(t *testing.T) {
	set := NewSet(0, quiet())
	m1, m2 := mem("a", "m1", "apple"), mem("a", "m2", "pear")
	c := &models.Concept{Namespace: "a", Name: "fruit", Aliases: []string{"fruits"}}
	e := &models.Edge{Namespace: "a", From: "m1", To: "m2", Type: models.EdgeCoRetrieved, Weight: 0.5}
	set.Create([]Unit{{M: m1, Terms: []string{"apple"}}, {M: m2, Terms: []string{"pear"}}},
		map[string]int{"a": 3}, []*models.Concept{c}, []*models.Edge{e})
	sp := set.Get("a")
	v0, _ := set.GraphVersion("a")

	if hits := sp.SearchText([]string{"pear"}, 5); len(hits) != 1 || hits[0].ID != "m2" {
		t.Fatalf("SearchText(pear) = %v", hits)
	}
	if hits := sp.Vectors().Search([]float32{1, 0, 0}, 5); len(hits) != 2 {
		t.Fatalf("vector search = %v, want both", hits)
	}
	got := sp.Memories([]string{"m1", "nope", "m2"})
	if len(got) != 2 || got[0].ID != "m1" || !reflect.DeepEqual(got[0].Embedding, []float32{1, 0, 0}) {
		t.Fatalf("Memories = %+v", got)
	}
	got[0].Content = "changed by the caller"
	if sp.Memories([]string{"m1"})[0].Content != "apple" {
		t.Fatal("Memories handed out the cached memory itself")
	}
	if v := sp.View([]string{"m1"}, false); len(v) != 1 || v[0].Embedding != nil {
		t.Fatalf("View without vectors = %+v", v)
	}
	if cs := sp.Concepts([]string{"fruit"}); len(cs) != 1 || cs[0].Aliases[0] != "fruits" {
		t.Fatalf("Concepts = %+v", cs)
	}
	if n, edges := sp.GraphStats(); n != 3 || edges != 1 {
		t.Fatalf("GraphStats = %d nodes %d edges, want 3 and 1", n, edges)
	}

	up := mem("a", "m1", "apple")
	up.Confidence, up.Learned = 0.8, []models.LearnedTerm{{Term: "orchard", Weight: 1}}
	set.Meta([]*models.Memory{up}, []*models.Edge{{Namespace: "a", From: "m2", To: "m1", Type: models.EdgeCoRetrieved, Weight: 1}})
	set.Edit(&models.Memory{Namespace: "a", ID: "m2", Importance: 0.7})
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	set.Surfaced([]*models.Surfacing{{Namespace: "a", MemoryID: "m2", At: at}})
	got = sp.Memories([]string{"m1", "m2"})
	if got[0].Confidence != 0.8 || got[1].Importance != 0.7 || got[1].SurfaceCount != 1 || !got[1].LastSurfaced.Equal(at) {
		t.Fatalf("after Meta, Edit, Surfaced: %+v %+v", got[0], got[1])
	}
	if hits := sp.SearchText([]string{"orchard"}, 5); len(hits) != 1 || hits[0].ID != "m1" {
		t.Fatalf("SearchText(orchard) after learning = %v", hits)
	}
	if v1, _ := set.GraphVersion("a"); v1 == v0 {
		t.Fatal("an edge put left the graph version as it was")
	}

	set.Delete("a", []string{"m2"}, []models.EdgeKey{e.Key()})
	if hits := sp.SearchText([]string{"pear"}, 5); len(hits) != 0 {
		t.Fatalf("SearchText(pear) after delete = %v", hits)
	}
	if n, edges := sp.GraphStats(); n != 2 || edges != 1 {
		t.Fatalf("GraphStats after delete = %d nodes %d edges, want 2 and 1", n, edges)
	}
	set.Drop("a")
	if set.Get("a") != nil || len(set.Namespaces()) != 0 {
		t.Fatal("a dropped namespace is still held")
	}
}

// In budget mode a change to a namespace not held creates nothing: its next load reads it.
func TestBudgetChangesDoNotCreateSpaces(t *testing.T) {
	set := NewSet(1<<20, quiet())
	set.Create([]Unit{{M: mem("a", "m1", "x"), Terms: []string{"x"}}}, map[string]int{"a": 3}, nil, nil)
	if set.Get("a") != nil || set.Gen("a") != 1 {
		t.Fatalf("held %v, generation %d; want nothing held, generation 1", set.Get("a") != nil, set.Gen("a"))
	}
	if _, ok := set.GraphVersion("a"); ok {
		t.Fatal("a graph version for a namespace not held")
	}
}
