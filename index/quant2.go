package index

// 2-bit planes: a row's 4-bit code u (0…15, see quant4.go) is kept as two 2-bit planes,
// u = 4·h + l, so a scan can read the high plane alone — a quarter of a byte a dimension —
// and add the low plane only for the rows it keeps. Four values a byte: in each 32-byte
// block b of a plane, byte i holds dimension 128b+32s+i in bits 2s…2s+1 (s = 0…3), the
// layout the AVX2 kernel reads.

// u2Bytes is the bytes of one 2-bit plane of dims dimensions: 32 per 128 dimensions.
func u2Bytes(dims int) int { return (dims + 127) / 128 * 32 }

// CodedRowBytes is the bytes a coded index keeps for a row's codes at dims dimensions: the
// 1-bit code of its rotation (quant1.go), the 4-bit code's two 2-bit planes and the
// residual's two 4-bit planes (not their scales and weight).
func CodedRowBytes(dims int) int { return u1Bytes(dims) + 2*u2Bytes(dims) + 2*u4Bytes(dims) }

// set2 ors the 2-bit value x (0…3) into dimension d of plane.
func set2(plane []byte, d int, x byte) {
	b, i := d/128, d%128
	plane[b*32+i%32] |= x << (2 * (i / 32))
}

// get2 returns dimension d's 2-bit value in plane.
func get2(plane []byte, d int) byte {
	b, i := d/128, d%128
	return plane[b*32+i%32] >> (2 * (i / 32)) & 3
}

// dotsU2Go is dotsU2 without SIMD: out[r] = Σ_j q[j]·x[r][j] for the 2-bit values x of row r,
// q of 4·cbytes components.
func dotsU2Go(q []int8, codes []byte, cbytes int, out []int32) {
	for r := range out {
		row := codes[r*cbytes : (r+1)*cbytes]
		var s int32
		for k, x := range row {
			b, i := k/32, k%32
			for sh := range 4 {
				s += int32(q[b*128+32*sh+i]) * int32(x>>(2*sh)&3)
			}
		}
		out[r] = s
	}
}

// scaleScoresGo is scaleScores without SIMD. The conversions keep each step rounded to
// float32 (a conversion forbids fusing the multiply and the add), as the AVX kernel rounds.
func scaleScoresGo(dots []int32, scales []float32, a, b float32, out []float32) {
	for r := range out {
		out[r] = float32(float32(a*float32(dots[r]))+b) * scales[r]
	}
}

// appendReachingGo is appendReaching without SIMD: each row's score as scaleScoresGo computes
// it, compared with t.
func appendReachingGo(dst []int32, dots []int32, scales []float32, a, b, t float32, base int) []int32 {
	for r, d := range dots {
		if float32(float32(a*float32(d))+b)*scales[r] >= t {
			dst = append(dst, int32(base+r))
		}
	}
	return dst
}
