package neo4j

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func TestPrepareGroupsAndFoldsConcepts(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	mem := func(ns, id string) *models.Memory {
		return &models.Memory{ID: id, Namespace: ns, Kind: models.KindTurn, Content: "Cats in the gardens", CreatedAt: t0}
	}
	long := mem("a", "p1")
	long.ChunkCount = 1
	chunk := mem("a", "p1-0")
	chunk.ParentID = "p1"
	chunk.Embedding = []float32{3, 4} // not unit length: stored normalized
	writes := []*models.MemoryWrite{
		{Memory: mem("a", "m1"), Concepts: []*models.Concept{
			{Name: "Berlin", Kind: models.ConceptEntity, Aliases: []string{"BER"}, FirstSeen: t0, LastSeen: t0},
		}},
		{Memory: mem("b", "m1")}, // the same id in another namespace is another memory
		{Memory: long, Chunks: []*models.Memory{chunk}, Concepts: []*models.Concept{
			{Name: "berlin", Kind: models.ConceptTopic, Mentions: 2, Aliases: []string{"Berlin, DE", "BER"}, LastSeen: t0.Add(time.Hour)},
		}, Edges: []*models.Edge{{From: "p1", To: "c:berlin", Type: models.EdgeMentions, Weight: 0.3}}},
	}
	got, err := prepare(writes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ns != "a" || got[1].ns != "b" {
		t.Fatalf("namespaces %v, want a then b", got)
	}
	a := got[0]
	if !reflect.DeepEqual(a.ids, []string{"m1", "p1", "p1-0"}) || a.parents != 2 || a.vectors.Dims != 2 {
		t.Fatalf("a: ids %v, parents %d, dims %d", a.ids, a.parents, a.vectors.Dims)
	}
	// Units: the chunk and the unchunked memory are indexed with their analysed terms; the
	// parent of chunks is not.
	for i, want := range []struct {
		unit  bool
		terms any
	}{{true, "cat garden"}, {false, nil}, {true, "cat garden"}} {
		if a.units[i]["unit"] != want.unit || a.units[i]["terms"] != want.terms {
			t.Fatalf("unit %d = %v / %v, want %v / %v", i, a.units[i]["unit"], a.units[i]["terms"], want.unit, want.terms)
		}
	}
	emb := a.units[2]["p"].(map[string]any)["embedding"].([]float64)
	if len(emb) != 2 || emb[0] < 0.5999 || emb[0] > 0.6001 || emb[1] < 0.7999 || emb[1] > 0.8001 {
		t.Fatalf("chunk embedding %v, want (0.6, 0.8)", emb)
	}
	if chunk.Embedding[0] != 3 {
		t.Fatal("prepare changed the caller's embedding")
	}
	// berlin twice in one batch: one row, merged as two upserts in turn would be.
	if len(a.concepts) != 1 {
		t.Fatalf("concept rows %v, want one", a.concepts)
	}
	want := map[string]any{"id": "c:berlin", "name": "berlin", "kind": "entity",
		"aliases": []any{"BER", "Berlin, DE"}, "add": int64(3), "first": t0.UnixNano(), "last": t0.Add(time.Hour).UnixNano()}
	if !reflect.DeepEqual(a.concepts[0], want) {
		t.Fatalf("concept row\n got %v\nwant %v", a.concepts[0], want)
	}
	if len(a.edges) != 1 || a.edges[0]["rt"] != "MENTIONS" || a.edges[0]["type"] != "mentions" {
		t.Fatalf("edge rows %v", a.edges)
	}
}

func TestPrepareRejects(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ok := func(id string) *models.Memory {
		return &models.Memory{ID: id, Namespace: "a", Kind: models.KindTurn, Content: "x", CreatedAt: t0}
	}
	for name, tt := range map[string]struct {
		w    []*models.MemoryWrite
		code string
	}{
		"id twice":        {[]*models.MemoryWrite{{Memory: ok("m1")}, {Memory: ok("m1")}}, models.ECONFLICT},
		"colon in id":     {[]*models.MemoryWrite{{Memory: ok("c:x")}}, models.EINVALID},
		"nil":             {[]*models.MemoryWrite{nil}, models.EINVALID},
		"chunk count":     {[]*models.MemoryWrite{{Memory: ok("m1"), Chunks: []*models.Memory{ok("m1-0")}}}, models.EINVALID},
		"mixed dims":      {[]*models.MemoryWrite{{Memory: withVec(ok("m1"), 1, 0)}, {Memory: withVec(ok("m2"), 1, 0, 0)}}, models.EINVALID},
		"NaN embedding":   {[]*models.MemoryWrite{{Memory: withVec(ok("m1"), float32(nan()), 0)}}, models.EINVALID},
		"concept no kind": {[]*models.MemoryWrite{{Memory: ok("m1"), Concepts: []*models.Concept{{Name: "x"}}}}, models.EINVALID},
		"edge control":    {[]*models.MemoryWrite{{Memory: ok("m1"), Edges: []*models.Edge{{From: "m1", To: "a\x1fb", Type: "mentions"}}}}, models.EINVALID},
		"time past 2262":  {[]*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: "a", Kind: models.KindTurn, CreatedAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}}}, models.EINVALID},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := prepare(tt.w)
			if models.ErrorCode(err) != tt.code {
				t.Fatalf("prepare = %v, want %s", err, tt.code)
			}
		})
	}
}

func withVec(m *models.Memory, v ...float32) *models.Memory {
	m.Embedding = v
	return m
}

func nan() float64 { var z float64; return z / z }

// TestDecodeRejectsWrongTypes: a property of an unexpected type is an error, not a zero.
func TestDecodeRejectsWrongTypes(t *testing.T) {
	if _, err := decMemory(map[string]any{"id": "m1", "created": "yesterday"}); err == nil {
		t.Fatal("a string time decoded without an error")
	}
	if _, err := decMemory("not a map"); err == nil {
		t.Fatal("a non-map decoded without an error")
	}
	m, err := decMemory(map[string]any{"id": "m1", "ns": "a", "kind": "fact", "created": int64(5),
		"domains": []any{"x", "y"}, "embedding": []any{0.5, 0.25}, "triple": `{"subject":"s","predicate":"p","object":"o"}`})
	if err != nil {
		t.Fatal(err)
	}
	want := &models.Memory{ID: "m1", Namespace: "a", Kind: models.KindFact, CreatedAt: time.Unix(0, 5).UTC(),
		Domains: []string{"x", "y"}, Embedding: []float32{0.5, 0.25}, Triple: &models.Triple{Subject: "s", Predicate: "p", Object: "o"}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("decMemory\n got %+v\nwant %+v", m, want)
	}
	var pe *models.Error
	if _, err := decMemory(map[string]any{"triple": "{"}); err == nil || errors.As(err, &pe) {
		t.Fatalf("bad JSON: %v, want an internal error", err)
	}
}
