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

// TestForwardAVX512Narrow tests the AVX-512 Forward kernel at the small M
// for which the avx512 tier dispatches to the AVX2 kernel instead.
func TestForwardAVX512Narrow(t *testing.T) {
	if !avx512Impl.available {
		t.Skip("no AVX-512")
	}
	r := newRand(18)
	for _, kind := range fbKinds {
		for M := 1; M <= fbNarrow; M++ {
			for _, T := range []int{1, 2, 3, 7, 50} {
				c := makeFB(r, kind, T, M)
				alpha, scale := make([]float64, T*M), make([]float64, T)
				forwardGeneric(alpha, scale, c.psi, c.e, T, M)
				abuf, a := guarded(T*M, nil)
				sbuf, s := guarded(T, nil)
				forwardAVX512(a, s, c.psi, c.e, T, M)
				checkGuards(t, c.name+" alpha", abuf)
				checkGuards(t, c.name+" scale", sbuf)
				checkClose(t, c.name+" scale", s, scale, fbTol, 0)
				checkClose(t, c.name+" alpha", a, alpha, fbTol, fbAtol)
			}
		}
	}
}
