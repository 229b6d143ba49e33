package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestCodedDot: a coded row's dot product with a query, through the query's fine code and
// the row's two codes, is within 2e-3 of the float32 one, at dimensions on and off the
// 4-bit codes' 64-dimension blocks; with no float32 row kept to compare, the reference is
// the vector added.
func TestCodedDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dims := range []int{1, 31, 33, 64, 100, 256, 1536} {
		v := NewVectors(dims)
		vec := randUnit(r, dims)
		v.mu.Lock()
		v.ids, v.rows = []string{"a"}, map[string]int{"a": 0}
		v.data = vec
		v.encodeLocked()
		v.mu.Unlock()
		for range 10 {
			q := randUnit(r, dims)
			var want float64
			for d := range q {
				want += float64(q[d]) * float64(vec[d])
			}
			if got := v.dotLocked(v.newRescorer(q), 0); math.Abs(float64(got)-want) > 2e-3 {
				t.Fatalf("dims %d: coded dot %v, float32 %v", dims, got, want)
			}
		}
		got := v.Get("a")
		for d := range got {
			if math.Abs(float64(got[d]-vec[d])) > 2e-3 {
				t.Fatalf("dims %d: Get[%d] = %v, want about %v", dims, d, got[d], vec[d])
			}
		}
	}
}

// TestRescoreMatchesDot: rescoring gathered rows gives each row exactly dotLocked's score
// (the same integer dot products, combined in the same order), so batching the kernel
// changes no result.
func TestRescoreMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dims := range []int{1, 33, 100, 256, 1536} {
		const n = 300
		v := NewVectors(dims)
		v.mu.Lock()
		v.rows = map[string]int{}
		for i := range n {
			id := fmt.Sprintf("r%03d", i)
			v.ids, v.rows[id] = append(v.ids, id), i
			v.data = append(v.data, randUnit(r, dims)...)
		}
		v.encodeLocked()
		v.mu.Unlock()
		q := v.newRescorer(randUnit(r, dims))
		rows := make([]scored, 0, n)
		for _, i := range r.Perm(n)[:200] { // not in row order, not every row
			rows = append(rows, scored{ord: int32(i), score: -1})
		}
		v.rescoreLocked(q, rows, &scratch{})
		for _, c := range rows {
			if want := float64(v.dotLocked(q, int(c.ord))); c.score != want {
				t.Fatalf("dims %d, row %d: rescored %v, dotLocked %v", dims, c.ord, c.score, want)
			}
		}
	}
}

// TestSearchApproxMatchesReference: the search — the threshold from a sample, the two
// halves of the scan keeping the rows reaching it, the gathered rescoring — returns exactly
// what scoring every row's code, offering every row and rescoring the best one by one
// returns, on clustered rows (many near ties) and uniform ones, for small and large k.
func TestSearchApproxMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const dims, n = 64, ApproxMinRows + 5_000
	centres := make([][]float32, 40)
	for i := range centres {
		centres[i] = randUnit(r, dims)
	}
	for _, clustered := range []bool{false, true} {
		v := NewVectors(dims)
		for i := range n {
			vec := randUnit(r, dims)
			if clustered {
				c := centres[r.IntN(len(centres))]
				for d := range vec {
					vec[d] = c[d] + 0.05*vec[d]
				}
			}
			if err := v.Add(fmt.Sprintf("m%05d", (i*7919)%n), vec); err != nil {
				t.Fatal(err)
			}
		}
		for qi := range 6 {
			q := randUnit(r, dims)
			if clustered {
				q = slices.Clone(centres[qi])
			}
			for _, k := range []int{1, 20, 200} {
				rescore := Rescore(k)
				if got, want := v.SearchApprox(q, k, rescore), referenceApprox(v, q, k, rescore); !slices.Equal(got, want) {
					t.Fatalf("clustered %v, query %d, k %d: SearchApprox %v\nreference %v", clustered, qi, k, got[:min(3, len(got))], want[:min(3, len(want))])
				}
			}
		}
	}
}

