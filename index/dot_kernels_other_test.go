//go:build !amd64 || purego

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

// dispatched names what the dispatching function fn runs here: the portable Go, always.
func dispatched(fn string) string {
	return "portable Go (built with the purego tag, or not for amd64)"
}
