//go:build !purego

// The assembly kernels (dot_amd64.s); the purego tag builds the portable ones instead
// (dot_other.go), which `make test` runs too.

package index

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"
)

var (
	haveAVX2 = cpu.X86.HasAVX2
	// haveVNNI: AVX-512 VNNI on 256-bit registers (with AVX512VL), which x/sys/cpu reports
	// only where the OS saves the AVX-512 state.
	haveVNNI = haveAVX2 && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL
	// havePop: AVX-512 with VPOPCNTQ, reported likewise.
	havePop = haveAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPOPCNTDQ
)

// dotsU4AVX2 is in dot_amd64.s.
//
//go:noescape
func dotsU4AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)

// dotsU4VNNI is in dot_amd64.s.
//
//go:noescape
func dotsU4VNNI(q *int8, codes *byte, cbytes, rows int, out *int32)

// dotsU4 sets out[r] to the dot product of q with the 4-bit code row r (see dotsU4Go).
func dotsU4(q []int8, codes []byte, cbytes int, out []int32) {
	if len(out) == 0 {
		return
	}
	if !haveAVX2 {
		dotsU4Go(q, codes, cbytes, out)
		return
	}
	_ = codes[len(out)*cbytes-1]
	_ = q[2*cbytes-1]
	if haveVNNI {
		dotsU4VNNI(&q[0], &codes[0], cbytes, len(out), &out[0])
		return
	}
	dotsU4AVX2(&q[0], &codes[0], cbytes, len(out), &out[0])
}

// dotsU2AVX2 is in dot_amd64.s.
//
//go:noescape
func dotsU2AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)

// dotsU2VNNI is in dot_amd64.s.
//
//go:noescape
func dotsU2VNNI(q *int8, codes *byte, cbytes, rows int, out *int32)

// dotsU2 sets out[r] to the dot product of q with the 2-bit code row r (see dotsU2Go).
func dotsU2(q []int8, codes []byte, cbytes int, out []int32) {
	if len(out) == 0 {
		return
	}
	if !haveAVX2 {
		dotsU2Go(q, codes, cbytes, out)
		return
	}
	_ = codes[len(out)*cbytes-1]
	_ = q[4*cbytes-1]
	if haveVNNI {
		dotsU2VNNI(&q[0], &codes[0], cbytes, len(out), &out[0])
		return
	}
	dotsU2AVX2(&q[0], &codes[0], cbytes, len(out), &out[0])
}

// dotsU1AVX2 is in dot_amd64.s.
//
//go:noescape
func dotsU1AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)

// dotsU1VNNI is in dot_amd64.s.
//
//go:noescape
func dotsU1VNNI(q *int8, codes *byte, cbytes, rows int, out *int32)

// dotsU1 sets out[r] to the dot product of q with the 1-bit code row r (see dotsU1Go).
func dotsU1(q []int8, codes []byte, cbytes int, out []int32) {
	if len(out) == 0 {
		return
	}
	if !haveAVX2 {
		dotsU1Go(q, codes, cbytes, out)
		return
	}
	_ = codes[len(out)*cbytes-1]
	_ = q[8*cbytes-1]
	if haveVNNI {
		dotsU1VNNI(&q[0], &codes[0], cbytes, len(out), &out[0])
		return
	}
	dotsU1AVX2(&q[0], &codes[0], cbytes, len(out), &out[0])
}

// dotsU1Pop32 is in dot_amd64.s.
//
//go:noescape
func dotsU1Pop32(planes *byte, codes *byte, rows int, out *int32)

// dotsU1Pop64 is in dot_amd64.s.
//
//go:noescape
func dotsU1Pop64(planes *byte, codes *byte, cbytes, rows int, out *int32)

