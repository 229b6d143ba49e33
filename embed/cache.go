package embed

import (
	"crypto/sha256"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultCacheSize is how many vectors the OpenAI embedder keeps by content: 4,096 vectors
// of 1,536 dimensions take 25 MB. Repeated texts are common — the same query asked again,
// a message re-ingested after a failed batch, a re-embed after an interrupted one — and
// each costs a paid, rate-limited call otherwise.
const DefaultCacheSize = 4096

// cache maps sha256(model, text) to the text's vector, least recently used out first. A
// nil cache caches nothing. Vectors are copied in and out: callers own what they get.
type cache struct {
	lru *lru.Cache[[sha256.Size]byte, []float32]
}

func newCache(size int) *cache {
	c, err := lru.New[[sha256.Size]byte, []float32](size)
	if err != nil {
		panic(err) // only for size ≤ 0, which the caller rules out
	}
	return &cache{lru: c}
}

func key(model, text string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// lookup fills out[i] for every cached text and returns the distinct texts still missing;
// where[j] lists the positions in texts of missing[j].
func (c *cache) lookup(model string, texts []string, out [][]float32) (missing []string, where [][]int) {
	seen := make(map[string]int, len(texts))
	for i, t := range texts {
		if c != nil {
			if v, ok := c.lru.Get(key(model, t)); ok {
				out[i] = slices.Clone(v)
				continue
			}
		}
		if j, ok := seen[t]; ok {
			where[j] = append(where[j], i)
			continue
		}
		seen[t] = len(missing)
		missing = append(missing, t)
		where = append(where, []int{i})
	}
	return missing, where
}

// fill places the vectors of the missing texts at their positions in out and caches them.
func (c *cache) fill(model string, missing []string, vecs [][]float32, where [][]int, out [][]float32) {
	for j, t := range missing {
		for k, i := range where[j] {
			if k == 0 {
				out[i] = vecs[j]
			} else {
				out[i] = slices.Clone(vecs[j])
			}
		}
		if c != nil {
			c.lru.Add(key(model, t), slices.Clone(vecs[j]))
		}
	}
}
