package index

// 4-bit codes: a row scaled so its largest component is ±7, rounded, offset by 8 into
// 0…15 and packed two a byte. In each 32-byte block b of a row, byte i holds dimension
// 64b+i in its low nibble and 64b+32+i in its high one (the layout the AVX2 kernel reads).

// u4Bytes is the bytes of one 4-bit code of dims dimensions: 32 per 64 dimensions.
func u4Bytes(dims int) int { return (dims + 63) / 64 * 32 }

// quantize4 writes vec's 4-bit code into code (len u4Bytes(len(vec)); padding dimensions get
// nibble 0, which the zero query components there cancel) and returns its scale: vec ≈
// scale·(u − 8).
func quantize4(code []byte, vec []float32) float32 {
	clear(code)
	m := maxAbs(vec)
	if m == 0 {
		for i := range vec {
			setNibble(code, i, 8)
		}
		return 0
	}
	inv := 7 / m
	for i, f := range vec {
		x := f * inv
		var c int8
		if x >= 0 {
			c = int8(x + 0.5)
		} else {
			c = int8(x - 0.5)
		}
		setNibble(code, i, byte(c+8))
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

// maxAbs is the largest |f| of vec (vec is finite: Normalize rejects NaN and ±Inf). Plain
// comparisons: the max builtin's NaN and signed-zero rules made it a third of a rebuild's
// quantizing.
func maxAbs(vec []float32) float32 {
	var m0, m1 float32
	i := 0
	for ; i+2 <= len(vec); i += 2 {
		a, b := vec[i], vec[i+1]
		if a < 0 {
			a = -a
		}
		if b < 0 {
			b = -b
		}
		if a > m0 {
			m0 = a
		}
		if b > m1 {
			m1 = b
		}
	}
	if i < len(vec) {
		a := vec[i]
		if a < 0 {
			a = -a
		}
		if a > m0 {
			m0 = a
		}
	}
	if m1 > m0 {
		return m1
	}
	return m0
}

func setNibble(code []byte, d int, u byte) {
	b, i := d/64, d%64
	if i < 32 {
		code[b*32+i] |= u
	} else {
		code[b*32+i-32] |= u << 4
	}
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
