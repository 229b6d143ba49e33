package embed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// DefaultLocalDims is the size of Local vectors when none is asked for. Exact search scans
// every vector on each query, so size is latency: on LoCoMo 128, 256 and 384 dimensions
// score within 0.005 recall@10 of each other (the lexical vector adds little beside BM25),
// but the learning replay (eval locomo --learn) lifted held-back recall@10 by 0.021 at 256
// and only 0.010 at 128 or 384: which turns a replay surfaces, and so what is learned,
// shifts with the hashing. 256 it is, at about 2 ms of CPU per query at 100k memories.
const DefaultLocalDims = 256

// Feature-group weights of Local. Each group's features are first scaled to unit length,
// so a weight is the group's share of the vector before the final normalization, whatever
// the text's length:
//   - stemmed words carry the topic;
//   - character 3–5-grams of each word match inflections, compounds and typos the stemmer
//     misses ("adopt" ~ "adoption", "color" ~ "colour"); they weigh as much as words;
//   - word bigrams reward shared phrases ("support group") but are many distinct features
//     that collide in a few hundred dimensions, so they only break near-ties.
//
// Chosen on evidence-turn retrieval over the LoCoMo dev conversations (cosine ranking alone,
// 384 dims, recall@10): words only 0.418; words + n-grams at 1.0 0.464; adding bigrams at
// 0.1 0.463, at 0.2 0.458 (and with n-grams at 0.7, bigrams at 0.4 0.449, at 0.8 0.426).
// With 1,024 dims the same mix reaches about 0.49: fewer collisions.
const (
	weightWords   = 1.0
	weightChars   = 1.0
	weightBigrams = 0.1
)

// Character n-gram sizes, in runes, over each word with boundary markers ("<bee>").
const (
	minGram = 3
	maxGram = 5
)

// Group tags seed each group's hashes so a word and a bigram or n-gram with the same bytes
// land on unrelated dimensions.
const (
	tagWord   = 'w'
	tagBigram = 'b'
	tagChars  = 'c'
)

// Local is the lexical embedder (the default before Static): deterministic, dependency-free
// and LEXICAL — two texts are close when they share words, word pairs and pieces of words,
// not when they mean the same thing in other words. It needs no model and no network, and a vector depends on its own
// text only (no corpus statistics such as IDF), so stored vectors never go stale as the
// corpus grows.
//
// A text's vector is the feature-hashing trick (Weinberger et al., 2009): every feature is
// hashed with 64-bit FNV-1a to one dimension and a sign (the hash's top bit), its value the
// sublinear term frequency 1 + ln(tf); features are stemmed words (nlp.Terms: tokens, stop
// words removed, Porter stems), word bigrams of those terms, and character 3–5-grams of
// each non-stop-word token; groups are weighted (weightWords, weightChars, weightBigrams)
// and the sum is L2-normalized. A text with no features — empty, punctuation or stop words
// only — gets the zero vector, which has cosine 0 with everything.
//
// Local is safe for concurrent use.
type Local struct {
	dims int
}

// NewLocal returns a Local embedder of dims dimensions (dims ≤ 0: DefaultLocalDims).
func NewLocal(dims int) *Local {
	if dims <= 0 {
		dims = DefaultLocalDims
	}
	return &Local{dims: dims}
}

// Dims returns the vector size.
func (l *Local) Dims() int { return l.dims }

// Name identifies the feature scheme and size; change the version when features change.
func (l *Local) Name() string { return fmt.Sprintf("local-hash-v1-%d", l.dims) }

// Embed returns one vector per text, in order. It fails only when ctx is done.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = l.vector(t)
	}
	return out, nil
}

