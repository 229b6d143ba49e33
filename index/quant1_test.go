package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRotDims(t *testing.T) {
	for dims, want := range map[int]int{1: 256, 3: 256, 64: 256, 256: 256, 257: 512, 384: 512, 1000: 1024, 1536: 2048} {
		if got := rotDims(dims); got != want {
			t.Errorf("rotDims(%d) = %d, want %d", dims, got, want)
		}
	}
	for dims, want := range map[int]int{40: 32, 256: 32, 384: 64, 1536: 256, 3072: 512} {
		if got := u1Bytes(dims); got != want {
			t.Errorf("u1Bytes(%d) = %d, want %d", dims, got, want)
		}
	}
}

// TestRotateIsOrthogonal: the rotation keeps lengths and dot products (it is orthogonal),
// matches the Hadamard matrix written out for 8 dimensions, and is the same every time.
func TestRotateIsOrthogonal(t *testing.T) {
	logKernels(t, "fwhtWide")
	// H₂₅₆ by its definition, H[i][j] = (−1)^popcount(i&j), over √256, after each
	// component's move to its place with its sign.
	r := rand.New(rand.NewPCG(3, 4))
	x := randUnit(r, 40)
	got := make([]float32, 256)
	rotate(got, x)
	ro := rotationFor(256)
	distinct := map[float32]bool{}
	for i := range 256 {
		var want float64
		for j, f := range x {
			p := int(ro.place[j])
			h := 1.0
			if popcount(i&p)%2 == 1 {
				h = -1
			}
			want += h * float64(ro.signs[p]) * float64(f)
		}
		want /= 16
		if math.Abs(float64(got[i])-want) > 1e-5 {
			t.Fatalf("rotate(x)[%d] = %v, want %v", i, got[i], want)
		}
		distinct[float32(math.Abs(float64(got[i])))] = true
	}
	if len(distinct) < 200 { // padded at the end, 40 dimensions gave 64 values, each 4 times
		t.Errorf("a 40-dimension row rotated into 256 takes %d distinct magnitudes", len(distinct))
	}
	if !slices.Equal(slices.Sorted(slices.Values(ro.place)), perm(256)) {
		t.Errorf("places are not a permutation")
	}
	for _, dims := range []int{100, 256, 1536} {
		p := rotDims(dims)
		a, b := randUnit(r, dims), randUnit(r, dims)
		ra, rb := make([]float32, p), make([]float32, p)
		rotate(ra, a)
		rotate(rb, b)
		if d, want := dot64(ra, ra), 1.0; math.Abs(d-want) > 1e-5 {
			t.Errorf("dims %d: |Ra|² = %v, want 1", dims, d)
		}
		if d, want := dot64(ra, rb), dot64(a, b); math.Abs(d-want) > 1e-5 {
			t.Errorf("dims %d: Ra·Rb = %v, want a·b = %v", dims, d, want)
		}
		again := make([]float32, p)
		rotate(again, a)
		for i := range again {
			if again[i] != ra[i] {
				t.Fatalf("dims %d: a second rotation differs at %d", dims, i)
			}
		}
	}
	// Half of the signs are minus, about: the signs are random, not a pattern.
	minus := 0
	for _, s := range rotationFor(2048).signs {
		if s < 0 {
			minus++
		}
	}
	if minus < 900 || minus > 1148 {
		t.Errorf("%d of 2048 signs are −1", minus)
	}
}

