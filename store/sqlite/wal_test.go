package sqlite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// TestWALStaysBounded runs four writers without pause — ingest, a recall turn's surfacings
// and an engagement update, as a server's clients do — and a reader, for five seconds
// (SALIENCE_WAL_SECONDS sets how many: 60 for the acceptance figure), sampling the WAL's
// size throughout. The WAL must stay under maxWAL, and every acknowledged write must be in
// the database when it is opened again.
func TestWALStaysBounded(t *testing.T) {
	run := 5 * time.Second
	if v := os.Getenv("SALIENCE_WAL_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("SALIENCE_WAL_SECONDS=%q: %v", v, err)
		}
		run = time.Duration(n) * time.Second
	} else if testing.Short() {
		run = 2 * time.Second
	}
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	templates := corpus(100, 64)
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var created, turns, updates atomic.Int64
	var werr atomic.Value
	fail := func(err error) {
		werr.CompareAndSwap(nil, err)
	}
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			var mine []string
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Ingest: a batch of 5 turns with their concepts and mention edges.
				batch := make([]*models.MemoryWrite, 5)
				for j := range batch {
					tpl := templates[r.IntN(len(templates))]
					m := *tpl.Memory
					m.ID = fmt.Sprintf("w%d-%07d-%d", w, i, j)
					m.ChunkCount, m.Embedding = 0, tpl.Memory.Embedding
					if m.Embedding == nil {
						m.Embedding = templates[0].Memory.Embedding
					}
					mw := &models.MemoryWrite{Memory: &m, Concepts: tpl.Concepts}
					for _, c := range tpl.Concepts {
						mw.Edges = append(mw.Edges, &models.Edge{From: m.ID, To: models.ConceptID(c.Name), Type: models.EdgeMentions, Weight: 0.3})
					}
					batch[j] = mw
					mine = append(mine, m.ID)
				}
				if err := s.CreateMemories(ctx, batch); err != nil {
					fail(err)
					return
				}
				created.Add(int64(len(batch)))
				// A recall turn: ten surfacings of this writer's memories.
				at := base.Add(time.Duration(i) * time.Second)
				ss := make([]*models.Surfacing, 10)
				for j := range ss {
					ss[j] = &models.Surfacing{ID: fmt.Sprintf("s%d-%07d-%d", w, i, j), Namespace: "ns", ConversationID: "c",
						TurnID: fmt.Sprintf("t%d-%d", w, i), MemoryID: mine[r.IntN(len(mine))], Mode: models.ModeAmbient, At: at}
				}
				if err := s.RecordSurfacings(ctx, ss, nil); err != nil {
					fail(err)
					return
				}
				turns.Add(1)
				// Engagement: an outcome and the memory's metadata.
				err := s.Update(ctx, func(tx models.Tx) error {
					sf := ss[r.IntN(len(ss))]
					m, err := tx.GetMemory("ns", sf.MemoryID)
					if err != nil {
						return err
					}
					m.UsageCount++
					m.LastUsed = at
					sf.Outcome, sf.OutcomeAt = models.EventUsed, at
					return errors.Join(tx.PutMemory(m), tx.PutSurfacing(sf))
				})
				if err != nil {
					fail(err)
					return
				}
				updates.Add(1)
			}
		})
	}
	// A reader listing memories a page at a time without pause: each read holds a snapshot,
	// which a rewind must wait for (checkpointBusyTimeout). A reader whose every read
	// outlasted maxCheckpointBusy would postpone rewinds until it paused.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns", Limit: 20}); err != nil {
				fail(err)
				return
			}
		}
	})

	var peak int64
	deadline := time.Now().Add(run)
	for time.Now().Before(deadline) {
		if n := walSize(t, path); n > peak {
			peak = n
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if err, _ := werr.Load().(error); err != nil {
		t.Fatal(err)
	}
	end := walSize(t, path)
	// Once the writers stop, the checkpointer shrinks the file (the WAL used to stay at its
	// peak until a graceful shutdown).
	shrunk := time.Now()
	for walSize(t, path) > walKeep && time.Since(shrunk) < 5*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	if n := walSize(t, path); n > walKeep {
		t.Errorf("idle for 5 s, the WAL still holds %.1f MB", mb(n))
	}
	db, _ := os.Stat(path)
	t.Logf("%s: %d memories, %d turns, %d updates; WAL peak %.1f MB, when the writers stopped %.1f MB, %s later %.1f MB; database %.1f MB; "+
		"%d WAL resets, %d postponed by readers, write lock held at most %s by a rewind",
		run, created.Load(), turns.Load(), updates.Load(), mb(peak), mb(end), time.Since(shrunk).Round(time.Millisecond), mb(walSize(t, path)), mb(db.Size()),
		s.ckpt.resets.Load(), s.ckpt.postponed.Load(), time.Duration(s.ckpt.maxHold.Load()).Round(time.Microsecond))
	if peak > maxWAL {
		t.Errorf("the WAL reached %.1f MB, over %.0f MB", mb(peak), mb(maxWAL))
	}
	if created.Load() == 0 || updates.Load() == 0 {
		t.Fatal("no writes: the test measured nothing")
	}

	// Readable, and nothing acknowledged lost.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path)
	if err := s2.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	_, total, err := s2.FindMemories(ctx, models.MemoryFilter{Namespace: "ns", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if int64(total) != created.Load() {
		t.Fatalf("reopened: %d memories, %d were acknowledged", total, created.Load())
	}
}

func walSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
