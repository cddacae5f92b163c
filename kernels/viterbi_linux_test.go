//go:build linux && !purego

package kernels

import (
	"testing"
)

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
				s := pageEndOf(t, smallInts(r, T*M))
				tr := pageEndOf(t, randSlice(r, M*M, -2, 2))
				delta := pageEndOf(t, make([]float64, T*M))
				bp := pageEndOf(t, make([]int32, T*M))
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
			}
		}
	})
}