func perm(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestEncodeSigns: dimension 256b+32s+i is bit s of byte 32b+i, set for a component ≥ 0,
// and w is 1/‖x‖₁.
func TestEncodeSigns(t *testing.T) {
	rv := make([]float32, 512)
	for i := range rv {
		rv[i] = -1
	}
	for _, d := range []int{0, 33, 70, 255, 256, 300, 511} {
		rv[d] = 0.5
	}
	rv[1] = 0 // zero is ≥ 0: a set bit
	code := make([]byte, u1Bytes(512))
	w := encodeSigns(code, rv)
	if want := float32(1 / (504 + 7*0.5)); w != want { // 504 of −1, 7 of 0.5 and a 0
		t.Errorf("w = %v, want %v", w, want)
	}
	want := map[int]byte{0: 1, 1: 1 | 1<<1, 6: 1 << 2, 31: 1 << 7, 32: 1, 44: 1 << 1, 63: 1 << 7} // dimensions 0; 1, 33; 70; 255; 256; 300; 511
	for i, b := range code {
		if b != want[i] {
			t.Errorf("byte %d = %#x, want %#x", i, b, want[i])
		}
	}
	for d := range 512 {
		if got, want := get1(code, d), byte(0); rv[d] >= 0 && got != 1 || rv[d] < 0 && got != want {
			t.Fatalf("get1(%d) = %d for component %v", d, got, rv[d])
		}
	}
	if w := encodeSigns(code, make([]float32, 256)); w != 0 {
		t.Errorf("zero row: w = %v, want 0", w)
	}
}

// TestDotsU1MatchesGo runs every 1-bit kernel the machine has against the Go reference, over
// every row remainder and block counts that end a widening group early (the AVX2 kernel
// widens every eight blocks), and the Go reference against plain arithmetic.
func TestDotsU1MatchesGo(t *testing.T) {
	logKernels(t, "dotsU1")
	r := rand.New(rand.NewPCG(18, 19))
	checkKernels(t, r, dotsU1Go, dot1Kernels(), 8, []int{32, 64, 96, 256, 288, 512},
		func(q []int8, codes []byte, cbytes int) { // every bit set against −127 throughout the first row
			for i := range cbytes {
				codes[i] = 0xff
			}
			for i := range min(len(q), 8*cbytes) {
				q[i] = -127
			}
		})
	const p = 512
	q := make([]int8, p)
	rv := make([]float32, p)
	var want int32
	for d := range p {
		q[d] = int8(r.IntN(255) - 127)
		rv[d] = float32(r.NormFloat64())
		if rv[d] >= 0 {
			want += int32(q[d])
		}
	}
	code := make([]byte, u1Bytes(p))
	encodeSigns(code, rv)
	got := make([]int32, 1)
	dotsU1Go(q, code, len(code), got)
	if got[0] != want {
		t.Fatalf("dotsU1Go = %d, want %d", got[0], want)
	}
}

// BenchmarkDotsU1 runs the 1-bit kernel over 100,000 rows of 256 dimensions on one core: the
// first stage of a 100k search (DOTS_ROWS sets the rows).
func BenchmarkDotsU1(b *testing.B) { benchKernel(b, dotsU1, 32, 8) }

// BenchmarkDotsU1Planes: the first stage's kernel, popcounts where the machine has them (the
// query's values wrapped into −8…7; the kernel's speed does not depend on them).
func BenchmarkDotsU1Planes(b *testing.B) {
	planes := make([]byte, 4*32)
	benchKernel(b, func(q []int8, codes []byte, cbytes int, out []int32) {
		dotsU1Planes(q, planes, codes, cbytes, out)
	}, 32, 8)
}

// TestAppendAtLeast: the SIMD path and the Go one keep, in order, the rows whose dot
// product is at least min, over every tail length, with the bound itself kept and the
// extreme values on either side.
func TestAppendAtLeast(t *testing.T) {
	logKernels(t, "appendAtLeast")
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 1024, 1029} {
		dots := make([]int32, n)
		for i := range n {
			dots[i] = int32(r.IntN(2001) - 1000)
		}
		if n > 2 {
			dots[0], dots[1], dots[2] = math.MaxInt32, math.MinInt32, 0
		}
		for _, lo := range []int32{math.MinInt32 + 1, -1, 0, 1, 500, math.MaxInt32} {
			base := 7000
			want := []int32{-1}
			for i, d := range dots {
				if d >= lo {
					want = append(want, int32(base+i))
				}
			}
			if got := appendAtLeast([]int32{-1}, dots, lo, base); !slices.Equal(got, want) {
				t.Fatalf("n %d min %d: kept %v, want %v", n, lo, got, want)
			}
			if got := appendAtLeastGo([]int32{-1}, dots, lo, base); !slices.Equal(got, want) {
				t.Fatalf("n %d min %d: the Go path kept %v, want %v", n, lo, got, want)
			}
		}
	}
}

