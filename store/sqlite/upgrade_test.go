package sqlite

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// journalLineOf frames body as a line of an earlier version's journal: "crc32 seq body\n",
// the checksum covering "seq body".
func journalLineOf(seq uint64, body string) string {
	rest := strconv.FormatUint(seq, 10) + " " + body
	return hex.EncodeToString(binaryCRC([]byte(rest))) + " " + rest + "\n"
}

func jsonTurn(t *testing.T, id string, at time.Time) string {
	b, err := json.Marshal(journalBody{Surfacings: []*models.Surfacing{{ID: id, Namespace: "ns", MemoryID: "m1",
		TurnID: "turn-" + id, Mode: models.ModeSearch, At: at}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpenRecordsAnEarlierJournal: a data directory an earlier version left after a crash,
// with turns still in its journal file, opens with those turns recorded — the ones SQLite
// had (up to the state key's sequence number) once, a torn last line skipped — and the file
// removed.
func TestOpenRecordsAnEarlierJournal(t *testing.T) {
	path := freshPath(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Record 1 reached SQLite before the crash; 2 and 3 did not.
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{{ID: "s1", Namespace: "ns", MemoryID: "m1", TurnID: "turn-s1",
		Mode: models.ModeSearch, At: at}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.ExecContext(ctx, `INSERT INTO state (key, value) VALUES (?, '1')`, journalSeqKey); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	torn := journalLineOf(4, jsonTurn(t, "s4", at))
	journal := journalLineOf(1, jsonTurn(t, "s1", at)) + journalLineOf(2, jsonTurn(t, "s2", at)) +
		journalLineOf(3, jsonTurn(t, "s3", at)) + torn[:len(torn)/2]
	if err := os.WriteFile(path+"-surfacings", []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	got, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sf := range got {
		ids = append(ids, sf.ID)
	}
	if strings.Join(ids, ",") != "s1,s2,s3" {
		t.Errorf("surfacings after the upgrade: %v, want s1,s2,s3", ids)
	}
	if _, err := os.Stat(path + "-surfacings"); !os.IsNotExist(err) {
		t.Errorf("the journal file is still there (%v)", err)
	}
}

// TestOpenRefusesAJournalLineItCannotRead: a whole line (its checksum holds) that this
// version cannot decode stops Open with an error naming it, rather than dropping an
// acknowledged turn.
func TestOpenRefusesAJournalLineItCannotRead(t *testing.T) {
	path := freshPath(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-surfacings", []byte(journalLineOf(1, `{"surfacings":[null]}`)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a journal whose whole line it cannot read")
	}
	if !strings.Contains(err.Error(), "line 1 of "+path+"-surfacings") {
		t.Errorf("error %q does not name the line", err)
	}
}
