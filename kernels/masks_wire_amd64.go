//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

var _ = func() int {
	avx2Impl.byteMasks = byteMasksAVX2
	// The AVX-512 version compares bytes into opmasks (AVX512BW), which the
	// avx512 tier does not require; without BW it runs the AVX2 version.
	avx512Impl.byteMasks = byteMasksAVX2
	if cpu.X86.HasAVX512BW {
		avx512Impl.byteMasks = byteMasksAVX512
	}
	return 0
}()
