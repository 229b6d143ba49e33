package index

import (
	"runtime"
	"slices"
	"sync"
)

// Approximate search: every row also has a 4-bit code (quant4.go), the row scaled so its
// largest component is ±7 and rounded, with that scale kept beside it, and an int8 code (±127,
// likewise) of the residual the 4-bit code leaves. A search quantizes the query to int8, scans
// the 4-bit codes — an eighth of the float32 matrix's bytes, which is what bounds a full scan
// — ranking rows by scale·(query·code), then ranks the best Rescore(k) of those by the float32
// query's dot product with both codes. The float32 rows are not kept once an index is coded:
// the two codes take 1.5 bytes a dimension instead of 4. (An int8 code of the row itself, a
// 14 times coarser step, lost near ties: recall@20 0.979 on the synth corpus.) The residual's
// int8 code is kept as two 4-bit planes and the query as two int8 levels, so rescoring a row
// is six runs of the scan's AVX2 kernel over it. Measured (salience bench ann, k 20, 512
// rescored): recall@20 against an exact float32 scan 0.99+ on the LoCoMo-shaped corpus at
// 100,000 and 1,000,000 vectors and on clustered 1,536-dimension vectors.

// ApproxMinRows is the index size from which Search is approximate. Below it the exact scan
// costs about a millisecond, so small namespaces (a LoCoMo conversation is a few hundred
// rows) keep exact results.
const ApproxMinRows = 20_000

// scanChunk is how many rows SearchApprox scores at a time: their dot products (4 KB) stay
// in cache between the kernel and the scaling.
const scanChunk = 1024

// rescoreMin and rescoreFactor size the exact rescoring: Rescore(k) rows.
const (
	rescoreMin    = 512
	rescoreFactor = 8
)

// Rescore is how many code-scan candidates a search for k rescores exactly: 8·k, at least
// 512 (a 1 KB row each at 256 dimensions: 1/200 of the matrix at 100,000 rows).
func Rescore(k int) int { return max(rescoreMin, rescoreFactor*k) }

// quantize writes vec's int8 code into code (len ≥ len(vec), the rest zeroed) and returns its
// scale: vec ≈ scale·code. A zero vector has scale 0. Queries are quantized so.
func quantize(code []int8, vec []float32) float32 {
	clear(code)
	m := maxAbs(vec)
	if m == 0 {
		return 0
	}
	inv := 127 / m
	for i, f := range vec {
		// Round half away from zero, in float32: a rebuild quantizes every vector, and
		// math.Round's float64 round trip costs more than the rest of the loop.
		if x := f * inv; x >= 0 {
			code[i] = int8(x + 0.5)
		} else {
			code[i] = int8(x - 0.5)
		}
	}
	return m / 127
}

// scratch holds one search's buffers; pooled because searches run on every recall.
type scratch struct {
	scores []float32
	dots   []int32
	qcode  []int8
	cand   []scored
}

func (v *Vectors) scratch() *scratch {
	sc, _ := v.pool.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	return sc
}

// growF32 returns (*b)[:n], reallocating with headroom when it is too small.
func growF32(b *[]float32, n int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, n+n/4)
	}
	return (*b)[:n]
}

