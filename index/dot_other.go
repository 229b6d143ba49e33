//go:build !amd64

package index

// dotsInt8 sets out[r] to the dot product of q with code row r (rows of stride bytes, len(out)
// rows).
func dotsInt8(q []int16, codes []int8, stride int, out []int32) { dotsInt8Go(q, codes, stride, out) }

// dotsU4 sets out[r] to the dot product of q with the 4-bit code row r (see dotsU4Go).
func dotsU4(q []int8, codes []byte, cbytes int, out []int32) { dotsU4Go(q, codes, cbytes, out) }
