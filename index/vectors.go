package index

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/salience-ai/salience/models"
)

// parallelRows is the collection size above which Search splits the matrix–vector product
// over two goroutines. Below it the goroutine hand-off costs more than it saves (measured:
// ~5.5 ms vs 7.7 ms at 100,000 × 384, docs/design.md#embedded-store; a goroutine costs a few µs).
const parallelRows = 4096

// scanning counts the vector scans running in the process. A scan is shared with a second
// goroutine only when it runs alone: beside another, the cores are busy with that one, and
// the helper's hand-off is all it would add.
var scanning atomic.Int32

// splitChunk is how many rows a worker of a shared scan claims at a time: a few of
// SearchApprox's cache-sized chunks, so claims are rare (an atomic add each) and the last
// one leaves the other worker little to wait for.
const splitChunk = 4 * scanChunk

// splitScan runs scan over rows [0, n). When n is at least parallelRows, there is more than
// one core and no other scan is running, a helper goroutine shares it: the caller and the
// helper claim splitChunk rows at a time until none are left, and the caller waits only for
// a helper that has started — one that starts later finds nothing to claim. So the scan
// never waits for a helper still queued: the second core is often busy when the scan
// begins (with the text search started just before it, or a background write), and a
// helper given a fixed half started on average as the caller finished its own (measured at
// 100,000 rows: 193 µs after, the caller's half taking 194 µs), which made the scan serial
// plus a hand-off. scan's worker is 0 for the caller, 1 for the helper; a worker's calls
// come one after another, and rows reach scan in no particular order across workers.
func splitScan(n int, scan func(worker, lo, hi int)) {
	alone := scanning.Add(1) == 1
	defer scanning.Add(-1)
	if !alone || n < parallelRows || runtime.GOMAXPROCS(0) < 2 {
		scan(0, 0, n)
		return
	}
	// The claims and started are sequentially consistent: a helper that marks itself
	// started after the caller found it not started claims after the caller's last claim,
	// which passed n, so it scans nothing.
	var next atomic.Int64
	var started atomic.Bool
	done := make(chan struct{})
	work := func(w int) {
		for {
			lo := int(next.Add(splitChunk)) - splitChunk
			if lo >= n {
				return
			}
			scan(w, lo, min(lo+splitChunk, n))
		}
	}
	goHelper(func() {
		defer close(done)
		started.Store(true)
		work(1)
	})
	work(0)
	if started.Load() {
		<-done
	}
}

// goHelper starts splitScan's helper; tests replace it to hold the helper back.
var goHelper = func(f func()) { go f() }

// unitTolerance is how far a vector's norm may be from 1 and still count as normalized.
// Embedders return unit vectors up to float32 rounding; leaving those bit-for-bit as given
// keeps what a store writes equal to what it reads back.
const unitTolerance = 1e-5

// Vectors is an exact nearest-neighbour index by cosine similarity. Vectors are stored
// L2-normalized in one flat row-major []float32, so a search is one matrix–vector product
// (gonum blas32.Gemv) followed by a top-k selection; removal swaps the last row into the hole.
//
// Once it has held ApproxMinRows rows it is coded (see vectors_approx.go): each row is kept
// as a 1-bit code of its random rotation, which Search scans first (a thirty-second of the
// float32 bytes), a 4-bit code in two 2-bit planes, with which it ranks the rows the scan
// passes on, and an int8 code of what the 4-bit code misses, with which it rescores the
// best few hundred; the float32 rows are dropped, so a coded row takes about
// dims + dims/2 + rotDims(dims)/8 + 12 bytes instead of 4·dims. Smaller indexes — most
// namespaces — keep float32 rows and search exactly.
type Vectors struct {
	mu      sync.RWMutex
	dims    int
	data    []float32 // len(ids) rows of dims, until coded (then nil)
	stride  int       // bytes in one 4-bit plane: u4Bytes(dims)
	stride2 int       // bytes in one 2-bit plane: u2Bytes(dims)
	stride1 int       // bytes in one 1-bit code: u1Bytes(dims)
	coded   bool      // codes and scales are kept: set on reaching ApproxMinRows, never unset
	exact   bool      // never coded (NewExactVectors)
	// hi2 and lo2 hold, when coded, each row's 4-bit code u = 4·h + l (quant4.go's rounding)
	// as its two 2-bit planes (quant2.go), stride2 bytes a row each: the first search stage
	// scans hi2 alone.
	hi2, lo2 []byte
	scales   []float32 // by row: a code's unit, so row ≈ scale·(u − 8), when coded
	// sign1 holds, when coded, each row's 1-bit code of its rotation (quant1.go), stride1
	// bytes a row: the first search stage scans it alone. w1 holds each row's 1/‖Rx‖₁.
	sign1 []byte
	w1    []float32
	w1max float32 // at least every row's w (the largest ever coded: removals leave it)
	// res holds, when coded, each row's residual — what its 4-bit code misses — as an int8
	// code c split into two 4-bit planes of stride bytes, c = 16·(hi − 8) + lo, so the same
	// AVX2 kernel reads them; 2·stride bytes a row.
	res []byte
	s8  []float32 // by row: row ≈ scale·(code − 8) + s8·c, when coded
	// encTmp and encC are encodeRow's scratch, under mu (set when coded).
	encTmp []float32
	encC   []int8
	encU   []byte
	encRot []float32
	ids    []string // by row
	rows   map[string]int
	pool   sync.Pool // *scratch
}

