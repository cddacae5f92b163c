package sparse

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back x with transparent huge pages
// (madvise(MADV_HUGEPAGE) over the 2 MiB-aligned interior of x). It is only
// advice: errors are ignored.
func adviseHuge(x []float64) {
	const huge = 2 << 20
	if len(x)*8 < 2*huge {
		return
	}
	p := uintptr(unsafe.Pointer(&x[0]))
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + uintptr(len(x))*8) &^ (huge - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&x[(lo-p)/8])), hi-lo)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
