//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.gather, avx2Impl.scatter = gatherAVX2, scatterAVX2
	avx512Impl.gather, avx512Impl.scatter = gatherAVX512, scatterAVX512
	return 0
}()