// dotsU1Planes is dotsU1 for a query code q in −8…7 whose bit planes (bitPlanes) are planes.
// Where the machine counts bits in 512-bit registers (VPOPCNTQ), rows go by popcounts of
// each row ANDed with each plane — 32-byte rows (256 rotated dimensions, the local
// embedder's) eight at a time, longer ones (a multiple of 64 bytes) one at a time: about
// twice the rows a second of dotsU1VNNI, which spreads each bit over a byte to multiply it.
func dotsU1Planes(q []int8, planes []byte, codes []byte, cbytes int, out []int32) {
	done := 0
	switch {
	case !havePop || len(out) == 0:
	case cbytes == 32:
		if done = len(out) &^ 7; done > 0 {
			_ = codes[done*32-1]
			_ = planes[4*32-1]
			dotsU1Pop32(&planes[0], &codes[0], done, &out[0])
		}
	case cbytes%64 == 0:
		done = len(out)
		_ = codes[done*cbytes-1]
		_ = planes[4*cbytes-1]
		dotsU1Pop64(&planes[0], &codes[0], cbytes, done, &out[0])
	}
	dotsU1(q, codes[done*cbytes:], cbytes, out[done:])
}

// fwhtWideAVX is in dot_amd64.s.
//
//go:noescape
func fwhtWideAVX(a *float32, n int)

// fwhtWide runs the Walsh–Hadamard transform's levels from 8 on (len(a) a power of two ≥ 8).
func fwhtWide(a []float32) {
	if !haveAVX2 {
		fwhtLevels(a, 8)
		return
	}
	fwhtWideAVX(&a[0], len(a))
}

// atLeastAVX is in dot_amd64.s.
//
//go:noescape
func atLeastAVX(dots *int32, n int, min int32, dst *int32, base int) int

// appendAtLeast appends to dst base + r for each r with dots[r] ≥ min (see appendAtLeastGo).
func appendAtLeast(dst []int32, dots []int32, min int32, base int) []int32 {
	n := len(dots)
	done := 0
	if haveAVX2 {
		done = n &^ 7
		if done > 0 {
			dst = slices.Grow(dst, done)
			got := atLeastAVX(&dots[0], done, min, unsafe.SliceData(dst[len(dst):cap(dst)]), base)
			dst = dst[:len(dst)+got]
		}
	}
	return appendAtLeastGo(dst, dots[done:], min, base+done)
}

// scaleScoresAVX is in dot_amd64.s.
//
//go:noescape
func scaleScoresAVX(dots *int32, n int, scales *float32, a, b float32, out *float32)

// scaleScores sets out[r] = (a·dots[r] + b)·scales[r], rounded to float32 at each step, for
// every r < len(out) (dots and scales at least as long).
func scaleScores(dots []int32, scales []float32, a, b float32, out []float32) {
	n := len(out)
	if n == 0 {
		return
	}
	_, _ = dots[n-1], scales[n-1]
	done := 0
	if haveAVX2 {
		done = n &^ 7
		if done > 0 {
			scaleScoresAVX(&dots[0], done, &scales[0], a, b, &out[0])
		}
	}
	scaleScoresGo(dots[done:n], scales[done:n], a, b, out[done:])
}

// prefetchLines is in dot_amd64.s.
//
//go:noescape
func prefetchLines(p *byte, n int)

// prefetchRow prefetches the cache lines of row r of plane (stride bytes a row).
func prefetchRow(plane []byte, stride, r int) {
	prefetchLines(&plane[r*stride], (stride+63)/64)
}

// prefetch prefetches the cache line at p.
func prefetch(p unsafe.Pointer) { prefetchLines((*byte)(p), 1) }

// reachingAVX is in dot_amd64.s.
//
//go:noescape
func reachingAVX(dots *int32, n int, scales *float32, a, b, t float32, dst *int32, base int) int

// appendReaching appends to dst base + r for each r < len(dots), in order, whose score
// (a·dots[r] + b)·scales[r] (rounded as scaleScores rounds it) is at least t, and returns it.
func appendReaching(dst []int32, dots []int32, scales []float32, a, b, t float32, base int) []int32 {
	n := len(dots)
	if n == 0 {
		return dst
	}
	_ = scales[n-1]
	done := 0
	if haveAVX2 {
		done = n &^ 7
		if done > 0 {
			dst = slices.Grow(dst, done)
			got := reachingAVX(&dots[0], done, &scales[0], a, b, t, unsafe.SliceData(dst[len(dst):cap(dst)]), base)
			dst = dst[:len(dst)+got]
		}
	}
	return appendReachingGo(dst, dots[done:], scales[done:n], a, b, t, base+done)
}