// scratch holds the per-call buffers, pooled because Embed runs on every ingest and recall.
type scratch struct {
	words, bigrams, chars []uint64
	acc                   []float64
	offs                  []int
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (l *Local) vector(text string) []float32 {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	s.words, s.bigrams, s.chars = s.words[:0], s.bigrams[:0], s.chars[:0]

	var prev uint64 // hash of the previous term, for bigrams
	first := true
	for _, tok := range nlp.Tokens(text) {
		if nlp.IsStopWord(tok) {
			continue
		}
		term := nlp.Stem(tok) // exactly nlp.Terms, without a second tokenization
		h := hashString(hashByte(fnvOffset, tagWord), term)
		s.words = append(s.words, h)
		if !first {
			b := hashByte(hashByte(fnvOffset, tagBigram), 0)
			b = hashUint64(b, prev)
			b = hashString(b, term)
			s.bigrams = append(s.bigrams, b)
		}
		prev, first = h, false
		s.chars = appendCharGrams(s.chars, tok, &s.offs)
	}

	if cap(s.acc) < l.dims {
		s.acc = make([]float64, l.dims)
	}
	acc := s.acc[:l.dims]
	clear(acc)
	l.addGroup(acc, s.words, weightWords)
	l.addGroup(acc, s.bigrams, weightBigrams)
	l.addGroup(acc, s.chars, weightChars)

	vec := make([]float32, l.dims)
	models.NormalizeL2(acc) // finite by construction
	for i, v := range acc {
		vec[i] = float32(v)
	}
	return vec
}

// addGroup adds one feature group to acc: each distinct feature contributes
// ±weight·(1+ln tf)/‖group‖ at its hashed dimension, ‖group‖ being the Euclidean norm of the
// group's (1+ln tf) values before hashing.
func (l *Local) addGroup(acc []float64, hashes []uint64, weight float64) {
	if len(hashes) == 0 {
		return
	}
	slices.Sort(hashes)
	var sumSq float64
	for i := 0; i < len(hashes); {
		j := i + 1
		for j < len(hashes) && hashes[j] == hashes[i] {
			j++
		}
		v := sublinear(j - i)
		sumSq += v * v
		i = j
	}
	scale := weight / math.Sqrt(sumSq)
	dims := uint64(len(acc))
	for i := 0; i < len(hashes); {
		h := hashes[i]
		j := i + 1
		for j < len(hashes) && hashes[j] == h {
			j++
		}
		v := scale * sublinear(j-i)
		if h>>63 == 1 {
			v = -v
		}
		acc[(h&(1<<63-1))%dims] += v
		i = j
	}
}

// sublinear is the damped term frequency 1 + ln(tf); most features occur once.
func sublinear(tf int) float64 {
	if tf == 1 {
		return 1
	}
	return 1 + math.Log(float64(tf))
}

// appendCharGrams appends the hashes of the minGram–maxGram rune n-grams of "<tok>".
func appendCharGrams(dst []uint64, tok string, offs *[]int) []uint64 {
	// Byte offsets of the runes of "<" + tok + ">", without building that string: offsets
	// are into tok, with -1 standing for "<" and len(tok) for ">".
	o := (*offs)[:0]
	o = append(o, -1)
	for i := range tok {
		o = append(o, i)
	}
	o = append(o, len(tok))
	*offs = o
	n := len(o) // runes including both markers
	base := hashByte(fnvOffset, tagChars)
	for size := minGram; size <= maxGram; size++ {
		for i := 0; i+size <= n; i++ {
			h := base
			for k := i; k < i+size; k++ {
				switch p := o[k]; {
				case p < 0:
					h = hashByte(h, '<')
				case p >= len(tok):
					h = hashByte(h, '>')
				default: // the rune ends where the next one (or ">", at len(tok)) starts
					h = hashString(h, tok[p:o[k+1]])
				}
			}
			dst = append(dst, h)
		}
		if n < size { // a short word has no longer grams
			break
		}
	}
	return dst
}

// 64-bit FNV-1a (Fowler–Noll–Vo), inlined so hashing a feature allocates nothing.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hashUint64(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = (h ^ (v & 0xff)) * fnvPrime
		v >>= 8
	}
	return h
}
