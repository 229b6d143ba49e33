package eval

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
)

// Synth generates a reproducible synthetic corpus for benchmarks: short chat-like memories
// over a Zipf-distributed vocabulary with a few hundred named entities, so that both common
// and rare words occur as in real text.
type Synth struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	words []string
	names []string
}

// NewSynth returns a generator seeded with seed.
func NewSynth(seed uint64) *Synth {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := &Synth{rng: rng}
	syll := []string{"ka", "lo", "mi", "ra", "ten", "vo", "shi", "nu", "pel", "dar", "qui", "bex", "tor", "fen", "gla", "sum", "ori", "zan", "wik", "hul"}
	seen := map[string]bool{}
	for len(s.words) < 20000 {
		n := 2 + rng.IntN(3)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			s.words = append(s.words, w)
		}
	}
	for i := 0; i < 300; i++ {
		w := s.words[rng.IntN(len(s.words))]
		s.names = append(s.names, strings.ToUpper(w[:1])+w[1:])
	}
	s.zipf = rand.NewZipf(rng, 1.07, 2, uint64(len(s.words)-1))
	return s
}

// Word returns one vocabulary word, Zipf-distributed.
func (s *Synth) Word() string { return s.words[s.zipf.Uint64()] }

// functionWords are the words between the content words of a chat turn.
var functionWords = []string{"the", "a", "to", "and", "I", "it", "was", "of", "in", "that", "my",
	"you", "so", "we", "with", "for", "on", "is", "at", "but", "just", "have", "had", "be", "this"}

// Memory returns the i-th synthetic memory, dated within the year before now. Its shape
// follows LoCoMo's chat turns (27 words, 8.9 extracted concepts a turn): a speaker, 3–14
// content words, and about as many function words between them.
func (s *Synth) Memory(i int, now time.Time) *models.Memory {
	n := 3 + s.rng.IntN(12)
	parts := make([]string, 0, 2*n+2)
	parts = append(parts, s.names[s.rng.IntN(len(s.names))]+":")
	for j := 0; j < n; j++ {
		for k := s.rng.IntN(4); k > 0; k-- {
			parts = append(parts, functionWords[s.rng.IntN(len(functionWords))])
		}
		if s.rng.IntN(12) == 0 {
			parts = append(parts, s.names[s.rng.IntN(len(s.names))])
			continue
		}
		parts = append(parts, s.Word())
	}
	return &models.Memory{
		Kind:      models.KindTurn,
		Content:   strings.Join(parts, " ") + ".",
		CreatedAt: now.Add(-time.Duration(s.rng.Int64N(int64(365 * 24 * time.Hour)))),
		Source:    models.Source{ConversationID: fmt.Sprintf("conv-%d", i/50), Speaker: parts[0]},
	}
}

// Query returns a query of 3–6 words.
func (s *Synth) Query() string {
	n := 3 + s.rng.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		if s.rng.IntN(8) == 0 {
			parts[i] = s.names[s.rng.IntN(len(s.names))]
			continue
		}
		parts[i] = s.Word()
	}
	return strings.Join(parts, " ")
}
