//go:build !purego

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

// WIDEN_QUAD widens a quad's int16 sums (Y12–Y15; Y6 holds int16 ones) into its int32 sums.
#define WIDEN_QUAD \
	VPMADDWD Y6, Y12, Y12; \
	VPADDD Y12, Y8, Y8; \
	VPMADDWD Y6, Y13, Y13; \
	VPADDD Y13, Y9, Y9; \
	VPMADDWD Y6, Y14, Y14; \
	VPADDD Y14, Y10, Y10; \
	VPMADDWD Y6, Y15, Y15; \
	VPADDD Y15, Y11, Y11

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
	WIDEN_QUAD
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

// The 2-bit kernels. Registers as above, but a block of a row (32 bytes) holds 128
// dimensions, so a query block is 128 bytes (R9 moves on 128 a block) and Y7 is the mask
// 0x03 of each byte.

#define MASK2 \
	MOVL $0x03030303, AX; \
	VMOVD AX, X7; \
	VPBROADCASTD X7, Y7

// CRUMB sets dst to the 2-bit values at bit shift of each byte of src.
#define CRUMB(shift, src, dst) \
	VPSRLW $shift, src, dst; \
	VPAND Y7, dst, dst

// AVX2_ROW2 adds the block of the row at base to its int16 sums acc: the four 2-bit values
// of each byte times the query block's four 32-byte quarters, read from memory at R9.
#define AVX2_ROW2(base, acc) \
	VMOVDQU (base)(BX*1), Y0; \
	VPAND Y7, Y0, Y1; \
	VPMADDUBSW (R9), Y1, Y1; \
	CRUMB(2, Y0, Y2); \
	VPMADDUBSW 32(R9), Y2, Y2; \
	VPADDW Y2, Y1, Y1; \
	CRUMB(4, Y0, Y2); \
	VPMADDUBSW 64(R9), Y2, Y2; \
	VPADDW Y2, Y1, Y1; \
	CRUMB(6, Y0, Y0); \
	VPMADDUBSW 96(R9), Y0, Y0; \
	VPADDW Y0, Y1, Y1; \
	VPADDW Y1, acc, acc

// func dotsU2AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// out[r] = Σ_j q[j]·u[r][j] for the 2-bit unsigned codes u of row r (cbytes bytes a row, a
// multiple of 32): in each 32-byte block b, byte i holds dimensions 128b+i, 128b+32+i,
// 128b+64+i and 128b+96+i in its bits 0–1, 2–3, 4–5 and 6–7, so the query is read in its
// natural order. VPMADDUBSW adds pairs of products into int16 (at most 2·3·127 = 762 in
// magnitude, 3,048 for a block's four quarters); a row's int16 sums run over up to eight
// blocks (24,384: no overflow) before VPMADDWD by ones widens them. Four rows at a time,
// as dotsU4AVX2; the last rows % 4 one at a time.
TEXT ·dotsU2AVX2(SB), NOSPLIT, $0-40
	ARGS
	TESTQ CX, CX
	JEQ u2done
	MASK2
	MOVL $0x00010001, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6

u2quad:
	CMPQ CX, $4
	JLT u2rest
	QUAD_START

u2group:
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	MOVQ $8, R13

u2blk:
	AVX2_ROW2(DI, Y12)
	AVX2_ROW2(R10, Y13)
	AVX2_ROW2(R11, Y14)
	AVX2_ROW2(R12, Y15)

	ADDQ $32, BX
	ADDQ $128, R9
	CMPQ BX, DX
	JGE u2widen
	DECQ R13
	JNE u2blk

u2widen:
	WIDEN_QUAD
	CMPQ BX, DX
	JLT u2group

	QUAD_END
	JMP u2quad

u2rest:
	TESTQ CX, CX
	JEQ u2done

u2row:
	VPXOR Y3, Y3, Y3
	XORQ BX, BX
	MOVQ SI, R9

u2col:
	VPXOR Y12, Y12, Y12
	AVX2_ROW2(DI, Y12)
	VPMADDWD Y6, Y12, Y12
	VPADDD Y12, Y3, Y3
	ADDQ $32, BX
	ADDQ $128, R9
	CMPQ BX, DX
	JLT u2col

	VMOVDQA Y3, Y0
	ROW_END
	JNE u2row

u2done:
	VZEROUPPER
	RET

