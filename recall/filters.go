package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
)

// keep applies the filters of DESIGN.md §4.6 and the request's own to a candidate's memory.
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
	for _, ctxSet := range m.IrrelevantContexts {
		if jaccard(ctxSet, in.concepts) >= o.IrrelevantJaccard {
			return false
		}
	}
	return true
}

// recentlySurfaced returns the memories shown in this conversation in its last turns
// (at most keepTurns); ambient recall does not repeat them (DESIGN.md §4.6). The
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
// white space as one space, trimmed). Candidates are grouped by the first dedupeProbe bytes of
// their normalized text, which reads a few hundred bytes of each memory however long it is;
// only memories whose probes collide — duplicates, nearly always — are compared whole. (The
// whole-text key for every candidate cost 106 ms of CPU on a 100-result search over 62 KB
// documents, over the default latency budget.)
func dedupe(list []*candidate) []*candidate {
	seen := make(map[string][]*candidate, len(list))
	out := list[:0]
	for _, c := range list {
		probe := normalizedPrefix(c.mem.Content, dedupeProbe)
		dup := false
		for _, k := range seen[probe] {
			if len(probe) < dedupeProbe || normalizedContent(k.mem.Content) == normalizedContent(c.mem.Content) {
				dup = true // a probe shorter than dedupeProbe is the whole normalized text
				break
			}
		}
		if dup {
			continue
		}
		seen[probe] = append(seen[probe], c)
		out = append(out, c)
	}
	return out
}

// dedupeProbe is how many bytes of normalized text group candidates before a whole comparison.
const dedupeProbe = 256

// normalizedContent is the key two memories must share to be duplicates.
func normalizedContent(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// normalizedPrefix returns the first n bytes (or a little more, to finish a rune) of
// normalizedContent(s), reading only as much of s as that needs.
func normalizedPrefix(s string, n int) string {
	var b strings.Builder
	b.Grow(n + utf8.UTFMax)
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if b.Len() >= n {
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r < utf8.RuneSelf { // ASCII, without a string a rune
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return b.String()
}
