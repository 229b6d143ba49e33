package index

import (
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
)

func TestQuantizeULiterals(t *testing.T) {
	vec := make([]float32, 70)
	vec[0], vec[1], vec[32], vec[33], vec[65] = 1, -0.5, 0.25, -1, 0.75
	u := make([]byte, len(vec))
	scale := quantizeU(u, vec)
	if scale != float32(1)/7 {
		t.Fatalf("scale = %v, want 1/7", scale)
	}
	// 1 → 7 → 15; −0.5 → −3.5 → −4 → 4; 0.25 → 1.75 → 2 → 10; −1 → −7 → 1; 0 → 8; 0.75 → 5.25 → 5 → 13.
	want := map[int]byte{0: 15, 1: 4, 32: 10, 33: 1, 65: 13}
	for d, x := range u {
		w, ok := want[d]
		if !ok {
			w = 8
		}
		if x != w {
			t.Errorf("u[%d] = %d, want %d", d, x, w)
		}
	}
	if s := quantizeU(u[:3], []float32{0, 0, 0}); s != 0 || !slices.Equal(u[:3], []byte{8, 8, 8}) {
		t.Fatalf("zero vector: scale %v, u %v", s, u[:3])
	}
}

func TestDotsU4MatchesGo(t *testing.T) {
	logKernels(t, "dotsU4")
	r := rand.New(rand.NewPCG(12, 13))
	checkKernels(t, r, dotsU4Go, dotKernels(), 2, []int{32, 64, 128, 160, 192, 768},
		func(q []int8, codes []byte, _ int) { codes[0], q[0], q[32] = 0xff, -127, -127 })
}

// checkKernels runs each of kernels against the reference ref on random queries of
// qPerByte·cbytes values and random rows of cbytes bytes, for each of widths and every row
// remainder; extremes sets extreme values into a non-empty input first.
func checkKernels(t *testing.T, r *rand.Rand, ref func(q []int8, codes []byte, cbytes int, out []int32),
	kernels map[string]func(q []int8, codes []byte, cbytes int, out []int32), qPerByte int, widths []int,
	extremes func(q []int8, codes []byte, cbytes int)) {
	t.Helper()
	names := slices.Sorted(maps.Keys(kernels))
	t.Logf("kernels checked against the Go reference: %v", names)
	for _, cbytes := range widths {
		for _, rows := range []int{0, 1, 2, 3, 4, 5, 7, 8, 33} {
			q := make([]int8, qPerByte*cbytes)
			for i := range q {
				q[i] = int8(r.IntN(255) - 127)
			}
			codes := make([]byte, rows*cbytes+7)
			for i := range codes {
				codes[i] = byte(r.IntN(256))
			}
			if rows > 0 {
				extremes(q, codes, cbytes)
			}
			want := make([]int32, rows)
			ref(q, codes, cbytes, want)
			for name, kernel := range kernels {
				got := make([]int32, rows)
				kernel(q, codes, cbytes, got)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, cbytes %d rows %d: got %v, want %v", name, cbytes, rows, got, want)
				}
			}
		}
	}
}

// logKernels logs what each dispatching function in fns runs here, so that a test's output
// says which kernels it ran (the assembly ones, or the portable Go: dispatched).
func logKernels(t *testing.T, fns ...string) {
	t.Helper()
	for _, fn := range fns {
		t.Logf("%s runs %s", fn, dispatched(fn))
	}
}

// TestRoundHalfAway: halves round away from zero, the rest to the nearest integer, and the
// branch-free form agrees with the plain one on a million random values around the codes'
// range.
func TestRoundHalfAway(t *testing.T) {
	for x, want := range map[float32]int32{0: 0, 0.49: 0, 0.5: 1, -0.5: -1, 1.5: 2, -1.5: -2, 2.5: 3, -2.49: -2,
		126.6: 127, -127.4: -127, 7.5: 8, float32(math.Copysign(0, -1)): 0} {
		if got := roundHalfAway(x); got != want {
			t.Errorf("roundHalfAway(%v) = %d, want %d", x, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		x := float32(r.NormFloat64() * 40)
		want := int32(x - 0.5)
		if x >= 0 {
			want = int32(x + 0.5)
		}
		if got := roundHalfAway(x); got != want {
			t.Fatalf("roundHalfAway(%v) = %d, want %d", x, got, want)
		}
	}
}

func TestMaxAbs(t *testing.T) {
	for _, c := range []struct {
		vec  []float32
		want float32
	}{{nil, 0}, {[]float32{-3}, 3}, {[]float32{1, -2, 0.5}, 2}, {[]float32{0.1, 0.2, -0.3, 0.25}, 0.3}, {[]float32{-0, 0}, 0}} {
		if got := maxAbs(c.vec); got != c.want {
			t.Errorf("maxAbs(%v) = %v, want %v", c.vec, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 300 { // every length's tail, against a plain float comparison
		vec := make([]float32, n)
		var want float32
		for i := range vec {
			vec[i] = float32(r.NormFloat64())
			want = max(want, float32(math.Abs(float64(vec[i]))))
		}
		if got := maxAbs(vec); got != want {
			t.Fatalf("maxAbs of %d values = %v, want %v", n, got, want)
		}
	}
}

// BenchmarkDotsU4 runs the 4-bit kernel over 100,000 rows of 256 dimensions on one core:
// the code scan of a 100k search, both halves (DOTS_ROWS sets the rows).
func BenchmarkDotsU4(b *testing.B) { benchKernel(b, dotsU4, 128, 2) }

// benchKernel runs kernel over random rows of cbytes bytes, the query perByte·cbytes values.
func benchKernel(b *testing.B, kernel func(q []int8, codes []byte, cbytes int, out []int32), cbytes, perByte int) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := 100_000
	if s := os.Getenv("DOTS_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	q := make([]int8, perByte*cbytes)
	for i := range q {
		q[i] = int8(r.IntN(255) - 127)
	}
	codes := make([]byte, rows*cbytes)
	for i := range codes {
		codes[i] = byte(r.IntN(256))
	}
	out := make([]int32, rows)
	b.SetBytes(int64(rows * cbytes))
	for b.Loop() {
		kernel(q, codes, cbytes, out)
	}
}