// func dotsU2VNNI(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// VNNI_ROW2 adds the block of the row at base to its two int32 sums: accA the products of
// the 2-bit values in bits 0–1 and 4–5 of each byte (the query block's quarters in Y4 and
// Y12), accB four times those of the values in bits 2–3 and 6–7 (quarters Y5 and Y13).
// Masking bits 2–3 with 0x0C (Y6) leaves 4·value in place, so one shift by four serves all
// four values instead of three shifts; the row's sum is accA + accB/4 (exact: accB's lanes
// are multiples of 4).
#define VNNI_ROW2(base, accA, accB) \
	VMOVDQU (base)(BX*1), Y0; \
	VPAND Y7, Y0, Y1; \
	VPDPBUSD Y4, Y1, accA; \
	VPAND Y6, Y0, Y1; \
	VPDPBUSD Y5, Y1, accB; \
	VPSRLW $4, Y0, Y0; \
	VPAND Y7, Y0, Y1; \
	VPDPBUSD Y12, Y1, accA; \
	VPAND Y6, Y0, Y0; \
	VPDPBUSD Y13, Y0, accB

// FOLD2 adds a row's accB/4 into its accA.
#define FOLD2(accA, accB) \
	VPSRAD $2, accB, accB; \
	VPADDD accB, accA, accA

// dotsU2AVX2 with AVX-512 VNNI on 256-bit registers: VPDPBUSD adds each four products
// straight into the int32 sums (two a row, VNNI_ROW2). Each query block is loaded once for
// four rows. Registers: the quad's accA sums in Y8–Y11 (QUAD_END's), its accB sums in Y2,
// Y3, Y14 and Y15; Y6 the mask 0x0C of each byte.
TEXT ·dotsU2VNNI(SB), NOSPLIT, $0-40
	ARGS
	TESTQ CX, CX
	JEQ v2done
	MASK2
	MOVL $0x0C0C0C0C, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6

v2quad:
	CMPQ CX, $4
	JLT v2rest
	QUAD_START
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15

v2blk:
	VMOVDQU (R9), Y4
	VMOVDQU 32(R9), Y5
	VMOVDQU 64(R9), Y12
	VMOVDQU 96(R9), Y13

	VNNI_ROW2(DI, Y8, Y2)
	VNNI_ROW2(R10, Y9, Y3)
	VNNI_ROW2(R11, Y10, Y14)
	VNNI_ROW2(R12, Y11, Y15)

	ADDQ $32, BX
	ADDQ $128, R9
	CMPQ BX, DX
	JLT v2blk

	FOLD2(Y8, Y2)
	FOLD2(Y9, Y3)
	FOLD2(Y10, Y14)
	FOLD2(Y11, Y15)
	QUAD_END
	JMP v2quad

v2rest:
	TESTQ CX, CX
	JEQ v2done

v2row:
	VPXOR Y3, Y3, Y3
	VPXOR Y2, Y2, Y2
	XORQ BX, BX
	MOVQ SI, R9

v2col:
	VMOVDQU (R9), Y4
	VMOVDQU 32(R9), Y5
	VMOVDQU 64(R9), Y12
	VMOVDQU 96(R9), Y13
	VNNI_ROW2(DI, Y3, Y2)
	ADDQ $32, BX
	ADDQ $128, R9
	CMPQ BX, DX
	JLT v2col

	FOLD2(Y3, Y2)
	VMOVDQA Y3, Y0
	ROW_END
	JNE v2row

v2done:
	VZEROUPPER
	RET

// func scaleScoresAVX(dots *int32, n int, scales *float32, a, b float32, out *float32)
//
// out[r] = (a·float32(dots[r]) + b)·scales[r] for the first n − n%8 rows, eight at a time,
// each step rounded to float32 as Go rounds it (no fused multiply-add).
TEXT ·scaleScoresAVX(SB), NOSPLIT, $0-40
	MOVQ dots+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ scales+16(FP), DX
	VBROADCASTSS a+24(FP), Y1
	VBROADCASTSS b+28(FP), Y2
	MOVQ out+32(FP), DI

sc8:
	CMPQ CX, $8
	JLT scdone
	VCVTDQ2PS (SI), Y0
	VMULPS Y1, Y0, Y0
	VADDPS Y2, Y0, Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP sc8

