//go:build !amd64 || purego

package index

import "unsafe"

// dotsU4 sets out[r] to the dot product of q with the 4-bit code row r (see dotsU4Go).
func dotsU4(q []int8, codes []byte, cbytes int, out []int32) { dotsU4Go(q, codes, cbytes, out) }

// dotsU2 sets out[r] to the dot product of q with the 2-bit code row r (see dotsU2Go).
func dotsU2(q []int8, codes []byte, cbytes int, out []int32) { dotsU2Go(q, codes, cbytes, out) }

// dotsU1 sets out[r] to the dot product of q with the 1-bit code row r (see dotsU1Go).
func dotsU1(q []int8, codes []byte, cbytes int, out []int32) { dotsU1Go(q, codes, cbytes, out) }

// fwhtWide runs the Walsh–Hadamard transform's levels from 8 on (see fwhtLevels).
func fwhtWide(a []float32) { fwhtLevels(a, 8) }

// scaleScores sets out[r] = (a·dots[r] + b)·scales[r] (see scaleScoresGo).
func scaleScores(dots []int32, scales []float32, a, b float32, out []float32) {
	scaleScoresGo(dots, scales, a, b, out)
}

// prefetchRow does nothing here (see dot_amd64.go).
func prefetchRow(plane []byte, stride, r int) {}

// prefetchLines does nothing here (see dot_amd64.go).
func prefetchLines(p *byte, n int) {}

// prefetch does nothing here (see dot_amd64.go).
func prefetch(p unsafe.Pointer) {}

// appendReaching appends to dst base + r for each r whose score reaches t (see
// appendReachingGo).
func appendReaching(dst []int32, dots []int32, scales []float32, a, b, t float32, base int) []int32 {
	return appendReachingGo(dst, dots, scales, a, b, t, base)
}

// appendAtLeast appends to dst base + r for each r with dots[r] ≥ min (see appendAtLeastGo).
func appendAtLeast(dst []int32, dots []int32, min int32, base int) []int32 {
	return appendAtLeastGo(dst, dots, min, base)
}

// dotsU1Planes is dotsU1 here (see dot_amd64.go).
func dotsU1Planes(q []int8, planes []byte, codes []byte, cbytes int, out []int32) {
	dotsU1(q, codes, cbytes, out)
}
