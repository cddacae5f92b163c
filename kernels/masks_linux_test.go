package kernels

import (
	"fmt"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pageEndBytes returns n bytes (a copy of fill) that end where an
// inaccessible page begins.
func pageEndBytes(t *testing.T, fill []byte) []byte {
	n := len(fill)
	ps := unix.Getpagesize()
	size := (n+ps-1)/ps*ps + ps
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-ps:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	b := mem[size-ps-n : size-ps : size-ps]
	copy(b, fill)
	return b
}

// TestByteMasksPageEnd puts src and both outputs at the end of a mapping
// followed by an inaccessible page: a read past src's last block or a write
// past the last word crashes the test.
func TestByteMasksPageEnd(t *testing.T) {
	r := newRand(64)
	forTiers(t, func(t *testing.T, p *impl) {
		for nb := 1; nb <= 9; nb++ {
			in := maskInputs(r, nb, maskClasses[0])["classes+neighbours"]
			want, wantB := make([]uint64, nb), make([]uint64, nb)
			byteMasksGeneric(want, wantB, in, '\t', ':', '\\')
			src := pageEndBytes(t, in)
			ab, bb := pageEndBytes(t, make([]byte, 8*nb)), pageEndBytes(t, make([]byte, 8*nb))
			a := unsafe.Slice((*uint64)(unsafe.Pointer(&ab[0])), nb)
			b := unsafe.Slice((*uint64)(unsafe.Pointer(&bb[0])), nb)
			p.byteMasks(a, b, src, '\t', ':', '\\')
			what := fmt.Sprintf("%s nb=%d", p.name, nb)
			checkMasks(t, what+" a", a, want)
			checkMasks(t, what+" b", b, wantB)
		}
	})
}
