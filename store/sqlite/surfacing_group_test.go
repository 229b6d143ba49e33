package sqlite

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// TestRecordSurfacingsGroupCommit queues several turns behind a held writer lock so that
// they are written as one group, one of them with a surfacing id that already exists: that
// turn alone fails with ECONFLICT, the others are stored with their counters bumped.
func TestRecordSurfacingsGroupCommit(t *testing.T) {
	s := openReady(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: "ns",
		Kind: models.KindFact, Content: "the heron", CreatedAt: at, Confidence: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	sf := func(id string) []*models.Surfacing {
		return []*models.Surfacing{{ID: id, Namespace: "ns", MemoryID: "m1", TurnID: id, Mode: models.ModeSearch, At: at}}
	}
	if err := s.RecordSurfacings(ctx, sf("taken"), nil); err != nil {
		t.Fatal(err)
	}

	s.wmu.Lock() // the first call below leads and blocks on the writer lock
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		if i == 3 {
			id = "taken"
		}
		wg.Go(func() { errs[i] = s.RecordSurfacings(ctx, sf(id), nil) })
		// Wait until call i is queued (call 0 leaves the queue as it leads).
		for queued := false; !queued; {
			s.surfacings.mu.Lock()
			queued = s.surfacings.writing && len(s.surfacings.queue) == i
			s.surfacings.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
	s.wmu.Unlock()
	wg.Wait()

	for i, err := range errs {
		switch {
		case i == 3 && models.ErrorCode(err) != models.ECONFLICT:
			t.Errorf("call %d (existing id): err %v, want ECONFLICT", i, err)
		case i != 3 && err != nil:
			t.Errorf("call %d: %v", i, err)
		}
	}
	for i := range n {
		_, err := s.GetSurfacing(ctx, "ns", fmt.Sprintf("s%d", i))
		if (i == 3) != (models.ErrorCode(err) == models.ENOTFOUND) {
			t.Errorf("surfacing s%d: err %v", i, err)
		}
	}
	m, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.SurfaceCount != 1+n-1 {
		t.Errorf("surface_count = %d, want %d", m.SurfaceCount, n)
	}
}

// BenchmarkRecordSurfacingsConcurrent is BenchmarkRecordSurfacings from 8 concurrent
// callers, per turn: "grouped" through RecordSurfacings (turns share group commits),
// "alone" one transaction a turn, as before group commit.
func BenchmarkRecordSurfacingsConcurrent(b *testing.B) {
	for _, grouped := range []bool{true, false} {
		b.Run(map[bool]string{true: "grouped", false: "alone"}[grouped], func(b *testing.B) {
			s := openAt(b, buildDB(b, 1000, 8))
			base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
			var next atomic.Int64
			cpu0 := cpuTime()
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t := int(next.Add(1))
					at := base.Add(time.Duration(t) * time.Second)
					state := &models.ConversationState{Namespace: "ns", ConversationID: fmt.Sprintf("conv-%d", t%50), Turns: t,
						RecentTopics: []string{"cat"}, UpdatedAt: at}
					ss := benchSurfacings(t, at)
					var err error
					if grouped {
						err = s.RecordSurfacings(ctx, ss, state)
					} else {
						err = s.write(ctx, "record surfacings", func(tx *wtx) (func(), error) { return s.recordTx(ctx, tx, ss, state) })
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportCPU(b, cpu0)
		})
	}
}
