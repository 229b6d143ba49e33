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
		code[i] = int8(roundHalfAway(f * inv))
	}
	return m / 127
}

// scratch holds one search's buffers; pooled because searches run on every recall.
type scratch struct {
	scores []float32
	dots   []int32
	qcode  []int8
	cand   []scored
	above  [2][]int32 // rows reaching the threshold, per half of the scan
	gather []byte     // the rescored rows' codes, gathered
	rdots  []int32
	totals []float64
}

func (v *Vectors) scratch() *scratch {
	sc, _ := v.pool.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	return sc
}

// grow returns (*b)[:n], reallocating with headroom when it is too small.
func grow[T any](b *[]T, n int) []T {
	if cap(*b) < n {
		*b = make([]T, n+n/4)
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
	// so a chunk's dot products are turned into scores while still in cache; then each half
	// of the scan picks out its rows that may be among the best (keepBest), on its own core.
	scores := grow(&sc.scores, n)
	score := func(half, lo, hi int) {
		for c := lo; c < hi; c += scanChunk {
			e := min(c+scanChunk, hi)
			dotsU4(qc, v.codes[c*v.stride:e*v.stride], v.stride, dots[c:e])
			for r := c; r < e; r++ {
				scores[r] = float32(dots[r]-8*qsum) * v.scales[r] // Σ q·(u − 8)
			}
		}
		sc.above[half] = keepBest(sc.above[half][:0], scores, lo, hi, rescore)
	}
	if n >= parallelRows && runtime.GOMAXPROCS(0) > 1 {
		mid := n / 2
		var wg sync.WaitGroup
		wg.Go(func() { score(1, mid, n) })
		score(0, 0, mid)
		wg.Wait()
	} else {
		score(0, 0, n)
		sc.above[1] = sc.above[1][:0]
	}

	// The best rescore rows by code score, selected from those the halves kept.
	cand := sc.cand[:0]
	for _, a := range sc.above {
		for _, r := range a {
			cand = append(cand, scored{r, float64(scores[r])})
		}
	}
	sc.cand = cand
	cand = selectBest(cand, rescore, v.ids)

	h := topK{k: k, ids: v.ids}
	rq := v.newRescorer(q)
	v.rescoreLocked(rq, cand, sc)
	for _, c := range cand {
		h.offer(c.ord, c.score)
	}
	return h.sorted()
}

// keepBest appends to dst the rows of scores[lo:hi] that may be among its k best, and
// returns it: all of them when that is cheapest to tell, else the rows reaching a threshold
// that about selectMargin·k of them reach, estimated from a systematic sample of their
// scores — when at least k rows reach it. Each of the range's k best then scores at least
// its k-th best, which is ≥ the threshold. Offering these instead of every row keeps what a
// top-k heap keeps: the k best of all rows are among the k best of the range they sit in.
// (Offering every row cost a heap operation for each row that beat the current worst kept —
// thousands for the 512 best of 100,000, more than the code scan itself.)
func keepBest(dst []int32, scores []float32, lo, hi, k int) []int32 {
	n := hi - lo
	step, j, ok := samplePlan(n, k)
	if ok {
		var sample [2 * selectSamples]float32 // step = ⌊n/selectSamples⌋ ≥ 2: under 2·selectSamples
		m := 0
		for r := lo; r < hi; r += step {
			sample[m] = scores[r]
			m++
		}
		t := jthBest(sample[:m], j)
		// Every row is written and the count moves only for those reaching t: no branch
		// to mispredict on the scores, which arrive in no order.
		// A block at a time into a buffer that stays in cache, whatever the rows' count.
		start := len(dst)
		var buf [scanChunk]int32
		for b := lo; b < hi; b += scanChunk {
			e, c := min(b+scanChunk, hi), 0
			for r := b; r < e; r++ {
				buf[c] = int32(r)
				inc := 0
				if scores[r] >= t {
					inc = 1
				}
				c += inc
			}
			dst = append(dst, buf[:c]...)
		}
		if len(dst)-start >= k {
			return dst
		}
		dst = dst[:start] // a sample unlike the whole: every row
	}
	for r := lo; r < hi; r++ {
		dst = append(dst, int32(r))
	}
	return dst
}

// samplePlan is the sample's step over n rows and the rank j, among the sampled scores, of
// the threshold: selectSlack plus selectMargin times k's share of the rows. ok is false
// when the sample cannot tell (few rows, or k a large share of them).
func samplePlan(n, k int) (step, j int, ok bool) {
	step = n / selectSamples
	j = selectSlack + selectMargin*k*selectSamples/max(n, 1)
	return step, j, step >= 2 && j < selectSamples/4
}

// jthBest returns the j-th best (1-based, j ≤ len(scores)) of scores, keeping the j best
// seen so far in ascending order: j is tens, the scores thousands, so this beats a sort.
func jthBest(scores []float32, j int) float32 {
	top := make([]float32, 0, j)
	for _, s := range scores {
		if len(top) < j {
			i := len(top)
			top = append(top, s)
			for ; i > 0 && top[i-1] > s; i-- {
				top[i] = top[i-1]
			}
			top[i] = s
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
	return top[0]
}

// selectBest reorders c so that its first k entries are its k best (by score, then the
// smaller id, as topK ranks them) and returns them; all of c when it has no more than k.
// A quickselect: a few comparisons an entry, where offering each to a k-entry heap costs a
// sift for every entry that beats the worst kept. Past a depth that only adversarial input
// reaches, the rest is sorted.
func selectBest(c []scored, k int, ids []string) []scored {
	if len(c) <= k {
		return c
	}
	better := func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return ids[a.ord] < ids[b.ord]
	}
	lo, hi := 0, len(c) // the k-th best's place lies in c[lo:hi]
	for depth := 0; hi-lo > 16; depth++ {
		if depth > 64 {
			break
		}
		// Median of three as the pivot, then a Lomuto partition of c[lo:hi-1].
		m := lo + (hi-lo)/2
		if better(c[m], c[lo]) {
			c[m], c[lo] = c[lo], c[m]
		}
		if better(c[hi-1], c[lo]) {
			c[hi-1], c[lo] = c[lo], c[hi-1]
		}
		if better(c[m], c[hi-1]) {
			c[m], c[hi-1] = c[hi-1], c[m]
		}
		pivot := c[hi-1]
		p := lo
		for i := lo; i < hi-1; i++ {
			if better(c[i], pivot) {
				c[i], c[p] = c[p], c[i]
				p++
			}
		}
		c[p], c[hi-1] = c[hi-1], c[p]
		switch {
		case p == k-1 || p == k:
			return c[:k]
		case p < k:
			lo = p + 1
		default:
			hi = p
		}
	}
	slices.SortFunc(c[lo:hi], func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return c[:k]
}

// rescoreLocked sets each row's score to the query's dot product with it through its code
// and residual planes, as dotLocked computes it (the same integer dot products, combined in
// the same order), but with the rows gathered so each of the six kernel runs covers all of
// them at once instead of one 128-byte row a call.
func (v *Vectors) rescoreLocked(q *rescorer, rows []scored, sc *scratch) {
	m, st := len(rows), v.stride
	if m == 0 {
		return
	}
	gather := grow(&sc.gather, 3*m*st)
	code, hi, lo := gather[:m*st], gather[m*st:2*m*st], gather[2*m*st:]
	for i, c := range rows {
		r := int(c.ord)
		copy(code[i*st:(i+1)*st], v.codes[r*st:(r+1)*st])
		h, l := v.resPlanes(r)
		copy(hi[i*st:(i+1)*st], h)
		copy(lo[i*st:(i+1)*st], l)
	}
	dots := grow(&sc.rdots, 3*m)
	da, db, dc := dots[:m], dots[m:2*m], dots[2*m:]
	totals := grow(&sc.totals, m)
	clear(totals)
	for l := range q.levels {
		qc, sum := q.levels[l], float64(q.sums[l])
		dotsU4(qc, code, st, da)
		dotsU4(qc, hi, st, db)
		dotsU4(qc, lo, st, dc)
		for i, c := range rows {
			a := float64(da[i]) - 8*sum // Σ q·(u − 8)
			b := 16 * (float64(db[i]) - 8*sum)
			b += float64(dc[i]) // Σ q·c
			totals[i] += q.scales[l] * (float64(v.scales[c.ord])*a + float64(v.s8[c.ord])*b)
		}
	}
	for i := range rows {
		rows[i].score = float64(float32(totals[i]))
	}
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

// Sampling for the code scan's threshold: about selectSamples scores, of which the
// selectMargin·(k/n)-th best (plus selectSlack) becomes the threshold.
const (
	selectSamples = 2048
	selectMargin  = 2
	selectSlack   = 8
)

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
