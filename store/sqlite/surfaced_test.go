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