// NewVectors returns an empty index of dims-dimensional vectors.
func NewVectors(dims int) *Vectors {
	return &Vectors{dims: dims, stride: u4Bytes(dims), stride2: u2Bytes(dims), stride1: u1Bytes(dims), rows: map[string]int{}}
}

// NewExactVectors returns an empty index that is never coded: it keeps float32 rows and
// searches by a full scan at any size — the reference approximate search is measured against
// (salience bench ann), at four times a coded index's memory.
func NewExactVectors(dims int) *Vectors {
	v := NewVectors(dims)
	v.exact = true
	return v
}

// Dims returns the dimension of the vectors.
func (v *Vectors) Dims() int { return v.dims }

// Len returns the number of vectors.
func (v *Vectors) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.ids)
}

// Normalize returns vec scaled to unit length: a copy, or vec itself when its norm is already
// 1 within float32 rounding. A zero vector is returned as is. It fails on NaN or infinite
// components.
func Normalize(vec []float32) ([]float32, error) {
	var ss float64
	for _, f := range vec {
		ss += float64(f) * float64(f)
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return nil, fmt.Errorf("index: vector has a NaN or infinite component")
	}
	if ss == 0 || math.Abs(math.Sqrt(ss)-1) <= unitTolerance {
		return vec, nil
	}
	out := slices.Clone(vec)
	models.NormalizeL2(out)
	return out, nil
}

// Add stores vec under id, replacing any vector it had. The vector is normalized (see
// Normalize). It fails when the dimension is wrong or a component is not finite.
func (v *Vectors) Add(id string, vec []float32) error {
	if len(vec) != v.dims {
		return fmt.Errorf("index: vector of %d dimensions, want %d", len(vec), v.dims)
	}
	vec, err := Normalize(vec)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if r, ok := v.rows[id]; ok {
		if v.coded {
			v.encodeRow(r, vec)
		} else {
			copy(v.data[r*v.dims:(r+1)*v.dims], vec)
		}
		return nil
	}
	r := len(v.ids)
	v.rows[id] = r
	v.ids = append(v.ids, id)
	if v.coded {
		if len(v.res)+2*v.stride > cap(v.res) {
			// Double explicitly: append grows large slices by only 1.25×, which copies
			// the whole matrix about five times over while a big index loads.
			v.reserveLocked(2 * len(v.ids))
		}
		v.hi2 = append(v.hi2, make([]byte, v.stride2)...)
		v.lo2 = append(v.lo2, make([]byte, v.stride2)...)
		v.scales = append(v.scales, 0)
		v.sign1 = append(v.sign1, make([]byte, v.stride1)...)
		v.w1 = append(v.w1, 0)
		v.res = append(v.res, make([]byte, 2*v.stride)...)
		v.s8 = append(v.s8, 0)
		v.encodeRow(r, vec)
		return nil
	}
	if len(v.data)+v.dims > cap(v.data) {
		v.reserveLocked(2 * len(v.ids))
	}
	v.data = append(v.data, vec...)
	if len(v.ids) >= ApproxMinRows && !v.exact {
		v.encodeLocked()
	}
	return nil
}

