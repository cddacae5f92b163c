//go:build !purego

package kernels

// addAVX512F32 adds the AVX-512 float32 kernels of the other families.
func addAVX512F32(p *impl) {
	p.viterbi32, p.viterbiMax32 = viterbi32AVX512, viterbiMax32AVX512
	p.exp32 = exp32AVX512
	p.dot32, p.axpy32, p.scale32 = dot32AVX512, axpy32AVX512, scale32AVX512
	p.gather32, p.scatter32 = gather32AVX512, scatter32AVX512
}
