package sqlite

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
)

// liveHeap returns the heap still reachable after forced collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestEstimateTracksHeap measures the heap a loaded namespace retains — the live heap after
// a forced collection, before and after loading k namespaces of n memories on demand,
// divided by k — for namespaces of 100 to 50,000 memories of `bench namespaces`' corpus
// (ingested through the real path: local 256-dimension vectors, concepts and edges), and
// fails when memindex.estimateBytes is more than 25 % off it. The budget is only as good as the
// estimate: one that is low lets the real index heap grow past --index-budget. -short
// leaves out the 50,000 (its ingest takes half a minute), and the race detector (make test)
// everything above 500: under it the sizes up to 50,000 took over nine minutes. Plain
// `go test ./store/sqlite` measures them all.
func TestEstimateTracksHeap(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	emb := embed.NewLocal(0)
	for _, c := range []struct{ per, spaces int }{{100, 40}, {500, 16}, {5000, 2}, {50000, 1}} {
		if (testing.Short() && c.per > 5000) || (raceEnabled && c.per > 500) {
			continue
		}
		if raceEnabled {
			c.spaces = max(c.spaces/4, 2) // fewer namespaces to average over, still 25 % bounds
		}
		path := filepath.Join(t.TempDir(), "salience.db")
		st := openAt(t, path) // closed below, before the on-demand store opens the file
		if err := st.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		syn := eval.NewSynth(1)
		ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return now }})
		for n := range c.spaces {
			for lo := 0; lo < c.per; lo += 500 {
				var batch []*models.Memory
				for i := lo; i < min(lo+500, c.per); i++ {
					batch = append(batch, syn.Memory(i, now))
				}
				if _, err := ing.Ingest(ctx, fmt.Sprintf("ns%03d", n), batch); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}

		lazy, err := Open(path, Options{Logger: quiet(), IndexBudget: 1 << 50}) // nothing evicted
		if err != nil {
			t.Fatal(err)
		}
		if err := lazy.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		before := liveHeap()
		for n := range c.spaces {
			if _, err := lazy.space(ctx, fmt.Sprintf("ns%03d", n)); err != nil {
				t.Fatal(err)
			}
		}
		measured := (liveHeap() - before) / int64(c.spaces)
		estimated := lazy.IndexStats().Bytes / int64(c.spaces)
		ratio := float64(estimated) / float64(measured)
		t.Logf("%6d memories: measured %11d bytes, estimated %11d (%.3f)", c.per, measured, estimated, ratio)
		if ratio < 0.75 || ratio > 1.25 {
			t.Errorf("%d memories a namespace: estimate %d bytes, measured heap %d (%.2f×); recalibrate memindex.estimateBytes", c.per, estimated, measured, ratio)
		}
		if err := lazy.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
