package sqlite

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// counts returns m's counters as the cache and as an SQL read (which folds first) give them,
// failing when they differ.
func counts(t *testing.T, s *Store, id string) (int, time.Time) {
	t.Helper()
	m, err := s.GetMemory(ctx, "ns", id)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := s.sqlMemories(ctx, "ns", []string{id})
	if err != nil || len(ms) != 1 {
		t.Fatal(len(ms), err)
	}
	if ms[0].SurfaceCount != m.SurfaceCount || !ms[0].LastSurfaced.Equal(m.LastSurfaced) {
		t.Fatalf("%s: SQL reads %d, %v; the cache %d, %v", id, ms[0].SurfaceCount, ms[0].LastSurfaced, m.SurfaceCount, m.LastSurfaced)
	}
	return m.SurfaceCount, m.LastSurfaced
}

func wantCounts(t *testing.T, s *Store, id string, n int, last time.Time) {
	t.Helper()
	gn, gl := counts(t, s, id)
	if gn != n || !gl.Equal(last) {
		t.Errorf("%s: count %d, last %v; want %d, %v", id, gn, gl, n, last)
	}
}

func TestSurfacedFolds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "salience.db")
	s := openAt(t, path)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	var writes []*models.MemoryWrite
	for _, id := range []string{"m1", "m2", "m3"} {
		writes = append(writes, &models.MemoryWrite{Memory: &models.Memory{ID: id, Namespace: "ns", Kind: models.KindFact, Content: "memory " + id, CreatedAt: t0}})
	}
	writes[2].Memory.SurfaceCount, writes[2].Memory.LastSurfaced = 5, at(30) // a written count is kept
	if err := s.CreateMemories(ctx, writes); err != nil {
		t.Fatal(err)
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	surface := func(i int, ids ...string) {
		t.Helper()
		var ss []*models.Surfacing
		for _, id := range ids {
			n++
			ss = append(ss, &models.Surfacing{ID: "s" + string(rune('a'+n)), Namespace: "ns", MemoryID: id, Mode: models.ModeAmbient, At: at(i)})
		}
		if err := s.RecordSurfacings(ctx, ss, nil); err != nil {
			t.Fatal(err)
		}
	}
	surface(1, "m1", "m2", "ghost")
	surface(2, "m1", "m3")
	wantCounts(t, s, "m1", 2, at(2))
	wantCounts(t, s, "m2", 1, at(1))
	wantCounts(t, s, "m3", 6, at(30))
	if s.unfolded.Load() != 0 {
		t.Errorf("after a read, %d surfacings wait to be folded", s.unfolded.Load())
	}
	var ghosts int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM surfaced WHERE id = 'ghost'`).Scan(&ghosts); err != nil || ghosts != 0 {
		t.Errorf("a surfacing of no memory left %d counter rows (%v)", ghosts, err)
	}

	// Folding again adds nothing: the watermark moved past what was folded.
	s.unfolded.Store(1)
	wantCounts(t, s, "m1", 2, at(2))

	// A memory deleted and written again under its id starts from its own counts.
	surface(3, "m2")
	if err := s.DeleteMemory(ctx, "ns", "m2"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateMemories(ctx, writes[1:2]); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, "m2", 0, time.Time{})

	// A crash after the turn is stored and before it is folded: the next process folds it
	// before it reads. (VACUUM INTO copies what is committed, as a crash leaves it.)
	surface(4, "m1")
	if s.unfolded.Load() == 0 {
		t.Fatal("the applied turn was folded at once: the crash below would test nothing")
	}
	crashed := filepath.Join(dir, "crashed.db")
	if _, err := s.wdb.ExecContext(ctx, `VACUUM INTO ?`, crashed); err != nil {
		t.Fatal(err)
	}
	c := openAt(t, crashed)
	if err := c.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, c, "m1", 3, at(4))
	wantCounts(t, c, "m3", 6, at(30))

	// And a clean restart keeps every count.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, "m1", 3, at(4))
	wantCounts(t, s, "m2", 0, time.Time{})
	wantCounts(t, s, "m3", 6, at(30))
}

// An Update's PutMemory writes the counters it is given, as the contract says; a later turn
// adds to them.
func TestSurfacedPutMemory(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindFact, Content: "a memory", CreatedAt: t0}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	sf := &models.Surfacing{ID: "s1", Namespace: "ns", MemoryID: "m1", Mode: models.ModeAmbient, At: t0.Add(time.Minute)}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, func(tx models.Tx) error {
		got, err := tx.GetMemory("ns", "m1")
		if err != nil {
			return err
		}
		if got.SurfaceCount != 1 {
			t.Errorf("the transaction reads count %d, want 1", got.SurfaceCount)
		}
		got.SurfaceCount, got.LastSurfaced = 10, t0.Add(time.Hour)
		return tx.PutMemory(got)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, "m1", 10, t0.Add(time.Hour))
	sf2 := &models.Surfacing{ID: "s2", Namespace: "ns", MemoryID: "m1", Mode: models.ModeAmbient, At: t0.Add(2 * time.Hour)}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf2}, nil); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, "m1", 11, t0.Add(2*time.Hour))
}

// A database written before the counters moved keeps them, and its stored surfacings are
// not counted twice.
func TestSurfacedMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindFact, Content: "old row", CreatedAt: t0}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m}}); err != nil {
		t.Fatal(err)
	}
	sf := &models.Surfacing{ID: "s1", Namespace: "ns", MemoryID: "m1", Mode: models.ModeAmbient, At: t0}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Rewind to what the old code wrote: the count in the memory's row, counting s1.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE memories SET surface_count = 7, last_surfaced = ` + strconv.FormatInt(encTime(t0), 10),
		`DROP TABLE surfaced`,
		`DELETE FROM state WHERE key = '` + surfacedThroughKey + `'`,
		`DELETE FROM migrations WHERE name = 'migrations/0012_surfaced.sql'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, "m1", 7, t0)
}

// TestBatchWritesYield: a batch of turns is written batchRows surfacings a statement and
// one statement a conversation, yielding before each, and a fold covers foldChunk rows a
// statement, yielding before each; the counters come out as one statement would make them.
func TestBatchWritesYield(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const mems, turns, per, convs = 10, 300, 10, 7
	var writes []*models.MemoryWrite
	for i := range mems {
		id := "m" + strconv.Itoa(i)
		writes = append(writes, &models.MemoryWrite{Memory: &models.Memory{ID: id, Namespace: "ns", Kind: models.KindFact, Content: "memory " + id, CreatedAt: t0}})
	}
	if err := s.CreateMemories(ctx, writes); err != nil {
		t.Fatal(err)
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	var batch []turn
	wantN, wantLast := map[string]int{}, map[string]time.Time{}
	lastTurns := map[string]int{} // by conversation: its last turn's count
	for i := range turns {
		at := t0.Add(time.Duration(i) * time.Second)
		var ss []*models.Surfacing
		for j := range per {
			id := "m" + strconv.Itoa((i*3+j*j)%mems)
			ss = append(ss, &models.Surfacing{ID: "s" + strconv.Itoa(i*per+j), Namespace: "ns", MemoryID: id, Mode: models.ModeAmbient, At: at})
			wantN[id]++
			wantLast[id] = at
		}
		conv := "c" + strconv.Itoa(i%convs)
		batch = append(batch, turn{ss, &models.ConversationState{Namespace: "ns", ConversationID: conv, Turns: i + 1, UpdatedAt: at}})
		lastTurns[conv] = i + 1
	}
	// The batch and a fold of it in one transaction: the applier's own fold, and any
	// other batch write, waits for the write lock meanwhile, so the yields counted are
	// these.
	var yields, foldYields int64
	err := s.write(ctx, "test batch", func(tx *wtx) (func(), error) {
		y0 := batchYields.Load()
		apply, err := s.recordTurnsTx(ctx, tx, batch)
		if err != nil {
			return nil, err
		}
		y1 := batchYields.Load()
		if err := tx.fold(ctx); err != nil {
			return nil, err
		}
		yields, foldYields = y1-y0, batchYields.Load()-y1
		return apply, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64((turns*per+batchRows-1)/batchRows + convs); yields != want {
		t.Errorf("the batch yielded %d times, want %d (%d statements of rows, %d of states)", yields, want, want-convs, convs)
	}
	if want := int64((turns*per + foldChunk - 1) / foldChunk); foldYields != want {
		t.Errorf("the fold yielded %d times, want %d", foldYields, want)
	}
	var rows int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM surfacings`).Scan(&rows); err != nil || rows != turns*per {
		t.Fatalf("%d surfacings stored (%v), want %d", rows, err, turns*per)
	}
	for conv, want := range lastTurns {
		st, err := scanConversation(s.rdb.QueryRowContext(ctx, selectConversation, "ns", conv)) // stored, not cached
		if err != nil {
			t.Fatal(err)
		}
		if st.Turns != want {
			t.Errorf("conversation %s: %d turns stored, want its last turn's %d", conv, st.Turns, want)
		}
	}
	for id, n := range wantN {
		wantCounts(t, s, id, n, wantLast[id])
	}
}

// Reading surfacings writes nothing: they are committed with their turn, and the fold only
// moves the memories' counters.
func TestSurfacingReadsDoNotFold(t *testing.T) {
	s := openReady(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sf := &models.Surfacing{ID: "s1", Namespace: "ns", MemoryID: "m1", Mode: models.ModeAmbient, At: at}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
		t.Fatal(err)
	}
	commits, waiting := s.commits.Load(), s.unfolded.Load()
	if waiting == 0 {
		t.Fatal("nothing waits to be folded: the test proves nothing")
	}
	if got, err := s.GetSurfacing(ctx, "ns", "s1"); err != nil || got.MemoryID != "m1" {
		t.Fatalf("GetSurfacing: %v, %v", got, err)
	}
	if got, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "ns"}); err != nil || len(got) != 1 {
		t.Fatalf("FindSurfacings: %d, %v", len(got), err)
	}
	if s.commits.Load() != commits || s.unfolded.Load() != waiting {
		t.Errorf("reads committed %d transactions and left %d of %d surfacings to fold", s.commits.Load()-commits, s.unfolded.Load(), waiting)
	}
}
