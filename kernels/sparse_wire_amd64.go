//go:build !purego

package kernels

var _ = func() int {
	avx2Impl.gather, avx2Impl.scatter = gatherAVX2, scatterAVX2
	avx512Impl.gather, avx512Impl.scatter = gatherAVX512, scatterAVX512
	// float32: AVX2 in both tiers (see fb_wire_amd64.go).
	avx2Impl.gather32, avx2Impl.scatter32 = gather32AVX2, scatter32AVX2
	avx512Impl.gather32, avx512Impl.scatter32 = gather32AVX2, scatter32AVX2
	return 0
}()
