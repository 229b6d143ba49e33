package sqlite

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/salience-ai/salience/models"
)

// Builds before this one kept recorded turns in a journal file beside the database
// ("<db>-surfacings") and moved them into SQLite in the background. A data directory such a
// build left, after a crash with turns still only in its journal, opens here: Open reads
// the journal, records the turns SQLite had not received (the state key journalSeqKey holds
// the last one it had) through the ordinary write path, and removes the file. Nothing writes
// a journal any more; its format is kept here only to be read.

// journalSeqKey is the state key holding the sequence number of the last record applied.
const journalSeqKey = "sqlite.surfacing_journal_seq"

// importJournal records the turns of the journal at path that SQLite has not yet received,
// then removes the file. No file: nothing to do.
func (s *Store) importJournal(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: open the journal of an earlier version: %w", err)
	}
	recs, err := readJournal(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("sqlite: read the journal of an earlier version: %w", err)
	}
	var applied uint64
	var v string
	err = s.wdb.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, journalSeqKey).Scan(&v)
	switch {
	case err == nil:
		if applied, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("sqlite: journal of an earlier version: bad %s %q", journalSeqKey, v)
		}
	case !errors.Is(err, errNoRows):
		return fmt.Errorf("sqlite: journal of an earlier version: %w", err)
	}
	var turns []*journalRecord
	for _, r := range recs {
		if r.Seq > applied {
			turns = append(turns, r)
		}
	}
	if len(turns) > 0 {
		err := s.write(ctx, "record the journal's turns", func(tx *wtx) (func(), error) {
			var applies []func()
			for _, r := range turns {
				apply, err := s.recordTx(ctx, tx, r.Surfacings, r.State)
				if err != nil {
					return nil, err
				}
				applies = append(applies, apply)
			}
			return func() {
				for _, a := range applies {
					a()
				}
			}, nil
		})
		if err != nil {
			return fmt.Errorf("sqlite: record the turns of an earlier version's journal: %w", err)
		}
		s.log.Info("sqlite: recorded the turns an earlier version left in its journal", "turns", len(turns), "path", path)
	}
	return os.Remove(path)
}

const journalBinary = 'b'

var b64 = base64.RawStdEncoding

// Times run from year 0 to 9999, as in JSON (RFC 3339).
var (
	minJournalSec = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxJournalSec = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

// journalRecord is one RecordSurfacings call: a turn's surfacings and its conversation state.
type journalRecord struct {
	Seq        uint64                    `json:"-"`
	Surfacings []*models.Surfacing       `json:"surfacings,omitempty"`
	State      *models.ConversationState `json:"state,omitempty"`
}

// readJournal returns the records of the journal's lines, in sequence order. A torn or
// damaged line (its checksum fails: the tail of a crash) is skipped; a whole line that does
// not decode is an error, never skipped.
func readJournal(f *os.File) ([]*journalRecord, error) {
	var out []*journalRecord
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		switch rec, whole := decodeJournalLine(line); {
		case rec != nil:
			out = append(out, rec)
		case whole:
			// Not torn: whole, as its checksum says, yet unreadable — a newer version's
			// format, most likely. Skipping it would drop acknowledged turns.
			return nil, fmt.Errorf("line %d of %s is whole (its checksum holds) but this version cannot read it: "+
				"was it written by a newer version of salience? Run that version until it has applied its journal "+
				"(it does so at every start), or move the file aside to start without those turns", n, f.Name())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b *journalRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	return slices.CompactFunc(out, func(a, b *journalRecord) bool { return a.Seq == b.Seq }), nil
}

func binaryCRC(b []byte) []byte {
	c := crc32.ChecksumIEEE(b)
	return []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}
}

// decodeJournalLine returns the record of a line "crc32 seq body\n" (the checksum, eight hex
// digits, covers "seq body"), or nil when the line is torn or damaged (whole is false: its
// checksum fails) or does not decode.
func decodeJournalLine(line []byte) (rec *journalRecord, whole bool) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) < 10 || line[8] != ' ' {
		return nil, false
	}
	if sum, err := hex.DecodeString(string(line[:8])); err != nil || !bytes.Equal(sum, binaryCRC(line[9:])) {
		return nil, false
	}
	seqText, body, ok := bytes.Cut(line[9:], []byte{' '})
	seq, err := strconv.ParseUint(string(seqText), 10, 64)
	if !ok || err != nil || seq == 0 {
		return nil, true
	}
	if len(body) > 0 && body[0] == journalBinary {
		raw := make([]byte, b64.DecodedLen(len(body)-1))
		n, err := b64.Decode(raw, body[1:])
		if err == nil {
			rec, err = decodeJournalBinary(raw[:n])
		}
		if err != nil {
			return nil, true
		}
	} else if err := json.Unmarshal(body, &rec); err != nil || rec == nil { // JSON: the form before the binary one
		return nil, true
	}
	if slices.Contains(rec.Surfacings, nil) {
		return nil, true // a turn's surfacings are all there: RecordSurfacings checked them
	}
	rec.Seq = seq
	return rec, true
}

