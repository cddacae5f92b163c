//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.spmv, avx2Impl.gatherMulAdd = spmvAVX2, gatherMulAddAVX2
	avx512Impl.spmv, avx512Impl.gatherMulAdd = spmvAVX512, gatherMulAddAVX512
	return 0
}()