// Grow makes room for n more vectors without reallocating, for bulk loads.
func (v *Vectors) Grow(n int) {
	if n <= 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.coded && !v.exact && len(v.ids)+n >= ApproxMinRows {
		v.encodeLocked() // now, so the codes are reserved with the rest
	}
	v.reserveLocked(len(v.ids) + n)
	v.ids = slices.Grow(v.ids, n)
	if len(v.rows) == 0 {
		v.rows = make(map[string]int, n)
	}
}

// encodeLocked starts keeping codes: it quantizes every row, with room for as many rows as
// data has, and drops the float32 rows.
func (v *Vectors) encodeLocked() {
	n, room := len(v.ids), max(cap(v.data)/max(v.dims, 1), len(v.ids))
	v.hi2 = make([]byte, n*v.stride2, room*v.stride2)
	v.lo2 = make([]byte, n*v.stride2, room*v.stride2)
	v.scales = make([]float32, n, room)
	v.sign1 = make([]byte, n*v.stride1, room*v.stride1)
	v.w1 = make([]float32, n, room)
	v.res = make([]byte, n*2*v.stride, room*2*v.stride)
	v.s8 = make([]float32, n, room)
	v.encTmp, v.encC, v.encU = make([]float32, v.dims), make([]int8, v.dims), make([]byte, v.dims)
	v.encRot = make([]float32, rotDims(v.dims))
	for r := range n {
		v.encodeRow(r, v.data[r*v.dims:(r+1)*v.dims])
	}
	v.data = nil
	v.coded = true
}

// encodeRow writes row r's codes for the unit vector vec: the 1-bit code of its rotation
// with w; the 4-bit code in its two 2-bit planes, and the int8 code of the residual
// vec − scale·(u − 8) in its two 4-bit planes, each with its scale. The residual is at most
// half a 4-bit step a component, so its int8 code is about 14 times finer than an int8 code
// of vec itself.
func (v *Vectors) encodeRow(r int, vec []float32) {
	rotate(v.encRot, vec)
	v.w1[r] = encodeSigns(v.sign1[r*v.stride1:(r+1)*v.stride1], v.encRot)
	v.w1max = max(v.w1max, v.w1[r])
	u, tmp, c := v.encU, v.encTmp, v.encC
	sc := quantizeU(u, vec)
	hi, lo := v.hi2[r*v.stride2:(r+1)*v.stride2], v.lo2[r*v.stride2:(r+1)*v.stride2]
	clear(hi)
	clear(lo)
	for d, x := range u {
		set2(hi, d, x>>2)
		set2(lo, d, x&3)
		tmp[d] = vec[d] - sc*float32(int(x)-8)
	}
	v.scales[r] = sc
	n := len(vec)
	v.s8[r] = quantize(c, tmp[:n])
	rhi, rlo := v.resPlanes(r)
	at := func(d int) int8 { // padding dimensions code 0
		if d < n {
			return c[d]
		}
		return 0
	}
	for b := 0; b*64 < n; b++ {
		for i := range 32 {
			x, y := at(b*64+i), at(b*64+32+i)
			// x>>4 is ⌊x/16⌋ ∈ −8…7, x&15 the rest: x = 16·(x>>4) + x&15.
			rhi[b*32+i] = byte(x>>4+8) | byte(y>>4+8)<<4
			rlo[b*32+i] = byte(x&15) | byte(y&15)<<4
		}
	}
}

// resPlanes returns row r's residual planes.
func (v *Vectors) resPlanes(r int) (hi, lo []byte) {
	row := v.res[r*2*v.stride : (r+1)*2*v.stride]
	return row[:v.stride], row[v.stride:]
}

