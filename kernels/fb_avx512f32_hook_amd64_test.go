//go:build !purego

package kernels

// addAVX512F32 adds the AVX-512 float32 kernels of the other families (none
// yet: Viterbi and Exp come with their generators).
func addAVX512F32(p *impl) {}