// referenceApprox is SearchApprox the plain way: every row's 1-bit, high-plane and low-plane
// dot products, the threshold from the same sample (runs of adjacent rows) of 1-bit scores
// sorted, the rows reaching it (or every row) offered to a heap by 4-bit score, the best
// rescored one by one.
func referenceApprox(v *Vectors, q []float32, k, rescore int) []Hit {
	q, _ = Normalize(q)
	v.mu.RLock()
	defer v.mu.RUnlock()
	n := len(v.ids)
	s2 := v.stride2
	qc := make([]int8, 4*s2)
	quantize(qc, q)
	var qsum int32
	for _, c := range qc {
		qsum += int32(c)
	}
	q1 := make([]int8, 8*v.stride1)
	q1sum := codeRotated(q1, make([]byte, 4*v.stride1), make([]float32, rotDims(v.dims)), q)
	d1, hd, ld := make([]int32, n), make([]int32, n), make([]int32, n)
	dotsU1(q1, v.sign1[:n*v.stride1], v.stride1, d1)
	dotsU2(qc, v.hi2[:n*s2], s2, hd)
	dotsU2(qc, v.lo2[:n*s2], s2, ld)
	scores := make([]float32, n)
	for r := range n {
		scores[r] = float32(float32(2*float32(d1[r]))-float32(q1sum)) * v.w1[r]
	}
	rescore = min(max(rescore, k), n)
	pass := make([]bool, n)
	for r := range pass {
		pass[r] = true
	}
	if step := n / (selectSamples / sampleRun); step >= 2*sampleRun {
		var sample []float32
		for i := range selectSamples / sampleRun {
			sample = append(sample, scores[i*step:i*step+sampleRun]...)
		}
		m := len(sample)
		if j := selectSlack + FirstStage(rescore, n)*m/n; j < m/4 {
			slices.SortFunc(sample, cmpDesc)
			reach := 0
			for r := range n {
				pass[r] = scores[r] >= sample[j-1]
				if pass[r] {
					reach++
				}
			}
			if reach < rescore {
				for r := range pass {
					pass[r] = true
				}
			}
		}
	}
	cand := topK{k: rescore, ids: v.ids}
	for r := range n {
		if pass[r] {
			cand.offer(int32(r), float64(float32(4*hd[r]+ld[r]-8*qsum)*v.scales[r]))
		}
	}
	h := topK{k: k, ids: v.ids}
	rq := v.newRescorer(q)
	for _, c := range cand.heap {
		h.offer(c.ord, float64(v.dotLocked(rq, int(c.ord))))
	}
	return h.sorted()
}

func TestQuantizeLiterals(t *testing.T) {
	code := make([]int8, 6)
	code[5] = 9 // padding must be cleared
	scale := quantize(code, []float32{0.5, -0.25, 0, 1, -1})
	// 0.5·127 = 63.5 rounds away from zero; −0.25·127 = −31.75.
	if want := []int8{64, -32, 0, 127, -127, 0}; !slices.Equal(code, want) {
		t.Fatalf("code = %v, want %v", code, want)
	}
	if scale != float32(1)/127 {
		t.Fatalf("scale = %v, want 1/127", scale)
	}
	if s := quantize(code, []float32{0, 0}); s != 0 || !slices.Equal(code, make([]int8, 6)) {
		t.Fatalf("zero vector: scale %v, code %v", s, code)
	}
}

