package index

import (
	"math"
	"slices"
	"strings"
	"unsafe"
)

// Approximate search: every row also has a 1-bit code of its random rotation with its
// weight w (quant1.go); a 4-bit code u (quant4.go), the row scaled so its largest component
// is ±7 and rounded, with that scale kept beside it, held as two 2-bit planes u = 4·h + l
// (quant2.go); and an int8 code (±127, likewise) of the residual the 4-bit code leaves. A
// search quantizes the query and its rotation to int8 and goes in three stages:
//
//  1. it scans the 1-bit codes — a thirty-second of the float32 matrix's bytes, which is
//     what bounds a full scan at a million rows — ranking rows by the RaBitQ estimate
//     w·Σ sign(Rx)·Rq = w·(2·Σ_{bits set} Rq − Σ Rq);
//  2. the best FirstStage rows of those get their 4-bit score scale·(q·(u − 8)), both
//     planes gathered;
//  3. the best Rescore(k) of those are ranked by the float32 query's dot product with both
//     codes.
//
// The float32 rows are not kept once an index is coded: the codes take 1.5 bytes a
// dimension and an eighth of a byte a rotated one instead of 4. (An int8 code of the row
// itself, a 14 times coarser step, lost near ties: recall@20 0.979 on the synth corpus.) The
// residual's int8 code is kept as two 4-bit planes and the query as two int8 levels, so
// rescoring a row is runs of the scans' kernels.
//
// The first stage's share: of the exact top 20 on the LoCoMo-shaped corpus at 100,000 rows,
// the best n/64 rows by the 1-bit estimate held 99.85 % (n/128: 99.5 %), where the 4-bit
// code's high plane, the first stage before it at twice the bytes, held 99.0 % (n/128:
// 97.2 %); at 1,000,000 rows n/256 held 99.95 % and n/128 all. FirstStage keeps
// max(4·rescore, n/256): bench ann's recall@20 at a million rows was 0.9962 with n/128 and
// n/256 alike (0.9960 with n/512), the search 0.5 ms faster — the rows passed on are
// gathered one by one from memory. At a million rows the scan reads 32 MB instead of 64:
// it is bound by memory bandwidth there, and took 2.5 ms on one core against 9.7 for the
// 2-bit planes (BenchmarkDotsU1Planes and BenchmarkDotsU2, DOTS_ROWS=1000000). Measured
// (salience bench ann, k 20, 512 rescored): recall@20 against an exact float32 scan 0.99+
// on the LoCoMo-shaped corpus at 100,000 and 1,000,000 vectors and on clustered
// 1,536-dimension vectors.

// ApproxMinRows is the index size from which Search is approximate. Below it the exact scan
// costs about a millisecond, so small namespaces (a LoCoMo conversation is a few hundred
// rows) keep exact results.
const ApproxMinRows = 20_000

// scanChunk is how many rows SearchApprox scores at a time: their dot products (4 KB) stay
// in cache between the kernel and the scaling.
const scanChunk = 1024

// prefetchAhead is how many rows ahead a gather prefetches: enough misses in flight to
// overlap, few enough that the lines are still in cache when copied.
const prefetchAhead = 16

// rescoreMin and rescoreFactor size the exact rescoring: Rescore(k) rows.
const (
	rescoreMin    = 512
	rescoreFactor = 8
)

// The first stage keeps max(firstFactor·rescore, n/firstShare) rows (see FirstStage).
const (
	firstFactor = 4
	firstShare  = 256
)

// FirstStage is how many of n rows the 1-bit scan passes on to the 4-bit score when rescore
// rows are to be rescored: max(4·rescore, n/256), at most n.
func FirstStage(rescore, n int) int { return min(n, max(firstFactor*rescore, n/firstShare)) }

// Rescore is how many code-scan candidates a search for k rescores exactly: 8·k, at least
// 512 (a 1 KB row each at 256 dimensions: 1/200 of the matrix at 100,000 rows).
func Rescore(k int) int { return max(rescoreMin, rescoreFactor*k) }

