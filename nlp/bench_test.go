package nlp

import (
	"strings"
	"testing"
)

// turn is a typical chat message (LoCoMo-like).
const turn = "Hey Caroline! I went to the LGBTQ support group in New York yesterday and it was " +
	"so powerful. Melanie painted a sunrise over the lake last year; the kids want to go camping next month."

func BenchmarkExtractConcepts(b *testing.B) {
	known := func(p string) bool { return p == "support group" || p == "camping" }
	for _, bc := range []struct {
		name string
		text string
	}{
		{"turn", turn},
		{"64KiB", strings.Repeat(turn+" ", 64<<10/(len(turn)+1))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				ExtractConcepts(bc.text, known, 16)
			}
		})
	}
}

func BenchmarkTemporal(b *testing.B) {
	b.SetBytes(int64(len(turn)))
	b.ReportAllocs()
	for b.Loop() {
		Temporal(turn, wednesday)
	}
}

func BenchmarkChunk64KiB(b *testing.B) {
	text := strings.Repeat(turn+" ", 64<<10/(len(turn)+1))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Chunk(text, ChunkSize, ChunkOverlap)
	}
}