var errJournalBody = errors.New("damaged journal body")

type journalReader struct {
	b   []byte
	err error
}

func (r *journalReader) fail() {
	if r.err == nil {
		r.err = errJournalBody
	}
	r.b = nil
}

// readVarint reads one varint with decode (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](r *journalReader, decode func([]byte) (T, int)) T {
	v, n := decode(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *journalReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }
func (r *journalReader) varint() int64   { return readVarint(r, binary.Varint) }

// int reads a varint that must fit an int.
func (r *journalReader) int() int {
	v := r.varint()
	if int64(int(v)) != v {
		r.fail()
		return 0
	}
	return int(v)
}

// count reads a count of items each at least one byte long: no more than what is left.
func (r *journalReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *journalReader) f64() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		r.fail()
		return 0
	}
	return v
}

func (r *journalReader) bytes(n uint64) string {
	if n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *journalReader) str(prev string) string {
	n := r.uvarint()
	if n == 0 {
		return prev
	}
	return r.bytes(n - 1)
}

func (r *journalReader) strs(prev []string) []string {
	n := r.uvarint()
	switch {
	case n == 0:
		return prev
	case n-1 > uint64(len(r.b)):
		r.fail()
		return nil
	case n == 1:
		return nil // empty: nil, as JSON's omitempty read it back
	}
	out := make([]string, n-1)
	for i := range out {
		out[i] = r.bytes(r.uvarint())
	}
	return out
}

func (r *journalReader) lists() [][]string {
	k := r.count()
	if k == 0 {
		return nil
	}
	out := make([][]string, k)
	for i := range out {
		out[i] = r.strs(nil)
	}
	return out
}

func (r *journalReader) time() time.Time {
	if len(r.b) == 0 {
		r.fail()
		return time.Time{}
	}
	flag := r.b[0]
	r.b = r.b[1:]
	switch flag {
	case 0:
		return time.Time{}
	case 1:
		sec, nsec := r.varint(), r.uvarint()
		if nsec >= 1e9 || sec < minJournalSec || sec > maxJournalSec {
			r.fail()
			return time.Time{}
		}
		t := time.Unix(sec, int64(nsec)).UTC()
		if t.IsZero() {
			r.fail() // the zero time has its own flag: one encoding per value
		}
		return t
	}
	r.fail()
	return time.Time{}
}

// decodeJournalBinary reads a body written by encodeJournalBinary; an error when it does not
// parse to the end.
func decodeJournalBinary(b []byte) (*journalRecord, error) {
	r := &journalReader{b: b}
	out := &journalRecord{}
	n := r.count()
	if n > 0 {
		out.Surfacings = make([]*models.Surfacing, 0, n)
	}
	var prev models.Surfacing
	for i := 0; i < n && r.err == nil; i++ {
		sf := &models.Surfacing{}
		sf.ID = r.str(prev.ID)
		sf.Namespace = r.str(prev.Namespace)
		sf.ConversationID = r.str(prev.ConversationID)
		sf.TurnID = r.str(prev.TurnID)
		sf.MemoryID = r.str(prev.MemoryID)
		sf.Mode = models.Mode(r.str(string(prev.Mode)))
		sf.Rank = r.int()
		sf.Score = r.f64()
		r.components(&sf.Components)
		sf.ConvType = r.str(prev.ConvType)
		sf.Threshold = r.f64()
		sf.ArmProb = r.f64()
		sf.Variant = r.str(prev.Variant)
		sf.Experiment = r.str(prev.Experiment)
		sf.Concepts = r.strs(prev.Concepts)
		sf.Terms = r.strs(prev.Terms)
		sf.PUse = r.f64()
		sf.ModelVersion = r.varint()
		sf.LatencyMS = r.f64()
		sf.SettingsVersion = r.int()
		sf.At = r.time()
		sf.Outcome = models.EventType(r.str(string(prev.Outcome)))
		sf.OutcomeAt = r.time()
		out.Surfacings = append(out.Surfacings, sf)
		prev = *sf
	}
	if len(r.b) == 0 {
		r.fail()
	} else {
		flag := r.b[0]
		r.b = r.b[1:]
		switch flag {
		case 0:
		case 1:
			st := &models.ConversationState{}
			st.Namespace = r.str("")
			st.ConversationID = r.str("")
			st.Type = r.str("")
			st.Turns = r.int()
			st.RecentTopics = r.strs(nil)
			if k := r.count(); k > 0 {
				st.MessageTimes = make([]time.Time, k)
				for i := range st.MessageTimes {
					st.MessageTimes[i] = r.time()
				}
			}
			st.Participants = r.strs(nil)
			st.RecentSurfaced = r.lists()
			st.RecentTurns = r.lists()
			st.UpdatedAt = r.time()
			out.State = st
		default:
			r.fail()
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}
