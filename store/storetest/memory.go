package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func testCreateMemories(t *testing.T, open func(t *testing.T) models.Store) {
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		full := fullMemory(ns, "m-full")
		parent := mem(ns, "m-long", "a long memory about gardens and zebras", at(2))
		c0 := mem(ns, "m-long-0", "a long memory about", at(2))
		c1 := mem(ns, "m-long-1", "about gardens and zebras", at(2))
		c0.Embedding, c1.Embedding = []float32{1, 0, 0, 0}, []float32{0, 1, 0, 0}
		mustCreate(t, s, write(full), write(parent, c0, c1))

		got, err := s.GetMemory(ctx, ns, "m-full")
		mustNil(t, err)
		assertEqual(t, "full memory", got, fullMemory(ns, "m-full"))

		got, err = s.GetMemory(ctx, ns, "m-long-1")
		mustNil(t, err)
		want := mem(ns, "m-long-1", "about gardens and zebras", at(2))
		want.ParentID, want.ChunkIndex, want.Embedding = "m-long", 1, []float32{0, 1, 0, 0}
		assertEqual(t, "chunk", got, want)

		got, err = s.GetMemory(ctx, ns, "m-long")
		mustNil(t, err)
		if got.ChunkCount != 2 || got.Content != parent.Content {
			t.Fatalf("parent = %+v, want chunk count 2 and the full text", got)
		}
	})

	t.Run("CallerCannotMutate", func(t *testing.T) {
		s := open(t)
		m := fullMemory(ns, "m1")
		mustCreate(t, s, write(m))
		m.Domains[0], m.Embedding[0], m.Triple.Object = "changed", 0, "changed"
		got, err := s.GetMemory(ctx, ns, "m1")
		mustNil(t, err)
		assertEqual(t, "memory after the caller changed its copy", got, fullMemory(ns, "m1"))
	})

	t.Run("ErrConflict", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, write(mem(ns, "m1", "first", at(0))))
		err := s.CreateMemories(ctx, []*models.MemoryWrite{
			write(mem(ns, "m2", "new and fine", at(1))),
			write(mem(ns, "m1", "clashes with the stored m1", at(2))),
		})
		wantCode(t, err, models.ECONFLICT)
		_, err = s.GetMemory(ctx, ns, "m2")
		wantCode(t, err, models.ENOTFOUND)
		got, err := s.GetMemory(ctx, ns, "m1")
		mustNil(t, err)
		if got.Content != "first" {
			t.Fatalf("m1 content = %q, want the original", got.Content)
		}
	})

	t.Run("ErrConflictWithinBatch", func(t *testing.T) {
		s := open(t)
		ws := []*models.MemoryWrite{
			write(mem(ns, "m1", "one", at(0))),
			write(mem(ns, "m2", "two", at(1))),
			write(mem(ns, "m1", "one again", at(2))),
		}
		ws[1].Concepts = []*models.Concept{{Namespace: ns, Name: "two", Kind: models.ConceptTopic, FirstSeen: at(1), LastSeen: at(1)}}
		ws[1].Edges = []*models.Edge{{Namespace: ns, From: "m2", To: models.ConceptID("two"), Type: models.EdgeMentions, Weight: 0.3}}
		wantCode(t, s.CreateMemories(ctx, ws), models.ECONFLICT)
		for _, id := range []string{"m1", "m2"} {
			_, err := s.GetMemory(ctx, ns, id)
			wantCode(t, err, models.ENOTFOUND)
		}
		cs, err := s.GetConcepts(ctx, ns, []string{"two"})
		mustNil(t, err)
		if len(cs) != 0 {
			t.Fatalf("concepts of a failed batch were written: %+v", cs)
		}
		nodes, edges, err := s.GraphStats(ctx, ns)
		mustNil(t, err)
		if nodes != 0 || edges != 0 {
			t.Fatalf("GraphStats after a failed batch = %d, %d, want 0, 0", nodes, edges)
		}
		hits, err := s.SearchText(ctx, ns, "one two", 10)
		mustNil(t, err)
		assertIDs(t, "search after a failed batch", hitIDs(hits), nil)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		s := open(t)
		chunkOfOther := mem(ns, "c0", "chunk", at(0))
		bad := map[string]*models.MemoryWrite{
			"nil memory":      {},
			"bad namespace":   write(mem("bad namespace!", "m1", "x", at(0))),
			"empty id":        write(mem(ns, "", "x", at(0))),
			"unknown kind":    write(&models.Memory{ID: "m1", Namespace: ns, Kind: "poem", Content: "x", CreatedAt: at(0)}),
			"no created_at":   write(&models.Memory{ID: "m1", Namespace: ns, Kind: models.KindTurn, Content: "x"}),
			"chunk of other":  {Memory: &models.Memory{ID: "m1", Namespace: ns, Kind: models.KindTurn, Content: "x", CreatedAt: at(0), ChunkCount: 1}, Chunks: []*models.Memory{chunkOfOther}},
			"edge weight > 1": {Memory: mem(ns, "m1", "x", at(0)), Edges: []*models.Edge{{From: "m1", To: "c:x", Type: models.EdgeMentions, Weight: 1.5}}},
		}
		chunkOfOther.ParentID = "someone-else"
		for name, w := range bad {
			t.Run(name, func(t *testing.T) {
				err := s.CreateMemories(ctx, []*models.MemoryWrite{write(mem(ns, "ok", "fine", at(0))), w})
				wantCode(t, err, models.EINVALID)
				_, err = s.GetMemory(ctx, ns, "ok")
				wantCode(t, err, models.ENOTFOUND)
			})
		}
	})

	t.Run("EdgesInsertIfMissing", func(t *testing.T) {
		s := open(t)
		w1 := write(mem(ns, "m1", "one", at(0)))
		w1.Edges = []*models.Edge{{Namespace: ns, From: "m1", To: models.ConceptID("cat"), Type: models.EdgeMentions, Weight: 0.3, CoOccurrences: 1}}
		mustCreate(t, s, w1)
		w2 := write(mem(ns, "m2", "two", at(1)))
		w2.Edges = []*models.Edge{
			{Namespace: ns, From: "m1", To: models.ConceptID("cat"), Type: models.EdgeMentions, Weight: 0.9, CoOccurrences: 7},
			{Namespace: ns, From: "m1", To: "m2", Type: models.EdgeTemporal, Weight: 0.5},
		}
		mustCreate(t, s, w2)
		es, err := s.Neighbors(ctx, ns, []string{"m1"})
		mustNil(t, err)
		want := []*models.Edge{
			{Namespace: ns, From: "m1", To: "c:cat", Type: models.EdgeMentions, Weight: 0.3, CoOccurrences: 1},
			{Namespace: ns, From: "m1", To: "m2", Type: models.EdgeTemporal, Weight: 0.5},
		}
		assertEqual(t, "edges", sortEdges(es), want)
	})
}

