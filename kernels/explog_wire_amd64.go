//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.exp, avx2Impl.log, avx2Impl.logMatVec = expAVX2, logAVX2, logMatVecAVX2
	avx512Impl.exp, avx512Impl.log, avx512Impl.logMatVec = expAVX512, logAVX512, logMatVecAVX512
	avx2Impl.exp32, avx512Impl.exp32 = exp32AVX2, exp32AVX2 // see fb_wire_amd64.go
	return 0
}()
