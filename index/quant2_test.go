package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSet2Layout(t *testing.T) {
	plane := make([]byte, u2Bytes(130))
	if len(plane) != 64 {
		t.Fatalf("u2Bytes(130) = %d, want 64", len(plane))
	}
	// Dimension 128b+32s+i sits in byte 32b+i, bits 2s…2s+1.
	set2(plane, 0, 3)
	set2(plane, 33, 2)
	set2(plane, 70, 1)
	set2(plane, 127, 3)
	set2(plane, 129, 2)
	want := map[int]byte{0: 3, 1: 2 << 2, 6: 1 << 4, 31: 3 << 6, 33: 2}
	for i, b := range plane {
		if b != want[i] {
			t.Errorf("byte %d = %#x, want %#x", i, b, want[i])
		}
	}
	for d, x := range map[int]byte{0: 3, 33: 2, 70: 1, 127: 3, 129: 2, 1: 0, 128: 0} {
		if got := get2(plane, d); got != x {
			t.Errorf("get2(%d) = %d, want %d", d, got, x)
		}
	}
	if got, want := CodedRowBytes(256), 32+256+128; got != want { // 1.5 bytes a dimension and a bit
		t.Errorf("CodedRowBytes(256) = %d, want %d", got, want)
	}
	if got, want := CodedRowBytes(130), 32+2*64+2*96; got != want { // rotated into 256
		t.Errorf("CodedRowBytes(130) = %d, want %d", got, want)
	}
	if got, want := CodedRowBytes(1536), 256+2*384+2*768; got != want { // rotated into 2,048
		t.Errorf("CodedRowBytes(130) = %d, want %d", got, want)
	}
	// A 4-bit value split into planes and put back.
	hi, lo := make([]byte, 32), make([]byte, 32)
	for d := range 128 {
		u := byte(d % 16)
		set2(hi, d, u>>2)
		set2(lo, d, u&3)
	}
	for d := range 128 {
		if u := 4*get2(hi, d) + get2(lo, d); u != byte(d%16) {
			t.Fatalf("dimension %d: planes give %d, want %d", d, u, d%16)
		}
	}
}

// TestDotsU2MatchesGo runs every 2-bit kernel the machine has against the Go reference, over
// every row remainder and block counts that end a widening group early (the AVX2 kernel
// widens every eight blocks).
func TestDotsU2MatchesGo(t *testing.T) {
	logKernels(t, "dotsU2")
	r := rand.New(rand.NewPCG(14, 15))
	checkKernels(t, r, dotsU2Go, dot2Kernels(), 4, []int{32, 64, 96, 256, 288, 384},
		func(q []int8, codes []byte, cbytes int) { // every value 3 against −127 throughout the first row
			for i := range cbytes {
				codes[i] = 0xff
			}
			for i := range min(len(q), 4*cbytes) {
				q[i] = -127
			}
		})
	// The Go reference against plain dimension-by-dimension arithmetic.
	const dims = 200
	q := make([]int8, 4*u2Bytes(dims))
	plane := make([]byte, u2Bytes(dims))
	var want int32
	for d := range dims {
		q[d] = int8(r.IntN(255) - 127)
		x := byte(r.IntN(4))
		set2(plane, d, x)
		want += int32(q[d]) * int32(x)
	}
	got := make([]int32, 1)
	dotsU2Go(q, plane, len(plane), got)
	if got[0] != want {
		t.Fatalf("dotsU2Go = %d, want %d", got[0], want)
	}
}

// BenchmarkDotsU2 runs the 2-bit kernel over 100,000 rows of 256 dimensions on one core: the
// first stage of a 100k search, both halves (DOTS_ROWS sets the rows).
func BenchmarkDotsU2(b *testing.B) { benchKernel(b, dotsU2, 64, 4) }

// TestScaleScores: the SIMD path and the Go one give the same floats, bit for bit, over every
// tail length, and the Go one is the formula.
func TestScaleScores(t *testing.T) {
	logKernels(t, "scaleScores")
	r := rand.New(rand.NewPCG(16, 17))
	for n := range 40 {
		dots, scales := make([]int32, n), make([]float32, n)
		for i := range n {
			dots[i], scales[i] = int32(r.IntN(200_001)-100_000), float32(r.Float64())/7
		}
		a, b := float32(4), float32(-6.5*float64(r.IntN(2001)-1000))
		got, want := make([]float32, n), make([]float32, n)
		scaleScores(dots, scales, a, b, got)
		scaleScoresGo(dots, scales, a, b, want)
		if !slices.Equal(got, want) {
			t.Fatalf("n %d: %v, want %v", n, got, want)
		}
		for i := range n {
			if w := (float64(a)*float64(dots[i]) + float64(b)) * float64(scales[i]); math.Abs(float64(want[i])-w) > 1e-6*math.Abs(w)+1e-9 {
				t.Fatalf("n %d row %d: %v, want about %v", n, i, want[i], w)
			}
		}
	}
}