func testConcepts(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	w := func(id string, minute int, cs ...*models.Concept) *models.MemoryWrite {
		mw := write(mem(ns, id, "text "+id, at(minute)))
		mw.Concepts = cs
		return mw
	}
	mustCreate(t, s,
		w("m1", 10, &models.Concept{Name: "Berlin", Kind: models.ConceptEntity, Aliases: []string{"BER"}, FirstSeen: at(10), LastSeen: at(10)}),
		w("m2", 20, &models.Concept{Namespace: ns, Name: "cooking", Kind: models.ConceptTopic, Mentions: 3, FirstSeen: at(20), LastSeen: at(20)}),
	)
	// A later write: Mentions grows, FirstSeen and Kind stay, aliases merge, LastSeen moves.
	mustCreate(t, s, w("m3", 30, &models.Concept{Name: "berlin", Kind: models.ConceptTopic, Aliases: []string{"Berlin, DE", "BER"}, FirstSeen: at(30), LastSeen: at(30)}))
	// An older write never moves LastSeen back.
	mustCreate(t, s, w("m4", 5, &models.Concept{Name: "BERLIN", Kind: models.ConceptEntity, FirstSeen: at(5), LastSeen: at(5)}))
	// Look-alike data in the other namespace.
	mustCreate(t, s, &models.MemoryWrite{Memory: mem(other, "m1", "x", at(0)),
		Concepts: []*models.Concept{{Name: "Berlin", Kind: models.ConceptEntity, Mentions: 50, FirstSeen: at(0), LastSeen: at(0)}}})

	got, err := s.GetConcepts(ctx, ns, []string{"cooking", "missing", " Berlin ", "berlin"})
	mustNil(t, err)
	want := []*models.Concept{
		{Namespace: ns, Name: "cooking", Kind: models.ConceptTopic, Mentions: 3, FirstSeen: at(20), LastSeen: at(20)},
		{Namespace: ns, Name: "berlin", Kind: models.ConceptEntity, Aliases: []string{"BER", "Berlin, DE"}, Mentions: 3, FirstSeen: at(10), LastSeen: at(30)},
	}
	assertEqual(t, "concepts", got, want)

	got, err = s.GetConcepts(ctx, ns, nil)
	mustNil(t, err)
	if len(got) != 0 {
		t.Fatalf("GetConcepts(nil) = %v", got)
	}
	_, err = s.GetConcepts(ctx, "", []string{"berlin"})
	wantCode(t, err, models.EINVALID)
}

