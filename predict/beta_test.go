package predict

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestBetaDraw checks the sampler (gonum's, behind the shape guard) against gonum's Beta
// CDF with a Kolmogorov–Smirnov statistic: for 4,000 draws the 1 % critical value is
// 1.63/√n ≈ 0.026.
func TestBetaDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ a, b float64 }{
		{1, 1}, {6, 4}, {0.5, 0.5}, {0.2, 3}, {30, 70}, {500, 20}, {1.5, 0.7},
	} {
		const n = 4000
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = betaDraw(rng, c.a, c.b)
			if !(xs[i] >= 0 && xs[i] <= 1) {
				t.Fatalf("Beta(%v, %v) draw %v out of [0, 1]", c.a, c.b, xs[i])
			}
		}
		slices.Sort(xs)
		d := distuv.Beta{Alpha: c.a, Beta: c.b}
		ks := 0.0
		for i, x := range xs {
			f := d.CDF(x)
			ks = max(ks, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
		}
		if ks > 1.63/math.Sqrt(n) {
			t.Errorf("Beta(%v, %v): KS distance %.4f over the 1%% critical value %.4f", c.a, c.b, ks, 1.63/math.Sqrt(n))
		}
	}
	// Degenerate shapes (a corrupt state) still give a number in [0, 1].
	for _, ab := range [][2]float64{{0, 0}, {-1, 2}, {math.NaN(), 1}, {1e-9, 1e-9}} {
		if x := betaDraw(rng, ab[0], ab[1]); !(x >= 0 && x <= 1) {
			t.Errorf("betaDraw(%v, %v) = %v", ab[0], ab[1], x)
		}
	}
}
