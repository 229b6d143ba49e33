package index

import "math"

// 4-bit codes: a row scaled so its largest component is ±7, rounded, offset by 8 into
// 0…15 (quantizeU). The 4-bit planes the kernel dotsU4 reads (a row's residual planes, see
// Vectors) pack two values a byte: in each 32-byte block b of a row, byte i holds dimension
// 64b+i in its low nibble and 64b+32+i in its high one (the layout the AVX2 kernel reads).

// u4Bytes is the bytes of one 4-bit code of dims dimensions: 32 per 64 dimensions.
func u4Bytes(dims int) int { return (dims + 63) / 64 * 32 }

// quantizeU writes vec's 4-bit code into u (len(vec) values, one a dimension) and returns its
// scale: vec ≈ scale·(u − 8), u = round(7·vec/max|vec|) + 8 ∈ 1…15. A zero vector has scale 0
// and every value 8. Coded rows keep u in two 2-bit planes (quant2.go).
func quantizeU(u []byte, vec []float32) float32 {
	m := maxAbs(vec)
	if m == 0 {
		for i := range vec {
			u[i] = 8
		}
		return 0
	}
	inv := 7 / m
	for i, f := range vec {
		u[i] = byte(roundHalfAway(f*inv) + 8)
	}
	return m / 7
}

// nibble returns dimension d's 4-bit value u (0…15).
func nibble(code []byte, d int) byte {
	b, i := d/64, d%64
	if i < 32 {
		return code[b*32+i] & 15
	}
	return code[b*32+i-32] >> 4
}

// maxAbs is the largest |f| of vec (vec is finite: Normalize rejects NaN and ±Inf). On the
// bits: a non-negative float's order is its bit pattern's as an unsigned integer, so |f| is
// the bits without the sign and the largest is an integer max, which compiles to a
// conditional move. Compared as floats, the branches on a vector's random signs and sizes
// were mispredicted about half the time: a sixth of a rebuild's quantizing.
func maxAbs(vec []float32) float32 {
	const abs = 0x7fffffff
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(vec); i += 4 {
		m0 = max(m0, math.Float32bits(vec[i])&abs)
		m1 = max(m1, math.Float32bits(vec[i+1])&abs)
		m2 = max(m2, math.Float32bits(vec[i+2])&abs)
		m3 = max(m3, math.Float32bits(vec[i+3])&abs)
	}
	for ; i < len(vec); i++ {
		m0 = max(m0, math.Float32bits(vec[i])&abs)
	}
	return math.Float32frombits(max(m0, m1, m2, m3))
}

// roundHalfAway rounds x half away from zero to an integer, in float32 and without a
// branch: x plus ±0.5 by x's sign, truncated. (A rebuild quantizes every vector, and
// math.Round's float64 round trip, or a branch on the sign, costs more than the rest of
// the loop.)
func roundHalfAway(x float32) int32 {
	half := math.Float32frombits(0x3f000000 | math.Float32bits(x)&0x80000000)
	return int32(x + half)
}

// dotsU4Go is dotsU4 without SIMD: out[r] = Σ_j q[j]·u[r][j], q of 2·cbytes components.
func dotsU4Go(q []int8, codes []byte, cbytes int, out []int32) {
	for r := range out {
		row := codes[r*cbytes : (r+1)*cbytes]
		var s int32
		for k, x := range row {
			b, i := k/32, k%32
			s += int32(q[b*64+i])*int32(x&15) + int32(q[b*64+32+i])*int32(x>>4)
		}
		out[r] = s
	}
}