// TestSearchApproxEqualsExact: above ApproxMinRows, through swap-deletes and replacements,
// Search (approximate) returns what brute force does on random vectors, whose top scores are
// well apart compared with the int8 quantization error; and with rescore ≥ Len it is exact
// by construction, also on dimensions that are not a multiple of 32.
func TestSearchApproxEqualsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const dims = 40 // codes padded to 64
	v := NewVectors(dims)
	ref := map[string][]float32{}
	n := ApproxMinRows + 2000
	v.Grow(n)
	for i := range n {
		id := fmt.Sprintf("v%06d", i)
		vec := randUnit(r, dims)
		if err := v.Add(id, vec); err != nil {
			t.Fatal(err)
		}
		ref[id] = vec
	}
	for i := 0; i < n; i += 7 {
		id := fmt.Sprintf("v%06d", i)
		if i%2 == 0 {
			v.Remove(id)
			delete(ref, id)
		} else {
			vec := randUnit(r, dims)
			if err := v.Add(id, vec); err != nil {
				t.Fatal(err)
			}
			ref[id] = vec
		}
	}
	if v.Len() < ApproxMinRows {
		t.Fatalf("Len = %d, below ApproxMinRows: the test would not exercise the approximate path", v.Len())
	}
	checkCodes(t, v, ref)
	// Rescored by the codes, a score is within quantization error of the float32 cosine:
	// the hits are the brute-force ones up to near ties.
	for range 20 {
		q := randUnit(r, dims)
		want := bruteForce(ref, q, 20)
		assertNearHits(t, v.Search(q, 20), want, ref, q, 1e-3)
		assertNearHits(t, v.SearchExact(q, 20), want, ref, q, 1e-3)
	}
	// Get returns what the codes give back, as a unit vector: within 2e-3 of the original in
	// every component.
	for id, want := range ref {
		got := v.Get(id)
		var ss float64
		for i := range got {
			ss += float64(got[i]) * float64(got[i])
			if d := got[i] - want[i]; d > 2e-3 || d < -2e-3 {
				t.Fatalf("Get(%s)[%d] = %v, want about %v", id, i, got[i], want[i])
			}
		}
		if ss < 1-1e-5 || ss > 1+1e-5 {
			t.Fatalf("Get(%s) has squared norm %v, want 1", id, ss)
		}
		break
	}
	small := NewVectors(3)
	for i, vec := range [][]float32{{1, 0, 0}, {0, 1, 0}, {0.9, 0.1, 0}, {-1, 0, 0}} {
		if err := small.Add(fmt.Sprint(i), vec); err != nil {
			t.Fatal(err)
		}
	}
	q := []float32{1, 0.05, 0}
	assertHitsTol(t, small.SearchApprox(q, 2, 100), small.SearchExact(q, 2), 0)
	if got := small.SearchApprox(q, 0, 10); got != nil {
		t.Fatalf("k=0 returned %v", got)
	}
}

// assertNearHits asserts that got is want up to quantization: every hit's score within tol
// of its float32 cosine, best first, and a hit of want missing from got no better than got's
// worst by more than 2·tol (a near tie that quantization may swap).
func assertNearHits(t *testing.T, got, want []Hit, ref map[string][]float32, q []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hits, want %d", len(got), len(want))
	}
	cos := func(id string) float64 { return bruteForce(map[string][]float32{id: ref[id]}, q, 1)[0].Score }
	in := map[string]bool{}
	for i, h := range got {
		in[h.ID] = true
		if c := cos(h.ID); math.Abs(h.Score-c) > tol {
			t.Fatalf("hit %d %s: score %v, cosine %v", i, h.ID, h.Score, c)
		}
		if i > 0 && h.Score > got[i-1].Score {
			t.Fatalf("hits not best first: %v", got)
		}
	}
	worst := cos(got[len(got)-1].ID)
	for _, w := range want {
		if !in[w.ID] && w.Score > worst+2*tol {
			t.Fatalf("missed %+v, better than the worst hit's cosine %v by more than a near tie", w, worst)
		}
	}
}

