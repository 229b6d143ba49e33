package storetest

import (
	"context"
	"maps"
	"testing"

	"github.com/salience-ai/salience/models"
)

// EmbedderStore is what testEmbedders needs of a store besides models.Store: the embedder
// of each namespace's vectors, which a server resolves at start (embed.Resolve).
type EmbedderStore interface {
	models.Store
	Embedders(ctx context.Context) (map[string]models.EmbedderIdentity, error)
	RecordEmbedder(ctx context.Context, ns string, id models.EmbedderIdentity) error
}

// testEmbedders: a namespace records the embedder name and size of its first vectors,
// refuses vectors of another name (atomically), takes unnamed ones, a namespace written
// without a name gets one from RecordEmbedder or its first named write, and a deleted one
// forgets its embedder.
func testEmbedders(t *testing.T, open func(t *testing.T) models.Store) {
	st, ok := open(t).(EmbedderStore)
	if !ok {
		t.Fatal("the store does not record embedders (Embedders, RecordEmbedder)")
	}
	ctx := context.Background()
	a := models.EmbedderIdentity{Name: "emb-a-2", Dims: 2}
	b := models.EmbedderIdentity{Name: "emb-b-2", Dims: 2} // the same size, another model
	write := func(nsName, id, embedder string, vec []float32) error {
		return st.CreateMemories(ctx, []*models.MemoryWrite{{Embedder: embedder, Memory: &models.Memory{
			ID: id, Namespace: nsName, Kind: models.KindFact, Content: "text " + id, CreatedAt: t0, Embedding: vec}}})
	}
	embedders := func() map[string]models.EmbedderIdentity {
		t.Helper()
		got, err := st.Embedders(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	must(write(ns, "a1", a.Name, []float32{1, 0}))
	must(write(other, "o1", b.Name, []float32{0, 1}))
	must(write("suite-novec", "n1", a.Name, nil))       // no vectors: no embedder
	must(write("suite-old", "x1", "", []float32{1, 1})) // written before names were recorded
	want := map[string]models.EmbedderIdentity{ns: a, other: b, "suite-old": {Dims: 2}}
	if got := embedders(); !maps.Equal(got, want) {
		t.Fatalf("Embedders = %v, want %v", got, want)
	}

	// Another model's vectors of the same size are refused, the whole batch with them.
	err := st.CreateMemories(ctx, []*models.MemoryWrite{
		{Embedder: a.Name, Memory: &models.Memory{ID: "a2", Namespace: ns, Kind: models.KindFact, Content: "fine", CreatedAt: t0, Embedding: []float32{1, 0}}},
		{Embedder: b.Name, Memory: &models.Memory{ID: "a3", Namespace: ns, Kind: models.KindFact, Content: "other model", CreatedAt: t0, Embedding: []float32{0, 1}}},
	})
	if models.ErrorCode(err) != models.EINVALID {
		t.Errorf("a batch mixing two embedders: %v, want EINVALID", err)
	}
	if err := write(ns, "a3", b.Name, []float32{0, 1}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("vectors of %s into a namespace of %s: %v, want EINVALID", b.Name, a.Name, err)
	}
	for _, id := range []string{"a2", "a3"} {
		if _, err := st.GetMemory(ctx, ns, id); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("refused memory %s: %v, want ENOTFOUND", id, err)
		}
	}
	must(write(ns, "a4", "", []float32{1, 0})) // unnamed vectors are not checked
	must(write(ns, "a5", a.Name, nil))         // nor memories without vectors

	// RecordEmbedder names only a namespace without a name, and only with its size.
	if err := st.RecordEmbedder(ctx, "suite-old", models.EmbedderIdentity{Dims: 2}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("RecordEmbedder without a name: %v, want EINVALID", err)
	}
	must(st.RecordEmbedder(ctx, "suite-old", models.EmbedderIdentity{Name: "emb-c-3", Dims: 3}))
	must(st.RecordEmbedder(ctx, ns, b))
	if got := embedders(); got["suite-old"] != want["suite-old"] || got[ns] != a {
		t.Errorf("after RecordEmbedder of another size or over a name: %v, want suite-old unnamed, %s kept", got, ns)
	}
	must(st.RecordEmbedder(ctx, "suite-old", b))
	want["suite-old"] = b
	if got := embedders(); !maps.Equal(got, want) {
		t.Errorf("after RecordEmbedder: %v, want %v", got, want)
	}
	if err := write("suite-old", "x2", a.Name, []float32{1, 0}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("vectors of %s after recording %s: %v, want EINVALID", a.Name, b.Name, err)
	}

	// A namespace without a name takes the first named write's.
	must(write("suite-old2", "y1", "", []float32{1, 0}))
	must(write("suite-old2", "y2", a.Name, []float32{0, 1}))
	if got := embedders()["suite-old2"]; got != a {
		t.Errorf("suite-old2 after a named write: %v, want %v", got, a)
	}

	// A deleted namespace forgets its embedder: it starts again with any.
	if _, err := st.DeleteNamespace(ctx, "suite-old2"); err != nil {
		t.Fatal(err)
	}
	if _, ok := embedders()["suite-old2"]; ok {
		t.Error("a deleted namespace still has an embedder")
	}
	must(write("suite-old2", "y3", b.Name, []float32{1, 0}))
	if got := embedders()["suite-old2"]; got != b {
		t.Errorf("suite-old2 written again: %v, want %v", got, b)
	}
}
