package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// crash abandons s as a killed process would: the applier stops, nothing pending is applied,
// and the files are closed without a checkpoint.
func crash(t *testing.T, s *Store) {
	t.Helper()
	s.jr.stopApplier()
	s.jr.mu.Lock()
	s.jr.closed = true
	s.jr.f.Close() // releases the lock, as the process's death would
	s.jr.mu.Unlock()
	s.stopCheckpoints()
	s.checkpoints.Wait()
	s.wmu.Lock()
	s.closed = true
	s.wmu.Unlock()
	s.cdb.Close()
	s.rdb.Close()
	s.wdb.Close()
}

func journalMemory(t *testing.T, s *Store, id string) {
	t.Helper()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: id, Namespace: "ns",
		Kind: models.KindFact, Content: "the heron " + id, CreatedAt: at, Confidence: 0.5}}}); err != nil {
		t.Fatal(err)
	}
}

func journalTurn(i int, memoryID string) []*models.Surfacing {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return []*models.Surfacing{{ID: fmt.Sprintf("s%d", i), Namespace: "ns", MemoryID: memoryID, TurnID: fmt.Sprintf("t%d", i),
		ConversationID: "c", Mode: models.ModeSearch, At: at, Concepts: []string{"heron"}, PUse: 0.25,
		Components: models.Components{Confidence: 0.5, Relevance: 0.125}}}
}

