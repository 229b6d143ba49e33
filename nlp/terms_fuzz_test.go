package nlp

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// tokensReference is the first, simpler Tokens (a strings.Builder per token). Tokens now
// returns substrings where it can; FuzzTokens proves the two agree on every input.
func tokensReference(text string) []string {
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

func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"", "Where are the bees kept?", "don't STOP running", "Caroline's adoption", "it's",
		"\xff\xfe bad", "İstanbul ǅemal ΣΑΣ", "it's '' ’s 's x'", "rock'n'roll O’Neil’S",
		"a'1 b'\xff c'", "ǅ", strings.Repeat("ab", 40),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, want := Tokens(text), tokensReference(text)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Tokens(%q) = %q, reference %q", text, got, want)
		}
	})
}

func BenchmarkTerms(b *testing.B) {
	text := "Caroline went to the LGBTQ support group yesterday and said it was powerful; " +
		"Melanie painted a sunrise over the lake last year, and the kids want to go camping " +
		"in the mountains with their dog next month."
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Terms(text)
	}
}

func BenchmarkTermsParallel(b *testing.B) {
	text := "Caroline went to the LGBTQ support group yesterday and said it was powerful; " +
		"Melanie painted a sunrise over the lake last year, and the kids want to go camping " +
		"in the mountains with their dog next month."
	b.SetBytes(int64(len(text)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			Terms(text)
		}
	})
}
