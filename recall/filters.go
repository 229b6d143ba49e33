package recall

import (
	"bytes"
	"hash/maphash"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
)

// keep applies the filters of docs/design.md#filters and the request's own to a candidate's memory.
func keep(o Options, req *Request, in *intake, m *models.Memory, recent map[string]bool) bool {
	if !req.IncludeInvalid && !m.ValidNow(req.Now) {
		return false
	}
	if m.Sensitive && (req.Mode == models.ModeAmbient || req.Mode == models.ModePredict) {
		return false
	}
	if len(req.Kinds) > 0 && !containsKind(req.Kinds, m.Kind) {
		return false
	}
	t := m.Time()
	if (!req.Since.IsZero() && t.Before(req.Since)) || (!req.Until.IsZero() && !t.Before(req.Until)) {
		return false
	}
	if recent[m.ID] {
		return false
	}
	if req.Mode == models.ModeAmbient && in.inContext(m.Content) {
		return false
	}
	for _, ctxSet := range m.IrrelevantContexts {
		if jaccard(ctxSet, in.concepts) >= o.IrrelevantJaccard {
			return false
		}
	}
	return true
}

// recentlySurfaced returns the memories shown in this conversation in its last turns
// (at most keepTurns); ambient recall does not repeat them (docs/design.md#filters). The
// conversation state carries them, so no log is read.
func recentlySurfaced(mode models.Mode, st *models.ConversationState, keepTurns int) map[string]bool {
	if mode != models.ModeAmbient || st == nil {
		return nil
	}
	out := map[string]bool{}
	turns := st.RecentSurfaced
	if len(turns) > keepTurns {
		turns = turns[len(turns)-keepTurns:]
	}
	for _, turn := range turns {
		for _, id := range turn {
			out[id] = true
		}
	}
	return out
}

func containsKind(ks []models.Kind, k models.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// jaccard is |a∩b| / |a∪b| of two concept sets.
func jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	set := make(map[string]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	inter, union := 0, len(set)
	seen := map[string]bool{}
	for _, y := range b {
		if seen[y] {
			continue
		}
		seen[y] = true
		if set[y] {
			inter++
		} else {
			union++
		}
	}
	return float64(inter) / float64(union)
}

// dedupe keeps the first of memories with the same normalized content (lower case, runs of
// white space as one space, trimmed). See deduper.
func dedupe(list []*candidate) []*candidate {
	d := newDeduper(len(list))
	out := list[:0]
	for _, c := range list {
		if d.keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// deduper tells the first of memories with the same normalized content from the later ones.
// Candidates are grouped by the first dedupeProbe bytes of their normalized text, which reads
// a few hundred bytes of each memory however long it is; only memories whose probes collide
// — duplicates, nearly always — are compared whole. (The whole-text key for every candidate
// cost 106 ms of CPU on a 100-result search over 62 KB documents, over the default latency
// budget.) The probes are written back to back into one buffer and grouped by their hash,
// so a list costs a few allocations, not one a candidate.
type deduper struct {
	buf    []byte
	probes []probe
	byHash map[uint64]int32 // hash → the latest probe of that hash
	seed   maphash.Seed
}

// probe is a kept candidate's probe.
type probe struct {
	c          *candidate
	start, end int   // the probe's bytes in buf
	next       int32 // the previous probe of the same hash, -1 for none
}

// newDeduper returns a deduper sized for about n candidates.
func newDeduper(n int) *deduper {
	return &deduper{buf: make([]byte, 0, 64*n), probes: make([]probe, 0, n), byHash: make(map[uint64]int32, n), seed: maphash.MakeSeed()}
}

// keep reports whether c is the first of its normalized content among the candidates
// offered so far, in order.
func (d *deduper) keep(c *candidate) bool {
	start := len(d.buf)
	d.buf = appendNormalizedPrefix(d.buf, c.mem.Content, dedupeProbe)
	p := d.buf[start:]
	h := maphash.Bytes(d.seed, p)
	head, ok := d.byHash[h]
	if !ok {
		head = -1
	}
	for i := head; i >= 0; i = d.probes[i].next {
		k := d.probes[i]
		if !bytes.Equal(d.buf[k.start:k.end], p) {
			continue // a hash collision
		}
		// A probe shorter than dedupeProbe is the whole normalized text.
		if len(p) < dedupeProbe || normalizedContent(k.c.mem.Content) == normalizedContent(c.mem.Content) {
			d.buf = d.buf[:start]
			return false
		}
	}
	d.byHash[h] = int32(len(d.probes))
	d.probes = append(d.probes, probe{c: c, start: start, end: len(d.buf), next: head})
	return true
}

// dedupeProbe is how many bytes of normalized text group candidates before a whole comparison.
const dedupeProbe = 256

// normalizedContent is the key two memories must share to be duplicates.
func normalizedContent(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports as space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// appendNormalizedPrefix appends to dst the first n bytes (or a little more, to finish a
// rune) of normalizedContent(s), reading only as much of s as that needs. ASCII, nearly
// all text, takes a byte at a time; a multi-byte rune is lowered as strings.ToLower does.
func appendNormalizedPrefix(dst []byte, s string, n int) []byte {
	start := len(dst)
	space := false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			if asciiSpace[c] {
				space = len(dst) > start
				continue
			}
			if len(dst)-start >= n {
				break
			}
			if space {
				dst = append(dst, ' ')
				space = false
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:]) // invalid UTF-8: RuneError, 1, as range does
		i += size
		if unicode.IsSpace(r) {
			space = len(dst) > start
			continue
		}
		if len(dst)-start >= n {
			break
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}
