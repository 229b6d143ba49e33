package embed

import (
	"strings"
	"unicode"
	"unicode/utf8"

	unorm "golang.org/x/text/unicode/norm"
)

// WordPiece is BERT's uncased tokenizer as all-MiniLM-L6-v2's tokenizer.json defines it,
// so the static table's rows line up with the model's tokens:
//   - special tokens written literally in the text ("[CLS]", "[SEP]", …) are matched first,
//     as the model's tokenizer does with its added tokens;
//   - the normalizer drops NUL, U+FFFD and control/format characters (Unicode C*, except
//     tab, newline and carriage return), turns whitespace into spaces, puts spaces around
//     CJK ideographs, strips accents (NFD, then nonspacing marks removed) and lowercases;
//   - words are split on whitespace and around each punctuation character (ASCII
//     punctuation and Unicode P*);
//   - each word becomes the longest vocabulary prefix, then the longest "##"-prefixed
//     continuation, and so on; a word with no such split, or longer than 100 characters,
//     is one [UNK].
//
// It is checked against the model's own tokenizer on a few hundred strings
// (testdata/wordpiece_golden.json, written by scripts/embedder/distill.py golden).
type WordPiece struct {
	vocab   map[string]int32 // every token as written
	cont    map[string]int32 // the "##" tokens without their prefix, for allocation-free lookups
	unk     int32
	special []string // literal special tokens, matched before normalization
	longest int      // runes in the longest token (without "##"): no longer piece is tried
}

// maxWordChars is the model's max_input_chars_per_word: a longer word is one [UNK].
const maxWordChars = 100

// NewWordPiece builds a tokenizer from a vocabulary, one token a line, ids from 0 in order.
func NewWordPiece(vocab string) *WordPiece {
	w := &WordPiece{vocab: make(map[string]int32, 32768), cont: make(map[string]int32, 8192), unk: -1}
	for i, tok := range strings.Split(strings.TrimRight(vocab, "\n"), "\n") {
		if _, dup := w.vocab[tok]; !dup {
			w.vocab[tok] = int32(i)
			if rest, ok := strings.CutPrefix(tok, "##"); ok {
				w.cont[rest] = int32(i)
			}
		}
		w.longest = max(w.longest, utf8.RuneCountInString(strings.TrimPrefix(tok, "##")))
	}
	if id, ok := w.vocab["[UNK]"]; ok {
		w.unk = id
	}
	for _, s := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		if _, ok := w.vocab[s]; ok {
			w.special = append(w.special, s)
		}
	}
	return w
}

// Unk returns the id of [UNK], or -1 when the vocabulary has none.
func (w *WordPiece) Unk() int32 { return w.unk }

// Tokenize returns the token ids of text, without [CLS] and [SEP] around them.
func (w *WordPiece) Tokenize(text string) []int32 {
	var ids []int32
	for text != "" {
		i, tok := w.nextSpecial(text)
		ids = w.appendPlain(ids, text[:i])
		if tok == "" {
			break
		}
		ids = append(ids, w.vocab[tok])
		text = text[i+len(tok):]
	}
	return ids
}

// nextSpecial finds the first literal special token in s: its offset and text, or
// (len(s), "") when there is none.
func (w *WordPiece) nextSpecial(s string) (int, string) {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '[')
		if i < 0 {
			return len(s), ""
		}
		off += i
		for _, tok := range w.special {
			if strings.HasPrefix(s[off:], tok) {
				return off, tok
			}
		}
		off++
	}
}

// appendPlain tokenizes text that holds no special token.
func (w *WordPiece) appendPlain(ids []int32, text string) []int32 {
	var word []rune
	flush := func() {
		if len(word) > 0 {
			ids = w.appendWord(ids, word)
			word = word[:0]
		}
	}
	for _, r := range normalizeBert(text) {
		switch {
		case r == ' ':
			flush()
		case isBertPunct(r):
			flush()
			ids = w.appendWord(ids, []rune{r})
		default:
			word = append(word, r)
		}
	}
	flush()
	return ids
}

// appendWord splits one word greedily, longest match first.
func (w *WordPiece) appendWord(ids []int32, word []rune) []int32 {
	if len(word) > maxWordChars {
		return append(ids, w.unk)
	}
	s := string(word)
	at := make([]int, 0, len(word)+1) // byte offset of each rune, and the end
	for i := range s {
		at = append(at, i)
	}
	at = append(at, len(s))
	n := len(ids)
	for start := 0; start < len(word); {
		dict := w.vocab
		if start > 0 {
			dict = w.cont
		}
		found := int32(-1)
		end := min(len(word), start+w.longest)
		for ; end > start; end-- {
			if id, ok := dict[s[at[start]:at[end]]]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return append(ids[:n], w.unk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// normalizeBert is the BERT normalizer of an uncased model: clean text, space out CJK
// ideographs, strip accents, lowercase. Whitespace comes out as single ' ' runes.
func normalizeBert(text string) []rune {
	out := make([]rune, 0, len(text))
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isBertControl(r):
		case isBertSpace(r):
			out = append(out, ' ')
		case isCJK(r):
			out = append(out, ' ', r, ' ')
		default:
			out = append(out, r)
		}
	}
	var b []rune
	for _, r := range unorm.NFD.String(string(out)) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b = append(b, unicode.ToLower(r))
	}
	return b
}

// isBertControl: Unicode "other" (Cc, Cf, Co, Cs; unassigned too), except tab, newline and
// carriage return, which count as whitespace.
func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !isAssigned(r)
}

// isAssigned reports whether r has a Unicode general category (Cn is "unassigned").
func isAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

func isBertSpace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

// isBertPunct: ASCII punctuation (which includes symbols such as $ + < = > ^ ` | ~) or
// any Unicode punctuation.
func isBertPunct(r rune) bool {
	if r < 0x80 {
		return r > ' ' && r < 0x7f && !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// isCJK: the CJK Unified Ideograph blocks BERT spaces out (not Hiragana, Katakana or Hangul).
func isCJK(r rune) bool {
	return 0x4E00 <= r && r <= 0x9FFF || 0x3400 <= r && r <= 0x4DBF || 0x20000 <= r && r <= 0x2A6DF ||
		0x2A700 <= r && r <= 0x2B73F || 0x2B740 <= r && r <= 0x2B81F || 0x2B920 <= r && r <= 0x2CEAF ||
		0xF900 <= r && r <= 0xFAFF || 0x2F800 <= r && r <= 0x2FA1F
}
