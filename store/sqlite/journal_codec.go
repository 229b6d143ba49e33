package sqlite

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/salience-ai/salience/models"
)

// A journal record's body is binary, base64 behind a 'b' so a line holds no newline but its
// last byte. JSON was the first form (a body starting with '{', still read, so a journal
// written by an older build replays): encoding a turn's ten surfacings as JSON took about
// 0.1 ms of every recall — each float formatted shortest-first, each string checked byte by
// byte, and the turn's query terms and concepts written out ten times. Here a float is its
// eight bytes, a string its length and bytes, and a surfacing's string or list equal to the
// one before it in the record is one zero byte.
//
// The format, with uvarint lengths and counts and zigzag varints for signed integers:
//
//	body       = uvarint(#surfacings) surfacing* state?
//	surfacing  = str(id) str(namespace) str(conversation_id) str(turn_id) str(memory_id)
//	             str(mode) varint(rank) f64(score) components str(conversation_type)
//	             f64(threshold) f64(arm_probability) str(variant) str(experiment)
//	             strs(concepts) strs(terms) f64(p_use) varint(model_version)
//	             f64(latency_ms) varint(settings_version) time(at) str(outcome) time(outcome_at)
//	components = uvarint(mask of the nonzero fields) f64(field)* in field order
//	state      = 0x00 (none) | 0x01 str(namespace) str(conversation_id) str(type) varint(turns)
//	             strs(recent_topics) times(message_times) strs(participants)
//	             uvarint(n) strs(recent_surfaced)×n uvarint(n) strs(recent_turns)×n time(updated_at)
//	str        = uvarint(0) (same as the previous surfacing's) | uvarint(len+1) bytes
//	strs       = uvarint(0) (same as the previous surfacing's) | uvarint(n+1) (uvarint(len) bytes)×n
//	time       = 0x00 (zero) | 0x01 varint(unix seconds) uvarint(nanoseconds)
//
// Floats must be finite, as JSON required: a NaN score is an invalid turn, not a row.

const journalBinary = 'b'

var b64 = base64.RawStdEncoding

// components lists a Components' float fields in their wire order; new ones go at the end,
// so a line written before them still decodes (its mask has no bit for them). The mask bit
// after them, featuresBit, marks Components.Features, written as a uvarint after the floats.
// TestJournalCodecCoversEveryField fills every field of a turn by reflection, so a field
// added to Components but not here fails it.
func components(c *models.Components) [20]*float64 {
	return [20]*float64{&c.Relevance, &c.BM25, &c.Vector, &c.Phrase, &c.Activation, &c.Confidence,
		&c.Freshness, &c.Proximity, &c.Importance, &c.Novelty, &c.Volunteer, &c.Score, &c.Used,
		&c.Speaker, &c.Turn, &c.Top, &c.Margin, &c.Coverage, &c.Match, &c.Question}
}

// featuresBit is the mask bit of Components.Features.
const featuresBit = 20

type journalWriter struct {
	b   []byte
	err error
}

func (w *journalWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *journalWriter) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }

func (w *journalWriter) f64(field string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if w.err == nil {
			w.err = fmt.Errorf("%s: %v is not a finite number", field, v)
		}
		v = 0
	}
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
}

// str writes s, or a zero for "the same as prev" when same is true and s == prev.
func (w *journalWriter) str(s, prev string, same bool) {
	if same && s == prev {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(s)) + 1)
	w.b = append(w.b, s...)
}