func testGetMemory(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	mustCreate(t, s, write(mem(ns, "m1", "mine", at(0))), write(mem(other, "m2", "theirs", at(0))))
	t.Run("OK", func(t *testing.T) {
		got, err := s.GetMemory(ctx, ns, "m1")
		mustNil(t, err)
		assertEqual(t, "m1", got, mem(ns, "m1", "mine", at(0)))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.GetMemory(ctx, ns, "nope")
		wantCode(t, err, models.ENOTFOUND)
		_, err = s.GetMemory(ctx, ns, "m2") // exists, but in the other namespace
		wantCode(t, err, models.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := s.GetMemory(ctx, ns, "")
		wantCode(t, err, models.EINVALID)
		_, err = s.GetMemory(ctx, "", "m1")
		wantCode(t, err, models.EINVALID)
	})
}

func testGetMemories(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	m1, m2 := fullMemory(ns, "m1"), mem(ns, "m2", "two", at(2))
	mustCreate(t, s, write(m2), write(m1), write(mem(other, "m3", "theirs", at(3))))
	got, err := s.GetMemories(ctx, ns, []string{"m2", "missing", "m3", "m1"})
	mustNil(t, err)
	assertEqual(t, "memories in the order asked", got, []*models.Memory{mem(ns, "m2", "two", at(2)), fullMemory(ns, "m1")})

	// Results are copies: changing them changes nothing stored.
	got[1].Domains[0], got[1].Confidence, got[1].Embedding[0] = "changed", 0.01, 0
	got[1].IrrelevantContexts[0][0] = "changed"
	again, err := s.GetMemories(ctx, ns, []string{"m1"})
	mustNil(t, err)
	assertEqual(t, "m1 after mutating a result", again, []*models.Memory{fullMemory(ns, "m1")})

	got, err = s.GetMemories(ctx, ns, nil)
	mustNil(t, err)
	if len(got) != 0 {
		t.Fatalf("GetMemories(nil) = %v", got)
	}
	_, err = s.GetMemories(ctx, "", []string{"m1"})
	wantCode(t, err, models.EINVALID)
}

func testViewMemories(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	m1, m2 := fullMemory(ns, "m1"), mem(ns, "m2", "two", at(2))
	long := mem(ns, "m4", "a long one", at(4))
	mustCreate(t, s, write(m2), write(m1), write(mem(other, "m3", "theirs", at(3))),
		write(long, mem(ns, "m4-0", "a long", at(4)), mem(ns, "m4-1", "one", at(4))))
	asked := []string{"m2", "missing", "m3", "m1", "m4", "m4-1"}
	full, err := s.GetMemories(ctx, ns, asked)
	mustNil(t, err)
	if len(full) != 4 {
		t.Fatalf("GetMemories = %d memories, want 4", len(full))
	}

	// With vectors: what GetMemories returns.
	got, err := s.ViewMemories(ctx, ns, asked, true)
	mustNil(t, err)
	assertEqual(t, "viewed with vectors", got, full)
	// Without: the same, but no embedding.
	got, err = s.ViewMemories(ctx, ns, asked, false)
	mustNil(t, err)
	want := make([]*models.Memory, len(full))
	for i, m := range full {
		c := *m
		c.Embedding = nil
		want[i] = &c
	}
	assertEqual(t, "viewed without vectors", got, want)

	// A view is a snapshot: later writes to a memory never show in one already handed out.
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "s-view", "c1", "m1", 700)}, nil))
	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		m, err := tx.GetMemory(ns, "m2")
		if err != nil {
			return err
		}
		m.Confidence, m.UsageCount = 0.9, 7
		return tx.PutMemory(m)
	}))
	assertEqual(t, "a view after writes", got, want)
	again, err := s.ViewMemories(ctx, ns, []string{"m1", "m2"}, false)
	mustNil(t, err)
	if len(again) != 2 || again[0].SurfaceCount != full[1].SurfaceCount+1 || again[1].UsageCount != 7 {
		t.Fatalf("a view after writes does not show them: %+v", again)
	}

	got, err = s.ViewMemories(ctx, ns, nil, false)
	mustNil(t, err)
	if len(got) != 0 {
		t.Fatalf("ViewMemories(nil) = %v", got)
	}
	_, err = s.ViewMemories(ctx, "", []string{"m1"}, false)
	wantCode(t, err, models.EINVALID)
}

