//go:build !purego

package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkForwardNarrow runs the AVX2 and AVX-512 Forward kernels directly
// at the small M around fbNarrow (the label count up to which the avx512
// tier runs the AVX2 ones), float64 and float32, T = 32: the measurement
// behind that switch. Run with -count for benchstat.
func BenchmarkForwardNarrow(b *testing.B) {
	if !avx512Impl.available {
		b.Skipf("this CPU lacks %s", avx512Impl.needs)
	}
	r := newRand(7)
	const T = 32
	for _, M := range []int{5, 8, 9, 12, 13, 14, 15, 16, 17, 20, 24, 32} {
		psi, e := randSlice(r, T*M, 0.01, 1), randSlice(r, M*M, 0.01, 1)
		alpha, scale := make([]float64, T*M), make([]float64, T)
		psi32, e32 := to32(psi), to32(e)
		alpha32, scale32 := make([]float32, T*M), make([]float32, T)
		for _, v := range []struct {
			name string
			f64  func(alpha, scale, psi, e []float64, T, M int)
			f32  func(alpha, scale, psi, e []float32, T, M int)
		}{
			{"avx2", lagChecked(forwardAVX2), lagChecked(forward32AVX2)},
			{"avx512", lagChecked(forwardAVX512), lagChecked(forward32AVX512)},
		} {
			perPosition(b, fmt.Sprintf("M=%d/float64/%s", M, v.name), T, func() { v.f64(alpha, scale, psi, e, T, M) })
			perPosition(b, fmt.Sprintf("M=%d/float32/%s", M, v.name), T, func() { v.f32(alpha32, scale32, psi32, e32, T, M) })
		}
	}
}

// BenchmarkBackwardNarrow is BenchmarkForwardNarrow for Backward, which the
// avx512 tier runs on AVX-512 at every M.
func BenchmarkBackwardNarrow(b *testing.B) {
	if !avx512Impl.available {
		b.Skipf("this CPU lacks %s", avx512Impl.needs)
	}
	r := newRand(8)
	const T = 32
	for _, M := range []int{2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 20, 24, 32} {
		psi, e := randSlice(r, T*M, 0.01, 1), randSlice(r, M*M, 0.01, 1)
		alpha, beta, scale := make([]float64, T*M), make([]float64, T*M), make([]float64, T)
		forwardGeneric(alpha, scale, psi, e, T, M)
		psi32, e32 := to32(psi), to32(e)
		alpha32, beta32, scale32 := make([]float32, T*M), make([]float32, T*M), make([]float32, T)
		forwardGeneric(alpha32, scale32, psi32, e32, T, M)
		for _, v := range []struct {
			name string
			f64  func(beta, scale, psi, et []float64, T, M int)
			f32  func(beta, scale, psi, et []float32, T, M int)
		}{
			{"avx2", backwardAVX2, backward32AVX2},
			{"avx512", backwardAVX512, backward32AVX512},
		} {
			perPosition(b, fmt.Sprintf("M=%d/float64/%s", M, v.name), T, func() { v.f64(beta, scale, psi, e, T, M) })
			perPosition(b, fmt.Sprintf("M=%d/float32/%s", M, v.name), T, func() { v.f32(beta32, scale32, psi32, e32, T, M) })
		}
	}
}

// perPosition runs f (one call over T positions) as the sub-benchmark name
// and reports ns a position.
func perPosition(b *testing.B, name string, T int, f func()) {
	b.Run(name, func(b *testing.B) {
		for b.Loop() {
			f()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*T), "ns/position")
	})
}
