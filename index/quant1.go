package index

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// 1-bit codes of a rotated row: the first search stage's code (see vectors_approx.go).
//
// A row x (unit length) is rotated by a fixed random orthogonal map R — its components moved
// to random places among P ≥ 256 (a power of two) with random signs, then a normalized
// Walsh–Hadamard transform — and kept as the signs of Rx, one bit a dimension, with w = 1/‖Rx‖₁. A query q is
// rotated the same way and q·x = Rq·Rx is estimated by w·Σ sign(Rx)_j·(Rq)_j, the 1-bit
// estimator of RaBitQ (Gao and Long, SIGMOD 2024): sign(Rx)/√P is the nearest corner of the
// cube to Rx, and dividing by its overlap with Rx, ‖Rx‖₁/√P, makes the estimate unbiased in
// expectation over R. The rotation is what makes one bit enough: it spreads a row's weight
// over every dimension, so no coordinate is left near zero by the lexical embedder's few
// large ones. Without it, the signs of the LoCoMo-shaped corpus's rows kept 0.92 of the
// exact top 20 among the best n/64 rows; with it 0.998, more than the 4-bit code's high
// 2-bit plane (0.990), the stage it replaces, at half its bytes.
//
// Layout: in each 32-byte block b of a row, byte i holds dimension 256b+32s+i in bit s
// (s = 0…7), so the kernel reads the query in its natural order.

// rotDims is the rotation's dimension for dims-dimensional rows: the least power of two
// ≥ dims, and at least minRotDims.
func rotDims(dims int) int {
	if dims <= minRotDims {
		return minRotDims
	}
	return 1 << bits.Len(uint(dims-1))
}

// minRotDims is the fewest dimensions a row is rotated into, padded with zeros: the
// estimate's error shrinks as one over the square root of the bits, and rows of a few dozen
// dimensions rotated into as many bits lost the exact top 20 of random vectors in the first
// stage (40 dimensions in 64 bits), where 256 bits — a 32-byte block, what 128 dimensions'
// high 2-bit plane take — kept them.
const minRotDims = 256

// u1Bytes is the bytes of a 1-bit code of dims-dimensional rows: 32 per 256 of the
// rotation's dimensions.
func u1Bytes(dims int) int { return (rotDims(dims) + 255) / 256 * 32 }

// rotationSeed fixes the rotation: codes are rebuilt from the stored vectors at every load,
// so it need not be stored, but a fixed one keeps searches reproducible.
const rotationSeed = 0x5a11e4ce

var rotations sync.Map // rotDims → *rotation

// rotation is the random part of the rotation of p dimensions: where each dimension of a
// row goes (a permutation of 0…p−1), and the sign it takes there. Scattering a short row
// over all p places matters: padded at the end instead, a row of 40 dimensions in 256
// comes out of the Hadamard transform as 64 values each repeated four times (the
// transform's rows agree on the first 64 columns in groups of four), 64 bits of
// information in 256.
type rotation struct {
	place []int32
	signs []float32 // by place
	mult  []float32 // by place: the sign over √p, the transform's scale folded in
}

// rotationFor returns the rotation of p dimensions.
func rotationFor(p int) *rotation {
	if ro, ok := rotations.Load(p); ok {
		return ro.(*rotation)
	}
	r := rand.New(rand.NewPCG(rotationSeed, uint64(p)))
	ro := &rotation{place: make([]int32, p), signs: make([]float32, p)}
	for i, j := range r.Perm(p) {
		ro.place[i] = int32(j)
	}
	ro.mult = make([]float32, p)
	for i := range ro.signs {
		ro.signs[i] = float32(1 - 2*int(r.Uint64()&1))
		ro.mult[i] = ro.signs[i] / float32(math.Sqrt(float64(p)))
	}
	got, _ := rotations.LoadOrStore(p, ro)
	return got.(*rotation)
}

// rotate writes R·vec into dst (len rotDims(len(vec))): vec's components scattered to
// their places among p zeros with their signs, through the Walsh–Hadamard transform scaled
// by 1/√p, which keeps lengths.
func rotate(dst, vec []float32) {
	p := len(dst)
	ro := rotationFor(p)
	clear(dst)
	place, mult := ro.place[:len(vec)], ro.mult
	for i, f := range vec {
		j := place[i]
		dst[j] = f * mult[j]
	}
	fwht(dst)
}

// q1Top is the rotated query's largest code: ±7, four bits with the sign, so that the
// popcount kernel reads the code as four bit planes (bitPlanes). The 1-bit rows' own error
// dwarfs the query's: bench ann's recall@20 against exact search was 0.9970 at 100,000
// rows of 256 dimensions and 0.9990 at 1,536 with ±127 and with ±7 alike.
const q1Top = 7