// TestJournalReplaysAfterCrash: turns journaled but not applied when the process dies are
// in the database after the next Open — surfacings, counters and the conversation's state —
// and a second reopen does not apply them again.
func TestJournalReplaysAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	journalMemory(t, s, "m1")
	s.jr.stopApplier() // nothing is applied from here on
	const n = 5
	for i := range n {
		st := &models.ConversationState{Namespace: "ns", ConversationID: "c", Turns: i + 1, UpdatedAt: journalTurn(i, "m1")[0].At}
		if err := s.RecordSurfacings(ctx, journalTurn(i, "m1"), st); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := s.GetMemories(ctx, "ns", []string{"m1"}); len(m) != 1 || m[0].SurfaceCount != n {
		t.Fatalf("cached surface count before the crash: %+v", m)
	}
	var inSQL int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM surfacings`).Scan(&inSQL); err != nil || inSQL != 0 {
		t.Fatalf("surfacings in SQLite before the crash: %d, %v; want 0 (all journaled)", inSQL, err)
	}
	crash(t, s)

	for reopen := range 2 {
		s2 := openAt(t, path)
		if err := s2.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		ss, err := s2.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "ns"})
		if err != nil || len(ss) != n {
			t.Fatalf("reopen %d: %d surfacings, %v; want %d", reopen, len(ss), err, n)
		}
		want := journalTurn(n-1, "m1")[0]
		got := ss[n-1]
		if got.ID != want.ID || !got.At.Equal(want.At) || got.PUse != want.PUse || got.Components.Relevance != want.Components.Relevance ||
			len(got.Concepts) != 1 || got.Concepts[0] != "heron" {
			t.Errorf("reopen %d: replayed surfacing %+v, want %+v", reopen, got, want)
		}
		m, err := s2.GetMemory(ctx, "ns", "m1")
		if err != nil || m.SurfaceCount != n || !m.LastSurfaced.Equal(want.At) {
			t.Fatalf("reopen %d: memory %+v, %v; want surface count %d, last surfaced %v", reopen, m, err, n, want.At)
		}
		c, err := s2.GetConversation(ctx, "ns", "c")
		if err != nil || c.Turns != n {
			t.Fatalf("reopen %d: conversation %+v, %v; want %d turns", reopen, c, err, n)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + "-surfacings"); !os.IsNotExist(err) {
			t.Errorf("reopen %d: the journal is left after a clean close: %v", reopen, err)
		}
	}
}

// TestJournalSkipsTornLines: a line a failed write left half-written (never acknowledged)
// is skipped; the whole ones around it are applied.
func TestJournalSkipsTornLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	journalMemory(t, s, "m1")
	s.jr.stopApplier()
	for i := range 2 {
		if err := s.RecordSurfacings(ctx, journalTurn(i, "m1"), nil); err != nil {
			t.Fatal(err)
		}
	}
	crash(t, s)
	data, err := os.ReadFile(path + "-surfacings")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) != 3 || len(lines[2]) != 0 {
		t.Fatalf("journal %q: want two lines", data)
	}
	// A damaged line between the two whole ones, and a torn tail (a write cut short).
	damaged := bytes.Clone(lines[1])
	damaged[20] ^= 1
	file := string(lines[0]) + string(damaged) + string(lines[1]) + string(lines[1][:len(lines[1])/2])
	if err := os.WriteFile(path+"-surfacings", []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path)
	ss, err := s2.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "ns"})
	if err != nil || len(ss) != 2 {
		t.Fatalf("%d surfacings, %v; want 2", len(ss), err)
	}
	m, err := s2.GetMemory(ctx, "ns", "m1")
	if err != nil || m.SurfaceCount != 2 {
		t.Fatalf("memory %+v, %v; want surface count 2", m, err)
	}
}

// TestJournalCountsOnceBesideUpdates records turns while transactions read and rewrite the
// same memory (as engagement does): every turn is counted exactly once, in the cache and in
// the database, however the applier's batches interleave with the transactions.
func TestJournalCountsOnceBesideUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	journalMemory(t, s, "m1")
	const turns, updates = 300, 100
	var wg sync.WaitGroup
	errs := make(chan error, turns+updates)
	wg.Go(func() {
		for i := range turns {
			if err := s.RecordSurfacings(ctx, journalTurn(i, "m1"), nil); err != nil {
				errs <- err
			}
		}
	})
	wg.Go(func() {
		for range updates {
			err := s.Update(ctx, func(tx models.Tx) error {
				m, err := tx.GetMemory("ns", "m1")
				if err != nil {
					return err
				}
				m.Confidence = min(m.Confidence+0.001, 1)
				return tx.PutMemory(m)
			})
			if err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil || m.SurfaceCount != turns {
		t.Fatalf("cached: surface count %d, %v; want %d", m.SurfaceCount, err, turns)
	}
	ms, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns"}) // SQL, settled
	if err != nil || len(ms) != 1 || ms[0].SurfaceCount != turns {
		t.Fatalf("in SQLite: %+v, %v; want surface count %d", ms, err, turns)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path)
	ms, _, err = s2.FindMemories(ctx, models.MemoryFilter{Namespace: "ns"})
	if err != nil || len(ms) != 1 || ms[0].SurfaceCount != turns || ms[0].Confidence < 0.5+0.0999 {
		t.Fatalf("after reopen: %+v, %v; want surface count %d and confidence 0.6", ms, err, turns)
	}
}

// TestJournalConflicts: an id that is pending in the journal, already in the database, or
// twice in one turn is refused with ECONFLICT, and nothing of that turn is recorded.
func TestJournalConflicts(t *testing.T) {
	s := openReady(t)
	journalMemory(t, s, "m1")
	s.jr.stopApplier()
	if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); models.ErrorCode(err) != models.ECONFLICT {
		t.Errorf("an id pending in the journal: %v, want ECONFLICT", err)
	}
	if err := s.settle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); models.ErrorCode(err) != models.ECONFLICT {
		t.Errorf("an id in the database: %v, want ECONFLICT", err)
	}
	twice := append(journalTurn(2, "m1"), journalTurn(2, "m1")...)
	if err := s.RecordSurfacings(ctx, twice, nil); models.ErrorCode(err) != models.ECONFLICT {
		t.Errorf("an id twice in a turn: %v, want ECONFLICT", err)
	}
	m, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil || m.SurfaceCount != 1 {
		t.Fatalf("memory %+v, %v; want surface count 1", m, err)
	}
	if _, err := s.GetSurfacing(ctx, "ns", "s2"); models.ErrorCode(err) != models.ENOTFOUND {
		t.Errorf("the refused turn's surfacing: %v, want ENOTFOUND", err)
	}
}

// TestJournalCeilings: a turn whose ids all sort above every id journaled or stored in
// their namespace is not looked up in the database; one that does not is, and so is every
// turn of a namespace before its largest stored id has been read — after a restart too, so
// an id stored before it is still refused.
func TestJournalCeilings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	journalMemory(t, s, "m1")
	record := func(s *Store, i int, want string) {
		t.Helper()
		if err := s.RecordSurfacings(ctx, journalTurn(i, "m1"), nil); models.ErrorCode(err) != want {
			t.Fatalf("turn s%d: %v, want %q", i, err, want)
		}
	}
	record(s, 5, "")
	if n := s.jr.asked.Load(); n != 1 {
		t.Fatalf("the namespace's first turn: %d lookups, want 1 (its ceiling is not known yet)", n)
	}
	record(s, 7, "")
	if n := s.jr.asked.Load(); n != 1 {
		t.Fatalf("an id above the ceiling: %d lookups, want still 1", n)
	}
	record(s, 6, "") // below the ceiling s7, and new
	record(s, 7, models.ECONFLICT)
	if n := s.jr.asked.Load(); n != 3 {
		t.Fatalf("ids at or below the ceiling: %d lookups, want 3", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path)
	record(s2, 7, models.ECONFLICT) // stored before the restart: the ceiling is read first
	record(s2, 8, "")
	if n := s2.jr.asked.Load(); n != 1 {
		t.Fatalf("after the restart: %d lookups, want 1", n)
	}
}

// TestJournalAppliesInBackground: without any read, the applier moves a turn into SQLite
// soon after it is journaled, and the journal file is emptied.
func TestJournalAppliesInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	journalMemory(t, s, "m1")
	if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM surfacings`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path + "-surfacings")
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 && st.Size() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %d rows in SQLite, journal %d bytes; want 1 and 0", n, st.Size())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestJournalSurvivesRollback: a transaction that applied the journal and then failed rolls
// the turns back into the pending list, not out of existence.
func TestJournalSurvivesRollback(t *testing.T) {
	s := openReady(t)
	journalMemory(t, s, "m1")
	s.jr.stopApplier()
	if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx models.Tx) error {
		if _, err := tx.GetMemory("ns", "m1"); err != nil { // applies the journal
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want boom", err)
	}
	if _, err := s.GetSurfacing(ctx, "ns", "s1"); err != nil {
		t.Fatalf("the turn after the rollback: %v", err)
	}
	ms, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns"})
	if err != nil || len(ms) != 1 || ms[0].SurfaceCount != 1 {
		t.Fatalf("memory %+v, %v; want surface count 1", ms, err)
	}
}

