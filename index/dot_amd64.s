#include "textflag.h"

// func dotsInt8AVX2(q *int16, codes *int8, stride, rows int, out *int32)
//
// out[r] = Σ_j q[j]·codes[r·stride+j] for r < rows; stride is a multiple of 32. Each step
// sign-extends 16 code bytes to int16 (VPMOVSXBW) and multiplies them by the query's int16
// values pairwise-adding into int32 (VPMADDWD); two accumulators hide the add latency.
TEXT ·dotsInt8AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ stride+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ out+32(FP), R8
	TESTQ CX, CX
	JEQ done

row:
	VPXOR Y0, Y0, Y0
	VPXOR Y3, Y3, Y3
	XORQ BX, BX

col:
	VPMOVSXBW (DI)(BX*1), Y1
	VPMADDWD (SI)(BX*2), Y1, Y1
	VPADDD Y1, Y0, Y0
	VPMOVSXBW 16(DI)(BX*1), Y2
	VPMADDWD 32(SI)(BX*2), Y2, Y2
	VPADDD Y2, Y3, Y3
	ADDQ $32, BX
	CMPQ BX, DX
	JLT col

	VPADDD Y3, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R8)
	ADDQ $4, R8
	ADDQ DX, DI
	DECQ CX
	JNE row

done:
	VZEROUPPER
	RET