scdone:
	VZEROUPPER
	RET

// func prefetchLines(p *byte, n int)
//
// Prefetches the n cache lines from p on.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JEQ pldone

plloop:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	DECQ CX
	JNE plloop

pldone:
	RET

// APPEND_SET appends to the int32s at DI, from index R9 on, base R8 plus the place of each
// bit set in AX (AX ≠ 0; BX scratch), lowest first: the rows of a group of eight that passed.
#define APPEND_SET(loop) \
loop: \
	BSFL AX, BX; \
	ADDQ R8, BX; \
	MOVL BX, (DI)(R9*4); \
	INCQ R9; \
	LEAL -1(AX), BX; \
	ANDL BX, AX; \
	JNE loop

// func reachingAVX(dots *int32, n int, scales *float32, a, b, t float32, dst *int32, base int) int
//
// Writes to dst, in order, base + r for each of the first n − n%8 rows whose score
// (a·float32(dots[r]) + b)·scales[r], rounded as scaleScoresAVX rounds it, is at least t, and
// returns how many it wrote. Eight scores at a time; a group with none reaching t (nearly
// all) costs one compare and one test.
TEXT ·reachingAVX(SB), NOSPLIT, $0-64
	MOVQ dots+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ scales+16(FP), DX
	VBROADCASTSS a+24(FP), Y1
	VBROADCASTSS b+28(FP), Y2
	VBROADCASTSS t+32(FP), Y3
	MOVQ dst+40(FP), DI
	MOVQ base+48(FP), R8
	XORQ R9, R9

re8:
	CMPQ CX, $8
	JLT redone
	VCVTDQ2PS (SI), Y0
	VMULPS Y1, Y0, Y0
	VADDPS Y2, Y0, Y0
	VMULPS (DX), Y0, Y0
	VCMPPS $0x0D, Y3, Y0, Y4 // score ≥ t
	VMOVMSKPS Y4, AX
	TESTL AX, AX
	JEQ renext

	APPEND_SET(rebit)

renext:
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $8, R8
	SUBQ $8, CX
	JMP re8

redone:
	MOVQ R9, ret+56(FP)
	VZEROUPPER
	RET

// The 1-bit kernels. A block of a row (32 bytes) holds 256 dimensions, so a query block is
// 256 bytes (R9 moves on 256 a block), read from memory; Y7 is the mask 0x01 of each byte.

#define MASK1 \
	MOVL $0x01010101, AX; \
	VMOVD AX, X7; \
	VPBROADCASTD X7, Y7

// BIT1 adds to the int16 sums in Y1 the products of the bits at shift of each byte of Y0
// with the query block's 32 bytes at off.
#define BIT1(shift, off) \
	VPSRLW $shift, Y0, Y2; \
	VPAND Y7, Y2, Y2; \
	VPMADDUBSW off(R9), Y2, Y2; \
	VPADDW Y2, Y1, Y1

// AVX2_ROW1 adds the block of the row at base to its int16 sums acc: each byte's eight
// bits times the query block's eight 32-byte parts.
#define AVX2_ROW1(base, acc) \
	VMOVDQU (base)(BX*1), Y0; \
	VPAND Y7, Y0, Y1; \
	VPMADDUBSW (R9), Y1, Y1; \
	BIT1(1, 32); \
	BIT1(2, 64); \
	BIT1(3, 96); \
	BIT1(4, 128); \
	BIT1(5, 160); \
	BIT1(6, 192); \
	BIT1(7, 224); \
	VPADDW Y1, acc, acc

// func dotsU1AVX2(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// out[r] = Σ_j q[j]·x[r][j] for the bits x of row r (cbytes bytes a row, a multiple of 32):
// in each 32-byte block b, byte i holds dimension 256b+32s+i in bit s, so the query is read
// in its natural order. VPMADDUBSW adds pairs of products into int16 (at most 2·127 = 254
// in magnitude, 2,032 for a block's eight parts); a row's int16 sums run over up to eight
// blocks (16,256: no overflow) before VPMADDWD by ones widens them. Four rows at a time, as
// dotsU2AVX2; the last rows % 4 one at a time.
TEXT ·dotsU1AVX2(SB), NOSPLIT, $0-40
	ARGS
	TESTQ CX, CX
	JEQ u1done
	MASK1
	MOVL $0x00010001, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6

