package memindex

import (
	"encoding/binary"
	"math"
	"time"
	"unsafe"

	"github.com/salience-ai/salience/models"
)

// packed is one cached memory or chunk, encoded into a single byte slice. A *models.Memory
// holds some twenty pointers (strings, lists, times), and the garbage collector traces every
// one of them, for every cached memory, at every cycle: at 100,000 memories the cache was
// four fifths of a collection's marking (a forced collection took 64 ms with it and 11.5 ms
// without), and recalls that ran while a collection marked made the 100k p99. A byte slice
// holds no pointer, so the collector only marks it.
//
// A packed memory is never changed: a write packs a new one. Unpacking returns a fresh
// Memory whose strings share the packed bytes, so nothing long-lived may keep one of them
// without copying it: it would keep alive a row the next update replaces (View hands out
// the ids it was asked with for that reason; the soak's resident set is the test).
type packed []byte

// pack encodes m. Times go through models.EncodeTime, as the stores keep them (so they come
// back in UTC); a nil list and an empty one stay distinct.
func pack(m *models.Memory) packed {
	b := make([]byte, 0, 96+len(m.Content)+len(m.ID)+len(m.Namespace)+len(m.Source.ConversationID))
	b = putStr(b, m.ID)
	b = putStr(b, m.Namespace)
	b = putStr(b, string(m.Kind))
	b = putStr(b, m.Content)
	b = putTime(b, m.CreatedAt)
	b = putTime(b, m.ValidAt)
	b = putTime(b, m.InvalidAt)
	b = putStr(b, m.Source.ConversationID)
	b = putStr(b, m.Source.MessageID)
	b = putStr(b, m.Source.Speaker)
	b = putStr(b, string(m.Source.Role))
	b = putFloat(b, m.Importance)
	b = putStrs(b, m.Domains)
	b = putStrs(b, m.Triggers)
	b = putStrs(b, m.Concepts)
	if m.Triple == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = putStr(b, m.Triple.Subject)
		b = putStr(b, m.Triple.Predicate)
		b = putStr(b, m.Triple.Object)
	}
	b = putBool(b, m.Sensitive)
	b = putStr(b, m.ParentID)
	b = binary.AppendVarint(b, int64(m.ChunkIndex))
	b = binary.AppendVarint(b, int64(m.ChunkCount))
	b = putFloat(b, m.Confidence)
	b = binary.AppendVarint(b, int64(m.UsageCount))
	b = putTime(b, m.LastUsed)
	b = binary.AppendVarint(b, int64(m.SurfaceCount))
	b = putTime(b, m.LastSurfaced)
	b = putFloat(b, m.RecentDismissals)
	b = putCount(b, m.IrrelevantContexts == nil, len(m.IrrelevantContexts))
	for _, c := range m.IrrelevantContexts {
		b = putStrs(b, c)
	}
	b = putCount(b, m.Learned == nil, len(m.Learned))
	for _, t := range m.Learned {
		b = putStr(b, t.Term)
		b = putFloat(b, t.Weight)
		b = putTime(b, t.At)
	}
	s := &m.Schedule
	b = putFloat(b, s.Stability)
	b = putFloat(b, s.Difficulty)
	b = putTime(b, s.LastReview)
	b = putTime(b, s.Due)
	b = binary.AppendVarint(b, int64(s.Reps))
	b = binary.AppendVarint(b, int64(s.Lapses))
	b = putTime(b, s.CooldownTo)
	b = putCount(b, m.Embedding == nil, len(m.Embedding))
	for _, f := range m.Embedding {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return packed(b)
}

// memory decodes p into a new Memory.
func (p packed) memory() *models.Memory {
	var u unpacker
	return u.memory(p)
}

// unpacker unpacks the memories of one read, carving their structs and string lists from
// shared blocks: a read of a hundred memories makes a few allocations, not a few hundred.
type unpacker struct {
	mems []models.Memory // room for the next memories
	strs []string        // room for the next lists
	r    reader
}

// newUnpacker returns an unpacker with room for n memories.
func newUnpacker(n int) *unpacker { return &unpacker{mems: make([]models.Memory, 0, n)} }

