//go:build !purego

package kernels

import "testing"

// TestForwardBatchRowBlocks runs the assembly ForwardBatch with E taken a few
// rows at a time (the blocking used for large M, where the partial sums are
// accumulated in alpha), at sizes small enough to test quickly.
func TestForwardBatchRowBlocks(t *testing.T) {
	r := newRand(17)
	tiers := map[*impl]func(alpha, scale, psi, e []float64, T, K, M, ib int){
		avx2Impl:   forwardBatchAVX2,
		avx512Impl: forwardBatchAVX512,
	}
	for p, f := range tiers {
		if !p.available {
			continue
		}
		for _, ib := range []int{1, 2, 5, 16, 33, 64, 100} {
			for _, M := range []int{1, 7, 9, 23, 40, 45, 64, 100} {
				for _, K := range []int{1, 4, 7} {
					checkBatch(t, p.name, func(alpha, scale, psi, e []float64, T, K, M int) {
						f(alpha, scale, psi, e, T, K, M, ib)
					}, r, "zeros", 7, K, M)
				}
			}
		}
	}
}
