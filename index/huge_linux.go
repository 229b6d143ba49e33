package index

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms that have them.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the whole 2 MiB pages of b's array with huge pages (a
// no-op where transparent huge pages are off, or the array spans none). Recall reads
// hundreds of rows at random in the vector codes and edges at random in the graph's slab,
// each on a page of its own: with 4 KiB pages every read is a TLB miss and a page walk,
// which keeps the misses from overlapping (rescoring's gather of 512 rows took half the
// time with huge pages). Call it before the array is written: pages already faulted in wait
// for the kernel's background collapse.
func adviseHuge[T any](b []T) {
	size := uintptr(cap(b)) * unsafe.Sizeof(*new(T))
	if size < 2*hugePage {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(b))
	from, n := hugeSpan(uintptr(base), size)
	if n == 0 {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, from)), n), unix.MADV_HUGEPAGE)
}

// hugeSpan returns the whole huge pages of the size bytes at address p: their offset from
// p and their length in bytes (0: none).
func hugeSpan(p, size uintptr) (from, n uintptr) {
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + size) &^ (hugePage - 1)
	if end <= start {
		return 0, 0
	}
	return start - p, end - start
}
