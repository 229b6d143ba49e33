package predict

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// minShape keeps Beta parameters positive whatever a persisted state holds (gonum panics on
// a shape ≤ 0).
const minShape = 1e-3

// betaDraw draws from Beta(a, b) with gonum's sampler (X/(X+Y) of two Gamma draws: Marsaglia
// and Tsang for shapes ≥ 0.2, Liu, Martin and Syring below) over rng, so a seeded rng gives
// a reproducible sequence.
func betaDraw(rng *rand.Rand, a, b float64) float64 {
	if !(a >= minShape) {
		a = minShape
	}
	if !(b >= minShape) {
		b = minShape
	}
	x := distuv.Beta{Alpha: a, Beta: b, Src: rng}.Rand()
	if x != x { // both shapes tiny and both Gamma draws underflowed: 0/0
		return a / (a + b)
	}
	return x
}
