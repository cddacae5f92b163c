//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestForwardBatchRowBlocks runs the assembly ForwardBatch with E taken a few
// rows at a time (the blocking used for large M, where the partial sums are
// accumulated in alpha), at sizes small enough to test quickly.
func TestForwardBatchRowBlocks(t *testing.T) {
	r := newRand(17)
	tiers := map[*impl]func(alpha, scale, psi, e []float64, from []int32, T, K, M, ib int){
		avx2Impl:   forwardBatchAVX2,
		avx512Impl: forwardBatchAVX512,
	}
	for p, f := range tiers {
		if !p.available {
			continue
		}
		for _, ib := range []int{1, 2, 5, 16, 33, 64, 100} {
			for _, M := range []int{1, 7, 9, 23, 40, 45, 64, 100} {
				for _, K := range []int{1, 4, 7} {
					checkBatch(t, p.name, func(alpha, scale, psi, e []float64, T, K, M int) {
						f(alpha, scale, psi, e, nil, T, K, M, ib)
					}, r, "zeros", 7, K, M)
				}
			}
		}
	}
}

// TestForwardAVX512Narrow tests the AVX-512 Forward kernel at the small M
// for which the avx512 tier dispatches to the AVX2 kernel instead.
func TestForwardAVX512Narrow(t *testing.T) {
	if !avx512Impl.available {
		t.Skip("no AVX-512")
	}
	r := newRand(18)
	for _, kind := range fbKinds {
		for M := 1; M <= fbNarrow; M++ {
			for _, T := range []int{1, 2, 3, 7, 50} {
				c := makeFB(r, kind, T, M)
				alpha, scale := make([]float64, T*M), make([]float64, T)
				forwardGeneric(alpha, scale, c.psi, c.e, T, M)
				abuf, a := guarded(T*M, nil)
				sbuf, s := guarded(T, nil)
				lagChecked(forwardAVX512)(a, s, c.psi, c.e, T, M)
				checkGuards(t, c.name+" alpha", abuf)
				checkGuards(t, c.name+" scale", sbuf)
				checkClose(t, c.name+" scale", s, scale, fbTol, 0)
				checkClose(t, c.name+" alpha", a, alpha, fbTol, fbAtol)
			}
		}
	}
}

// TestBackwardAVX512Narrow tests the AVX-512 Backward kernel at the small M
// (bwNarrow and below) for which the avx512 tier runs the AVX2 kernel
// instead; avx512F32 covers Backward32's.
func TestBackwardAVX512Narrow(t *testing.T) {
	if !avx512Impl.available {
		t.Skip("no AVX-512")
	}
	r := newRand(20)
	for _, kind := range fbKinds {
		for M := 1; M <= bwNarrow; M++ {
			for _, T := range []int{1, 2, 3, 7, 50} {
				c := makeFB(r, kind, T, M)
				alpha, scale := make([]float64, T*M), make([]float64, T)
				forwardGeneric(alpha, scale, c.psi, c.e, T, M)
				et := transpose(c.e, M)
				beta := make([]float64, T*M)
				backwardGeneric(beta, scale, c.psi, et, T, M)
				bbuf, b := guarded(T*M, nil)
				backwardAVX512(b, scale, c.psi, et, T, M)
				checkGuards(t, c.name+" beta", bbuf)
				checkClose(t, c.name+" beta", b, beta, fbTol, fbAtol)
			}
		}
	}
}

// TestForwardLag runs the amd64 Forward kernels without their wrapper,
// lagChecked, on every case whose scales the lag may use (lagSafe), against
// the generic kernel; and checks that the wrapped kernels, on the cases it
// sends to the generic kernel, give the generic kernel's results. Both
// kinds of case must occur.
func TestForwardLag(t *testing.T) {
	r := newRand(19)
	raw := []struct {
		p   *impl
		f64 func(alpha, scale, psi, e []float64, T, M int)
		f32 func(alpha, scale, psi, e []float32, T, M int)
	}{
		{avx2Impl, forwardAVX2, forward32AVX2},
		{avx512Impl, forwardAVX512, forward32AVX512},
	}
	safe, unsafe := 0, 0
	for _, k := range raw {
		if !k.p.available {
			continue
		}
		for _, kind := range append(fbKinds, "wide32") {
			for _, T := range []int{3, 7, 50} {
				for _, M := range append(labelCounts(), 57, 89) {
					c := makeFB32(r, kind, T, M)
					if kind == "wide32" && M%2 == 1 {
						c = tinyScales(r, T, M)
					}
					alpha, scale := make([]float64, T*M), make([]float64, T)
					forwardGeneric(alpha, scale, c.psi, c.e, T, M)
					a, s := make([]float64, T*M), make([]float64, T)
					k.f64(a, s, c.psi, c.e, T, M)
					psi, e := to32(c.psi), to32(c.e)
					a32, s32 := make([]float32, T*M), make([]float32, T)
					ra32, rs32 := make([]float32, T*M), make([]float32, T)
					forwardGeneric(ra32, rs32, psi, e, T, M)
					name := k.p.name + " " + c.name
					if lagSafe(s[1 : T-1]) {
						safe++
						checkClose(t, name+" raw scale", s, scale, fbTol, 0)
						checkClose(t, name+" raw alpha", a, alpha, fbTol, fbAtol)
					} else {
						unsafe++
						lagChecked(k.f64)(a, s, c.psi, c.e, T, M)
						checkClose(t, name+" wrapped scale", s, scale, 0, 0)
						checkClose(t, name+" wrapped alpha", a, alpha, 0, 0)
					}
					k.f32(a32, s32, psi, e, T, M)
					if lagSafe(s32[1 : T-1]) {
						checkClose32(t, name+" raw scale32", s32, to64(rs32), 2e-5, 0)
						checkClose32(t, name+" raw alpha32", a32, to64(ra32), 2e-5, 1e-30)
					} else {
						lagChecked(k.f32)(a32, s32, psi, e, T, M)
						checkClose32(t, name+" wrapped scale32", s32, to64(rs32), 0, 0)
						checkClose32(t, name+" wrapped alpha32", a32, to64(ra32), 0, 0)
					}
				}
			}
		}
	}
	if safe == 0 || unsafe == 0 {
		t.Fatalf("%d cases within the lag's range and %d outside: want both", safe, unsafe)
	}
}

// tinyScales is a case whose scales are about 2⁻¹⁰⁰ and whose E has columns
// of entries about 1e−260: the α entries of those labels, times two scales
// (the lagged product), are subnormal in float64, where Forward's own
// products are not.
func tinyScales(r *rand.Rand, T, M int) fbCase {
	c := makeFB(r, "uniform", T, M)
	for k := range c.psi {
		c.psi[k] *= 0x1p-100
	}
	for j := range M {
		if j%2 == 1 {
			for i := range M {
				c.e[i*M+j] = logUniform(r, -265, -255)
			}
		}
	}
	c.name = fmt.Sprintf("tiny-scales/T=%d/M=%d", T, M)
	return c
}
