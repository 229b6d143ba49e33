package sqlite

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// fill sets every field reachable from v (a pointer) to a value that is not its zero and
// differs with seed: strings, numbers, times (UTC), slices of one or two elements and the
// fields of nested structs. A field a codec forgets then reads back as its zero.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), seed)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 1+seed%28, 0, 0, seed, 123456789, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed*31+i+1)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d\n\"é", seed))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(seed%1000 + 1))
	case reflect.Float64:
		v.SetFloat(float64(seed%1000)/7 + 0.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1+seed%2, 1+seed%2)
		for i := range s.Len() {
			fill(s.Index(i), seed*7+i)
		}
		v.Set(s)
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

// TestJournalCodecCoversEveryField: a turn with every field of its surfacings and state set
// decodes to itself — including the surfacings that repeat the one before them (written as
// "the same"), one that repeats it only in part, and one that differs in everything. A
// field added to the models but not to the codec reads back as zero and fails this.
func TestJournalCodecCoversEveryField(t *testing.T) {
	var ss []*models.Surfacing
	for i := range 4 {
		sf := &models.Surfacing{}
		fill(reflect.ValueOf(sf), i+1)
		ss = append(ss, sf)
	}
	shared := *ss[0]
	shared.ID, shared.MemoryID, shared.Rank = "s-shared", "m-shared", 9
	ss = append(ss, &shared) // all but three fields as the one before
	partly := shared
	partly.Concepts = append([]string{"other"}, shared.Concepts...)
	partly.Terms = shared.Terms[:0]
	partly.Namespace = ""
	ss = append(ss, &partly)
	st := &models.ConversationState{}
	fill(reflect.ValueOf(st), 99)
	rec := &journalRecord{Seq: 7, Surfacings: ss, State: st}
	line, err := encodeJournalLine(rec)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJournalLine(line)
	if got == nil {
		t.Fatalf("line %q did not decode", line)
	}
	partly.Terms = nil // an empty list reads back as none, as with JSON's omitempty
	if !reflect.DeepEqual(got, rec) {
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(rec)
		t.Fatalf("decoded\n%s\nwant\n%s", a, b)
	}
	if strings.Contains(string(line[9:]), "{") {
		t.Fatalf("line %q: want the binary form", line)
	}
}

// TestJournalReadsJSONLines: a journal written before the binary form (JSON bodies) still
// replays: its lines decode to their records.
func TestJournalReadsJSONLines(t *testing.T) {
	ss := journalTurn(3, "m1")
	st := &models.ConversationState{Namespace: "ns", ConversationID: "c", Type: "casual", Turns: 4,
		RecentSurfaced: [][]string{{"m1"}}, UpdatedAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	body, err := json.Marshal(journalBody{ss, st})
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJournalLine(journalLine(5, body))
	want := &journalRecord{Seq: 5, Surfacings: ss, State: st}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
}

// TestJournalCodecRejects: what JSON could not encode (a NaN or infinite number, a time
// outside years 0–9999, a missing surfacing) is an error, not a line; and a body that is
// cut short, runs on, or encodes a value two ways does not decode.
func TestJournalCodecRejects(t *testing.T) {
	for name, mutate := range map[string]func(*models.Surfacing){
		"NaN score":      func(s *models.Surfacing) { s.Score = math.NaN() },
		"infinite p_use": func(s *models.Surfacing) { s.PUse = math.Inf(-1) },
		"NaN component":  func(s *models.Surfacing) { s.Components.Margin = math.NaN() },
		"year 10000":     func(s *models.Surfacing) { s.OutcomeAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		ss := journalTurn(1, "m1")
		mutate(ss[0])
		if _, err := encodeJournalBody(ss, nil); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
	if _, err := encodeJournalBody([]*models.Surfacing{nil}, nil); err == nil {
		t.Error("a missing surfacing encoded")
	}
	raw, err := encodeJournalBinary(journalTurn(1, "m1"), &models.ConversationState{Namespace: "ns", ConversationID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeJournalBinary(raw); err != nil {
		t.Fatalf("the whole body: %v", err)
	}
	for cut := range len(raw) {
		if b, err := decodeJournalBinary(raw[:cut]); err == nil {
			t.Fatalf("cut at %d of %d bytes: decoded %+v", cut, len(raw), b)
		}
	}
	if _, err := decodeJournalBinary(append(raw, 0)); err == nil {
		t.Fatal("a body with a byte after its end decoded")
	}
}

// BenchmarkJournalEncode: a recall turn's body — ten surfacings sharing their query's terms
// and concepts, and the conversation's state — as recall writes it on every call.
func BenchmarkJournalEncode(b *testing.B) {
	ss, st := benchTurn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeJournalBody(ss, st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalEncodeJSON is the JSON form the binary one replaced, for comparison.
func BenchmarkJournalEncodeJSON(b *testing.B) {
	ss, st := benchTurn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(journalBody{ss, st}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTurn() ([]*models.Surfacing, *models.ConversationState) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	terms := strings.Fields("what did caroline say about the adoption agency she visited last week with her friend melanie")
	concepts := []string{"caroline", "adoption agency", "melanie", "adoption", "agency", "visit"}
	var ss []*models.Surfacing
	for i := range 10 {
		ss = append(ss, &models.Surfacing{ID: fmt.Sprintf("01JBX7Q9S%017d", i), Namespace: "bench", ConversationID: "conv-17",
			TurnID: "01JBX7Q9S0000000000000000T", MemoryID: fmt.Sprintf("01JBX7M%019d", i*7919), Mode: models.ModeSearch,
			Rank: i + 1, Score: 0.8123 - float64(i)*0.0131, ConvType: "casual", Threshold: 0.42, ArmProb: 0.93,
			Components: models.Components{Relevance: 0.71, BM25: 0.64, Vector: 0.58, Phrase: 0.2, Activation: 0.11,
				Confidence: 0.5, Freshness: 0.93, Importance: 0.5, Novelty: 1, Score: 0.66},
			Concepts: concepts, Terms: terms, PUse: 0.3141, ModelVersion: 1234, LatencyMS: 2.17, At: at})
	}
	st := &models.ConversationState{Namespace: "bench", ConversationID: "conv-17", Type: "casual", Turns: 12,
		RecentTopics: concepts[:4], MessageTimes: []time.Time{at, at.Add(time.Minute)},
		RecentSurfaced: [][]string{{"a", "b", "c"}, {"d", "e"}}, RecentTurns: [][]string{concepts}, UpdatedAt: at}
	return ss, st
}
