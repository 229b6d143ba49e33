package maintenance_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// benchStore opens a store holding n memories in one namespace, created one a minute apart
// over the n minutes before t0, with the embedding, concepts and edges left out: the jobs
// read only the metadata.
func benchStore(b *testing.B, n int) *sqlite.Store {
	b.Helper()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := context.Background()
	for start := 0; start < n; start += 1000 {
		var ws []*models.MemoryWrite
		for i := start; i < min(n, start+1000); i++ {
			at := t0.Add(-time.Duration(n-i) * time.Minute)
			ws = append(ws, &models.MemoryWrite{Memory: &models.Memory{ID: ids.New(at), Namespace: "bench", Kind: models.KindFact,
				Content: fmt.Sprintf("memory %d", i), CreatedAt: at, Confidence: 0.5, RecentDismissals: float64(i % 3)}})
		}
		if err := st.CreateMemories(ctx, ws); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkDecayScan measures one full decay scan (FSRS policy, queue cap 100) over a
// namespace; memories/s is the walk's throughput.
func BenchmarkDecayScan(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			st := benchStore(b, n)
			s := maintenance.New(st, maintenance.Options{})
			run := newRun(t0)
			for b.Loop() {
				if _, err := s.DecayScan(run.at(t0.Add(90*24*time.Hour), 0), run); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}

// BenchmarkImplicitIgnore measures turning 1,000 unanswered surfacings into ignored events.
func BenchmarkImplicitIgnore(b *testing.B) {
	const per = 1000
	st := benchStore(b, per)
	ms, _, err := st.FindMemories(context.Background(), models.MemoryFilter{Namespace: "bench", Limit: per})
	if err != nil {
		b.Fatal(err)
	}
	s := maintenance.New(st, maintenance.Options{})
	run := newRun(t0)
	round := 0
	for b.Loop() {
		b.StopTimer()
		at := t0.Add(time.Duration(round) * time.Hour)
		var ss []*models.Surfacing
		for i, m := range ms {
			ss = append(ss, &models.Surfacing{ID: fmt.Sprintf("s%d-%d", round, i), Namespace: "bench", ConversationID: "c",
				TurnID: fmt.Sprintf("t%d", round), MemoryID: m.ID, Mode: models.ModeAmbient, At: at})
		}
		if err := st.RecordSurfacings(context.Background(), ss, nil); err != nil {
			b.Fatal(err)
		}
		round++
		b.StartTimer()
		n, err := s.ImplicitIgnore(run.at(at.Add(time.Hour), 0), run)
		if err != nil || n != per {
			b.Fatalf("ignored %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(per)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