// checkCodes asserts that v keeps its three codes for every row, each equal to the
// quantization of the row's vector in ref, and no float32 rows.
func checkCodes(t *testing.T, v *Vectors, ref map[string][]float32) {
	t.Helper()
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.coded || len(v.hi2) != len(v.ids)*v.stride2 || len(v.lo2) != len(v.ids)*v.stride2 || len(v.scales) != len(v.ids) ||
		len(v.res) != len(v.ids)*2*v.stride || len(v.s8) != len(v.ids) || v.data != nil ||
		len(v.sign1) != len(v.ids)*v.stride1 || len(v.w1) != len(v.ids) {
		t.Fatalf("coded %v, %d+%d plane bytes, %d scales, %d residual bytes, %d residual scales and %d floats for %d rows of strides %d, %d",
			v.coded, len(v.hi2), len(v.lo2), len(v.scales), len(v.res), len(v.s8), len(v.data), len(v.ids), v.stride2, v.stride)
	}
	want := make([]byte, v.dims)
	want8 := make([]int8, v.dims)
	rv, want1 := make([]float32, rotDims(v.dims)), make([]byte, v.stride1)
	for r, id := range v.ids {
		vec, err := Normalize(ref[id])
		if err != nil || len(vec) != v.dims {
			t.Fatalf("row %d (%s): no reference vector", r, id)
		}
		rotate(rv, vec)
		if v.w1[r] > v.w1max {
			t.Fatalf("row %d (%s): w %v above w1max %v", r, id, v.w1[r], v.w1max)
		}
		if w := encodeSigns(want1, rv); v.w1[r] != w || !slices.Equal(v.sign1[r*v.stride1:(r+1)*v.stride1], want1) {
			t.Fatalf("row %d (%s): 1-bit code %x (w %v), want %x (%v)", r, id, v.sign1[r*v.stride1:(r+1)*v.stride1], v.w1[r], want1, w)
		}
		scale := quantizeU(want, vec)
		if v.scales[r] != scale {
			t.Fatalf("row %d (%s): scale %v, want %v", r, id, v.scales[r], scale)
		}
		h2, l2 := v.hi2[r*v.stride2:(r+1)*v.stride2], v.lo2[r*v.stride2:(r+1)*v.stride2]
		for d := range v.stride2 * 4 {
			u := 4*get2(h2, d) + get2(l2, d)
			if d >= v.dims && u != 0 || d < v.dims && u != want[d] {
				t.Fatalf("row %d (%s) dim %d: planes give %d, want %d (padding 0)", r, id, d, u, want[min(d, v.dims-1)])
			}
		}
		res := make([]float32, v.dims)
		for d := range res {
			res[d] = vec[d] - scale*float32(int(want[d])-8)
		}
		s8 := quantize(want8, res)
		hi, lo := v.resPlanes(r)
		for d, c := range want8 {
			if got := 16*(int(nibble(hi, d))-8) + int(nibble(lo, d)); got != int(c) || v.s8[r] != s8 {
				t.Fatalf("row %d (%s) dim %d: residual code %d (scale %v), want %d (%v)", r, id, d, got, v.s8[r], c, s8)
			}
		}
	}
}

// TestVectorsCodesFromThreshold: an index added to one by one has no codes below
// ApproxMinRows and codes for every row from there on, replacements included.
func TestVectorsCodesFromThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	v := NewVectors(8)
	ref := map[string][]float32{}
	add := func(id string) {
		vec := randUnit(r, 8)
		if err := v.Add(id, vec); err != nil {
			t.Fatal(err)
		}
		ref[id] = vec
	}
	for i := range ApproxMinRows - 1 {
		add(fmt.Sprintf("v%06d", i))
	}
	v.Remove("v000000")
	add("v000000")
	if v.coded || v.hi2 != nil {
		t.Fatalf("codes kept below ApproxMinRows (%d rows)", v.Len())
	}
	q := randUnit(r, 8)
	assertHitsTol(t, v.SearchApprox(q, 10, 20), v.SearchExact(q, 10), 0)
	for _, id := range []string{"x1", "x2", "v000005"} { // the threshold, a new row, a replacement
		add(id)
	}
	checkCodes(t, v, ref)
	v.Remove("v000007")
	delete(ref, "v000007")
	checkCodes(t, v, ref)
}

func BenchmarkVectorsSearch100k256(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := NewVectors(256)
	v.Grow(100_000)
	for i := range 100_000 {
		if err := v.Add(fmt.Sprintf("v%06d", i), randUnit(r, 256)); err != nil {
			b.Fatal(err)
		}
	}
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randUnit(r, 256)
	}
	b.Run("exact", func(b *testing.B) {
		reportPercentiles(b, func(i int) { v.SearchExact(qs[i%len(qs)], 40) })
	})
	b.Run("approx", func(b *testing.B) {
		reportPercentiles(b, func(i int) { v.SearchApprox(qs[i%len(qs)], 40, Rescore(40)) })
	})
	// The first stage's threshold alone: the sample's gather, its scores and the pick.
	b.Run("threshold", func(b *testing.B) {
		sc := v.scratch()
		qr, q1, planes := make([]float32, rotDims(v.dims)), make([]int8, 8*v.stride1), make([]byte, 4*v.stride1)
		reportPercentiles(b, func(i int) {
			sum := codeRotated(q1, planes, qr, qs[i%len(qs)])
			v.firstThreshold(query1{q1, planes, float32(sum)}, FirstStage(Rescore(40), 100_000), sc)
		})
	})
}

