//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.maxPlusCSR = maxPlusCSRAVX2
	avx512Impl.maxPlusCSR = maxPlusCSRAVX512
	return 0
}()