func testFindMemories(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	// Out of time order on purpose; m3 and m3b share a CreatedAt (the id breaks the tie).
	ms := []*models.Memory{
		mem(ns, "m3", "three", at(30)),
		mem(ns, "m1", "one", at(10)),
		mem(ns, "m4", "four", at(40)),
		mem(ns, "m3b", "three b", at(30)),
		mem(ns, "m2", "two", at(20)),
	}
	ms[0].Kind, ms[2].Kind = models.KindSummary, models.KindSummary
	ms[1].Source.ConversationID, ms[4].Source.ConversationID = "conv", "conv"
	long := mem(ns, "m5", "a long one", at(50))
	ws := []*models.MemoryWrite{write(long, mem(ns, "m5-0", "a long", at(50)), mem(ns, "m5-1", "one", at(50)))}
	for _, m := range ms {
		ws = append(ws, write(m))
	}
	mustCreate(t, s, ws...)
	mustCreate(t, s, write(mem(other, "o1", "theirs", at(35))))

	tests := []struct {
		name  string
		f     models.MemoryFilter
		want  []string
		total int
	}{
		{"newest first by default", models.MemoryFilter{Namespace: ns}, []string{"m5", "m4", "m3b", "m3", "m2", "m1"}, 6},
		{"oldest first", models.MemoryFilter{Namespace: ns, Sort: "created_asc"}, []string{"m1", "m2", "m3", "m3b", "m4", "m5"}, 6},
		{"kinds", models.MemoryFilter{Namespace: ns, Kinds: []models.Kind{models.KindSummary}}, []string{"m4", "m3"}, 2},
		{"conversation", models.MemoryFilter{Namespace: ns, ConversationID: "conv"}, []string{"m2", "m1"}, 2},
		{"since until", models.MemoryFilter{Namespace: ns, Since: at(20), Until: at(40)}, []string{"m3b", "m3", "m2"}, 3},
		{"ids", models.MemoryFilter{Namespace: ns, IDs: []string{"m1", "m4", "o1", "m5-0"}}, []string{"m4", "m1"}, 2},
		{"page", models.MemoryFilter{Namespace: ns, Offset: 1, Limit: 2}, []string{"m4", "m3b"}, 6},
		{"past the end", models.MemoryFilter{Namespace: ns, Offset: 10}, nil, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := s.FindMemories(ctx, tt.f)
			mustNil(t, err)
			assertIDs(t, "ids", memIDs(got), tt.want)
			if total != tt.total {
				t.Fatalf("total = %d, want %d", total, tt.total)
			}
		})
	}
	t.Run("full rows", func(t *testing.T) {
		got, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: ns, IDs: []string{"m5"}})
		mustNil(t, err)
		want := mem(ns, "m5", "a long one", at(50))
		want.ChunkCount = 2
		assertEqual(t, "m5", got, []*models.Memory{want})
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, f := range []models.MemoryFilter{
			{Namespace: ns, Sort: "random"},
			{Namespace: ns, Kinds: []models.Kind{"poem"}},
			{Namespace: ns, Limit: 1001},
			{Namespace: ns, Limit: -1},
			{Namespace: ns, Offset: -1},
			{Namespace: "bad namespace!"},
		} {
			_, _, err := s.FindMemories(ctx, f)
			wantCode(t, err, models.EINVALID)
		}
	})
}