// TestJthBest: the j-th best of a quickselect is the j-th of a descending sort, on distinct
// values, many ties, sorted and reversed input.
func TestJthBest(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	for _, n := range []int{1, 2, 3, 17, 2048, 2100} {
		random, ties, up := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range n {
			random[i], ties[i], up[i] = r.Float32(), float32(r.IntN(7)), float32(i)
		}
		down := slices.Clone(up)
		slices.Reverse(down)
		for name, s := range map[string][]float32{"random": random, "ties": ties, "up": up, "down": down} {
			sorted := slices.Clone(s)
			slices.SortFunc(sorted, func(a, b float32) int { return cmpDesc(a, b) })
			for _, j := range []int{1, 2, 9, 18, smallJ - 1, smallJ, smallJ + 1, n / 4, n / 2, n - 1, n} {
				if j < 1 || j > n {
					continue
				}
				if got := jthBest(slices.Clone(s), j); got != sorted[j-1] {
					t.Fatalf("%s n %d: jthBest(%d) = %v, want %v", name, n, j, got, sorted[j-1])
				}
			}
		}
	}
}

// TestAppendReaching: the rows kept are exactly those whose score, as scaleScores computes
// it, reaches the threshold, in row order after what dst held, over every tail length; ties
// with the threshold are kept.
func TestAppendReaching(t *testing.T) {
	logKernels(t, "appendReaching")
	r := rand.New(rand.NewPCG(14, 15))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 1024, 1029} {
		dots, scales := make([]int32, n), make([]float32, n)
		for i := range n {
			dots[i], scales[i] = int32(r.IntN(20_001)-10_000), float32(r.Float64())/7
		}
		scores := make([]float32, n)
		a, b := float32(4), float32(-6.5*31)
		scaleScores(dots, scales, a, b, scores)
		th := float32(100)
		if n > 3 {
			th = scores[3] // a tie, kept
		}
		base := 5000
		want := []int32{-1}
		for i, s := range scores {
			if s >= th {
				want = append(want, int32(base+i))
			}
		}
		if got := appendReaching([]int32{-1}, dots, scales, a, b, th, base); !slices.Equal(got, want) {
			t.Fatalf("n %d: kept %v, want %v", n, got, want)
		}
		if got := appendReachingGo([]int32{-1}, dots, scales, a, b, th, base); !slices.Equal(got, want) {
			t.Fatalf("n %d: the Go path kept %v, want %v", n, got, want)
		}
	}
}

func cmpDesc(a, b float32) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// TestSelectBest: the first k entries selectBest returns are the k best of a full sort (by
// score, then the smaller id), on distinct scores, many ties, sorted and reversed input.
func TestSelectBest(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n = 3000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("x%05d", (i*7919)%n)
	}
	inputs := map[string]func(i int) float64{
		"random":   func(int) float64 { return r.Float64() },
		"ties":     func(int) float64 { return float64(r.IntN(7)) },
		"sorted":   func(i int) float64 { return float64(i) },
		"reversed": func(i int) float64 { return float64(-i) },
	}
	for name, gen := range inputs {
		for _, k := range []int{1, 2, 17, 512, n - 1, n, n + 5} {
			c := make([]scored, n)
			for i := range c {
				c[i] = scored{int32(i), gen(i)}
			}
			want := slices.Clone(c)
			slices.SortFunc(want, func(a, b scored) int {
				if a.score != b.score {
					if a.score > b.score {
						return -1
					}
					return 1
				}
				return strings.Compare(ids[a.ord], ids[b.ord])
			})
			want = want[:min(k, n)]
			var vals []float64
			got := slices.Clone(selectBest(c, k, ids, &vals))
			pos := make(map[scored]int, len(want)) // each entry's place in want; -1 when absent
			for i, w := range want {
				pos[w] = i
			}
			at := func(s scored) int {
				if i, ok := pos[s]; ok {
					return i
				}
				return -1
			}
			slices.SortFunc(got, func(a, b scored) int { return at(a) - at(b) })
			if !slices.Equal(got, want) {
				t.Fatalf("%s, k %d: selected other entries than the sort's best", name, k)
			}
		}
	}
}

