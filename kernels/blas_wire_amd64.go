//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.dot, avx2Impl.axpy, avx2Impl.scale = dotAVX2, axpyAVX2, scaleAVX2
	avx512Impl.dot, avx512Impl.axpy, avx512Impl.scale = dotAVX512, axpyAVX512, scaleAVX512
	// float32: AVX2 in both tiers (see fb_wire_amd64.go).
	avx2Impl.dot32, avx2Impl.axpy32, avx2Impl.scale32 = dot32AVX2, axpy32AVX2, scale32AVX2
	avx512Impl.dot32, avx512Impl.axpy32, avx512Impl.scale32 = dot32AVX2, axpy32AVX2, scale32AVX2
	return 0
}()
