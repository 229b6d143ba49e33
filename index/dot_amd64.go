package index

import "golang.org/x/sys/cpu"

// dotsInt8AVX2 is in dot_amd64.s.
//
//go:noescape
func dotsInt8AVX2(q *int16, codes *int8, stride, rows int, out *int32)

var haveAVX2 = cpu.X86.HasAVX2

// dotsInt8 sets out[r] to the dot product of q with code row r (rows of stride bytes, stride
// a multiple of 32, len(out) rows).
func dotsInt8(q []int16, codes []int8, stride int, out []int32) {
	if len(out) == 0 {
		return
	}
	if !haveAVX2 {
		dotsInt8Go(q, codes, stride, out)
		return
	}
	_ = codes[len(out)*stride-1]
	_ = q[stride-1]
	dotsInt8AVX2(&q[0], &codes[0], stride, len(out), &out[0])
}

// dotsU4AVX2 is in dot_amd64.s.
//
//go:noescape
func dotsU4AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)

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
	dotsU4AVX2(&q[0], &codes[0], cbytes, len(out), &out[0])
}
