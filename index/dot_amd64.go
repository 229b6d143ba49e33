package index

import "golang.org/x/sys/cpu"

var (
	haveAVX2 = cpu.X86.HasAVX2
	// haveVNNI: AVX-512 VNNI on 256-bit registers (with AVX512VL), which x/sys/cpu reports
	// only where the OS saves the AVX-512 state.
	haveVNNI = haveAVX2 && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL
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
