//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.exp, avx2Impl.log, avx2Impl.logMatVec = expAVX2, logAVX2, logMatVecAVX2
	avx512Impl.exp, avx512Impl.log, avx512Impl.logMatVec = expAVX512, logAVX512, logMatVecAVX512
	return 0
}()