// dotLocked is the query's dot product with coded row r, through the row's 4-bit code's
// planes and its residual's: eight kernel runs, each query level (see rescorer) against each
// plane, combined in float64.
func (v *Vectors) dotLocked(q *rescorer, r int) float32 {
	h2, l2 := v.hi2[r*v.stride2:(r+1)*v.stride2], v.lo2[r*v.stride2:(r+1)*v.stride2]
	hi, lo := v.resPlanes(r)
	var out [1]int32
	var total float64
	for l := range q.levels {
		qc, sum := q.levels[l], float64(q.sums[l])
		dotsU2(qc, h2, v.stride2, out[:])
		a := 4 * float64(out[0])
		dotsU2(qc, l2, v.stride2, out[:])
		a += float64(out[0]) - 8*sum // Σ q·(u − 8)
		dotsU4(qc, hi, v.stride, out[:])
		b := 16 * (float64(out[0]) - 8*sum)
		dotsU4(qc, lo, v.stride, out[:])
		b += float64(out[0]) // Σ q·c
		total += q.scales[l] * (float64(v.scales[r])*a + float64(v.s8[r])*b)
	}
	return float32(total)
}

// reserveLocked grows data's capacity to hold rows vectors.
func (v *Vectors) reserveLocked(rows int) {
	if !v.coded {
		if need := rows * v.dims; need > cap(v.data) {
			data := make([]float32, len(v.data), need)
			copy(data, v.data)
			v.data = data
		}
		return
	}
	for _, p := range []struct {
		plane  *[]byte
		stride int
	}{{&v.hi2, v.stride2}, {&v.lo2, v.stride2}, {&v.sign1, v.stride1}} {
		if need := rows * p.stride; need > cap(*p.plane) {
			plane := make([]byte, len(*p.plane), need)
			adviseHuge(plane)
			copy(plane, *p.plane)
			*p.plane = plane
		}
	}
	if need := rows * 2 * v.stride; need > cap(v.res) {
		res := make([]byte, len(v.res), need)
		adviseHuge(res)
		copy(res, v.res)
		v.res = res
	}
	v.scales = slices.Grow(v.scales, max(0, rows-len(v.scales)))
	v.s8 = slices.Grow(v.s8, max(0, rows-len(v.s8)))
	v.w1 = slices.Grow(v.w1, max(0, rows-len(v.w1)))
}

// rowLocked writes row r into dst (len dims): the float32 row, or on a coded index what its
// codes give back, L2-normalized.
func (v *Vectors) rowLocked(dst []float32, r int) {
	if !v.coded {
		copy(dst, v.data[r*v.dims:(r+1)*v.dims])
		return
	}
	sc, s8 := v.scales[r], v.s8[r]
	var lut [16]float32 // a nibble's value: sc·(u − 8)
	for u := range lut {
		lut[u] = sc * float32(u-8)
	}
	var rlut [256]float32 // a residual byte pair's value: s8·(16·(hi − 8) + lo), by hi<<4|lo
	for i := range rlut {
		rlut[i] = s8 * float32(16*(i>>4-8)+i&15)
	}
	h2, l2 := v.hi2[r*v.stride2:(r+1)*v.stride2], v.lo2[r*v.stride2:(r+1)*v.stride2]
	for k, x := range h2 { // the 4-bit code, 128 dimensions a 32-byte block
		y, base := l2[k], k/32*128+k%32
		for sh := range 4 {
			if d := base + 32*sh; d < v.dims {
				dst[d] = lut[(x>>(2*sh)&3)<<2|y>>(2*sh)&3]
			}
		}
	}
	hi, lo := v.resPlanes(r)
	for b := 0; b*64 < v.dims; b++ { // plus the residual, 64 dimensions a block
		for i := range 32 {
			h, l := hi[b*32+i], lo[b*32+i]
			if d := b*64 + i; d < v.dims {
				dst[d] += rlut[(h&15)<<4|l&15]
			}
			if d := b*64 + 32 + i; d < v.dims {
				dst[d] += rlut[h&0xf0|l>>4]
			}
		}
	}
	models.NormalizeL2(dst)
}

// Get returns a copy of id's stored (normalized) vector, or nil.
func (v *Vectors) Get(id string) []float32 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	r, ok := v.rows[id]
	if !ok {
		return nil
	}
	out := make([]float32, v.dims)
	v.rowLocked(out, r)
	return out
}

