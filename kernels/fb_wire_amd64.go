//go:build !purego

package kernels

// fbRows is how many rows of E ForwardBatch keeps in cache at a time: about
// 1 MiB of E (half this machine's L2), and all of it when M is small.
func fbRows(M int) int {
	return max(16, (1<<17)/M)
}

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