u1quad:
	CMPQ CX, $4
	JLT u1rest
	QUAD_START

u1group:
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	MOVQ $8, R13

u1blk:
	AVX2_ROW1(DI, Y12)
	AVX2_ROW1(R10, Y13)
	AVX2_ROW1(R11, Y14)
	AVX2_ROW1(R12, Y15)

	ADDQ $32, BX
	ADDQ $256, R9
	CMPQ BX, DX
	JGE u1widen
	DECQ R13
	JNE u1blk

u1widen:
	WIDEN_QUAD
	CMPQ BX, DX
	JLT u1group

	QUAD_END
	JMP u1quad

u1rest:
	TESTQ CX, CX
	JEQ u1done

u1row:
	VPXOR Y3, Y3, Y3
	XORQ BX, BX
	MOVQ SI, R9

u1col:
	VPXOR Y12, Y12, Y12
	AVX2_ROW1(DI, Y12)
	VPMADDWD Y6, Y12, Y12
	VPADDD Y12, Y3, Y3
	ADDQ $32, BX
	ADDQ $256, R9
	CMPQ BX, DX
	JLT u1col

	VMOVDQA Y3, Y0
	ROW_END
	JNE u1row

u1done:
	VZEROUPPER
	RET

// VNNI_PAIR1 adds the bits 0 and 1 of each byte of Y0 to the sums: accA the products of the
// bits 0 with the query's 32 bytes at off, accB twice those of the bits 1 with the next 32.
// Masking bit 1 with 0x02 (Y6) leaves 2·bit in place, so one shift by two serves two bits.
#define VNNI_PAIR1(off, accA, accB) \
	VPAND Y7, Y0, Y1; \
	VPDPBUSD off(R9), Y1, accA; \
	VPAND Y6, Y0, Y1; \
	VPDPBUSD off+32(R9), Y1, accB

// VNNI_ROW1 adds the block of the row at base to its two int32 sums (see VNNI_PAIR1); the
// row's sum is accA + accB/2 (exact: accB's lanes are even).
#define VNNI_ROW1(base, accA, accB) \
	VMOVDQU (base)(BX*1), Y0; \
	VNNI_PAIR1(0, accA, accB); \
	VPSRLW $2, Y0, Y0; \
	VNNI_PAIR1(64, accA, accB); \
	VPSRLW $2, Y0, Y0; \
	VNNI_PAIR1(128, accA, accB); \
	VPSRLW $2, Y0, Y0; \
	VNNI_PAIR1(192, accA, accB)

// FOLD1 adds a row's accB/2 into its accA.
#define FOLD1(accA, accB) \
	VPSRAD $1, accB, accB; \
	VPADDD accB, accA, accA

// func dotsU1VNNI(q *int8, codes *byte, cbytes, rows int, out *int32)
//
// dotsU1AVX2 with AVX-512 VNNI on 256-bit registers: VPDPBUSD adds each four products
// straight into the int32 sums (two a row, VNNI_ROW1). Registers as dotsU2VNNI's, Y6 the
// mask 0x02 of each byte.
TEXT ·dotsU1VNNI(SB), NOSPLIT, $0-40
	ARGS
	TESTQ CX, CX
	JEQ v1done
	MASK1
	MOVL $0x02020202, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6

v1quad:
	CMPQ CX, $4
	JLT v1rest
	QUAD_START
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15

v1blk:
	VNNI_ROW1(DI, Y8, Y2)
	VNNI_ROW1(R10, Y9, Y3)
	VNNI_ROW1(R11, Y10, Y14)
	VNNI_ROW1(R12, Y11, Y15)

	ADDQ $32, BX
	ADDQ $256, R9
	CMPQ BX, DX
	JLT v1blk

	FOLD1(Y8, Y2)
	FOLD1(Y9, Y3)
	FOLD1(Y10, Y14)
	FOLD1(Y11, Y15)
	QUAD_END
	JMP v1quad

v1rest:
	TESTQ CX, CX
	JEQ v1done

v1row:
	VPXOR Y3, Y3, Y3
	VPXOR Y2, Y2, Y2
	XORQ BX, BX
	MOVQ SI, R9

v1col:
	VNNI_ROW1(DI, Y3, Y2)
	ADDQ $32, BX
	ADDQ $256, R9
	CMPQ BX, DX
	JLT v1col

	FOLD1(Y3, Y2)
	VMOVDQA Y3, Y0
	ROW_END
	JNE v1row

