package index

// kernelCall adapts an assembly kernel to the slice signature of dotsU4 and dotsU2.
func kernelCall(k func(q *int8, codes *byte, cbytes, rows int, out *int32)) func(q []int8, codes []byte, cbytes int, out []int32) {
	return func(q []int8, codes []byte, cbytes int, out []int32) {
		if len(out) > 0 {
			k(&q[0], &codes[0], cbytes, len(out), &out[0])
		}
	}
}

// dotKernels returns every 4-bit kernel this machine can run, each against the same Go
// reference: dotsU4 picks one, and the others must agree where they run.
func dotKernels() map[string]func(q []int8, codes []byte, cbytes int, out []int32) {
	ks := map[string]func(q []int8, codes []byte, cbytes int, out []int32){"dotsU4": dotsU4}
	if haveAVX2 {
		ks["avx2"] = kernelCall(dotsU4AVX2)
	}
	if haveVNNI {
		ks["vnni"] = kernelCall(dotsU4VNNI)
	}
	return ks
}

// dot2Kernels is dotKernels for the 2-bit kernels.
func dot2Kernels() map[string]func(q []int8, codes []byte, cbytes int, out []int32) {
	ks := map[string]func(q []int8, codes []byte, cbytes int, out []int32){"dotsU2": dotsU2}
	if haveAVX2 {
		ks["avx2"] = kernelCall(dotsU2AVX2)
	}
	if haveVNNI {
		ks["vnni"] = kernelCall(dotsU2VNNI)
	}
	return ks
}
