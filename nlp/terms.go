// Package nlp is Salience's text analysis: tokenizing, stemming, stop words, concept and
// entity extraction, temporal phrases and chunking. It is pure and has no state beyond
// read-only tables.
package nlp

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
)

// Tokens splits text into lower-cased word tokens: runs of letters and digits, with inner
// apostrophes dropped ("don't" → "dont", "Caroline's" → "caroline" + "s" is avoided by
// stripping a trailing possessive). Invalid UTF-8 is treated as separators.
func Tokens(text string) []string {
	out := make([]string, 0, len(text)/5+1)
	start := -1
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			w := b.String()
			w = strings.TrimSuffix(w, "'s")
			w = strings.ReplaceAll(w, "'", "")
			if w != "" {
				out = append(out, w)
			}
			b.Reset()
		}
		start = -1
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '’') && b.Len() > 0 && i+size < len(text):
			// An apostrophe inside a word: keep it only if a letter follows.
			nr, _ := utf8.DecodeRuneInString(text[i+size:])
			if unicode.IsLetter(nr) {
				b.WriteByte('\'')
			} else {
				flush()
			}
		default:
			flush()
		}
		i += size
	}
	flush()
	return out
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
	return porter.StemString(tok)
}

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
