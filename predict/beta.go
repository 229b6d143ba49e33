package predict

import (
	"math"
	"math/rand/v2"
)

// gammaDraw draws from Gamma(shape a, scale 1) by Marsaglia and Tsang's method ("A simple
// method for generating gamma variables", ACM TOMS 26(3), 2000): a squeeze on a cubed normal
// for a ≥ 1, and the boost Gamma(a) = Gamma(a+1)·U^(1/a) for a < 1. It uses only rng, so a
// seeded rng gives a reproducible sequence, and it does not allocate.
func gammaDraw(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		u := rng.Float64()
		return gammaDraw(rng, a+1) * math.Pow(u, 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 {
			return d * v
		}
		if math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// minShape keeps Beta parameters positive whatever a persisted state holds.
const minShape = 1e-3

// betaDraw draws from Beta(a, b) as X/(X+Y) with X ~ Gamma(a), Y ~ Gamma(b).
func betaDraw(rng *rand.Rand, a, b float64) float64 {
	if !(a >= minShape) {
		a = minShape
	}
	if !(b >= minShape) {
		b = minShape
	}
	x := gammaDraw(rng, a)
	y := gammaDraw(rng, b)
	if x+y == 0 { // both shapes tiny and both draws underflowed
		return a / (a + b)
	}
	return x / (x + y)
}