// TestJournalWaitsForQuiet: the applier does not begin a batch while a recall turn or a
// search is in flight, begins once neither is; under turns that never stop it begins after
// journalMaxDefer, or as soon as journalMaxPending turns wait.
func TestJournalWaitsForQuiet(t *testing.T) {
	defer func(d time.Duration) { journalMaxDefer = d }(journalMaxDefer)
	rows := func(s *Store) int {
		var n int
		if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM surfacings`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitRows := func(s *Store, want int, why string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); rows(s) != want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d rows applied, want %d", why, rows(s), want)
			}
		}
	}
	for _, busy := range []string{"turn", "search"} {
		t.Run(map[string]string{"turn": "UntilTheTurnEnds", "search": "UntilTheSearchEnds"}[busy], func(t *testing.T) {
			journalMaxDefer = time.Hour
			s := openReady(t)
			journalMemory(t, s, "m1")
			ended := s.TurnStarted()
			if busy == "search" {
				ended()
				s.searching.Add(1)
				ended = func() { s.searching.Add(-1) }
			}
			if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(journalDelay + 20*journalQuiet)
			if n := rows(s); n != 0 {
				t.Errorf("%d rows applied while a %s was in flight; want 0", n, busy)
			}
			ended()
			waitRows(s, 1, "once the "+busy+" ended")
		})
	}
	t.Run("AtMostMaxDefer", func(t *testing.T) {
		journalMaxDefer = 20 * time.Millisecond
		s := openReady(t)
		journalMemory(t, s, "m1")
		defer s.TurnStarted()() // never quiet
		if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); err != nil {
			t.Fatal(err)
		}
		waitRows(s, 1, "a turn in flight throughout")
	})
	t.Run("AtMostMaxPending", func(t *testing.T) {
		journalMaxDefer = time.Hour
		s := openReady(t)
		journalMemory(t, s, "m1")
		defer s.TurnStarted()() // never quiet
		for i := range journalMaxPending {
			if err := s.RecordSurfacings(ctx, journalTurn(i+1, "m1"), nil); err != nil {
				t.Fatal(err)
			}
		}
		waitRows(s, journalMaxPending*len(journalTurn(1, "m1")), "journalMaxPending turns waiting")
	})
}

// TestJournalReadsSurviveAFailedApply: when the journal cannot be applied (here the writer
// refuses writes, as a full disk would), reads answer from what SQLite holds instead of
// failing, the turn stays pending, and it is applied once writes work again.
func TestJournalReadsSurviveAFailedApply(t *testing.T) {
	s := openReady(t)
	journalMemory(t, s, "m1")
	s.jr.stopApplier()
	if err := s.RecordSurfacings(ctx, journalTurn(1, "m1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.Exec(`PRAGMA query_only = 1`); err != nil {
		t.Fatal(err)
	}
	ms, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns"})
	if err != nil || len(ms) != 1 || ms[0].SurfaceCount != 0 {
		t.Fatalf("FindMemories with the journal unappliable: %+v, %v; want the memory as SQLite holds it (count 0)", ms, err)
	}
	if _, err := s.GetSurfacing(ctx, "ns", "s1"); models.ErrorCode(err) != models.ENOTFOUND {
		t.Errorf("GetSurfacing with the journal unappliable: %v, want ENOTFOUND (not yet in SQLite)", err)
	}
	if s.jr.pendingN.Load() != 1 {
		t.Fatalf("pending turns = %d, want 1", s.jr.pendingN.Load())
	}
	if _, err := s.wdb.Exec(`PRAGMA query_only = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSurfacing(ctx, "ns", "s1"); err != nil {
		t.Fatalf("GetSurfacing once writes work: %v", err)
	}
	ms, _, err = s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns"})
	if err != nil || ms[0].SurfaceCount != 1 {
		t.Fatalf("FindMemories once writes work: %+v, %v; want count 1", ms, err)
	}
}

// TestJournalLineRoundTrip: a record whose strings hold what JSON escapes (quotes,
// backslashes, control characters, HTML's <, > and &, U+2028) and non-ASCII text decodes
// from its line to what was encoded.
func TestJournalLineRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	tricky := "a\"b\\c\n\t<script>&amp;\u2028ü日本\x01"
	rec := &journalRecord{Seq: 42, Surfacings: []*models.Surfacing{{
		ID: "s1", Namespace: "ns", ConversationID: tricky, TurnID: "t1", MemoryID: "m<1>", Mode: models.ModeSearch,
		Rank: 3, Score: 0.1 + 0.2, Components: models.Components{Relevance: 1e-300, Vector: -0.5, Margin: 123456789.125},
		Concepts: []string{tricky, ""}, Terms: []string{"&"}, PUse: 0.25, ModelVersion: 7, At: at,
	}}, State: &models.ConversationState{Namespace: "ns", ConversationID: tricky, Type: "casual", Turns: 2,
		RecentSurfaced: [][]string{{"m<1>"}}, MessageTimes: []time.Time{at}, UpdatedAt: at}}
	line, err := encodeJournalLine(rec)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(line, []byte{'\n'}) != 1 || line[len(line)-1] != '\n' {
		t.Fatalf("line %q: want exactly one newline, at its end", line)
	}
	got := decodeJournalLine(line)
	if got == nil {
		t.Fatalf("line %q did not decode", line)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, rec)
	}
}

