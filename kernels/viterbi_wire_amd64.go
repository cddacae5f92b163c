//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.viterbi = viterbiAVX2
	avx512Impl.viterbi = viterbiAVX512
	avx2Impl.viterbiMax = viterbiMaxAVX2
	avx512Impl.viterbiMax = viterbiMaxAVX512
	// float32: AVX2 in both tiers (see fb_wire_amd64.go).
	avx2Impl.viterbi32, avx2Impl.viterbiMax32 = viterbi32AVX2, viterbiMax32AVX2
	avx512Impl.viterbi32, avx512Impl.viterbiMax32 = viterbi32AVX2, viterbiMax32AVX2
	return 0
}()
