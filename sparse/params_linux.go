package sparse

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back the memory of x with transparent huge
// pages (madvise(MADV_HUGEPAGE) over its 2 MiB-aligned interior). It is
// only advice, given before the pages are first touched: errors are
// ignored, and small slices are left alone.
func adviseHuge[E any](x []E) {
	const huge = 2 << 20
	size := uintptr(len(x)) * unsafe.Sizeof(*new(E))
	if size < 2*huge {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + size) &^ (huge - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(x)), lo-p)), hi-lo)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
