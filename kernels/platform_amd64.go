//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// The amd64 tiers. Each kernel family's *_wire_amd64.go file fills in the
// functions it has generated (in package-level initialisers, which run
// before dispatch's init); kernels a tier lacks fall back to generic.
var (
	avx2Impl = &impl{
		name:      "avx2",
		available: cpu.X86.HasAVX2 && cpu.X86.HasFMA,
	}
	// AVX-512: F for the zmm arithmetic, DQ for KMOVB, VL for the ymm forms
	// of EVEX instructions, BMI2 for the BZHI that builds tail masks.
	avx512Impl = &impl{
		name: "avx512",
		available: cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasBMI2 &&
			cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL,
	}
)

func platformImpls() []*impl { return []*impl{avx2Impl, avx512Impl} }

var _ = func() int {
	avx2Impl.fmaPeak, avx2Impl.peakFlops = fmaPeakAVX2, 12*4*2
	avx512Impl.fmaPeak, avx512Impl.peakFlops = fmaPeakAVX512, 16*8*2
	return 0
}()
