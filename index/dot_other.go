//go:build !amd64

package index

// dotsU4 sets out[r] to the dot product of q with the 4-bit code row r (see dotsU4Go).
func dotsU4(q []int8, codes []byte, cbytes int, out []int32) { dotsU4Go(q, codes, cbytes, out) }
