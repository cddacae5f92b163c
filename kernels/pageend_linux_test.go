package kernels

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pageEndOf returns a copy of fill that ends exactly where a readable
// mapping ends and an inaccessible page begins: a kernel that reads or
// writes one element past it faults. The mapping goes when the test ends.
func pageEndOf[E any](t testing.TB, fill []E) []E {
	t.Helper()
	n := len(fill)
	if n == 0 {
		return nil
	}
	sz := int(unsafe.Sizeof(fill[0]))
	ps := unix.Getpagesize()
	size := (n*sz+ps-1)/ps*ps + ps
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-ps:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	x := unsafe.Slice((*E)(unsafe.Pointer(&mem[size-ps-n*sz])), n)
	copy(x, fill)
	return x
}
