package kernels

import (
	"fmt"
	"math"
	"testing"
)

// specials are values every kernel must survive.
var specials = []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, -1e300, 1e-300}

func TestDot(t *testing.T) {
	r := newRand(1)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, n := range lengths() {
			x, y := randSlice(r, n, -1, 1), randSlice(r, n+3, -1, 1)
			got, want := p.dot(x, y), dotGeneric(x, y)
			// Summation order differs; the error is bounded by n·eps·Σ|x·y|.
			bound := 0.0
			for i := range x {
				bound += math.Abs(x[i] * y[i])
			}
			if !close(got, want, 0, float64(n+1)*2.3e-16*bound) {
				t.Fatalf("n=%d: dot = %v, want %v", n, got, want)
			}
		}
		for _, s := range specials {
			x := []float64{1, 2, 3, 4, 5, s, 7, 8, 9}
			got, want := p.dot(x, x), dotGeneric(x, x)
			if !close(got, want, 1e-15, 0) {
				t.Errorf("special %v: dot = %v, want %v", s, got, want)
			}
		}
	})
}

func TestAxpyScale(t *testing.T) {
	r := newRand(2)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, n := range lengths() {
			x := randSlice(r, n, -1, 1)
			y0 := randSlice(r, n, -1, 1)
			x = append(x, specials...)
			y0 = append(y0, specials...)
			a := r.NormFloat64()

			buf, y := guarded(len(y0), y0)
			p.axpy(a, x, y)
			checkGuards(t, "axpy", buf)
			want := append([]float64(nil), y0...)
			axpyGeneric(a, x, want)
			checkAxpy(t, fmt.Sprintf("axpy n=%d", n), a, x, y, want)

			buf, z := guarded(len(y0), y0)
			p.scale(a, z)
			checkGuards(t, "scale", buf)
			want = append(want[:0], y0...)
			scaleGeneric(a, want)
			checkClose(t, fmt.Sprintf("scale n=%d", n), z, want, 0, 0)
		}
	})
}

func FuzzBLAS(f *testing.F) {
	f.Add(1.5, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add(-0.0, []byte{0xff, 0xf0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, a float64, raw []byte) {
		x := floatsFromBytes(raw)
		y := make([]float64, len(x))
		for i := range y {
			y[i] = float64(i) - 3.5
		}
		for _, p := range asmImpls(t) {
			d, w := p.dot(x, y), dotGeneric(x, y)
			bound := 0.0
			for i := range x {
				bound += math.Abs(x[i] * y[i])
			}
			if !close(d, w, 0, float64(len(x)+1)*2.3e-16*bound) && !(math.IsInf(bound, 0) || math.IsNaN(bound)) {
				t.Fatalf("%s dot = %v, want %v", p.name, d, w)
			}
			got := append([]float64(nil), y...)
			want := append([]float64(nil), y...)
			p.axpy(a, x, got)
			axpyGeneric(a, x, want)
			checkAxpy(t, p.name+" axpy", a, x, got, want)
		}
	})
}

// floatsFromBytes turns fuzz bytes into float64s, 8 bytes each.
func floatsFromBytes(raw []byte) []float64 {
	x := make([]float64, len(raw)/8)
	for i := range x {
		var b uint64
		for k := 0; k < 8; k++ {
			b |= uint64(raw[8*i+k]) << (8 * k)
		}
		x[i] = math.Float64frombits(b)
	}
	return x
}

// checkAxpy allows the one rounding of a·x that separates a fused multiply-add
// (the tiers) from a separate multiply and add (the reference, on amd64).
func checkAxpy(t testing.TB, what string, a float64, x, got, want []float64) {
	t.Helper()
	for i := range want {
		ax := math.Abs(a * x[i])
		if math.IsInf(ax, 0) {
			// a·x overflows unfused but may not fused: only NaN-ness must agree
			// when the reference says NaN.
			continue
		}
		if !close(got[i], want[i], 2.3e-16, 2.3e-16*ax+1e-300) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