// quantize writes vec's int8 code into code (len ≥ len(vec), the rest zeroed) and returns its
// scale: vec ≈ scale·code. A zero vector has scale 0. Queries are quantized so.
func quantize(code []int8, vec []float32) float32 { return quantizeTo(code, vec, 127) }

// quantizeTo is quantize with the largest component coded ±top (1 ≤ top ≤ 127).
func quantizeTo(code []int8, vec []float32, top float32) float32 {
	clear(code)
	m := maxAbs(vec)
	if m == 0 {
		return 0
	}
	inv := top / m
	for i, f := range vec {
		code[i] = int8(roundHalfAway(f * inv))
	}
	return m / top
}

// query1 is a query's code for the first stage: its rotation's code (codeRotated), that
// code's bit planes and its sum.
type query1 struct {
	q      []int8
	planes []byte
	sum    float32
}

// scratch holds one search's buffers; pooled because searches run on every recall.
type scratch struct {
	scores    []float32
	dots      []int32
	qcode     []int8
	qrot      []float32 // the rotated query
	qcode1    []int8    // and its code (codeRotated)
	qplanes   []byte    // and that code's bit planes
	cand      []scored
	above     [2][]int32 // rows reaching the threshold, per worker of the scan (splitScan)
	passScale []float32  // the rows passed on: their 4-bit codes' scales, gathered
	rscale    []float64  // the rescored rows' scales, gathered
	rs8       []float64  // and their residuals' scales
	vals      []float64  // selectBest's scores
	gather    []byte     // rows' planes, gathered
	sample    []float32  // the first stage's sampled scores
	sscales   []float32  // and their rows' weights
	rdots     []int32
	totals    []float64
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

// SearchApprox is Search by the codes, in the three stages above: the rows whose high-plane
// score reaches the sampled threshold (every row when the sample cannot tell, or fewer than
// rescore rows reach it), of those the rescore rows (at least k) with the best 4-bit scores,
// ranked by their dot product with both codes, and the best k returned; 4-bit score ties go
// to the smaller id. With rescore ≥ Len, or on an index that never held ApproxMinRows rows
// (it has no codes), it equals SearchExact.
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

	// The query as int8 in its natural order, padded to the planes' dimensions, and its
	// rotation likewise.
	s1, s2 := v.stride1, v.stride2
	qc := grow(&sc.qcode, 4*s2) // ≥ 2·stride, the 4-bit planes' padding
	quantize(qc, q)
	var qsum int32
	for _, c := range qc {
		qsum += int32(c)
	}
	q1 := query1{q: grow(&sc.qcode1, 8*s1), planes: grow(&sc.qplanes, 4*s1)}
	q1.sum = float32(codeRotated(q1.q, q1.planes, grow(&sc.qrot, rotDims(v.dims)), q))
	// Stage 1.
	filter := v.firstStage(q1, FirstStage(rescore, n), sc)
	// Stage 2: the rows passed on get their 4-bit score; the best rescore go on.
	cand := sc.cand[:0]
	if filter && len(sc.above[0])+len(sc.above[1]) >= rescore {
		for _, a := range sc.above {
			for _, r := range a {
				cand = append(cand, scored{ord: r})
			}
		}
		m := len(cand)
		gather := grow(&sc.gather, 2*m*s2)
		hg, lg := gather[:m*s2], gather[m*s2:]
		ps := grow(&sc.passScale, m)
		fetch := func(r int) {
			prefetchRow(v.hi2, s2, r)
			prefetchRow(v.lo2, s2, r)
			prefetch(unsafe.Pointer(&v.scales[r]))
		}
		for _, c := range cand[:min(m, prefetchAhead)] {
			fetch(int(c.ord))
		}
		for i, c := range cand {
			if i+prefetchAhead < m {
				fetch(int(cand[i+prefetchAhead].ord))
			}
			r := int(c.ord)
			copy(hg[i*s2:(i+1)*s2], v.hi2[r*s2:(r+1)*s2])
			copy(lg[i*s2:(i+1)*s2], v.lo2[r*s2:(r+1)*s2])
			ps[i] = v.scales[r]
		}
		rd := grow(&sc.rdots, 2*m)
		hd, ld := rd[:m], rd[m:]
		dotsU2(qc, hg, s2, hd)
		dotsU2(qc, lg, s2, ld)
		for i := range cand {
			cand[i].score = float64(float32(4*hd[i]+ld[i]-8*qsum) * ps[i]) // Σ q·(u − 8)
		}
	} else { // no sample, or one unlike the whole: every row goes on
		for r := range n {
			cand = append(cand, scored{ord: int32(r)})
		}
		hd, ld := grow(&sc.dots, n), grow(&sc.rdots, n)
		dotsU2(qc, v.hi2[:n*s2], s2, hd)
		dotsU2(qc, v.lo2[:n*s2], s2, ld)
		for i, c := range cand {
			r := c.ord
			cand[i].score = float64(float32(4*hd[r]+ld[i]-8*qsum) * v.scales[r]) // Σ q·(u − 8)
		}
	}
	sc.cand = cand
	cand = selectBest(cand, rescore, v.ids, &sc.vals)

	// Stage 3.
	h := topK{k: k, ids: v.ids}
	rq := v.newRescorer(q)
	v.rescoreLocked(rq, cand, sc)
	for _, c := range cand {
		h.offer(c.ord, c.score)
	}
	return h.sorted()
}