func (w *journalWriter) strs(ss, prev []string, same bool) {
	if same && equalStrings(ss, prev) {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(ss)) + 1)
	for _, s := range ss {
		w.uvarint(uint64(len(s)))
		w.b = append(w.b, s...)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Times run from year 0 to 9999, as in JSON (RFC 3339).
var (
	minJournalSec = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxJournalSec = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

func (w *journalWriter) time(t time.Time) {
	if t.IsZero() {
		w.b = append(w.b, 0)
		return
	}
	if sec := t.Unix(); sec < minJournalSec || sec > maxJournalSec {
		if w.err == nil {
			w.err = fmt.Errorf("time %v is outside years 0 to 9999", t)
		}
		t = time.Unix(0, 0)
	}
	w.b = append(w.b, 1)
	w.varint(t.Unix())
	w.uvarint(uint64(t.Nanosecond()))
}

// encodeJournalBinary is a record's body in the binary form, without its marker and base64.
func encodeJournalBinary(ss []*models.Surfacing, st *models.ConversationState) ([]byte, error) {
	w := &journalWriter{b: make([]byte, 0, 256+len(ss)*256)}
	w.uvarint(uint64(len(ss)))
	var prev models.Surfacing
	for i, sf := range ss {
		if sf == nil {
			return nil, fmt.Errorf("surfacings[%d] is missing", i)
		}
		same := i > 0
		w.str(sf.ID, prev.ID, same)
		w.str(sf.Namespace, prev.Namespace, same)
		w.str(sf.ConversationID, prev.ConversationID, same)
		w.str(sf.TurnID, prev.TurnID, same)
		w.str(sf.MemoryID, prev.MemoryID, same)
		w.str(string(sf.Mode), string(prev.Mode), same)
		w.varint(int64(sf.Rank))
		w.f64("score", sf.Score)
		c := sf.Components
		fields := components(&c)
		var mask uint64
		for k, f := range fields {
			if math.Float64bits(*f) != 0 {
				mask |= 1 << k
			}
		}
		if c.Features < 0 {
			w.err = cmp.Or(w.err, fmt.Errorf("components: features %d is negative", c.Features))
		}
		if c.Features > 0 {
			mask |= 1 << featuresBit
		}
		w.uvarint(mask)
		for k, f := range fields {
			if mask&(1<<k) != 0 {
				w.f64("components", *f)
			}
		}
		if c.Features > 0 {
			w.uvarint(uint64(c.Features))
		}
		w.str(sf.ConvType, prev.ConvType, same)
		w.f64("threshold", sf.Threshold)
		w.f64("arm_probability", sf.ArmProb)
		w.str(sf.Variant, prev.Variant, same)
		w.str(sf.Experiment, prev.Experiment, same)
		w.strs(sf.Concepts, prev.Concepts, same)
		w.strs(sf.Terms, prev.Terms, same)
		w.f64("p_use", sf.PUse)
		w.varint(sf.ModelVersion)
		w.f64("latency_ms", sf.LatencyMS)
		w.varint(int64(sf.SettingsVersion))
		w.time(sf.At)
		w.str(string(sf.Outcome), string(prev.Outcome), same)
		w.time(sf.OutcomeAt)
		prev = *sf
	}
	if st == nil {
		w.b = append(w.b, 0)
	} else {
		w.b = append(w.b, 1)
		w.str(st.Namespace, "", false)
		w.str(st.ConversationID, "", false)
		w.str(st.Type, "", false)
		w.varint(int64(st.Turns))
		w.strs(st.RecentTopics, nil, false)
		w.uvarint(uint64(len(st.MessageTimes)))
		for _, t := range st.MessageTimes {
			w.time(t)
		}
		w.strs(st.Participants, nil, false)
		for _, lists := range [][][]string{st.RecentSurfaced, st.RecentTurns} {
			w.uvarint(uint64(len(lists)))
			for _, l := range lists {
				w.strs(l, nil, false)
			}
		}
		w.time(st.UpdatedAt)
	}
	return w.b, w.err
}

// encodeJournalBody is a record's body: the marker and the base64 of its binary form.
func encodeJournalBody(ss []*models.Surfacing, state *models.ConversationState) ([]byte, error) {
	raw, err := encodeJournalBinary(ss, state)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 1+b64.EncodedLen(len(raw)))
	body[0] = journalBinary
	b64.Encode(body[1:], raw)
	return body, nil
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
func decodeJournalBinary(b []byte) (*journalBody, error) {
	r := &journalReader{b: b}
	out := &journalBody{}
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
		fields := components(&sf.Components)
		mask := r.uvarint()
		if mask>>(featuresBit+1) != 0 {
			r.fail()
		}
		for k, f := range fields {
			if mask&(1<<k) != 0 {
				if *f = r.f64(); *f == 0 && !math.Signbit(*f) {
					r.fail() // a zero is left out of the mask: one encoding per value
				}
			}
		}
		if mask&(1<<featuresBit) != 0 {
			v := r.uvarint()
			if v == 0 || v > math.MaxInt32 {
				r.fail() // a zero is left out of the mask
			}
			sf.Components.Features = int(v)
		}
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
