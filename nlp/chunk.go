package nlp

import (
	"unicode"
	"unicode/utf8"
)

// Chunking constants from the WhisperEngine seed (docs/design.md#ingest): content longer than
// ChunkThreshold characters is indexed as ChunkSize-character chunks that overlap by
// ChunkOverlap characters, so a phrase cut by one boundary is whole in the next chunk.
// Characters are runes.
const (
	ChunkThreshold = 1000
	ChunkSize      = 500
	ChunkOverlap   = 50
)

// Span is a piece of a text: Text == text[Start:End], Start and End being byte offsets.
type Span struct {
	Text       string
	Start, End int
}

// Chunk splits text into spans of at most size runes that together cover the whole text,
// each next span starting up to overlap runes before the previous one ended.
//
// A span ends at the end of a word (before white space) when one exists in the last half
// of its window, else it is cut mid-word; the next span starts at the first word start at
// or after (end − overlap), so both the cut and the overlap fall on word boundaries
// whenever the text allows. A text of at most size runes is one span; an empty text has
// none. size < 1 means ChunkSize; overlap is clamped to [0, size/2] so every span
// advances at least one rune and the loop always terminates.
func Chunk(text string, size, overlap int) []Span {
	if text == "" {
		return nil
	}
	if size < 1 {
		size = ChunkSize
	}
	overlap = max(0, min(overlap, size/2))

	n := utf8.RuneCountInString(text)
	if n <= size {
		return []Span{{Text: text, Start: 0, End: len(text)}}
	}
	// off[i] is the byte offset of rune i; off[n] == len(text). space[i] says whether rune i
	// is white space (invalid UTF-8 counts as a word rune).
	off := make([]int, 0, n+1)
	space := make([]bool, 0, n)
	for i, r := range text {
		off = append(off, i)
		space = append(space, unicode.IsSpace(r))
	}
	off = append(off, len(text))
	wordEnd := func(i int) bool { return i > 0 && i < n && !space[i-1] && space[i] }
	wordStart := func(i int) bool { return i < n && !space[i] && (i == 0 || space[i-1]) }

	spans := make([]Span, 0, n/max(1, size-overlap)+2)
	start := 0
	for {
		if n-start <= size {
			spans = append(spans, Span{Text: text[off[start]:], Start: off[start], End: len(text)})
			return spans
		}
		end := start + size
		for c := end; c > start+size/2; c-- {
			if wordEnd(c) {
				end = c
				break
			}
		}
		spans = append(spans, Span{Text: text[off[start]:off[end]], Start: off[start], End: off[end]})

		// The next span starts at the first word start in [end-overlap, end], else at the
		// first white space there, else mid-word at end-overlap; never at or before start.
		lo := max(start+1, end-overlap)
		next := -1
		for i := lo; i <= end; i++ {
			if wordStart(i) {
				next = i
				break
			}
		}
		for i := lo; i <= end && next < 0; i++ {
			if wordEnd(i) {
				next = i
			}
		}
		if next < 0 {
			next = lo
		}
		start = next
	}
}