// firstStage scans the 1-bit codes for the rows to pass on, about keep of them, into
// sc.above (by worker), and reports whether it filtered at all (see firstThreshold). It
// goes chunk by chunk, so a chunk's rows reaching the sampled threshold are picked out while
// its dot products are in cache, and shares the scan with a second core when no other scan
// is running (splitScan). A row's score is w·(2·Σ_{bits set} q₁ − Σ q₁) (the query's own
// scale is common to all and left out).
func (v *Vectors) firstStage(q1 query1, keep int, sc *scratch) bool {
	t, filter := v.firstThreshold(q1, keep, sc)
	if !filter {
		return false
	}
	n, s1 := len(v.ids), v.stride1
	dots := grow(&sc.dots, n)
	// A row reaching t > 0 has 2·dot − Σ q₁ ≥ t/w ≥ t/w1max: rows below that bound on
	// their integer dot product alone are out without their weights read (4 bytes a row,
	// a ninth of the scan's), and the few above it take the exact test.
	bound, pre := int32(0), false
	if t > 0 && v.w1max > 0 {
		if b := math.Floor((float64(t)/float64(v.w1max)+float64(q1.sum))/2) - 1; b > math.MinInt32 && b < math.MaxInt32 {
			bound, pre = int32(b), true
		}
	}
	score := func(worker, lo, hi int) {
		above := sc.above[worker]
		for c := lo; c < hi; c += scanChunk {
			e := min(c+scanChunk, hi)
			dotsU1Planes(q1.q, q1.planes, v.sign1[c*s1:e*s1], s1, dots[c:e])
			if !pre {
				above = appendReaching(above, dots[c:e], v.w1[c:e], 2, -q1.sum, t, c)
				continue
			}
			from := len(above)
			above = appendAtLeast(above, dots[c:e], bound, c)
			kept := above[:from]
			for _, r := range above[from:] {
				if float32(float32(2*float32(dots[r]))-q1.sum)*v.w1[r] >= t { // as appendReaching
					kept = append(kept, r)
				}
			}
			above = kept
		}
		sc.above[worker] = above
	}
	for w := range sc.above {
		sc.above[w] = sc.above[w][:0]
	}
	splitScan(n, score)
	return true
}

