//go:build !amd64

package index

func dotKernels() map[string]func(q []int8, codes []byte, cbytes int, out []int32) {
	return map[string]func(q []int8, codes []byte, cbytes int, out []int32){"dotsU4": dotsU4}
}

func dot2Kernels() map[string]func(q []int8, codes []byte, cbytes int, out []int32) {
	return map[string]func(q []int8, codes []byte, cbytes int, out []int32){"dotsU2": dotsU2}
}

func dot1Kernels() map[string]func(q []int8, codes []byte, cbytes int, out []int32) {
	return map[string]func(q []int8, codes []byte, cbytes int, out []int32){"dotsU1": dotsU1}
}