// memory decodes p, in pack's order.
func (u *unpacker) memory(p packed) *models.Memory {
	if len(u.mems) == cap(u.mems) {
		u.mems = make([]models.Memory, 0, 1)
	}
	u.mems = u.mems[:len(u.mems)+1]
	m := &u.mems[len(u.mems)-1]
	u.r = reader{b: p, u: u}
	r := &u.r
	m.ID = r.str()
	m.Namespace = r.str()
	m.Kind = models.Kind(r.str())
	m.Content = r.str()
	m.CreatedAt = r.time()
	m.ValidAt = r.time()
	m.InvalidAt = r.time()
	m.Source.ConversationID = r.str()
	m.Source.MessageID = r.str()
	m.Source.Speaker = r.str()
	m.Source.Role = models.Role(r.str())
	m.Importance = r.float()
	m.Domains = r.strs()
	m.Triggers = r.strs()
	m.Concepts = r.strs()
	if r.byte() == 1 {
		m.Triple = &models.Triple{Subject: r.str(), Predicate: r.str(), Object: r.str()}
	}
	m.Sensitive = r.byte() == 1
	m.ParentID = r.str()
	m.ChunkIndex = int(r.varint())
	m.ChunkCount = int(r.varint())
	m.Confidence = r.float()
	m.UsageCount = int(r.varint())
	m.LastUsed = r.time()
	m.SurfaceCount = int(r.varint())
	m.LastSurfaced = r.time()
	m.RecentDismissals = r.float()
	if n, ok := r.count(); ok {
		m.IrrelevantContexts = make([][]string, n)
		for i := range n {
			m.IrrelevantContexts[i] = r.strs()
		}
	}
	if n, ok := r.count(); ok {
		m.Learned = make([]models.LearnedTerm, n)
		for i := range n {
			m.Learned[i] = models.LearnedTerm{Term: r.str(), Weight: r.float(), At: r.time()}
		}
	}
	s := &m.Schedule
	s.Stability = r.float()
	s.Difficulty = r.float()
	s.LastReview = r.time()
	s.Due = r.time()
	s.Reps = int(r.varint())
	s.Lapses = int(r.varint())
	s.CooldownTo = r.time()
	if n, ok := r.count(); ok {
		m.Embedding = make([]float32, n)
		for i := range n {
			m.Embedding[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.next(4)))
		}
	}
	return m
}

func putStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// putCount writes a list's length, 0 for a nil list and n+1 otherwise.
func putCount(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

func putStrs(b []byte, ss []string) []byte {
	b = putCount(b, ss == nil, len(ss))
	for _, s := range ss {
		b = putStr(b, s)
	}
	return b
}

func putFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func putTime(b []byte, t time.Time) []byte {
	return binary.AppendVarint(b, models.EncodeTime(t))
}

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// reader reads what pack wrote; it trusts it (the bytes never leave the process).
type reader struct {
	b []byte
	i int
	u *unpacker
}

func (r *reader) next(n int) []byte {
	s := r.b[r.i : r.i+n]
	r.i += n
	return s
}

func (r *reader) byte() byte { return r.next(1)[0] }

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.i:])
	r.i += n
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b[r.i:])
	r.i += n
	return v
}

// str returns the next string, sharing the packed bytes (which are never changed).
func (r *reader) str() string {
	n := int(r.uvarint())
	if n == 0 {
		return ""
	}
	return unsafe.String(&r.next(n)[0], n)
}

// count reads putCount's length; false for a nil list.
func (r *reader) count() (int, bool) {
	n := r.uvarint()
	if n == 0 {
		return 0, false
	}
	return int(n - 1), true
}

func (r *reader) strs() []string {
	n, ok := r.count()
	if !ok {
		return nil
	}
	if n == 0 {
		return []string{}
	}
	// Carved from the unpacker's block, capped so an append by the caller copies.
	u := r.u
	if n > cap(u.strs)-len(u.strs) {
		u.strs = make([]string, 0, max(n, 64))
	}
	k := len(u.strs)
	u.strs = u.strs[:k+n]
	out := u.strs[k : k+n : k+n]
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *reader) time() time.Time { return models.DecodeTime(r.varint()) }

func (r *reader) float() float64 { return math.Float64frombits(binary.LittleEndian.Uint64(r.next(8))) }
