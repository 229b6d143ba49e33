#include "textflag.h"

// func dotsU4AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// out[r] = Σ_j q[j]·u[r][j] for the 4-bit unsigned codes u of row r (cbytes bytes a row, a
// multiple of 32): in each 32-byte block b, byte i holds dimension 64b+i in its low nibble
// and 64b+32+i in its high one, so the query is read in its natural order. VPMADDUBSW
// multiplies the unsigned nibbles by the signed query bytes, adding pairs into int16 (at most
// 2·15·127 in magnitude, twice that after the two halves are added); VPMADDWD by ones widens
// to int32.
TEXT ·dotsU4AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ cbytes+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ out+32(FP), R8
	TESTQ CX, CX
	JEQ u4done
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x00010001, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6

u4row:
	VPXOR Y0, Y0, Y0
	XORQ BX, BX
	MOVQ SI, R9

u4col:
	VMOVDQU (DI)(BX*1), Y1
	VPSRLW $4, Y1, Y2
	VPAND Y7, Y1, Y1
	VPAND Y7, Y2, Y2
	VPMADDUBSW (R9), Y1, Y1
	VPMADDUBSW 32(R9), Y2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y6, Y1, Y1
	VPADDD Y1, Y0, Y0
	ADDQ $32, BX
	ADDQ $64, R9
	CMPQ BX, DX
	JLT u4col

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
	JNE u4row

u4done:
	VZEROUPPER
	RET
