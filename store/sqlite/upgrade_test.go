package sqlite

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
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
	b, err := json.Marshal(journalRecord{Surfacings: []*models.Surfacing{{ID: id, Namespace: "ns", MemoryID: "m1",
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

// fixtureTurns are the turns of testdata/journal-binary: written by the last build that kept
// a journal (19dead6^), through its own encoder, and read back by TestOpenRecordsABinaryJournal.
func fixtureTurns() []*journalRecord {
	at := time.Date(2026, 11, 28, 9, 30, 15, 123456789, time.UTC)
	comp := models.Components{Relevance: 0.61, BM25: 4.25, Vector: 0.73, Phrase: 0.5, Confidence: 0.8,
		Freshness: 0.9, Importance: 0.7, Score: 0.55, Margin: -0.125, Question: 1, Features: 3}
	sf := func(i int, mem string, rank int, score float64) *models.Surfacing {
		return &models.Surfacing{ID: fmt.Sprintf("sf-%d", i), Namespace: "team", ConversationID: "conv-1", TurnID: "turn-1",
			MemoryID: mem, Mode: models.ModeAmbient, Rank: rank, Score: score, Components: comp, ConvType: "planning",
			Threshold: 0.42, ArmProb: 0.25, Variant: "b", Experiment: "exp-1", Concepts: []string{"paris", "trip"},
			Terms: []string{"when", "paris", "trip"}, PUse: 0.375, ModelVersion: 7, LatencyMS: 1.5, SettingsVersion: 3,
			At: at}
	}
	s1, s2, s3 := sf(1, "mem-a", 0, 0.9), sf(2, "mem-b", 1, 0.5), sf(3, "mem-c", 2, 0.25)
	s2.Components.Vector, s2.Concepts = 0, []string{"paris"}
	s3.Outcome, s3.OutcomeAt = models.EventUsed, at.Add(2*time.Second)
	state := &models.ConversationState{Namespace: "team", ConversationID: "conv-1", Type: "planning", Turns: 4,
		RecentTopics: []string{"paris", "trip"}, MessageTimes: []time.Time{at.Add(-time.Minute), at},
		Participants: []string{"ana", "bot"}, RecentSurfaced: [][]string{{"mem-x"}, {"mem-a", "mem-b", "mem-c"}},
		RecentTurns: [][]string{{"turn-0"}, {"turn-1"}}, UpdatedAt: at}
	other := &models.Surfacing{ID: "sf-4", Namespace: "team", ConversationID: "conv-2", TurnID: "turn-9",
		MemoryID: "mem-a", Mode: models.ModeSearch, Score: 0.7, At: at.Add(time.Hour)}
	lone := &models.ConversationState{Namespace: "team", ConversationID: "conv-3", Type: "chat", Turns: 1,
		MessageTimes: []time.Time{at.Add(2 * time.Hour)}, UpdatedAt: at.Add(2 * time.Hour)}
	return []*journalRecord{
		{Seq: 1, Surfacings: []*models.Surfacing{s1, s2, s3}, State: state},
		{Seq: 2, Surfacings: []*models.Surfacing{other}},
		{Seq: 3, State: lone},
	}
}

// TestOpenRecordsABinaryJournal: a journal in the binary form the last journaling build wrote
// (testdata/journal-binary, made by that build's encoder from fixtureTurns) is recorded
// field for field, as the reopened store reads it: every surfacing, with its components,
// lists and times, and each conversation's state.
func TestOpenRecordsABinaryJournal(t *testing.T) {
	path := freshPath(t)
	journal, err := os.ReadFile("testdata/journal-binary")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-surfacings", journal, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := openAt(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-surfacings"); !os.IsNotExist(err) {
		t.Errorf("the journal file is still there (%v)", err)
	}
	s := openAt(t, path) // reopened: the conversations come from their rows, not the cache
	for _, r := range fixtureTurns() {
		for _, want := range r.Surfacings {
			got, err := s.GetSurfacing(ctx, want.Namespace, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("surfacing %s:\n got %+v\nwant %+v", want.ID, got, want)
			}
		}
		if want := r.State; want != nil {
			got, err := s.GetConversation(ctx, want.Namespace, want.ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("conversation %s:\n got %+v\nwant %+v", want.ConversationID, got, want)
			}
		}
	}
}

// FuzzJournalLine: any line decodes to a record or to nothing, never a panic; a record
// comes only from a whole line, with every surfacing there; and a line whose checksum does
// not cover it is never whole.
func FuzzJournalLine(f *testing.F) {
	journal, err := os.ReadFile("testdata/journal-binary")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.SplitAfter(string(journal), "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(journalLineOf(1, `{"surfacings":[{"id":"s1"}]}`)))
	f.Add([]byte(journalLineOf(2, "b"+b64.EncodeToString([]byte{1, 0}))))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, whole := decodeJournalLine(line)
		if rec != nil && (!whole || slices.Contains(rec.Surfacings, nil) || rec.Seq == 0) {
			t.Fatalf("record %+v from a line whole=%v", rec, whole)
		}
		trimmed := strings.TrimSuffix(string(line), "\n")
		if whole && (len(trimmed) < 10 || !strings.EqualFold(hex.EncodeToString(binaryCRC([]byte(trimmed[9:]))), trimmed[:8])) {
			t.Fatalf("a line whose checksum fails was taken as whole: %q", line)
		}
	})
}

// FuzzJournalBody: any binary body decodes or fails, never panics, and a decoded one has
// every surfacing.
func FuzzJournalBody(f *testing.F) {
	journal, err := os.ReadFile("testdata/journal-binary")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(journal)), "\n") {
		body, err := b64.DecodeString(line[strings.LastIndexByte(line, ' ')+2:])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if rec, err := decodeJournalBinary(body); err == nil && slices.Contains(rec.Surfacings, nil) {
			t.Fatalf("a nil surfacing from %x", body)
		}
	})
}
