package sqlite

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// word returns the i-th word of the synthetic vocabulary: lower-case letters only, so that
// analysis runs the Porter stemmer as on real text.
func word(i int) string {
	const cons, vows = "bcdfghklmnprstvz", "aeiou"
	b := []byte{}
	for i++; i > 0; i /= 80 {
		d := i % 80
		b = append(b, cons[d%16], vows[d/16])
	}
	return string(b) + "n"
}

// corpus returns n deterministic memory writes shaped like chat turns: 5–17 words from a
// Zipf vocabulary (see index's benchmarks), a dims-dimensional unit embedding, two topic
// concepts with mentions edges, and a temporal edge to the previous turn of the same
// conversation (20 turns each). Every 100th memory is long and stored as two chunks.
func corpus(n, dims int) []*models.MemoryWrite {
	r := rand.New(rand.NewPCG(11, 12))
	z := rand.NewZipf(r, 1.1, 10, 29_999)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	vec := func() []float32 {
		v := make([]float32, dims)
		var ss float64
		for i := range v {
			f := r.NormFloat64()
			v[i], ss = float32(f), ss+f*f
		}
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(ss))
		}
		return v
	}
	text := func() string {
		ws := make([]string, 5+r.IntN(13))
		for i := range ws {
			ws[i] = word(int(z.Uint64()))
		}
		return fmt.Sprint(ws)
	}
	out := make([]*models.MemoryWrite, n)
	for i := range out {
		id := fmt.Sprintf("01J%023d", i)
		conv := fmt.Sprintf("conv-%d", i/20)
		m := &models.Memory{
			ID: id, Namespace: "ns", Kind: models.KindTurn, CreatedAt: base.Add(time.Duration(i) * time.Second),
			Source: models.Source{ConversationID: conv, Speaker: "ann"}, Importance: 0.5, Confidence: models.DefaultConfidence,
		}
		w := &models.MemoryWrite{Memory: m}
		if i%100 == 99 {
			a, b := text(), text()
			m.Content = a + " " + b
			m.ChunkCount = 2
			for j, part := range []string{a, b} {
				w.Chunks = append(w.Chunks, &models.Memory{
					ID: fmt.Sprintf("%s-%d", id, j), Namespace: "ns", Kind: models.KindTurn, Content: part, CreatedAt: m.CreatedAt,
					Source: m.Source, ParentID: id, ChunkIndex: j, Confidence: models.DefaultConfidence, Embedding: vec(),
				})
			}
		} else {
			m.Content, m.Embedding = text(), vec()
		}
		for range 2 {
			name := fmt.Sprintf("t%d", z.Uint64()%200)
			m.Concepts = append(m.Concepts, name)
			w.Concepts = append(w.Concepts, &models.Concept{Name: name, Kind: models.ConceptTopic, FirstSeen: m.CreatedAt, LastSeen: m.CreatedAt})
			w.Edges = append(w.Edges, &models.Edge{From: id, To: models.ConceptID(name), Type: models.EdgeMentions, Weight: 0.3})
		}
		if i%20 != 0 {
			w.Edges = append(w.Edges, &models.Edge{From: out[i-1].Memory.ID, To: id, Type: models.EdgeTemporal, Weight: 0.5})
		}
		out[i] = w
	}
	return out
}

// buildDB writes n memories into a new database in a temporary directory and returns its path.
func buildDB(b testing.TB, n, dims int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	s, err := Open(path, Options{Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	for batch := range slices.Chunk(corpus(n, dims), 1000) {
		if err := s.CreateMemories(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRebuild100k measures loading the indexes of 100,000 memories with 384-dim
// vectors at start (docs/design.md#embedded-store: must stay ≤ 5 s, target 1–2 s).
func BenchmarkRebuild100k(b *testing.B) {
	path := buildDB(b, 100_000, 384)
	s := openAt(b, path)
	if testing.Verbose() { // phase timings in the rebuild log
		s.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cpu0 := cpuTime()
	for b.Loop() {
		if err := s.Rebuild(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time does not depend on what else the machine runs; wall time on 2 idle cores is
	// about CPU time / 2.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the user plus system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStore100k measures the recall hot path's store calls at 100,000 memories.
func BenchmarkStore100k(b *testing.B) {
	path := buildDB(b, 100_000, 384)
	s := openAt(b, path)
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.1, 10, 29_999)
	queries := make([]string, 1000)
	for i := range queries {
		ws := make([]string, 3+r.IntN(4))
		for j := range ws {
			ws[j] = word(int(z.Uint64()))
		}
		queries[i] = fmt.Sprint(ws)
	}
	ids := make([][]string, 100)
	for i := range ids {
		for range 100 {
			ids[i] = append(ids[i], fmt.Sprintf("01J%023d", r.IntN(100_000)))
		}
	}
	probe, err := s.GetMemories(ctx, "ns", []string{fmt.Sprintf("01J%023d", 0)})
	if err != nil || len(probe) != 1 {
		b.Fatal(err)
	}
	vq := probe[0].Embedding

	b.Run("SearchText", func(b *testing.B) {
		percentiles(b, func(i int) {
			if _, err := s.SearchText(ctx, "ns", queries[i%len(queries)], 40); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("SearchVector", func(b *testing.B) {
		percentiles(b, func(i int) {
			if _, err := s.SearchVector(ctx, "ns", vq, 40); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("GetMemories100/cache", func(b *testing.B) {
		percentiles(b, func(i int) {
			if ms, err := s.GetMemories(ctx, "ns", ids[i%len(ids)]); err != nil || len(ms) != 100 {
				b.Fatal(len(ms), err)
			}
		})
	})
	// Recall's hydration: about 150 memories at random among 100,000 (57 MB of them), so
	// most are cache misses, as in a recall.
	view := make([][]string, 1000)
	for i := range view {
		for range 150 {
			view[i] = append(view[i], fmt.Sprintf("01J%023d", r.IntN(100_000)))
		}
	}
	b.Run("ViewMemories150", func(b *testing.B) {
		percentiles(b, func(i int) {
			if ms, err := s.ViewMemories(ctx, "ns", view[i%len(view)], false); err != nil || len(ms) != 150 {
				b.Fatal(len(ms), err)
			}
		})
	})
	b.Run("GetMemories100/sql", func(b *testing.B) {
		percentiles(b, func(i int) {
			if ms, err := s.sqlMemories(ctx, "ns", ids[i%len(ids)]); err != nil || len(ms) != 100 {
				b.Fatal(len(ms), err)
			}
		})
	})
	b.Run("Neighbors", func(b *testing.B) {
		percentiles(b, func(i int) {
			if _, err := s.Neighbors(ctx, "ns", ids[i%len(ids)][:20]); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkCreateMemory measures durable single-memory writes (one transaction each, with
// two concepts and two edges like an ingested turn).
func BenchmarkCreateMemory(b *testing.B) {
	s := openReady(b)
	proto := corpus(1, 384)[0]
	i := 0
	for b.Loop() {
		m := *proto.Memory
		m.ID = fmt.Sprintf("01K%023d", i)
		w := &models.MemoryWrite{Memory: &m, Concepts: proto.Concepts, Edges: []*models.Edge{
			{From: m.ID, To: proto.Edges[0].To, Type: models.EdgeMentions, Weight: 0.3},
			{From: m.ID, To: proto.Edges[1].To, Type: models.EdgeMentions, Weight: 0.3},
		}}
		if err := s.CreateMemories(ctx, []*models.MemoryWrite{w}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func percentiles(b *testing.B, op func(i int)) {
	lat := make([]time.Duration, 0, 1024)
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		op(i)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
	}
}
