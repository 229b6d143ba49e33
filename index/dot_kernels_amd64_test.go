//go:build !purego

package index

type kernel = func(q []int8, codes []byte, cbytes int, out []int32)

type asmKernel = func(q *int8, codes *byte, cbytes, rows int, out *int32)

// kernelSet returns the kernel dispatch (under name) and each assembly kernel this machine
// can run, adapted to the slice signature: the dispatch picks one, and the others must agree
// with the Go reference where they run.
func kernelSet(name string, dispatch kernel, avx2, vnni asmKernel) map[string]kernel {
	call := func(k asmKernel) kernel {
		return func(q []int8, codes []byte, cbytes int, out []int32) {
			if len(out) > 0 {
				k(&q[0], &codes[0], cbytes, len(out), &out[0])
			}
		}
	}
	ks := map[string]kernel{name: dispatch}
	if haveAVX2 {
		ks["avx2"] = call(avx2)
	}
	if haveVNNI {
		ks["vnni"] = call(vnni)
	}
	return ks
}

// dotKernels returns every 4-bit kernel this machine can run.
func dotKernels() map[string]kernel {
	return kernelSet("dotsU4", dotsU4, dotsU4AVX2, dotsU4VNNI)
}

// dot2Kernels returns every 2-bit kernel this machine can run.
func dot2Kernels() map[string]kernel {
	return kernelSet("dotsU2", dotsU2, dotsU2AVX2, dotsU2VNNI)
}

// dot1Kernels returns every 1-bit kernel this machine can run.
func dot1Kernels() map[string]kernel {
	return kernelSet("dotsU1", dotsU1, dotsU1AVX2, dotsU1VNNI)
}

// dispatched names what the dispatching function fn runs on this machine, as the kernel
// tests log it (dot_amd64.go's choices).
func dispatched(fn string) string {
	switch fn {
	case "dotsU4", "dotsU2", "dotsU1":
		switch {
		case haveVNNI:
			return "vnni assembly"
		case haveAVX2:
			return "avx2 assembly"
		}
	case "dotsU1Planes":
		if havePop {
			return "vpopcntq assembly (32-byte rows and multiples of 64), else " + dispatched("dotsU1")
		}
		return dispatched("dotsU1")
	case "fwhtWide", "scaleScores", "appendReaching", "appendAtLeast":
		if haveAVX2 {
			return "avx2 assembly, Go for the tail"
		}
	}
	return "portable Go (this CPU has no AVX2)"
}
