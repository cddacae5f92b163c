//go:build linux && !purego

package kernels

import (
	"syscall"
	"testing"
	"unsafe"
)

// pageEnd maps enough pages for n elements of size sz followed by an
// inaccessible page, and returns the memory of the n elements that end
// exactly at the inaccessible page: any access past the end faults.
func pageEnd(t *testing.T, n, sz int) (unsafe.Pointer, func()) {
	t.Helper()
	ps := syscall.Getpagesize()
	bytes := n * sz
	pages := (bytes+ps-1)/ps + 1
	mem, err := syscall.Mmap(-1, 0, pages*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	if err := syscall.Mprotect(mem[(pages-1)*ps:], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	p := unsafe.Pointer(&mem[(pages-1)*ps-bytes])
	return p, func() { syscall.Munmap(mem) }
}

// TestViterbiPageEnd puts s, tr, delta and bp right before an unmapped page:
// a tier that reads or writes a lane past the end of any of them (masked
// tails done wrong) crashes. Results are also compared with generic.
//
// Skipped with -short: qemu-user (used with -short to run the AVX2 tier on
// a CPU without AVX-512) does not suppress faults on the masked-off lanes
// of VMASKMOVPD loads, which real hardware guarantees.
func TestViterbiPageEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: masked-load fault suppression is not emulated by qemu-user")
	}
	r := newRand(45)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range labelCounts() {
			for _, T := range []int{1, 2, 5} {
				ps, f1 := pageEnd(t, T*M, 8)
				pt, f2 := pageEnd(t, M*M, 8)
				pd, f3 := pageEnd(t, T*M, 8)
				pb, f4 := pageEnd(t, T*M, 4)
				s := unsafe.Slice((*float64)(ps), T*M)
				tr := unsafe.Slice((*float64)(pt), M*M)
				delta := unsafe.Slice((*float64)(pd), T*M)
				bp := unsafe.Slice((*int32)(pb), T*M)
				copy(s, smallInts(r, T*M))
				copy(tr, randSlice(r, M*M, -2, 2))
				p.viterbi(delta, bp, s, tr, T, M)
				wd, wb := make([]float64, T*M), make([]int32, T*M)
				viterbiGeneric(wd, wb, s, tr, T, M)
				for k := range wd {
					if !sameFloat(delta[k], wd[k]) || (k >= M && bp[k] != wb[k]) {
						t.Fatalf("T=%d M=%d: [%d] got %v/%d, want %v/%d", T, M, k, delta[k], bp[k], wd[k], wb[k])
					}
				}
				// The max-only kernel on the same page-end buffers.
				for k := range delta {
					delta[k] = deltaSentinel
				}
				p.viterbiMax(delta, s, tr, T, M)
				for k := range wd {
					if !sameFloat(delta[k], wd[k]) {
						t.Fatalf("viterbiMax T=%d M=%d: [%d] got %v, want %v", T, M, k, delta[k], wd[k])
					}
				}
				f1()
				f2()
				f3()
				f4()
			}
		}
	})
}
