package storetest

import (
	"slices"
	"testing"

	"github.com/salience-ai/salience/models"
)

// DeleteNamespace is the suite's DeleteNamespace test, for a store to run again with its
// batches made small, so that every table or label takes many transactions.
func DeleteNamespace(t *testing.T, open func(t *testing.T) models.Store) {
	testDeleteNamespace(t, open)
}

// testDeleteNamespace fills two namespaces alike, deletes one, and checks that nothing of it
// reads back, that the other reads back whole, that a second call deletes nothing, and that
// the namespace can be created anew with another embedding size.
func testDeleteNamespace(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	fill := func(n string) {
		m1 := fullMemory(n, "m1") // 4-dimensional embedding
		m2 := mem(n, "m2", "the kettle is broken again", at(2))
		m2.Embedding = []float32{0.8, 0.6, 0, 0}
		w1, w2 := write(m1), write(m2)
		w1.Concepts = []*models.Concept{{Name: "berlin", Kind: models.ConceptEntity, FirstSeen: at(1), LastSeen: at(1)}}
		w1.Edges = []*models.Edge{{Namespace: n, From: "m1", To: "m2", Type: models.EdgeTemporal, Weight: 0.4}}
		w3 := write(mem(n, "m3", "a long memory about kettles", at(3)),
			mem(n, "m3-0", "kettles, part one", at(3)), mem(n, "m3-1", "kettles, part two", at(3)))
		mustCreate(t, s, w1, w2, w3)
		for i, id := range []string{"m1", "m2"} {
			sf := surfacing(n, "s"+id, "c1", id, 10+i)
			mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{sf},
				&models.ConversationState{Namespace: n, ConversationID: "c1", Type: models.ConvDebugging, Turns: i + 1, UpdatedAt: at(10 + i)}))
		}
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			if err := tx.InsertEvent(&models.Event{ID: "e1", Namespace: n, SurfacingID: "sm1", MemoryID: "m1", Type: models.EventUsed, At: at(12)}); err != nil {
				return err
			}
			return tx.PutDecision(&models.Decision{Namespace: n, TurnID: "turn-sm1", ConversationID: "c1", Policy: "bandit", Arm: 1,
				Threshold: 0.5, At: at(10)})
		}))
		mustNil(t, s.Enqueue(ctx, []*models.ResurfaceItem{{Namespace: n, MemoryID: "m2", DueAt: at(20), Score: 1, QueuedAt: at(20)}}))
		mustNil(t, s.CreateExperiment(ctx, experiment(n, "e1", 5)))
		for _, k := range models.NamespaceStateKinds() {
			mustNil(t, s.SetState(ctx, k+n, "v"))
			mustNil(t, s.SetState(ctx, k+n+"/e1/2026-05-01", "v"))
			mustNil(t, s.SetState(ctx, k+n+"/", "v")) // the range's first key
		}
	}
	fill(ns)
	fill(other)
	// Keys that only look like ns's: a longer namespace's, and one of no kind.
	lookalikes := []string{models.LearnKeyPrefix + ns + "x", models.SettingsKeyPrefix + ns + ".b", "decay-scan/" + ns}
	for _, k := range lookalikes {
		mustNil(t, s.SetState(ctx, k, "keep"))
	}
	for _, k := range append([]string{models.LearnKeyPrefix + ns, models.SettingsKeyPrefix + ns + "/a"}, lookalikes[:2]...) {
		if want := !slices.Contains(lookalikes, k); models.NamespaceOwnsKey(ns, k) != want {
			t.Fatalf("NamespaceOwnsKey(%q, %q) = %v, want %v", ns, k, !want, want)
		}
	}
	// What the other namespace reads before, to compare after.
	type view struct {
		mems  []*models.Memory
		surfs []*models.Surfacing
		hits  []models.Hit
		edges []*models.Edge
	}
	look := func(n string) view {
		var v view
		var err error
		v.mems, _, err = s.FindMemories(ctx, models.MemoryFilter{Namespace: n})
		mustNil(t, err)
		v.surfs, err = s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: n})
		mustNil(t, err)
		v.hits, err = s.SearchText(ctx, n, "kettle", 10)
		mustNil(t, err)
		v.edges, err = s.Neighbors(ctx, n, []string{"m1"})
		mustNil(t, err)
		return v
	}
	keep := look(other)
	if len(keep.mems) != 3 || len(keep.surfs) != 2 || len(keep.hits) == 0 || len(keep.edges) != 1 {
		t.Fatalf("before: %d memories, %d surfacings, %d text hits, %d edges; want 3, 2, some, 1",
			len(keep.mems), len(keep.surfs), len(keep.hits), len(keep.edges))
	}

	// A turn recorded just before the delete (a store may still hold it aside) goes too.
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "s-late", "c2", "m2", 13)},
		&models.ConversationState{Namespace: ns, ConversationID: "c2", Type: models.ConvDebugging, Turns: 1, UpdatedAt: at(13)}))
	_, err := s.DeleteNamespace(ctx, "bad/ns")
	wantCode(t, err, models.EINVALID)
	d, err := s.DeleteNamespace(ctx, ns)
	mustNil(t, err)
	if d.Memories != 5 || d.Records <= d.Memories+2*len(models.NamespaceStateKinds()) {
		t.Fatalf("deleted %+v, want 5 memories (chunks included) and more than %d records", d, d.Memories+2*len(models.NamespaceStateKinds()))
	}

	gone := look(ns)
	if len(gone.mems) != 0 || len(gone.surfs) != 0 || len(gone.hits) != 0 || len(gone.edges) != 0 {
		t.Fatalf("after: %d memories, %d surfacings, %d text hits, %d edges of the deleted namespace", len(gone.mems), len(gone.surfs), len(gone.hits), len(gone.edges))
	}
	_, err = s.GetMemory(ctx, ns, "m1")
	wantCode(t, err, models.ENOTFOUND)
	_, err = s.GetMemory(ctx, ns, "m3-0")
	wantCode(t, err, models.ENOTFOUND)
	_, err = s.GetSurfacing(ctx, ns, "sm1")
	wantCode(t, err, models.ENOTFOUND)
	_, err = s.GetConversation(ctx, ns, "c1")
	wantCode(t, err, models.ENOTFOUND)
	_, err = s.GetConversation(ctx, ns, "c2")
	wantCode(t, err, models.ENOTFOUND)
	hits, err := s.SearchVector(ctx, ns, []float32{0.6, 0.8, 0, 0}, 5)
	if err == nil && len(hits) != 0 {
		t.Fatalf("vector search of the deleted namespace: %v", hits)
	}
	evs, err := s.FindEvents(ctx, models.EventFilter{Namespace: ns})
	mustNil(t, err)
	ds, err := s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns})
	mustNil(t, err)
	q, err := s.Queue(ctx, ns, 0)
	mustNil(t, err)
	es, err := s.FindExperiments(ctx, ns)
	mustNil(t, err)
	cs, err := s.GetConcepts(ctx, ns, []string{"berlin"})
	mustNil(t, err)
	nodes, edges, err := s.GraphStats(ctx, ns)
	mustNil(t, err)
	if len(evs)+len(ds)+len(q)+len(es)+len(cs)+nodes+edges != 0 {
		t.Fatalf("left of the deleted namespace: %d events, %d decisions, %d queued, %d experiments, %d concepts, %d nodes, %d edges",
			len(evs), len(ds), len(q), len(es), len(cs), nodes, edges)
	}
	nss, err := s.Namespaces(ctx)
	mustNil(t, err)
	if slices.Contains(nss, ns) || !slices.Contains(nss, other) {
		t.Fatalf("namespaces after the delete = %v", nss)
	}
	for _, k := range models.NamespaceStateKinds() {
		for _, key := range []string{k + ns, k + ns + "/", k + ns + "/e1/2026-05-01", k + other, k + other + "/", k + other + "/e1/2026-05-01"} {
			v, err := s.GetState(ctx, key)
			mustNil(t, err)
			if want := map[bool]string{true: "", false: "v"}[models.NamespaceOwnsKey(ns, key)]; v != want {
				t.Fatalf("state %q = %q after the delete, want %q", key, v, want)
			}
		}
	}
	for _, k := range lookalikes {
		if v, err := s.GetState(ctx, k); err != nil || v != "keep" {
			t.Fatalf("state %q = %q, %v after the delete, want kept", k, v, err)
		}
	}

	// The other namespace is untouched.
	after := look(other)
	assertIDs(t, "other's memories", memIDs(after.mems), memIDs(keep.mems))
	assertEqual(t, "other's surfacings", after.surfs, keep.surfs)
	assertIDs(t, "other's text hits", hitIDs(after.hits), hitIDs(keep.hits))
	assertIDs(t, "other's edges", edgeKeys(after.edges), edgeKeys(keep.edges))
	if _, err := s.GetConversation(ctx, other, "c1"); err != nil {
		t.Fatalf("other's conversation: %v", err)
	}
	if es, err := s.FindExperiments(ctx, other); err != nil || len(es) != 1 {
		t.Fatalf("other's experiments: %d, %v", len(es), err)
	}

	// Again: nothing left to delete.
	d, err = s.DeleteNamespace(ctx, ns)
	mustNil(t, err)
	if d != (models.NamespaceDeleted{}) {
		t.Fatalf("second delete = %+v, want nothing", d)
	}
	// The name is free: a new namespace of it may embed at another size.
	m := mem(ns, "n1", "a fresh start", at(30))
	m.Embedding = []float32{1, 0, 0, 0, 0, 0}
	mustCreate(t, s, write(m))
	hits, err = s.SearchVector(ctx, ns, []float32{1, 0, 0, 0, 0, 0}, 5)
	mustNil(t, err)
	assertIDs(t, "the new namespace's vector hits", hitIDs(hits), []string{"n1"})
}