// codeRotated writes the code of q's rotation (values in ±q1Top) into q1 (len 8·u1Bytes, the
// rest zeroed) and its bit planes into planes (len 4·u1Bytes), with qr (len rotDims) as
// scratch for the rotation, and returns the code's sum: what the first stage's score
// w·(2·Σ_{bits set} q₁ − Σ q₁) needs of the query.
func codeRotated(q1 []int8, planes []byte, qr, q []float32) int32 {
	rotate(qr, q)
	quantizeTo(q1, qr, q1Top)
	bitPlanes(planes, q1, len(q1)/8)
	var sum int32
	for _, c := range q1 {
		sum += int32(c)
	}
	return sum
}

// bitPlanes writes into planes (len ≥ 4·cbytes) the four bit planes of u = q + 8 for a query
// code q of 8·cbytes values in −8…7, each laid out as a row's 1-bit code (encodeSigns):
// plane j, at planes[j·cbytes:], holds bit j of u. Then Σ_{bits set in x} q =
// Σ_j 2^j·popcount(x ∧ plane_j) − 8·popcount(x) for any row x.
func bitPlanes(planes []byte, q []int8, cbytes int) {
	clear(planes[:4*cbytes])
	for d, c := range q[:8*cbytes] {
		u := byte(c + 8)
		b, i := d/256, d%256
		k, s := b*32+i%32, i/32
		for j := range 4 {
			planes[j*cbytes+k] |= (u >> j & 1) << s
		}
	}
}

// fwht is the unnormalized Walsh–Hadamard transform of a (len a power of two), in place:
// the first three levels in one pass over groups of eight held in registers, the rest by
// fwhtWide (eight lanes at a time where the machine has AVX).
func fwht(a []float32) {
	n := len(a)
	if n < 8 {
		fwhtLevels(a, 1)
		return
	}
	for i := 0; i+8 <= n; i += 8 {
		g := a[i : i+8 : i+8]
		y0, y1, y2, y3 := g[0]+g[1], g[0]-g[1], g[2]+g[3], g[2]-g[3]
		y4, y5, y6, y7 := g[4]+g[5], g[4]-g[5], g[6]+g[7], g[6]-g[7]
		z0, z1, z2, z3 := y0+y2, y1+y3, y0-y2, y1-y3
		z4, z5, z6, z7 := y4+y6, y5+y7, y4-y6, y5-y7
		g[0], g[1], g[2], g[3] = z0+z4, z1+z5, z2+z6, z3+z7
		g[4], g[5], g[6], g[7] = z0-z4, z1-z5, z2-z6, z3-z7
	}
	fwhtWide(a)
}

// fwhtLevels runs the transform's levels from h on: pairs h apart summed and differenced.
func fwhtLevels(a []float32, h int) {
	n := len(a)
	for ; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			x, y := a[i:i+h], a[i+h:i+2*h]
			for j := range x {
				x[j], y[j] = x[j]+y[j], x[j]-y[j]
			}
		}
	}
}

// encodeSigns writes the 1-bit code of the rotated row rv (len rotDims, a multiple of 256)
// into code and returns w = 1/‖rv‖₁, 0 for a zero row. A component whose sign bit is clear
// (≥ +0) sets its bit.
func encodeSigns(code []byte, rv []float32) float32 {
	var l1 float32
	for b := 0; b*256 < len(rv); b++ {
		blk, out := rv[b*256:b*256+256], code[b*32:b*32+32]
		for i := range out {
			var x byte
			for s := range 8 {
				u := math.Float32bits(blk[32*s+i])
				x |= byte(u>>31^1) << s // the sign bit clear: no branch on random signs
				l1 += math.Float32frombits(u &^ (1 << 31))
			}
			out[i] = x
		}
	}
	if l1 == 0 {
		return 0
	}
	return 1 / l1
}

// get1 returns dimension d's bit in code.
func get1(code []byte, d int) byte {
	b, i := d/256, d%256
	return code[b*32+i%32] >> (i / 32) & 1
}

// dotsU1Go is dotsU1 without SIMD: out[r] = Σ_j q[j]·x[r][j] for the bits x of row r, q of
// 8·cbytes components.
func dotsU1Go(q []int8, codes []byte, cbytes int, out []int32) {
	for r := range out {
		row := codes[r*cbytes : (r+1)*cbytes]
		var s int32
		for k, x := range row {
			b, i := k/32, k%32
			for sh := range 8 {
				if x>>sh&1 != 0 {
					s += int32(q[b*256+32*sh+i])
				}
			}
		}
		out[r] = s
	}
}

// appendAtLeastGo is appendAtLeast without SIMD.
func appendAtLeastGo(dst []int32, dots []int32, min int32, base int) []int32 {
	for r, d := range dots {
		if d >= min {
			dst = append(dst, int32(base+r))
		}
	}
	return dst
}