// GetMany returns copies of ids' stored vectors, nil for a missing id: under one lock and
// in one allocation, for hydrating a recall's candidates (a few hundred vectors) at once.
// Each copy is capped at its own length, so appending to one never writes into another.
func (v *Vectors) GetMany(ids []string) [][]float32 {
	out := make([][]float32, len(ids))
	v.mu.RLock()
	defer v.mu.RUnlock()
	have := 0
	for _, id := range ids {
		if _, ok := v.rows[id]; ok {
			have++
		}
	}
	buf := make([]float32, have*v.dims)
	for i, id := range ids {
		r, ok := v.rows[id]
		if !ok {
			continue
		}
		dst := buf[:v.dims:v.dims]
		buf = buf[v.dims:]
		v.rowLocked(dst, r)
		out[i] = dst
	}
	return out
}

// Remove deletes id's vector; a missing id is ignored.
func (v *Vectors) Remove(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.rows[id]
	if !ok {
		return
	}
	last := len(v.ids) - 1
	if r != last {
		if v.coded {
			copy(v.hi2[r*v.stride2:(r+1)*v.stride2], v.hi2[last*v.stride2:])
			copy(v.lo2[r*v.stride2:(r+1)*v.stride2], v.lo2[last*v.stride2:])
			v.scales[r] = v.scales[last]
			copy(v.sign1[r*v.stride1:(r+1)*v.stride1], v.sign1[last*v.stride1:])
			v.w1[r] = v.w1[last]
			copy(v.res[r*2*v.stride:(r+1)*2*v.stride], v.res[last*2*v.stride:])
			v.s8[r] = v.s8[last]
		} else {
			copy(v.data[r*v.dims:(r+1)*v.dims], v.data[last*v.dims:])
		}
		v.ids[r] = v.ids[last]
		v.rows[v.ids[r]] = r
	}
	delete(v.rows, id)
	v.ids[last] = ""
	v.ids = v.ids[:last]
	if v.coded {
		v.hi2, v.lo2 = v.hi2[:last*v.stride2], v.lo2[:last*v.stride2]
		v.scales = v.scales[:last]
		v.sign1, v.w1 = v.sign1[:last*v.stride1], v.w1[:last]
		v.res = v.res[:last*2*v.stride]
		v.s8 = v.s8[:last]
	} else {
		v.data = v.data[:last*v.dims]
	}
}

// Search returns the k vectors most similar to q by cosine similarity, best first; ties go
// to the smaller id. Below ApproxMinRows rows it is SearchExact; from there on it is
// SearchApprox with Rescore(k) rows rescored. It returns nil when q has the wrong dimension
// or is not finite.
func (v *Vectors) Search(q []float32, k int) []Hit {
	if v.Len() >= ApproxMinRows {
		return v.SearchApprox(q, k, Rescore(k))
	}
	return v.SearchExact(q, k)
}

// SearchExact is Search by a full scan: every row's cosine with q — computed from the codes
// on a coded index, exactly otherwise (NewExactVectors keeps the exact reference).
func (v *Vectors) SearchExact(q []float32, k int) []Hit {
	if k <= 0 || len(q) != v.dims {
		return nil
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
	sc := v.scratch()
	defer v.pool.Put(sc)
	scores := grow(&sc.scores, n)

	x := blas32.Vector{N: v.dims, Inc: 1, Data: q}
	var rq *rescorer
	if v.coded {
		rq = v.newRescorer(q)
	}
	gemv := func(lo, hi int) {
		if v.coded { // every row through its codes
			for r := lo; r < hi; r++ {
				scores[r] = v.dotLocked(rq, r)
			}
			return
		}
		a := blas32.General{Rows: hi - lo, Cols: v.dims, Stride: v.dims, Data: v.data[lo*v.dims : hi*v.dims]}
		blas32.Gemv(blas.NoTrans, 1, a, x, 0, blas32.Vector{N: hi - lo, Inc: 1, Data: scores[lo:hi]})
	}
	splitScan(n, func(_, lo, hi int) { gemv(lo, hi) })

	h := topK{k: k, ids: v.ids}
	for r, s := range scores {
		// Cheap pre-check against the current worst keeps the heap out of the loop.
		if len(h.heap) == k && float64(s) < h.heap[0].score {
			continue
		}
		h.offer(int32(r), float64(s))
	}
	return h.sorted()
}