// firstThreshold returns the first stage's threshold for passing on about keep of the index's
// rows: the (selectSlack + keep's share of the sample)-th best 1-bit score of a systematic
// sample of selectSamples rows, scored as the scan scores them (q1 the query's first-stage
// code). filter is false when every row should go on (too few rows to sample, or
// keep too large a share). The sample is taken in runs of sampleRun adjacent rows, evenly
// spaced: a run's rows and weights are a few adjacent cache lines, which arrive together,
// where rows taken one by one would each be a cache miss of their own and of their weight's.
func (v *Vectors) firstThreshold(q1 query1, keep int, sc *scratch) (t float32, filter bool) {
	n, s1 := len(v.ids), v.stride1
	runs := selectSamples / sampleRun
	step := n / runs // rows 0, step, 2·step, … start the runs
	if step < 2*sampleRun {
		return 0, false
	}
	m := runs * sampleRun
	j := selectSlack + keep*m/n
	if j >= m/4 {
		return 0, false
	}
	sdots := grow(&sc.rdots, m)
	sw := grow(&sc.sscales, m)
	lines := (sampleRun*s1 + 63) / 64
	ask := func(i int) {
		r := i * step
		prefetchLines(&v.sign1[r*s1], lines)
		prefetch(unsafe.Pointer(&v.w1[r]))
		prefetch(unsafe.Pointer(&v.w1[r+sampleRun-1]))
	}
	for i := range min(runs, prefetchAhead) {
		ask(i)
	}
	for i := range runs {
		if a := i + prefetchAhead; a < runs {
			ask(a)
		}
		r, o := i*step, i*sampleRun
		dotsU1Planes(q1.q, q1.planes, v.sign1[r*s1:(r+sampleRun)*s1], s1, sdots[o:o+sampleRun])
		copy(sw[o:o+sampleRun], v.w1[r:r+sampleRun])
	}
	sample := grow(&sc.sample, m)
	scaleScores(sdots, sw, 2, -q1.sum, sample)
	return jthBest(sample, j), true
}