func testDeleteMemory(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	long := mem(ns, "m1", "zebra stripes and more zebra facts", at(0))
	c0, c1 := mem(ns, "m1-0", "zebra stripes", at(0)), mem(ns, "m1-1", "more zebra facts", at(0))
	c0.Embedding, c1.Embedding = []float32{1, 0, 0, 0}, []float32{0, 1, 0, 0}
	w1 := write(long, c0, c1)
	w1.Concepts = []*models.Concept{{Name: "zebra", Kind: models.ConceptTopic, FirstSeen: at(0), LastSeen: at(0)}}
	w1.Edges = []*models.Edge{{From: "m1", To: "c:zebra", Type: models.EdgeMentions, Weight: 0.3}}
	m2 := mem(ns, "m2", "a zebra at the zoo", at(1))
	m2.Embedding = []float32{0, 0, 1, 0}
	w2 := write(m2)
	w2.Edges = []*models.Edge{
		{From: "m1", To: "m2", Type: models.EdgeTemporal, Weight: 0.5},
		{From: "m2", To: "c:zebra", Type: models.EdgeMentions, Weight: 0.3},
	}
	mustCreate(t, s, w1, w2)
	mustCreate(t, s, write(mem(other, "m1", "zebra in the other namespace", at(0))))
	mustNil(t, s.Enqueue(ctx, []*models.ResurfaceItem{
		{Namespace: ns, MemoryID: "m1", Score: 2, DueAt: at(5), QueuedAt: at(5)},
		{Namespace: ns, MemoryID: "m2", Score: 1, DueAt: at(5), QueuedAt: at(5)},
	}))

	t.Run("ErrInvalid", func(t *testing.T) {
		wantCode(t, s.DeleteMemory(ctx, ns, "m1-0"), models.EINVALID) // a chunk
		wantCode(t, s.DeleteMemory(ctx, ns, ""), models.EINVALID)
		wantCode(t, s.DeleteMemory(ctx, "", "m1"), models.EINVALID)
	})
	t.Run("OK", func(t *testing.T) {
		mustNil(t, s.DeleteMemory(ctx, ns, "m1"))
		for _, id := range []string{"m1", "m1-0", "m1-1"} {
			_, err := s.GetMemory(ctx, ns, id)
			wantCode(t, err, models.ENOTFOUND)
		}
		hits, err := s.SearchText(ctx, ns, "zebra", 10)
		mustNil(t, err)
		assertIDs(t, "text search", hitIDs(hits), []string{"m2"})
		vhits, err := s.SearchVector(ctx, ns, []float32{1, 1, 0.1, 0}, 10)
		mustNil(t, err)
		assertIDs(t, "vector search", hitIDs(vhits), []string{"m2"})
		es, err := s.Neighbors(ctx, ns, []string{"m1", "m2", "c:zebra"})
		mustNil(t, err)
		assertIDs(t, "edges left", edgeKeys(es), []string{"m2-mentions->c:zebra"})
		scanned, err := s.ScanEdges(ctx, ns, models.EdgeKey{}, 10)
		mustNil(t, err)
		assertIDs(t, "edges scanned", edgeKeys(scanned), []string{"m2-mentions->c:zebra"})
		q, err := s.Queue(ctx, ns, 0)
		mustNil(t, err)
		if len(q) != 1 || q[0].MemoryID != "m2" {
			t.Fatalf("queue = %+v, want only m2", q)
		}
		nodes, edges, err := s.GraphStats(ctx, ns)
		mustNil(t, err)
		if nodes != 2 || edges != 1 { // m2 and the zebra concept (concepts stay)
			t.Fatalf("GraphStats = %d nodes, %d edges, want 2, 1", nodes, edges)
		}
		// The other namespace's m1 is untouched.
		if _, err := s.GetMemory(ctx, other, "m1"); err != nil {
			t.Fatalf("other namespace's m1: %v", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		wantCode(t, s.DeleteMemory(ctx, ns, "m1"), models.ENOTFOUND)
		wantCode(t, s.DeleteMemory(ctx, ns, "never"), models.ENOTFOUND)
	})
}

func testLastInConversation(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	var ws []*models.MemoryWrite
	for _, m := range []struct {
		id, conv string
		minute   int
	}{{"m2", "c1", 20}, {"m9", "c1", 30}, {"m1", "c1", 10}, {"m8", "c1", 30}, {"x1", "c2", 50}} {
		mm := mem(ns, m.id, "turn "+m.id, at(m.minute))
		mm.Source.ConversationID = m.conv
		ws = append(ws, write(mm))
	}
	mustCreate(t, s, ws...)
	o := mem(other, "o1", "later, elsewhere", at(90))
	o.Source.ConversationID = "c1"
	mustCreate(t, s, write(o))

	got, err := s.LastInConversation(ctx, ns, "c1")
	mustNil(t, err)
	if got.ID != "m9" { // m8 and m9 share the newest time; the id breaks the tie
		t.Fatalf("last = %s, want m9", got.ID)
	}
	_, err = s.LastInConversation(ctx, ns, "c3")
	wantCode(t, err, models.ENOTFOUND)
	_, err = s.LastInConversation(ctx, ns, "")
	wantCode(t, err, models.EINVALID)
}

func sortEdges(es []*models.Edge) []*models.Edge {
	out := append([]*models.Edge(nil), es...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if fmt.Sprint(out[j].Key()) < fmt.Sprint(out[i].Key()) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// testEpochTimes: every valid time round-trips, the Unix epoch and times before 1970 among
// them; only the zero time reads back unset.
func testEpochTimes(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	epoch := time.Unix(0, 0).UTC()
	before := time.Date(1969, 7, 20, 20, 17, 40, 123456789, time.UTC)
	m := &models.Memory{ID: "m-epoch", Namespace: ns, Kind: models.KindFact, Content: "the epoch",
		CreatedAt: epoch, ValidAt: before, Confidence: models.DefaultConfidence}
	mustNil(t, s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m}}))
	got, err := s.GetMemory(ctx, ns, "m-epoch")
	mustNil(t, err)
	if !got.CreatedAt.Equal(epoch) || got.CreatedAt.IsZero() || !got.ValidAt.Equal(before) || !got.InvalidAt.IsZero() {
		t.Errorf("created_at %v, valid_at %v, invalid_at %v; want %v, %v, unset", got.CreatedAt, got.ValidAt, got.InvalidAt, epoch, before)
	}
	// A surfacing before 1970 moves the memory's LastSurfaced to its time, not to the epoch.
	sf := &models.Surfacing{ID: "s-epoch", Namespace: ns, MemoryID: "m-epoch", Mode: models.ModeAmbient, At: before}
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil))
	gotSF, err := s.GetSurfacing(ctx, ns, "s-epoch")
	mustNil(t, err)
	if !gotSF.At.Equal(before) || !gotSF.OutcomeAt.IsZero() {
		t.Errorf("surfacing at %v, outcome_at %v; want %v, unset", gotSF.At, gotSF.OutcomeAt, before)
	}
	got, err = s.GetMemory(ctx, ns, "m-epoch")
	mustNil(t, err)
	if !got.LastSurfaced.Equal(before) || got.SurfaceCount != 1 {
		t.Errorf("last_surfaced %v, surface_count %d; want %v, 1", got.LastSurfaced, got.SurfaceCount, before)
	}
	found, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Since: before, Until: epoch.Add(time.Nanosecond)})
	mustNil(t, err)
	if len(found) != 1 || found[0].ID != "m-epoch" {
		t.Errorf("FindMemories over [1969, epoch] = %d memories, want m-epoch", len(found))
	}
}
