package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

// TestConformanceOnDemand runs the store conformance suite on a store that loads namespaces
// on demand under a budget of one byte: every namespace but the last used is evicted after
// each load, so every read loads again and every write lands on a namespace that is
// usually not loaded.
func TestConformanceOnDemand(t *testing.T) {
	t.Parallel() // the longest tests of the package: with the other three, on both cores
	storetest.Run(t, func(t *testing.T) models.Store {
		s, err := Open(freshPath(t), Options{Logger: quiet(), IndexBudget: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestOnDemandMatchesEager: namespaces touched in random order through a budget that holds
// a few of them answer every search exactly as a store holding every namespace does, the
// loaded total stays under the budget, and namespaces are loaded and evicted as they go; a
// write to a namespace that is not loaded is seen when it next loads.
func TestOnDemandMatchesEager(t *testing.T) {
	t.Parallel() // the longest tests of the package: with the other three, on both cores
	path := filepath.Join(t.TempDir(), "salience.db")
	eager := openAt(t, path)
	r := rand.New(rand.NewPCG(21, 22))
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	words := []string{"cat", "garden", "rain", "piano", "coffee", "trip", "paris", "book", "dog", "river"}
	const spaces, per = 24, 30
	for n := range spaces {
		ns := fmt.Sprintf("ns%02d", n)
		var ws []*models.MemoryWrite
		for i := range per {
			id := fmt.Sprintf("m%03d", i)
			vec := []float32{r.Float32(), r.Float32(), r.Float32(), r.Float32()}
			content := words[r.IntN(len(words))] + " and " + words[r.IntN(len(words))]
			w := &models.MemoryWrite{Memory: &models.Memory{ID: id, Namespace: ns, Kind: models.KindTurn, Content: content,
				CreatedAt: at, Confidence: 0.5, Embedding: vec}}
			if i > 0 {
				w.Edges = []*models.Edge{{Namespace: ns, From: fmt.Sprintf("m%03d", r.IntN(i)), To: id, Type: models.EdgeTemporal, Weight: r.Float64()}}
			}
			ws = append(ws, w)
		}
		if err := eager.CreateMemories(ctx, ws); err != nil {
			t.Fatal(err)
		}
	}
	if err := eager.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	// A budget of about four namespaces, from the estimate of one.
	probe, err := Open(path, Options{Logger: quiet(), IndexBudget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := probe.GraphStats(ctx, "ns00"); err != nil {
		t.Fatal(err)
	}
	one := probe.IndexStats().Bytes
	probe.Close()
	lazy, err := Open(path, Options{Logger: quiet(), IndexBudget: 4 * one})
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	if err := lazy.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}

	for step := range 400 {
		ns := fmt.Sprintf("ns%02d", r.IntN(spaces))
		q := words[r.IntN(len(words))]
		vec := []float32{r.Float32(), r.Float32(), r.Float32(), r.Float32()}
		ids := []string{fmt.Sprintf("m%03d", r.IntN(per)), fmt.Sprintf("m%03d", r.IntN(per))}
		for name, call := range map[string]func(s *Store) (any, error){
			"SearchText":   func(s *Store) (any, error) { return s.SearchText(ctx, ns, q, 5) },
			"SearchVector": func(s *Store) (any, error) { return s.SearchVector(ctx, ns, vec, 5) },
			"Strongest":    func(s *Store) (any, error) { return s.StrongestNeighbors(ctx, ns, ids, 3, nil) },
			"GetMemories":  func(s *Store) (any, error) { return s.GetMemories(ctx, ns, ids) },
			"GraphStats": func(s *Store) (any, error) {
				n, e, err := s.GraphStats(ctx, ns)
				return [2]int{n, e}, err
			},
		} {
			want, err1 := call(eager)
			got, err2 := call(lazy)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d, %s(%s): on demand %v (%v), eager %v (%v)", step, name, ns, got, err2, want, err1)
			}
		}
		if st := lazy.IndexStats(); st.Bytes > st.Budget {
			t.Fatalf("step %d: %d bytes loaded, over the budget of %d", step, st.Bytes, st.Budget)
		}
	}
	st := lazy.IndexStats()
	if st.Loaded > 4 || st.Evictions == 0 || st.Loads <= spaces || st.LoadMaxMS <= 0 {
		t.Fatalf("stats %+v: want at most 4 loaded, evictions, more loads than namespaces", st)
	}

	// A write to a namespace not loaded, then read: the load picks it up.
	var cold string
	for n := range spaces {
		if ns := fmt.Sprintf("ns%02d", n); lazy.mem.Get(ns) == nil {
			cold = ns
			break
		}
	}
	w := &models.MemoryWrite{Memory: &models.Memory{ID: "fresh", Namespace: cold, Kind: models.KindTurn,
		Content: "zebra crossing", CreatedAt: at, Confidence: 0.5, Embedding: []float32{1, 0, 0, 0}}}
	if err := lazy.CreateMemories(ctx, []*models.MemoryWrite{w}); err != nil {
		t.Fatal(err)
	}
	hits, err := lazy.SearchText(ctx, cold, "zebra", 5)
	if err != nil || len(hits) != 1 || hits[0].ID != "fresh" {
		t.Fatalf("SearchText(%s, zebra) after a write while not loaded = %v, %v", cold, hits, err)
	}
}

// TestOnDemandLoadsKeepOneRawConnection: namespace loads read through one rawConn kept
// between them; a load that fails drops it, the next opens another and answers in full, and
// Close closes it.
func TestOnDemandLoadsKeepOneRawConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s, err := Open(path, Options{Logger: quiet(), IndexBudget: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, ns := range []string{"a", "b"} {
		w := []*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: ns, Kind: models.KindTurn,
			Content: "river piano " + ns, CreatedAt: at, Confidence: 0.5, Embedding: []float32{1, 0, 0}}},
			{Memory: &models.Memory{ID: "m2", Namespace: ns, Kind: models.KindTurn,
				Content: "garden " + ns, CreatedAt: at, Confidence: 0.5, Embedding: []float32{0, 1, 0}},
				Edges: []*models.Edge{{Namespace: ns, From: "m1", To: "m2", Type: models.EdgeTemporal, Weight: 0.75}}}}
		if err := s.CreateMemories(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	search := func(ns string) ([]models.Hit, error) { return s.SearchText(ctx, ns, "piano", 5) }
	if hits, err := search("a"); err != nil || len(hits) != 1 || hits[0].ID != "m1" {
		t.Fatalf("search a = %v, %v", hits, err)
	}
	first := s.lazy.free
	if first == nil {
		t.Fatal("no connection kept after a reader's load")
	}
	// A load under the write mutex keeps its connection, and drops it when a load fails.
	s.wmu.Lock()
	_, err = s.loadSpaceLocked(ctx, "b", nil)
	kept := s.lazy.raw
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, ferr := s.loadSpaceLocked(cctx, "c", nil)
	dropped := s.lazy.raw == nil
	s.wmu.Unlock()
	if err != nil || kept == nil {
		t.Fatalf("load b under the mutex: %v, connection kept: %v", err, kept != nil)
	}
	if !errors.Is(ferr, context.Canceled) || !dropped {
		t.Fatalf("a failed load: %v, connection dropped: %v", ferr, dropped)
	}
	if hits, err := search("b"); err != nil || len(hits) != 1 || hits[0].ID != "m1" {
		t.Fatalf("search b = %v, %v", hits, err)
	}
	if s.lazy.free != first {
		t.Fatal("the readers' loads did not keep their connection")
	}
	var e *models.Edge
	err = s.Update(ctx, func(tx models.Tx) error {
		var err error
		e, err = tx.GetEdge("b", models.EdgeKey{From: "m1", To: "m2", Type: models.EdgeTemporal})
		return err
	})
	if err != nil || e.Weight != 0.75 {
		t.Fatalf("edge of b after its load = %+v, %v", e, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.lazy.raw != nil || s.lazy.free != nil {
		t.Fatal("Close left a load connection open")
	}
}

// TestColdLoadLetsOtherNamespacesWrite: a reader's first use of a namespace loads it from a
// snapshot without the write mutex, so another namespace's writes commit while it loads;
// a write to the loading namespace itself makes the load start again under the mutex, and
// the space it publishes holds that write.
func TestColdLoadLetsOtherNamespacesWrite(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "salience.db"), Options{Logger: quiet(), IndexBudget: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	put := func(ns, id, content string) error {
		return s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: id, Namespace: ns,
			Kind: models.KindTurn, Content: content, CreatedAt: at, Confidence: 0.5, Embedding: []float32{1, 0, 0}}}})
	}
	for _, ns := range []string{"cold", "busy", "moving"} {
		if err := put(ns, "m1", "river piano "+ns); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	paused, resume := make(chan string, 1), make(chan struct{})
	s.lazy.loaded = func(ns string) {
		paused <- ns
		<-resume
	}
	type answer struct {
		hits []models.Hit
		err  error
	}
	search := func(ns string) chan answer {
		out := make(chan answer, 1)
		go func() {
			hits, err := s.SearchText(ctx, ns, "piano", 5)
			out <- answer{hits, err}
		}()
		return out
	}

	got := search("cold")
	if ns := <-paused; ns != "cold" {
		t.Fatalf("paused loading %q", ns)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- put("busy", "m2", "another piano") }()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write to another namespace waited for the load")
	}
	resume <- struct{}{}
	if a := <-got; a.err != nil || len(a.hits) != 1 || a.hits[0].ID != "m1" {
		t.Fatalf("search cold = %v, %v", a.hits, a.err)
	}

	got = search("moving")
	<-paused
	if err := put("moving", "m2", "a second piano"); err != nil { // lands during the load
		t.Fatal(err)
	}
	s.lazy.loaded = nil
	resume <- struct{}{}
	if a := <-got; a.err != nil || len(a.hits) != 2 {
		t.Fatalf("search moving = %v, %v; want both memories, the one written during the load too", a.hits, a.err)
	}
}