// SearchApprox is Search by 4-bit codes: the rescore rows (at least k) with the best code
// scores are ranked by exact cosine and the best k returned; code-score ties go to the
// smaller id. With rescore ≥ Len, or on an index that never held ApproxMinRows rows (it has
// no codes), it equals SearchExact.
func (v *Vectors) SearchApprox(q []float32, k, rescore int) []Hit {
	if k <= 0 || len(q) != v.dims {
		return nil
	}
	v.mu.RLock()
	coded := v.coded
	v.mu.RUnlock()
	if !coded {
		return v.SearchExact(q, k)
	}
	q, err := Normalize(q)
	if err != nil {
		return nil
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	n := len(v.ids)
	if n == 0 {
		return nil
	}
	rescore = min(max(rescore, k), n)
	sc := v.scratch()
	defer v.pool.Put(sc)

	// The query as int8 in its natural order, padded to the codes' dimensions.
	if cap(sc.qcode) < 2*v.stride {
		sc.qcode = make([]int8, 2*v.stride)
	}
	qc := sc.qcode[:2*v.stride]
	quantize(qc, q)
	var qsum int32
	for _, c := range qc {
		qsum += int32(c)
	}
	if cap(sc.dots) < n {
		sc.dots = make([]int32, n+n/4)
	}
	dots := sc.dots[:n]
	// The code scores; the query's own scale is common to all and left out. Chunk by chunk,
	// so a chunk's dot products are turned into scores while still in cache.
	scores := growF32(&sc.scores, n)
	score := func(lo, hi int) {
		for c := lo; c < hi; c += scanChunk {
			e := min(c+scanChunk, hi)
			dotsU4(qc, v.codes[c*v.stride:e*v.stride], v.stride, dots[c:e])
			for r := c; r < e; r++ {
				scores[r] = float32(dots[r]-8*qsum) * v.scales[r] // Σ q·(u − 8)
			}
		}
	}
	if n >= parallelRows && runtime.GOMAXPROCS(0) > 1 {
		mid := n / 2
		var wg sync.WaitGroup
		wg.Go(func() { score(0, mid) })
		score(mid, n)
		wg.Wait()
	} else {
		score(0, n)
	}

	// The best rescore rows by code score.
	cand := topK{k: rescore, ids: v.ids, heap: sc.cand[:0]}
	bestCodes(&cand, scores)
	sc.cand = cand.heap

	h := topK{k: k, ids: v.ids}
	rq := v.newRescorer(q)
	for _, c := range cand.heap {
		h.offer(c.ord, float64(v.dotLocked(rq, int(c.ord))))
	}
	return h.sorted()
}

// rescorer is a query as rescoring reads it: two int8 levels, q ≈ scales[0]·levels[0] +
// scales[1]·levels[1], the second coding what the first misses (an error of about 1/32,000
// of the largest component, far below the row codes'), so a row's dot products are runs of
// the 4-bit kernel. Levels are padded with zeros to the codes' dimensions.
type rescorer struct {
	levels [2][]int8
	sums   [2]int32 // Σ of each level: the codes' offset of 8 is taken off once
	scales [2]float64
}

func (v *Vectors) newRescorer(q []float32) *rescorer {
	rq := &rescorer{}
	rest := slices.Clone(q)
	for l := range rq.levels {
		c := make([]int8, 2*v.stride)
		s := quantize(c, rest)
		for i := range rest {
			rest[i] -= s * float32(c[i])
		}
		for _, x := range c {
			rq.sums[l] += int32(x)
		}
		rq.levels[l], rq.scales[l] = c, float64(s)
	}
	return rq
}

// Sampling for bestCodes' threshold: about selectSamples scores, of which the
// selectMargin·(h.k/n)-th best (plus selectSlack) becomes the threshold.
const (
	selectSamples = 2048
	selectMargin  = 2
	selectSlack   = 8
)

// bestCodes offers h the scores' rows (ordinal = index) and leaves it holding the h.k best,
// exactly as offering every row would. Offering every row costs a heap operation for each
// row that beats the current worst kept — thousands for the 512 best of 100,000, more
// than the code scan itself. So it first estimates, from a systematic sample, a threshold
// that about twice h.k rows reach, and offers only those: every row of the h.k best
// scores at least as much as the h.k-th best, which is ≥ the threshold whenever h.k rows
// reach it. When fewer do (a sample unlike the whole), it offers every row.
func bestCodes(h *topK, scores []float32) {
	n := len(scores)
	step := n / selectSamples
	j := selectSlack + selectMargin*h.k*selectSamples/max(n, 1)
	if step < 2 || j >= selectSamples/4 {
		offerAll(h, scores)
		return
	}
	// The j best sampled scores, ascending: top[0] is the threshold once c = j.
	top := make([]float32, j)
	c := 0
	for r := 0; r < n; r += step {
		s := scores[r]
		if c < j {
			i := c
			for ; i > 0 && top[i-1] > s; i-- {
				top[i] = top[i-1]
			}
			top[i] = s
			c++
			continue
		}
		if s <= top[0] {
			continue
		}
		i := 1
		for ; i < j && top[i] < s; i++ {
			top[i-1] = top[i]
		}
		top[i-1] = s
	}
	if c < j {
		offerAll(h, scores)
		return
	}
	t := top[0]
	reach := 0
	for _, s := range scores {
		if s >= t {
			reach++
		}
	}
	if reach < h.k {
		offerAll(h, scores)
		return
	}
	for r, s := range scores {
		if s >= t {
			offerOne(h, int32(r), s)
		}
	}
}

// offerAll offers every row of scores to h.
func offerAll(h *topK, scores []float32) {
	for r, s := range scores {
		offerOne(h, int32(r), s)
	}
}

// offerOne offers one row, with a cheap pre-check against the current worst kept that keeps
// most rows out of the heap.
func offerOne(h *topK, r int32, s float32) {
	if len(h.heap) == h.k && float64(s) < h.heap[0].score {
		return
	}
	h.offer(r, float64(s))
}
