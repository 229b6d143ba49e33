package nlp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// checkChunks asserts Chunk's contract: spans in order, non-empty, Text == text[Start:End],
// at most size runes, each next one starting after the previous start and no later than
// its end (so they overlap or touch), the first at 0 and the last at len(text).
func checkChunks(t *testing.T, text string, size, overlap int, spans []Span) {
	t.Helper()
	if text == "" {
		if len(spans) != 0 {
			t.Fatalf("Chunk(\"\") = %d spans, want 0", len(spans))
		}
		return
	}
	if size < 1 {
		size = ChunkSize
	}
	if len(spans) == 0 {
		t.Fatalf("Chunk(%q) returned no spans", text)
	}
	if spans[0].Start != 0 {
		t.Errorf("first span starts at %d, want 0", spans[0].Start)
	}
	if last := spans[len(spans)-1]; last.End != len(text) {
		t.Errorf("last span ends at %d, want %d", last.End, len(text))
	}
	for i, s := range spans {
		if s.Start >= s.End {
			t.Fatalf("span %d is empty: [%d,%d)", i, s.Start, s.End)
		}
		if s.Text != text[s.Start:s.End] {
			t.Fatalf("span %d text %q != text[%d:%d]", i, s.Text, s.Start, s.End)
		}
		if n := utf8.RuneCountInString(s.Text); n > size {
			t.Fatalf("span %d has %d runes, more than %d", i, n, size)
		}
		if i > 0 {
			p := spans[i-1]
			if s.Start <= p.Start || s.Start > p.End {
				t.Fatalf("span %d [%d,%d) does not follow span %d [%d,%d)", i, s.Start, s.End, i-1, p.Start, p.End)
			}
			if s.End <= p.End {
				t.Fatalf("span %d ends at %d, not after span %d's end %d", i, s.End, i-1, p.End)
			}
		}
	}
}

func TestChunkLongText(t *testing.T) {
	words := strings.Fields("the quick brown fox jumps over a lazy dog while bees hum in the old cannery garden")
	var b strings.Builder
	for i := 0; b.Len() < 4400; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	text := b.String()[:4400]
	spans := Chunk(text, ChunkSize, ChunkOverlap)
	checkChunks(t, text, ChunkSize, ChunkOverlap, spans)
	if len(spans) < 9 || len(spans) > 11 {
		t.Errorf("got %d chunks for 4,400 characters, want about 10", len(spans))
	}
	for i, s := range spans {
		// Every cut falls on a word boundary: a span never starts or ends inside a word.
		if s.Start > 0 && text[s.Start-1] != ' ' {
			t.Errorf("span %d starts mid-word at %d: %q", i, s.Start, text[s.Start-1:s.Start+5])
		}
		if s.End < len(text) && text[s.End] != ' ' {
			t.Errorf("span %d ends mid-word at %d", i, s.End)
		}
		if i > 0 {
			ov := spans[i-1].End - s.Start
			if ov <= 0 || ov > ChunkOverlap {
				t.Errorf("spans %d and %d overlap by %d, want 1..%d", i-1, i, ov, ChunkOverlap)
			}
		}
		if i < len(spans)-1 && len(s.Text) < ChunkSize/2 {
			t.Errorf("span %d is only %d bytes", i, len(s.Text))
		}
	}
}

func TestChunkCases(t *testing.T) {
	for _, tc := range []struct {
		name          string
		text          string
		size, overlap int
		want          []string
	}{
		{"empty", "", 10, 2, nil},
		{"short", "hello world", 20, 5, []string{"hello world"}},
		{"exact", "abcdefghij", 10, 2, []string{"abcdefghij"}},
		{"words", "aaa bbb ccc ddd", 8, 4, []string{"aaa bbb", "bbb ccc", "ccc ddd"}},
		{"no overlap", "aaa bbb ccc ddd", 8, 0, []string{"aaa bbb", " ccc ddd"}},
		{"one huge word", "abcdefghijkl", 5, 2, []string{"abcde", "defgh", "ghijk", "jkl"}},
		{"overlap >= size", "abcdefgh", 4, 9, []string{"abcd", "cdef", "efgh"}},
		{"size 1", "abc", 1, 1, []string{"a", "b", "c"}},
		{"runes not bytes", "ééé ààà ççç", 7, 3, []string{"ééé ààà", "ààà ççç"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := Chunk(tc.text, tc.size, tc.overlap)
			checkChunks(t, tc.text, tc.size, tc.overlap, spans)
			var got []string
			for _, s := range spans {
				got = append(got, s.Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("Chunk(%q, %d, %d) = %q, want %q", tc.text, tc.size, tc.overlap, got, tc.want)
			}
		})
	}
}
