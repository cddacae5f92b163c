//go:build !purego

package kernels

// fbRows is how many rows of E ForwardBatch packs into its panel at a time
// (the assembly caps it at the panel's 64 rows): the panel of 64 rows × 32
// columns stays in L1 while every sequence uses it.
func fbRows(M int) int { return 64 }

var _ = func() int {
	avx2Impl.forward, avx2Impl.backward, avx2Impl.transitions = forwardAVX2, backwardAVX2, transitionsAVX2
	avx2Impl.forwardBatch = func(alpha, scale, psi, e []float64, T, K, M int) {
		forwardBatchAVX2(alpha, scale, psi, e, T, K, M, fbRows(M))
	}
	avx512Impl.forward, avx512Impl.backward, avx512Impl.transitions = forwardAVX512, backwardAVX512, transitionsAVX512
	avx512Impl.forwardBatch = func(alpha, scale, psi, e []float64, T, K, M int) {
		forwardBatchAVX512(alpha, scale, psi, e, T, K, M, fbRows(M))
	}
	return 0
}()