v1done:
	VZEROUPPER
	RET

// func fwhtWideAVX(a *float32, n int)
//
// The Walsh–Hadamard transform's levels h = 8, 16, …, n/2 over a (n floats, a power of two
// ≥ 8), in place: a[i+j], a[i+h+j] = a[i+j] + a[i+h+j], a[i+j] − a[i+h+j], eight lanes at a
// time.
TEXT ·fwhtWideAVX(SB), NOSPLIT, $0-16
	MOVQ a+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ $8, DX

fwlevel:
	CMPQ DX, CX
	JGE fwdone
	XORQ BX, BX

fwblk:
	CMPQ BX, CX
	JGE fwnext
	LEAQ (SI)(BX*4), DI
	LEAQ (DI)(DX*4), R8
	MOVQ DX, R9

fwinner:
	VMOVUPS (DI), Y0
	VMOVUPS (R8), Y1
	VADDPS Y1, Y0, Y2
	VSUBPS Y1, Y0, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, (R8)
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, R9
	JNE fwinner
	LEAQ (BX)(DX*2), BX
	JMP fwblk

fwnext:
	SHLQ $1, DX
	JMP fwlevel

fwdone:
	VZEROUPPER
	RET

// func atLeastAVX(dots *int32, n int, min int32, dst *int32, base int) int
//
// Writes to dst, in order, base + r for each of the first n − n%8 rows with dots[r] ≥ min,
// and returns how many it wrote: reachingAVX's loop on the integers alone.
TEXT ·atLeastAVX(SB), NOSPLIT, $0-48
	MOVQ dots+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL min+16(FP), AX
	DECL AX // dots ≥ min is dots > min − 1 (min > MinInt32: the caller's bound)
	VMOVD AX, X3
	VPBROADCASTD X3, Y3
	MOVQ dst+24(FP), DI
	MOVQ base+32(FP), R8
	XORQ R9, R9

al8:
	CMPQ CX, $8
	JLT aldone
	VMOVDQU (SI), Y0
	VPCMPGTD Y3, Y0, Y4 // dots > min − 1
	VMOVMSKPS Y4, AX
	TESTL AX, AX
	JEQ alnext

	APPEND_SET(albit)

alnext:
	ADDQ $32, SI
	ADDQ $8, R8
	SUBQ $8, CX
	JMP al8

aldone:
	MOVQ R9, ret+40(FP)
	VZEROUPPER
	RET

// POPSUM scores the 64 bytes at src against the four bit planes p0–p3 of the query's
// u = q + 8 (registers or memory): in each quadword lane, Σ_j 2^j·popcount(x ∧ p_j) −
// 8·popcount(x), a lane's share of Σ_{bits set} q, left as Z1 + Z12 (Z0, Z2, Z13 scratch).
#define POPSUM(src, p0, p1, p2, p3) \
	VMOVDQU64 src, Z0; \
	VPANDQ p0, Z0, Z1; \
	VPANDQ p1, Z0, Z2; \
	VPANDQ p2, Z0, Z12; \
	VPANDQ p3, Z0, Z13; \
	VPOPCNTQ Z0, Z0; \
	VPOPCNTQ Z1, Z1; \
	VPOPCNTQ Z2, Z2; \
	VPOPCNTQ Z12, Z12; \
	VPOPCNTQ Z13, Z13; \
	VPSLLQ $3, Z0, Z0; \
	VPADDQ Z2, Z2, Z2; \
	VPSLLQ $2, Z12, Z12; \
	VPSLLQ $3, Z13, Z13; \
	VPADDQ Z2, Z1, Z1; \
	VPADDQ Z13, Z12, Z12; \
	VPSUBQ Z0, Z1, Z1

// POP2 sets acc to the sums of the two 32-byte rows at off(DI) against the planes in
// Z16–Z19 (each plane twice): lanes 0–3 are the first row's, 4–7 the second's.
#define POP2(off, acc) \
	POPSUM(off(DI), Z16, Z17, Z18, Z19); \
	VPADDQ Z12, Z1, acc

