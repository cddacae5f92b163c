//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.viterbi = viterbiAVX2
	avx512Impl.viterbi = viterbiAVX512
	avx2Impl.viterbiMax = viterbiMaxAVX2
	avx512Impl.viterbiMax = viterbiMaxAVX512
	return 0
}()
