//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.dot, avx2Impl.axpy, avx2Impl.scale = dotAVX2, axpyAVX2, scaleAVX2
	avx512Impl.dot, avx512Impl.axpy, avx512Impl.scale = dotAVX512, axpyAVX512, scaleAVX512
	return 0
}()
