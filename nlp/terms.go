// Package nlp is Salience's text analysis: tokenizing, stemming, stop words, concept and
// entity extraction, temporal phrases and chunking. It is pure: its only state beyond
// read-only tables is a bounded memo of Porter stems, which changes no result.
package nlp

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
)

// Tokens splits text into lower-cased word tokens: runs of letters and digits, with inner
// apostrophes dropped ("don't" → "dont", "Caroline's" → "caroline" + "s" is avoided by
// stripping a trailing possessive). Invalid UTF-8 is treated as separators.
//
// A token already lower-case and without apostrophes — most of them — is a substring of
// text, not a copy: BM25 indexing and the local embedder tokenize every memory.
func Tokens(text string) []string {
	out := make([]string, 0, len(text)/5+1)
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			if asciiWord[c] == 0 {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(text[i:]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += size // separators, invalid UTF-8 included
			continue
		}
		start, simple := i, true
	word:
		for i < len(text) {
			r, size := rune(text[i]), 1
			if r < utf8.RuneSelf { // ASCII, most text: a table, not the Unicode tables
				switch asciiWord[r] {
				case asciiLower:
					i++
					continue
				case asciiUpper:
					simple = false
					i++
					continue
				}
			} else {
				r, size = utf8.DecodeRuneInString(text[i:])
				if r == utf8.RuneError && size <= 1 {
					break
				}
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					simple = simple && unicode.ToLower(r) == r
					i += size
					continue
				}
			}
			// An apostrophe inside a word: keep it only if a letter follows.
			if (r == '\'' || r == '’') && i+size < len(text) {
				if nr, _ := utf8.DecodeRuneInString(text[i+size:]); unicode.IsLetter(nr) {
					simple = false
					i += size
					continue word
				}
			}
			break
		}
		if simple {
			out = append(out, text[start:i])
			continue
		}
		if w := foldToken(text[start:i]); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// asciiWord classes the ASCII bytes for Tokens: what unicode.IsLetter, IsDigit and ToLower
// say of them.
var asciiWord = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = asciiLower
		case c >= 'A' && c <= 'Z':
			t[c] = asciiUpper
		}
	}
	return t
}()

// The classes of asciiWord; 0 is a separator.
const (
	asciiLower = 1 + iota // a lower-case letter or a digit: a word as it is
	asciiUpper            // an upper-case letter: a word to fold
)

// foldToken lower-cases a token with inner apostrophes, drops a trailing possessive and
// then the other apostrophes.
func foldToken(tok string) string {
	if !strings.ContainsAny(tok, "'’") { // a capitalised word: strings.ToLower maps as below
		return strings.ToLower(tok)
	}
	var b strings.Builder
	b.Grow(len(tok))
	for _, r := range tok {
		if r == '’' || r == '\'' {
			b.WriteByte('\'')
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	w := strings.TrimSuffix(b.String(), "'s")
	return strings.ReplaceAll(w, "'", "")
}

// Stem returns the Porter stem of a lower-case token. Tokens that are not plain ASCII
// letters are returned unchanged.
func Stem(tok string) string {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 'a' || c > 'z' {
			return tok
		}
	}
	if len(tok) <= 2 {
		return tok
	}
	if s, ok := stems.lookup(tok); ok {
		return s
	}
	s := porter.StemString(tok)
	stems.add(tok, s)
	return s
}

// stems memoizes Stem: the Porter stemmer costs about ten times a map lookup, and recall
// stems the text of every candidate it checks for the query's phrases, indexing that of
// every memory. A language's vocabulary is mostly a few tens of thousands of words; past
// stemsMax (made-up tokens, ids, numbers) words are stemmed afresh each time.
var stems stemMemo

// stemMemo is a memo read without a lock: lookups read a published map that is never
// written again, so concurrent recalls share no written cache line (a read lock's counter,
// bounced between cores, made Terms on two cores cost each nearly twice what it cost on
// one). Stems made since are kept under a mutex and published — copied into a new map with
// the published ones — once they are a quarter as many, or once lookups have found them
// there an eighth as often as there are published stems: the copying is paid for by the
// stems made and the locked lookups it ends, a few copies of each entry over the memo's
// life. (A sync.Map cost more than it saved while new words kept arriving: each store
// after a promotion copies its whole read-only map.)
type stemMemo struct {
	published atomic.Pointer[map[string]string] // token → stem; never written once stored
	full      atomic.Bool                       // stemsMax entries published: nothing more is kept
	mu        sync.Mutex
	fresh     map[string]string // stems not yet published, under mu
	hits      int               // lookups answered from fresh since the last publish, under mu
}

// lookup returns tok's memoized stem.
func (m *stemMemo) lookup(tok string) (string, bool) {
	p := m.published.Load()
	if p != nil {
		if s, ok := (*p)[tok]; ok {
			return s, true
		}
	}
	if m.full.Load() {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.fresh[tok]
	if ok {
		m.hits++
		if p == nil || m.hits > len(*p)/8 {
			m.publishLocked()
		}
	}
	return s, ok
}

// add memoizes tok's stem s, unless the memo is full.
func (m *stemMemo) add(tok, s string) {
	if m.full.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fresh == nil {
		m.fresh = map[string]string{}
	}
	// Copies: tok may be a slice of a whole memory's text (see Tokens), which the memo
	// must not keep alive.
	m.fresh[strings.Clone(tok)] = strings.Clone(s)
	pub := 0
	if p := m.published.Load(); p != nil {
		pub = len(*p)
	}
	if len(m.fresh) >= max(stemsPublish, pub/4) || pub+len(m.fresh) >= stemsMax {
		m.publishLocked()
	}
}

// publishLocked publishes the fresh stems with the published ones; m.mu is held.
func (m *stemMemo) publishLocked() {
	var pub map[string]string
	if p := m.published.Load(); p != nil {
		pub = *p
	}
	next := make(map[string]string, len(pub)+len(m.fresh))
	for k, v := range pub {
		next[k] = v
	}
	for k, v := range m.fresh {
		next[k] = v
	}
	m.published.Store(&next)
	m.fresh, m.hits = nil, 0
	if len(next) >= stemsMax {
		m.full.Store(true)
	}
}

// stemsPublish is the fewest fresh stems add publishes at once.
const stemsPublish = 256

const stemsMax = 1 << 17

// Terms analyses text for the BM25 index and its queries: tokens, stop words removed,
// Porter-stemmed. Index and query must both use it.
func Terms(text string) []string {
	toks := Tokens(text)
	out := toks[:0]
	for _, t := range toks {
		if IsStopWord(t) {
			continue
		}
		out = append(out, Stem(t))
	}
	return out
}

// PairsFound counts the pairs that occur as adjacent elements of seq, each once, marking
// them in found (cleared first; len(found) ≥ len(pairs)). It is the phrase check's rule:
// recall applies it to a text's analysed terms, the text index to their ids.
func PairsFound[T comparable](seq []T, pairs [][2]T, found []bool) int {
	found = found[:len(pairs)]
	clear(found)
	n := 0
	for i := 0; i+1 < len(seq); i++ {
		a, b := seq[i], seq[i+1]
		for j, pr := range pairs {
			if !found[j] && pr[0] == a && pr[1] == b {
				found[j] = true
				n++
			}
		}
	}
	return n
}
