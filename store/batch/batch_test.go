package batch

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func mem(ns, id string, vec ...float32) *models.Memory {
	return &models.Memory{ID: id, Namespace: ns, Kind: models.KindTurn, Content: "Cats in the gardens", CreatedAt: t0,
		Domains: []string{"pets"}, Embedding: vec}
}

// TestPrepare: the store gets copies, embeddings of unit length, normalized concepts and the
// embedder identity of each namespace of the batch.
func TestPrepare(t *testing.T) {
	long := mem("a", "p1")
	long.ChunkCount = 1
	chunk := mem("a", "p1-0", 3, 4) // not unit length: prepared normalized
	chunk.ParentID = "p1"
	writes := []*models.MemoryWrite{
		{Memory: long, Chunks: []*models.Memory{chunk}, Embedder: "e1",
			Concepts: []*models.Concept{{Name: "Berlin", Kind: models.ConceptEntity, Aliases: []string{"BER"}}},
			Edges:    []*models.Edge{{From: "p1", To: "c:berlin", Type: models.EdgeMentions, Weight: 0.3}}},
		{Memory: mem("b", "m1")}, // no vectors: its namespace is named, with no identity
		{Memory: mem("a", "m2", 0, 1)},
	}
	got, ids, err := Prepare(writes)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := map[string]models.EmbedderIdentity{"a": {Name: "e1", Dims: 2}, "b": {}}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Fatalf("identities %v, want %v", ids, wantIDs)
	}
	if len(got) != 3 || got[0].Namespace != "a" || got[1].Namespace != "b" || got[2].Namespace != "a" {
		t.Fatalf("writes %+v, want a, b, a", got)
	}
	u := got[0].Units
	if len(u) != 2 || u[0].ID != "p1" || u[1].ID != "p1-0" {
		t.Fatalf("units %+v, want p1 then its chunk", u)
	}
	if e := u[1].Embedding; len(e) != 2 || math.Abs(float64(e[0])-0.6) > 1e-6 || math.Abs(float64(e[1])-0.8) > 1e-6 {
		t.Fatalf("chunk embedding %v, want (0.6, 0.8)", e)
	}
	if u[0] == long || u[1] == chunk || chunk.Embedding[0] != 3 {
		t.Fatal("the units are not copies, or the caller's embedding changed")
	}
	u[0].Domains[0] = "changed"
	if long.Domains[0] != "pets" {
		t.Fatal("a unit shares its domains with the caller's memory")
	}
	if c := got[0].Concepts; len(c) != 1 || c[0].Name != "berlin" || c[0].Namespace != "a" {
		t.Fatalf("concepts %+v, want berlin in a", c)
	}
	if e := got[0].Edges; len(e) != 1 || e[0].Namespace != "a" || e[0] == writes[0].Edges[0] {
		t.Fatalf("edges %+v, want a copy in a", e)
	}
}

// TestPrepareRejects: each fault is an EINVALID naming the field, with the message both stores
// gave before the rule lived here.
func TestPrepareRejects(t *testing.T) {
	ok := func(id string) *models.Memory { return mem("a", id) }
	withChunk := func(c *models.Memory) *models.MemoryWrite {
		m := ok("m1")
		m.ChunkCount = 1
		return &models.MemoryWrite{Memory: m, Chunks: []*models.Memory{c}}
	}
	otherParent := ok("m1-0")
	otherParent.ParentID = "m9"
	for _, tt := range []struct {
		name, field, msg string
		w                []*models.MemoryWrite
	}{
		{"nil write", "writes[0].memory", "memory is missing", []*models.MemoryWrite{nil}},
		{"colon in id", "writes[0].memory.id", "memory ids must not contain ':'", []*models.MemoryWrite{{Memory: ok("c:x")}}},
		{"a chunk alone", "writes[0].memory.parent_id", "a chunk cannot be written without its parent",
			[]*models.MemoryWrite{{Memory: otherParent}}},
		{"chunk count", "writes[0].memory.chunk_count", "chunk_count is 0 but 1 chunks were given",
			[]*models.MemoryWrite{{Memory: ok("m1"), Chunks: []*models.Memory{ok("m1-0")}}}},
		{"chunk of another", "writes[0].chunks[0].parent_id", "a chunk must belong to its memory's namespace, name it as parent and have no chunks",
			[]*models.MemoryWrite{withChunk(otherParent)}},
		{"NaN embedding", "writes[0].memory.embedding", "embedding has a NaN or infinite component",
			[]*models.MemoryWrite{{Memory: mem("a", "m1", float32(math.NaN()), 0)}}},
		{"mixed dims", "writes[1].memory.embedding", "embedding has 3 dimensions, others in the batch 2",
			[]*models.MemoryWrite{{Memory: mem("a", "m1", 1, 0)}, {Memory: mem("a", "m2", 1, 0, 0)}}},
		{"mixed embedders", "writes[1].embedder", "embedder e2 differs from e1 of others in the batch",
			[]*models.MemoryWrite{{Memory: mem("a", "m1", 1, 0), Embedder: "e1"}, {Memory: mem("a", "m2", 0, 1), Embedder: "e2"}}},
		{"concept no kind", "writes[0].concepts[0].kind", "concept kind is required",
			[]*models.MemoryWrite{{Memory: ok("m1"), Concepts: []*models.Concept{{Name: "x"}}}}},
		{"edge control", "writes[0].edges[0]", "edge ends, type and fact must not contain control characters",
			[]*models.MemoryWrite{{Memory: ok("m1"), Edges: []*models.Edge{{From: "m1", To: "a\x1fb", Type: "mentions"}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Prepare(tt.w)
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tt.field || models.ErrorMessage(err) != tt.msg {
				t.Fatalf("Prepare = %v (field %q), want EINVALID on %q: %q", err, models.ErrorField(err), tt.field, tt.msg)
			}
		})
	}
	// Vectors of different sizes in two namespaces are no conflict: each has its own.
	if _, _, err := Prepare([]*models.MemoryWrite{{Memory: mem("a", "m1", 1, 0)}, {Memory: mem("b", "m1", 1, 0, 0)}}); err != nil {
		t.Fatalf("two namespaces, two sizes: %v", err)
	}
}
