package nlp

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// word is one word of a text as written, with what came before it. Entities and temporal
// phrases need what Tokens throws away: case, offsets and punctuation between words.
type word struct {
	text       string // as written, possessive "'s" removed
	start, end int    // byte offsets of text in the source
	sep        string // the source between the previous word's end (or 0) and start
	initial    bool   // first word of the text, a sentence, a line or a "Speaker:" turn
	possessive bool   // the written word ended in 's or ’s
}

// scanWords splits text into words: runs of letters and digits, keeping an apostrophe or a
// hyphen that joins two such runs ("don't", "Jean-Luc", "8th"). Invalid UTF-8 separates.
func scanWords(text string) []word {
	var out []word
	prevEnd := 0
	isWordRune := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if (r == utf8.RuneError && size <= 1) || !isWordRune(r) {
			i += size
			continue
		}
		start := i
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			if isWordRune(r) {
				i += size
				continue
			}
			if r == '\'' || r == '’' || r == '-' {
				nr, _ := utf8.DecodeRuneInString(text[i+size:])
				if i+size < len(text) && isWordRune(nr) {
					i += size
					continue
				}
			}
			break
		}
		w := word{text: text[start:i], start: start, end: i, sep: text[prevEnd:start]}
		for _, suf := range []string{"'s", "’s", "'S", "’S"} {
			if len(w.text) > len(suf) && strings.HasSuffix(w.text, suf) {
				w.text = w.text[:len(w.text)-len(suf)]
				w.end -= len(suf)
				w.possessive = true
				break
			}
		}
		w.initial = len(out) == 0 || sentenceBreak(w.sep)
		out = append(out, w)
		prevEnd = i
	}
	return out
}

// sentenceBreak reports whether the text between two words ends a sentence or a line, or
// introduces a turn ("Caroline: Hey Mel!").
func sentenceBreak(sep string) bool {
	return strings.ContainsAny(sep, ".!?:;\n\r…")
}

// onlySpaces reports whether sep is non-empty white space, so two words read as one phrase.
func onlySpaces(sep string) bool {
	if sep == "" {
		return false
	}
	for _, r := range sep {
		if !unicode.IsSpace(r) || r == '\n' || r == '\r' {
			return false
		}
	}
	return true
}

// isNumber reports whether a token is digits, optionally an ordinal ("8th", "1st").
func isNumber(tok string) bool {
	digits := 0
	for digits < len(tok) && tok[digits] >= '0' && tok[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return false
	}
	switch strings.ToLower(tok[digits:]) {
	case "", "st", "nd", "rd", "th":
		return true
	}
	return false
}