// func dotsU1Pop32(planes *byte, codes *byte, rows int, out *int32)
//
// dotsU1 for 32-byte rows (256 rotated dimensions) and a query code q in −8…7 given as the
// four bit planes of u = q + 8 (bitPlanes: 4×32 bytes), with AVX-512's VPOPCNTQ: each
// 64-byte load is two rows, ANDed with each plane and counted. Eight rows a pass (rows a
// multiple of 8, at least 8): their quadword sums narrowed to doublewords, added up by
// pairs (VPHADDD twice) and put in row order (VPERMD by pop32Order).
TEXT ·dotsU1Pop32(SB), NOSPLIT, $0-32
	MOVQ planes+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ rows+16(FP), CX
	MOVQ out+24(FP), R8
	VBROADCASTI64X4 (SI), Z16
	VBROADCASTI64X4 32(SI), Z17
	VBROADCASTI64X4 64(SI), Z18
	VBROADCASTI64X4 96(SI), Z19
	VMOVDQU ·pop32Order(SB), Y15

p32loop:
	POP2(0, Z3)
	POP2(64, Z4)
	POP2(128, Z5)
	POP2(192, Z6)
	VPMOVQD Z3, Y3
	VPMOVQD Z4, Y4
	VPMOVQD Z5, Y5
	VPMOVQD Z6, Y6
	VPHADDD Y4, Y3, Y7  // [a01 a23 c01 c23 | b01 b23 d01 d23]
	VPHADDD Y6, Y5, Y8  // [e01 e23 g01 g23 | f01 f23 h01 h23]
	VPHADDD Y8, Y7, Y9  // [a c e g | b d f h]
	VPERMD Y9, Y15, Y10 // [a b c d e f g h]
	VMOVDQU Y10, (R8)
	ADDQ $256, DI
	ADDQ $32, R8
	SUBQ $8, CX
	JNE p32loop

	VZEROUPPER
	RET

// pop32Order puts dotsU1Pop32's sums [a c e g | b d f h] in row order.
DATA ·pop32Order+0(SB)/4, $0
DATA ·pop32Order+4(SB)/4, $4
DATA ·pop32Order+8(SB)/4, $1
DATA ·pop32Order+12(SB)/4, $5
DATA ·pop32Order+16(SB)/4, $2
DATA ·pop32Order+20(SB)/4, $6
DATA ·pop32Order+24(SB)/4, $3
DATA ·pop32Order+28(SB)/4, $7
GLOBL ·pop32Order(SB), RODATA|NOPTR, $32

// POPCHUNK adds to Z3 the sums of the 64-byte chunk at (DI)(BX*1) of a row against the
// planes' chunk at the same offset (planes cbytes apart from R9: R9, R10, R11, R12).
#define POPCHUNK \
	POPSUM((DI)(BX*1), (R9)(BX*1), (R10)(BX*1), (R11)(BX*1), (R12)(BX*1)); \
	VPADDQ Z12, Z1, Z1; \
	VPADDQ Z1, Z3, Z3

// func dotsU1Pop64(planes *byte, codes *byte, cbytes, rows int, out *int32)
//
// dotsU1Pop32 for rows of cbytes bytes, a multiple of 64 (512 rotated dimensions or more:
// 2,048 for a 1,536-dimension embedding), one row at a time: each 64-byte chunk ANDed with
// the planes' chunk at its offset (planes: four of cbytes bytes), the row's quadword sums
// added up at its end.
TEXT ·dotsU1Pop64(SB), NOSPLIT, $0-40
	MOVQ planes+0(FP), R9
	MOVQ codes+8(FP), DI
	MOVQ cbytes+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ out+32(FP), R8
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	TESTQ CX, CX
	JEQ p64done

p64row:
	VPXORQ Z3, Z3, Z3
	XORQ BX, BX

p64chunk:
	POPCHUNK
	ADDQ $64, BX
	CMPQ BX, DX
	JLT p64chunk

	VEXTRACTI64X4 $1, Z3, Y4
	VPADDQ Y4, Y3, Y3
	VEXTRACTI128 $1, Y3, X4
	VPADDQ X4, X3, X3
	VPSHUFD $0x4E, X3, X4
	VPADDQ X4, X3, X3
	VMOVQ X3, AX
	MOVL AX, (R8)
	ADDQ $4, R8
	ADDQ DX, DI
	DECQ CX
	JNE p64row

p64done:
	VZEROUPPER
	RET