// FuzzJournalLine: whatever a journal file holds, decoding a line never panics, and a
// record it accepts encodes to a line that decodes to the same record. The body is also
// fuzzed behind a valid checksum, which random bytes would seldom carry, both as JSON (the
// older form) and as the binary form.
func FuzzJournalLine(f *testing.F) {
	good, err := encodeJournalLine(&journalRecord{Seq: 1, Surfacings: journalTurn(0, "m1")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, uint64(1), []byte(`{"surfacings":[{"id":"a","at":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte("00000000 1 {}\n"), uint64(0), []byte(`{"state":{"message_times":["x"]}}`))
	f.Add([]byte{}, uint64(1<<63), []byte(`{"surfacings":[null]}`))
	bin, err := encodeJournalBinary(journalTurn(0, "m1"), &models.ConversationState{Namespace: "ns", ConversationID: "c",
		RecentSurfaced: [][]string{{"m1"}}, MessageTimes: []time.Time{time.Unix(1, 2)}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{}, uint64(3), bin)
	f.Fuzz(func(t *testing.T, raw []byte, seq uint64, body []byte) {
		// The body as a line's JSON and, base64'd behind its marker, as its binary form.
		binLine := journalLine(seq, append([]byte{journalBinary}, b64.EncodeToString(body)...))
		for _, line := range [][]byte{raw, journalLine(seq, body), binLine} {
			rec := decodeJournalLine(line)
			if rec == nil {
				continue
			}
			again, err := encodeJournalLine(rec)
			if err != nil {
				t.Fatalf("decoded record does not encode: %v", err)
			}
			rec2 := decodeJournalLine(again)
			if rec2 == nil {
				t.Fatalf("re-encoded line %q does not decode", again)
			}
			third, err := encodeJournalLine(rec2)
			if err != nil || !bytes.Equal(third, again) {
				t.Fatalf("encoding is not stable: %q then %q (%v)", again, third, err)
			}
		}
	})
}

// TestJournalRefusesAWholeLineItCannotRead: a line torn by a crash (its checksum fails) is
// skipped, but a whole line this version cannot decode — here a binary body whose mask has a
// bit no version defines, as a newer format would — stops the read with an error naming the
// line and the file, rather than dropping an acknowledged turn.
func TestJournalRefusesAWholeLineItCannotRead(t *testing.T) {
	good, err := encodeJournalLine(&journalRecord{Seq: 1, Surfacings: journalTurn(0, "m1")})
	if err != nil {
		t.Fatal(err)
	}
	torn := good[:len(good)/2]
	write := func(lines ...[]byte) *os.File {
		f, err := os.Create(filepath.Join(t.TempDir(), "surfacings.journal"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		for _, l := range lines {
			if _, err := f.Write(l); err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
	recs, err := readJournal(write(good, torn))
	if err != nil || len(recs) != 1 || recs[0].Seq != 1 {
		t.Fatalf("a torn tail: %d records, %v; want the whole line's record and no error", len(recs), err)
	}
	// One surfacing, then a mask with bit 40 set: whole, and unreadable.
	w := &journalWriter{}
	w.uvarint(1)
	w.uvarint(1)
	w.b = append(w.b, 's')
	w.uvarint(1 << 40)
	unknown := journalLine(2, append([]byte{journalBinary}, b64.EncodeToString(w.b)...))
	if !lineChecks(unknown) || decodeJournalLine(unknown) != nil {
		t.Fatalf("the test's line: checks %v, decodes %v; want whole and unreadable", lineChecks(unknown), decodeJournalLine(unknown))
	}
	f := write(good, unknown, torn)
	_, err = readJournal(f)
	if err == nil || !strings.Contains(err.Error(), "line 2 of "+f.Name()) || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("a whole unreadable line: %v; want an error naming line 2 of %s", err, f.Name())
	}
}