// TestCodeRotated: the query's code is the ±q1Top code of its rotation, padded with zeros,
// its planes are that code's, and the returned sum is the code's.
func TestCodeRotated(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	q := randUnit(r, 100)
	q1, planes := make([]int8, 8*u1Bytes(100)), make([]byte, 4*u1Bytes(100))
	for i := range q1 {
		q1[i] = 9 // stale values must go
	}
	for i := range planes {
		planes[i] = 0xA5
	}
	sum := codeRotated(q1, planes, make([]float32, rotDims(100)), q)
	rq := make([]float32, 256)
	rotate(rq, q)
	want := make([]int8, len(q1))
	quantizeTo(want, rq, q1Top)
	var wantSum int32
	for _, c := range want {
		wantSum += int32(c)
	}
	if !slices.Equal(q1, want) || sum != wantSum {
		t.Fatalf("code %v sum %d, want %v sum %d", q1[:8], sum, want[:8], wantSum)
	}
	if m := slices.Max(q1); m != q1Top && slices.Min(q1) != -q1Top { // scaled to the largest component
		t.Fatalf("code's extremes %d, %d: not scaled to ±%d", m, slices.Min(q1), q1Top)
	}
	wantPlanes := make([]byte, len(planes))
	bitPlanes(wantPlanes, want, u1Bytes(100))
	if !slices.Equal(planes, wantPlanes) {
		t.Fatalf("planes % x, want % x", planes[:8], wantPlanes[:8])
	}
}

// TestBitPlanes: plane j holds bit j of q + 8 at each dimension's place in a 1-bit code
// (get1), so the four planes give back every value of the code, −8 and 7 included.
func TestBitPlanes(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, cb := range []int{32, 64} {
		q := make([]int8, 8*cb)
		for i := range q {
			q[i] = int8(r.IntN(16) - 8)
		}
		q[0], q[1], q[len(q)-1] = -8, 7, 0
		planes := make([]byte, 4*cb)
		for i := range planes {
			planes[i] = 0xFF // stale bits must go
		}
		bitPlanes(planes, q, cb)
		for d, c := range q {
			var u byte
			for j := range 4 {
				u |= get1(planes[j*cb:(j+1)*cb], d) << j
			}
			if int(u)-8 != int(c) {
				t.Fatalf("%d bytes a row, dimension %d: planes give %d, want %d", cb, d, int(u)-8, c)
			}
		}
	}
}

// TestDotsU1PlanesMatchesGo: the popcount path (where the machine has it) and the Go kernel
// agree exactly for query codes in −8…7, over row counts on either side of its eight-row
// passes, rows of 32 bytes and of 64 and 256 (one at a time), and all-set and all-clear rows.
func TestDotsU1PlanesMatchesGo(t *testing.T) {
	logKernels(t, "dotsU1Planes")
	r := rand.New(rand.NewPCG(29, 30))
	for _, cb := range []int{32, 64, 256} {
		q := make([]int8, 8*cb)
		for i := range q {
			q[i] = int8(r.IntN(16) - 8)
		}
		planes := make([]byte, 4*cb)
		bitPlanes(planes, q, cb)
		for _, rows := range []int{0, 1, 7, 8, 9, 16, 23, 1000} {
			codes := make([]byte, rows*cb)
			for i := range codes {
				codes[i] = byte(r.Uint32())
			}
			if rows > 2 {
				for i := range cb {
					codes[i], codes[cb+i] = 0xFF, 0
				}
			}
			got, want := make([]int32, rows), make([]int32, rows)
			for i := range got {
				got[i] = 12345 // every output written
			}
			dotsU1Planes(q, planes, codes, cb, got)
			dotsU1Go(q, codes, cb, want)
			if !slices.Equal(got, want) {
				t.Fatalf("%d bytes a row, %d rows: got %v, want %v", cb, rows, got[:min(rows, 9)], want[:min(rows, 9)])
			}
		}
	}
}

// BenchmarkDotsU1Planes2048: the first stage's kernel on rows of 2,048 rotated dimensions
// (a 1,536-dimension embedding's), against dotsU1's.
func BenchmarkDotsU1Planes2048(b *testing.B) {
	planes := make([]byte, 4*256)
	b.Run("planes", func(b *testing.B) {
		benchKernel(b, func(q []int8, codes []byte, cbytes int, out []int32) {
			dotsU1Planes(q, planes, codes, cbytes, out)
		}, 256, 8)
	})
	b.Run("dotsU1", func(b *testing.B) { benchKernel(b, dotsU1, 256, 8) })
}