// BenchmarkJthBest: the first stage's threshold pick, the 18th best of 2,048 sampled scores
// (100,000 rows, 512 rescored).
func BenchmarkJthBest(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	s := make([]float32, 2048)
	for i := range s {
		s[i] = r.Float32()
	}
	w := make([]float32, len(s))
	for b.Loop() {
		copy(w, s)
		jthBest(w, 18)
	}
}

// BenchmarkSelectBest: stage 2's pick at 100,000 rows, the 512 best of the 2,048 rows the
// first stage passes on, by their 4-bit scores (float32 values).
func BenchmarkSelectBest(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 2048
	ids := make([]string, 100_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%06d", i)
	}
	c := make([]scored, n)
	for i := range c {
		c[i] = scored{int32(r.IntN(len(ids))), float64(float32(r.NormFloat64()))}
	}
	w := make([]scored, n)
	var vals []float64
	for b.Loop() {
		copy(w, c)
		selectBest(w, 512, ids, &vals)
	}
}

// TestFirstStagePassesReachingRows: the 1-bit scan passes on exactly the rows whose RaBitQ
// score w·(2·Σ_{bits set} q₁ − Σ q₁) reaches the sampled threshold, about as many as asked
// for, and among them the exact top 20 of clustered 256-dimension rows.
func TestFirstStagePassesReachingRows(t *testing.T) {
	t.Parallel() // long under -race: it runs beside TestSearchLearnedEqualsExhaustive
	r := rand.New(rand.NewPCG(21, 22))
	const dims, n = 256, 40_000
	centres := make([][]float32, 200)
	for i := range centres {
		centres[i] = randUnit(r, dims)
	}
	v := NewVectors(dims)
	ref := map[string][]float32{}
	for i := range n {
		vec := randUnit(r, dims)
		c := centres[r.IntN(len(centres))]
		for d := range vec {
			vec[d] = c[d] + 0.7*vec[d]
		}
		id := fmt.Sprintf("m%05d", i)
		if err := v.Add(id, vec); err != nil {
			t.Fatal(err)
		}
		ref[id], _ = Normalize(vec)
	}
	sc := v.scratch()
	keep := FirstStage(Rescore(20), n)
	for qi := range 10 {
		q := randUnit(r, dims)
		for d := range q {
			q[d] = centres[qi][d] + 0.7*q[d]
		}
		q, _ = Normalize(q)
		q1 := query1{q: make([]int8, 8*v.stride1), planes: make([]byte, 4*v.stride1)}
		q1.sum = float32(codeRotated(q1.q, q1.planes, make([]float32, rotDims(dims)), q))
		th, ok := v.firstThreshold(q1, keep, sc)
		if !ok || !v.firstStage(q1, keep, sc) {
			t.Fatalf("query %d: no threshold at %d rows", qi, n)
		}
		got := map[int32]bool{}
		for _, a := range sc.above {
			for _, row := range a {
				got[row] = true
			}
		}
		d1 := make([]int32, n)
		dotsU1(q1.q, v.sign1, v.stride1, d1) // the kernel TestDotsU1MatchesGo checks
		want := 0
		for row := range n {
			s := float32(float32(2*float32(d1[row]))-q1.sum) * v.w1[row]
			if reach := s >= th; reach != got[int32(row)] {
				t.Fatalf("query %d row %d: score %v against threshold %v, passed %v", qi, row, s, th, got[int32(row)])
			} else if reach {
				want++
			}
		}
		if len(got) != want || want < keep/2 || want > 2*keep {
			t.Fatalf("query %d: %d rows passed (%d reach), asked for about %d", qi, len(got), want, keep)
		}
		for _, h := range bruteForce(ref, q, 20) {
			if row := v.rows[h.ID]; !got[int32(row)] {
				t.Errorf("query %d: exact hit %s (cosine %.3f) not passed on", qi, h.ID, h.Score)
			}
		}
	}
}
