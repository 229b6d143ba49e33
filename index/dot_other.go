//go:build !amd64 || purego

package index

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

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

// dotsU1Planes is dotsU1 for a query code q in −8…7 whose bit planes (bitPlanes) are planes,
// by popcounts of each row ANDed with each plane, eight bytes at a time (math/bits counts
// with the CPU's instruction where it has one): Σ_j 2^j·popcount(x ∧ plane_j) −
// 8·popcount(x). Other rows (not a multiple of eight bytes, or over 512) go by dotsU1.
func dotsU1Planes(q []int8, planes []byte, codes []byte, cbytes int, out []int32) {
	words := cbytes / 8
	if cbytes%8 != 0 || words > 64 || len(out) == 0 {
		dotsU1(q, codes, cbytes, out)
		return
	}
	// The planes' words, read once a call: plane j's word w at pw[4w+j].
	var buf [4 * 64]uint64
	pw := buf[:4*words]
	for w := range words {
		for j := range 4 {
			pw[4*w+j] = binary.LittleEndian.Uint64(planes[j*cbytes+8*w:])
		}
	}
	for r := range out {
		row := codes[r*cbytes : (r+1)*cbytes]
		s := 0
		for w := range words {
			x := binary.LittleEndian.Uint64(row[8*w:])
			p := pw[4*w : 4*w+4 : 4*w+4]
			s += bits.OnesCount64(x&p[0]) + 2*bits.OnesCount64(x&p[1]) + 4*bits.OnesCount64(x&p[2]) +
				8*(bits.OnesCount64(x&p[3])-bits.OnesCount64(x))
		}
		out[r] = int32(s)
	}
}
