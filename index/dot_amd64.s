#include "textflag.h"

// Shared by both kernels. Registers: SI the query, DI the codes (row 0 of a quad), DX the
// bytes a row, CX the rows left, R8 the output, R9 the query block, R10–R12 rows 1–3 of a
// quad, BX the byte offset in a row, Y7 the nibble mask, Y4/Y5 a query block's two halves,
// Y8–Y11 a quad's int32 sums.

// ARGS loads the arguments; MASK sets Y7.
#define ARGS \
	MOVQ q+0(FP), SI; \
	MOVQ codes+8(FP), DI; \
	MOVQ cbytes+16(FP), DX; \
	MOVQ rows+24(FP), CX; \
	MOVQ out+32(FP), R8

#define MASK \
	MOVL $0x0F0F0F0F, AX; \
	VMOVD AX, X7; \
	VPBROADCASTD X7, Y7

// QUAD_START zeroes a quad's sums and points at its rows.
#define QUAD_START \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11; \
	XORQ BX, BX; \
	MOVQ SI, R9; \
	LEAQ (DI)(DX*1), R10; \
	LEAQ (R10)(DX*1), R11; \
	LEAQ (R11)(DX*1), R12

// NIBBLES loads the block of the row at base into lo and hi: its low and high nibbles.
#define NIBBLES(base, lo, hi) \
	VMOVDQU (base)(BX*1), lo; \
	VPSRLW $4, lo, hi; \
	VPAND Y7, lo, lo; \
	VPAND Y7, hi, hi

// AVX2_ROW adds the block of the row at base to its int16 sums acc.
#define AVX2_ROW(base, acc) \
	NIBBLES(base, Y0, Y1); \
	VPMADDUBSW Y4, Y0, Y0; \
	VPMADDUBSW Y5, Y1, Y1; \
	VPADDW Y1, Y0, Y0; \
	VPADDW Y0, acc, acc

// VNNI_ROW adds the block of the row at base to its int32 sums acc.
#define VNNI_ROW(base, acc) \
	NIBBLES(base, Y0, Y1); \
	VPDPBUSD Y4, Y0, acc; \
	VPDPBUSD Y5, Y1, acc

// QUAD_END adds up each row's lanes, stores the four sums and moves on four rows.
#define QUAD_END \
	VPHADDD Y9, Y8, Y0; \
	VPHADDD Y11, Y10, Y1; \
	VPHADDD Y1, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VMOVDQU X0, (R8); \
	ADDQ $16, R8; \
	LEAQ (DI)(DX*4), DI; \
	SUBQ $4, CX

// ROW_END adds up the lanes of Y0, stores the sum and moves on one row.
#define ROW_END \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0x4E, X0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0xB1, X0, X1; \
	VPADDD X1, X0, X0; \
	VMOVD X0, (R8); \
	ADDQ $4, R8; \
	ADDQ DX, DI; \
	DECQ CX

// func dotsU4AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// out[r] = Σ_j q[j]·u[r][j] for the 4-bit unsigned codes u of row r (cbytes bytes a row, a
// multiple of 32): in each 32-byte block b, byte i holds dimension 64b+i in its low nibble
// and 64b+32+i in its high one, so the query is read in its natural order. VPMADDUBSW
// multiplies the unsigned nibbles by the signed query bytes, adding pairs into int16 (at most
// 2·15·127 = 3,810 in magnitude, 7,620 after the two halves are added); VPMADDWD by ones
// widens to int32.
//
// Rows go four at a time: each 32-byte block of the query is loaded once for the four, a
// row's int16 sums run over up to four blocks (30,480 at most: no overflow) before they
// are widened, and the four rows' lanes are added up together (VPHADDD) into one 16-byte
// store. The last rows % 4 go one at a time.
TEXT ·dotsU4AVX2(SB), NOSPLIT, $0-40
	ARGS
	TESTQ CX, CX
	JEQ u4done
	MASK
	MOVL $0x00010001, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6

u4quad:
	CMPQ CX, $4
	JLT u4rest
	QUAD_START

u4group:
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	MOVQ $4, R13

u4blk:
	VMOVDQU (R9), Y4
	VMOVDQU 32(R9), Y5

	AVX2_ROW(DI, Y12)
	AVX2_ROW(R10, Y13)
	AVX2_ROW(R11, Y14)
	AVX2_ROW(R12, Y15)

	ADDQ $32, BX
	ADDQ $64, R9
	CMPQ BX, DX
	JGE u4widen
	DECQ R13
	JNE u4blk

u4widen:
	VPMADDWD Y6, Y12, Y12
	VPADDD Y12, Y8, Y8
	VPMADDWD Y6, Y13, Y13
	VPADDD Y13, Y9, Y9
	VPMADDWD Y6, Y14, Y14
	VPADDD Y14, Y10, Y10
	VPMADDWD Y6, Y15, Y15
	VPADDD Y15, Y11, Y11
	CMPQ BX, DX
	JLT u4group

	// Per 128-bit half: [r0 r0 r1 r1], [r2 r2 r3 r3], then [r0 r1 r2 r3]; then the halves.
	QUAD_END
	JMP u4quad

u4rest:
	TESTQ CX, CX
	JEQ u4done

u4row:
	VPXOR Y0, Y0, Y0
	XORQ BX, BX
	MOVQ SI, R9

u4col:
	NIBBLES(DI, Y1, Y2)
	VPMADDUBSW (R9), Y1, Y1
	VPMADDUBSW 32(R9), Y2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y6, Y1, Y1
	VPADDD Y1, Y0, Y0
	ADDQ $32, BX
	ADDQ $64, R9
	CMPQ BX, DX
	JLT u4col

	ROW_END
	JNE u4row

u4done:
	VZEROUPPER
	RET

// func dotsU4VNNI(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// dotsU4AVX2 with AVX-512 VNNI on 256-bit registers: VPDPBUSD multiplies the unsigned
// nibbles by the signed query bytes and adds each four products straight into the int32
// sums, in place of VPMADDUBSW, VPADDW and the widening. Four rows at a time, the rest one
// at a time.
TEXT ·dotsU4VNNI(SB), NOSPLIT, $0-40
	ARGS
	TESTQ CX, CX
	JEQ vdone
	MASK

vquad:
	CMPQ CX, $4
	JLT vrest
	QUAD_START

vblk:
	VMOVDQU (R9), Y4
	VMOVDQU 32(R9), Y5

	VNNI_ROW(DI, Y8)
	VNNI_ROW(R10, Y9)
	VNNI_ROW(R11, Y10)
	VNNI_ROW(R12, Y11)

	ADDQ $32, BX
	ADDQ $64, R9
	CMPQ BX, DX
	JLT vblk

	QUAD_END
	JMP vquad

vrest:
	TESTQ CX, CX
	JEQ vdone

vrow:
	VPXOR Y0, Y0, Y0
	XORQ BX, BX
	MOVQ SI, R9

vcol:
	NIBBLES(DI, Y1, Y2)
	VPDPBUSD (R9), Y1, Y0
	VPDPBUSD 32(R9), Y2, Y0
	ADDQ $32, BX
	ADDQ $64, R9
	CMPQ BX, DX
	JLT vcol

	ROW_END
	JNE vrow

vdone:
	VZEROUPPER
	RET
