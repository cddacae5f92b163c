//go:build !purego

package kernels

// fbRows is how many rows of E ForwardBatch packs into its panel at a time
// (the assembly caps it at the panel's 64 rows): the panel of 64 rows × 32
// columns stays in L1 while every sequence uses it.
func fbRows(M int) int { return 64 }

// fbNarrow is the largest M for which the AVX-512 tier runs the AVX2
// Forward and ForwardBatch kernels.
const fbNarrow = 12

var _ = func() int {
	avx2Impl.forward, avx2Impl.backward, avx2Impl.transitions = forwardAVX2, backwardAVX2, transitionsAVX2
	avx2Impl.forwardBatch = func(alpha, scale, psi, e []float64, T, K, M int) {
		forwardBatchAVX2(alpha, scale, psi, e, T, K, M, fbRows(M))
	}
	// Below fbNarrow labels a step is all latency, and the 4-lane kernels
	// measured faster (M=9: 26 against 33 ns a position).
	avx512Impl.forward = func(alpha, scale, psi, e []float64, T, M int) {
		if M <= fbNarrow {
			forwardAVX2(alpha, scale, psi, e, T, M)
			return
		}
		forwardAVX512(alpha, scale, psi, e, T, M)
	}
	avx512Impl.backward, avx512Impl.transitions = backwardAVX512, transitionsAVX512
	avx512Impl.forwardBatch = func(alpha, scale, psi, e []float64, T, K, M int) {
		if M <= fbNarrow {
			forwardBatchAVX2(alpha, scale, psi, e, T, K, M, fbRows(M))
			return
		}
		forwardBatchAVX512(alpha, scale, psi, e, T, K, M, fbRows(M))
	}
	avx2Impl.shiftRows, avx512Impl.shiftRows = shiftRowsAVX2, shiftRowsAVX512

	// float32: the same kernels generated with float32 elements. The
	// AVX-512 tier runs the AVX2 ones until the AVX-512 float32 kernels
	// have passed TestAVX512F32Direct on an AVX-512 machine (the machine
	// they were written on has none); see avx512F32 in fb_avx512f32_test.go.
	avx2Impl.forward32, avx2Impl.backward32, avx2Impl.transitions32 = forward32AVX2, backward32AVX2, transitions32AVX2
	avx2Impl.shiftRows32 = shiftRows32AVX2
	avx512Impl.forward32, avx512Impl.backward32, avx512Impl.transitions32 = forward32AVX2, backward32AVX2, transitions32AVX2
	avx512Impl.shiftRows32 = shiftRows32AVX2
	avx2Impl.forwardBatch32 = func(alpha, scale, psi, e []float32, T, K, M int) {
		forwardBatch32AVX2(alpha, scale, psi, e, T, K, M, fbRows(M))
	}
	avx512Impl.forwardBatch32 = avx2Impl.forwardBatch32
	// BackwardBatch: AVX2 in both tiers (the AVX-512 ones have not run
	// here either; see fb_avx512f32_amd64_test.go).
	avx2Impl.backwardBatch = func(beta, scale, psi, et, work []float64, T, K, M int) {
		backwardBatchAVX2(beta, scale, psi, et, work, T, K, M, fbRows(M))
	}
	avx512Impl.backwardBatch = avx2Impl.backwardBatch
	avx2Impl.backwardBatch32 = func(beta, scale, psi, et, work []float32, T, K, M int) {
		backwardBatch32AVX2(beta, scale, psi, et, work, T, K, M, fbRows(M))
	}
	avx512Impl.backwardBatch32 = avx2Impl.backwardBatch32
	return 0
}()
