//go:build !purego

package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkBackwardTransitions runs each amd64 tier's fused
// BackwardTransitions kernel against its Backward then Transitions (the
// narrow switches left out: the kernels are called directly) at the small
// M the fused kernels take, float64 and float32, T = 32: the measurement
// behind the tiers' choice of it. Run with -count for benchstat.
func BenchmarkBackwardTransitions(b *testing.B) {
	r := newRand(9)
	const T = 32
	for _, M := range []int{3, 5, 8, 9, 12, 16, 17, 22, 23, 24, 32} {
		psi, e := randSlice(r, T*M, 0.01, 1), randSlice(r, M*M, 0.01, 1)
		et := transpose(e, M)
		alpha, beta, scale := make([]float64, T*M), make([]float64, T*M), make([]float64, T)
		forwardGeneric(alpha, scale, psi, e, T, M)
		g, work := make([]float64, M*M), make([]float64, T*M)
		psi32, e32, et32 := to32(psi), to32(e), to32(et)
		alpha32, beta32, scale32 := make([]float32, T*M), make([]float32, T*M), make([]float32, T)
		forwardGeneric(alpha32, scale32, psi32, e32, T, M)
		g32, work32 := make([]float32, M*M), make([]float32, T*M)
		for _, v := range []struct {
			name      string
			available bool
			max64     int
			f64       func(g, e, alpha, beta, psi, scale, et []float64, T, M int)
			s64       func(g, e, alpha, beta, psi, scale, et, work []float64, T, M int)
			f32       func(g, e, alpha, beta, psi, scale, et []float32, T, M int)
			s32       func(g, e, alpha, beta, psi, scale, et, work []float32, T, M int)
		}{
			{"avx2", avx2Impl.available, btMaxAVX2,
				backwardTransitionsAVX2, backwardTransitionsOf(backwardAVX2, transitionsAVX2),
				backwardTransitions32AVX2, backwardTransitionsOf(backward32AVX2, transitions32AVX2)},
			{"avx512", avx512Impl.available, btMax,
				backwardTransitionsAVX512, backwardTransitionsOf(backwardAVX512, transitionsAVX512),
				backwardTransitions32AVX512, backwardTransitionsOf(backward32AVX512, transitions32AVX512)},
		} {
			if !v.available {
				continue
			}
			if M <= v.max64 {
				perPosition(b, fmt.Sprintf("M=%d/float64/%s-fused", M, v.name), T, func() { v.f64(g, e, alpha, beta, psi, scale, et, T, M) })
			}
			perPosition(b, fmt.Sprintf("M=%d/float64/%s-separate", M, v.name), T, func() { v.s64(g, e, alpha, beta, psi, scale, et, work, T, M) })
			perPosition(b, fmt.Sprintf("M=%d/float32/%s-fused", M, v.name), T, func() { v.f32(g32, e32, alpha32, beta32, psi32, scale32, et32, T, M) })
			perPosition(b, fmt.Sprintf("M=%d/float32/%s-separate", M, v.name), T, func() { v.s32(g32, e32, alpha32, beta32, psi32, scale32, et32, work32, T, M) })
		}
	}
}