// jthBest returns the j-th best (1-based, 1 ≤ j ≤ len(s)) of s, reordering s: a quickselect
// on the values, or for a small j, the j best kept in order as s is read (jthBestSmall).
func jthBest[F float32 | float64](s []F, j int) F {
	if j <= smallJ && len(s) >= 4*j {
		return jthBestSmall(s, j)
	}
	k := j - 1 // the place of the j-th best in descending order
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		// Median of three as the pivot; Hoare-style partition into > pivot, = pivot, < pivot.
		a, b, c := s[lo], s[lo+(hi-lo)/2], s[hi-1]
		p := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi // s[lo:lt] > p, s[lt:i] = p, s[gt:hi] < p
		for i < gt {
			switch {
			case s[i] > p:
				s[lt], s[i] = s[i], s[lt]
				lt++
				i++
			case s[i] < p:
				gt--
				s[gt], s[i] = s[i], s[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k < gt:
			return p
		default:
			lo = gt
		}
	}
	return s[lo]
}

// smallJ is the largest j jthBestSmall serves: the threshold's j is about 10–20 at 100,000
// rows and more only in small indexes.
const smallJ = 64

// jthBestSmall is jthBest for j ≤ smallJ: the j best values read so far, in descending
// order. A value that does not beat the j-th (nearly all, once the first few hundred are
// read) costs one comparison, where quickselect moves every value a few times.
func jthBestSmall[F float32 | float64](s []F, j int) F {
	var buf [smallJ]F
	top := buf[:0]
	for _, x := range s {
		if len(top) == j {
			if !(x > top[j-1]) {
				continue
			}
			top = top[:j-1]
		}
		i := len(top)
		top = top[:i+1]
		for i > 0 && top[i-1] < x {
			top[i] = top[i-1]
			i--
		}
		top[i] = x
	}
	return top[j-1]
}

// selectBest reorders c so that its first k entries are its k best (by score, then the
// smaller id, as topK ranks them) and returns them; all of c when it has no more than k.
// vals is scratch for the scores. The k-th best score is found by jthBest on the scores
// alone, a few branch-light moves of 8 bytes an entry; then the entries above it go first
// and those equal to it follow, fewest ids first when there are more than the places
// left. (A quickselect of the entries themselves, comparing through a closure, cost about
// twice as much.)
func selectBest(c []scored, k int, ids []string, vals *[]float64) []scored {
	if len(c) <= k {
		return c
	}
	v := grow(vals, len(c))
	for i := range c {
		v[i] = c[i].score
	}
	t := jthBest(v, k)
	p := 0
	for i := range c {
		if c[i].score > t {
			c[i], c[p] = c[p], c[i]
			p++
		}
	}
	q := p
	for i := p; i < len(c); i++ {
		if c[i].score == t {
			c[i], c[q] = c[q], c[i]
			q++
		}
	}
	if q-p > k-p { // more ties at t than places: the smaller ids
		slices.SortFunc(c[p:q], func(a, b scored) int { return strings.Compare(ids[a.ord], ids[b.ord]) })
	}
	return c[:k]
}

// rescoreLocked sets each row's score to the query's dot product with it through its code
// and residual planes, as dotLocked computes it (the same integer dot products, combined in
// the same order), but with the rows gathered so each of the eight kernel runs covers all of
// them at once instead of one row a call.
func (v *Vectors) rescoreLocked(q *rescorer, rows []scored, sc *scratch) {
	m, st, s2 := len(rows), v.stride, v.stride2
	if m == 0 {
		return
	}
	gather := grow(&sc.gather, 2*m*s2+2*m*st)
	h2, l2, rest := gather[:m*s2], gather[m*s2:2*m*s2], gather[2*m*s2:]
	hi, lo := rest[:m*st], rest[m*st:]
	// The rows' scales are gathered with them: read in the sums below, each was a miss.
	rs, r8 := grow(&sc.rscale, m), grow(&sc.rs8, m)
	fetch := func(r int) {
		prefetchRow(v.hi2, s2, r)
		prefetchRow(v.lo2, s2, r)
		prefetchRow(v.res, 2*st, r)
		prefetch(unsafe.Pointer(&v.scales[r]))
		prefetch(unsafe.Pointer(&v.s8[r]))
	}
	for _, c := range rows[:min(m, prefetchAhead)] {
		fetch(int(c.ord))
	}
	for i, c := range rows {
		if i+prefetchAhead < m {
			fetch(int(rows[i+prefetchAhead].ord))
		}
		r := int(c.ord)
		copy(h2[i*s2:(i+1)*s2], v.hi2[r*s2:(r+1)*s2])
		copy(l2[i*s2:(i+1)*s2], v.lo2[r*s2:(r+1)*s2])
		h, l := v.resPlanes(r)
		copy(hi[i*st:(i+1)*st], h)
		copy(lo[i*st:(i+1)*st], l)
		rs[i], r8[i] = float64(v.scales[r]), float64(v.s8[r])
	}
	dots := grow(&sc.rdots, 4*m)
	da, dl, db, dc := dots[:m], dots[m:2*m], dots[2*m:3*m], dots[3*m:]
	totals := grow(&sc.totals, m)
	clear(totals)
	for l := range q.levels {
		qc, sum := q.levels[l], float64(q.sums[l])
		dotsU2(qc, h2, s2, da)
		dotsU2(qc, l2, s2, dl)
		dotsU4(qc, hi, st, db)
		dotsU4(qc, lo, st, dc)
		for i := range rows {
			a := 4 * float64(da[i])
			a += float64(dl[i]) - 8*sum // Σ q·(u − 8)
			b := 16 * (float64(db[i]) - 8*sum)
			b += float64(dc[i]) // Σ q·c
			totals[i] += q.scales[l] * (rs[i]*a + r8[i]*b)
		}
	}
	for i := range rows {
		rows[i].score = float64(float32(totals[i]))
	}
}

// rescorer is a query as rescoring reads it: two int8 levels, q ≈ scales[0]·levels[0] +
// scales[1]·levels[1], the second coding what the first misses (an error of about 1/32,000
// of the largest component, far below the row codes'), so a row's dot products are runs of
// the kernels. Levels are padded with zeros to the 2-bit planes' dimensions (which cover the
// 4-bit planes').
type rescorer struct {
	levels [2][]int8
	sums   [2]int32 // Σ of each level: the codes' offset of 8 is taken off once
	scales [2]float64
}

func (v *Vectors) newRescorer(q []float32) *rescorer {
	rq := &rescorer{}
	rest := slices.Clone(q)
	for l := range rq.levels {
		c := make([]int8, 4*v.stride2)
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

// Sampling for the first stage's threshold: selectSamples scores, in runs of sampleRun
// adjacent rows, of which the (selectSlack + keep's share)-th best becomes the threshold.
const (
	selectSamples = 2048
	sampleRun     = 8
	selectSlack   = 8
)
