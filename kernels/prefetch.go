package kernels

import (
	"runtime"
	"unsafe"
)

// PrefetchLines asks the memory system for the cache line holding
// x[offs[k]·stride], for every k, and returns without waiting for it: a
// caller that will read scattered elements soon issues this first and does
// other work meanwhile, so that the misses overlap with that work instead
// of stalling the reads. It has no effect on any result. A prefetch never
// faults, so an offset outside x is harmless (and useless). On amd64 it is
// one PREFETCHT0 per offset; elsewhere (and with -tags purego) it does
// nothing.
func PrefetchLines[E float32 | float64](x []E, offs []int32, stride int) {
	if len(x) == 0 || len(offs) == 0 {
		return
	}
	var e E
	prefetchLines(uintptr(unsafe.Pointer(&x[0])), offs, stride*int(unsafe.Sizeof(e)))
	runtime.KeepAlive(x)
}

// PrefetchRows is PrefetchLines for whole rows: every cache line of
// w[ids[k]·ld : ids[k]·ld+M] for every k (the weight rows Gather and
// Scatter read for those ids).
func PrefetchRows[E float32 | float64](w []E, ld int, ids []int32, M int) {
	if len(w) == 0 || len(ids) == 0 || M <= 0 {
		return
	}
	var e E
	sz := int(unsafe.Sizeof(e))
	prefetchRows(uintptr(unsafe.Pointer(&w[0])), ids, ld*sz, M*sz)
	runtime.KeepAlive(w)
}
