package kernels

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// lengths32 is lengths up to 4·16+3, the float32 AVX-512 width's sweep.
func lengths32() []int {
	var n []int
	for i := 0; i <= 4*16+3; i++ {
		n = append(n, i)
	}
	return append(n, 100, 255, 256, 1023, 1024, 4099)
}

// specials32 are specials rounded to float32 (huge ones become ±Inf, tiny 0),
// plus float32's own extremes.
func specials32() []float32 {
	s := []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 3e38, 1e-38}
	for _, v := range specials {
		s = append(s, float32(v))
	}
	return s
}

// TestMul checks every tier's Mul against the generic kernel bit for bit
// (the two products are rounded in the same order), out of place and in
// place, with guard zones around dst.
func TestMul(t *testing.T) {
	r := newRand(41)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, n := range lengths() {
			x := append(randSlice(r, n, -2, 2), specials...)
			y := append(randSlice(r, n, -2, 2), specials...)
			for k := range specials { // specials against specials, not only themselves
				y[n+k] = specials[(k+3)%len(specials)]
			}
			for _, a := range []float64{1, -0.75, 1e300, math.Inf(1)} {
				want := make([]float64, len(x))
				mulGeneric(want, x, y, a)
				buf, dst := guarded(len(x), nil)
				p.mul(dst, x, y, a)
				checkGuards(t, "mul", buf)
				checkSameBits(t, fmt.Sprintf("mul n=%d a=%v", n, a), dst, want)
				in := append([]float64(nil), x...)
				p.mul(in, in, y, a) // dst is x
				checkSameBits(t, fmt.Sprintf("mul in place n=%d a=%v", n, a), in, want)
			}
		}
	})
}

// TestMul32 checks every tier's Mul32 bit for bit against the float32
// generic kernel, and the generic one against float64 (two roundings of a
// float32 product: within 2 float32 ulps).
func TestMul32(t *testing.T) {
	r := newRand(42)
	sp := specials32()
	for _, n := range lengths32() {
		x := append(to32(round32(randSlice(r, n, -2, 2))), sp...)
		y := append(to32(round32(randSlice(r, n, -2, 2))), sp...)
		for k := range sp {
			y[n+k] = sp[(k+2)%len(sp)]
		}
		const a = float32(-0.625)
		want := make([]float32, len(x))
		generic.mul32(want, x, y, a)
		for k := 0; k < n; k++ { // the finite random part against float64
			w := float64(x[k]) * float64(y[k]) * float64(a)
			if math.Abs(float64(want[k])-w) > 2.4e-7*math.Abs(w)+1e-44 {
				t.Fatalf("generic mul32 n=%d [%d] = %v, float64 %v", n, k, want[k], w)
			}
		}
		for _, p := range asmImpls(t) {
			buf, dst := guarded32(len(x), nil)
			p.mul32(dst, x, y, a)
			checkGuards32(t, p.name+" mul32", buf)
			checkSameBits32(t, fmt.Sprintf("%s mul32 n=%d", p.name, n), dst, want)
			in := append([]float32(nil), y...)
			p.mul32(in, x, in, a) // dst is y
			checkSameBits32(t, fmt.Sprintf("%s mul32 in place n=%d", p.name, n), in, want)
		}
	}
}

func checkSameBits32(t testing.TB, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("%s: [%d] = %v (%#x), want %v (%#x)", what, i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// TestAxpyWiden checks every tier's AxpyWiden against the generic kernel:
// bit for bit on amd64 (product and sum rounded apart in both), within the
// one rounding a fused multiply–add saves elsewhere (Go fuses the generic
// loop on arm64, NEON's FMLA too).
func TestAxpyWiden(t *testing.T) {
	r := newRand(43)
	sp := specials32()
	for _, n := range lengths32() {
		x := append(to32(randSlice(r, n, 0, 1)), sp...)
		y0 := append(randSlice(r, n, -1, 1), specials...)
		y0 = append(y0, randSlice(r, len(x)-len(y0), -3, 3)...)
		for _, a := range []float64{1, 0.3, -1e300} {
			want := append([]float64(nil), y0...)
			axpyWidenGeneric(a, x, want)
			x64 := make([]float64, len(x))
			for k, v := range x {
				x64[k] = float64(v)
			}
			// The generic kernel is axpy on the widened values.
			ref := append([]float64(nil), y0...)
			axpyGeneric(a, x64, ref)
			checkAxpy(t, fmt.Sprintf("generic axpyWiden n=%d", n), a, x64, want, ref)
			for _, p := range asmImpls(t) {
				buf, y := guarded(len(y0), y0)
				p.axpyWiden(a, x, y)
				checkGuards(t, p.name+" axpyWiden", buf)
				what := fmt.Sprintf("%s axpyWiden n=%d a=%v", p.name, n, a)
				if runtime.GOARCH == "amd64" {
					checkSameBits(t, what, y, want)
				} else {
					checkAxpy(t, what, a, x64, y, want)
				}
			}
		}
	}
}

// TestMulArgs checks that the exported wrappers reject short slices.
func TestMulArgs(t *testing.T) {
	for name, f := range map[string]func(){
		"Mul dst":       func() { Mul(make([]float64, 2), make([]float64, 3), make([]float64, 3), 1) },
		"Mul y":         func() { Mul(make([]float64, 3), make([]float64, 3), make([]float64, 2), 1) },
		"Mul32 dst":     func() { Mul32(make([]float32, 2), make([]float32, 3), make([]float32, 3), 1) },
		"AxpyWiden y":   func() { AxpyWiden(1, make([]float32, 3), make([]float64, 2)) },
		"Mul32 y short": func() { Mul32(make([]float32, 3), make([]float32, 3), make([]float32, 1), 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on a short slice", name)
				}
			}()
			f()
		}()
	}
}

// FuzzMul compares every tier's Mul, Mul32 and AxpyWiden with the generic
// kernels on arbitrary bit patterns.
func FuzzMul(f *testing.F) {
	f.Add(0.5, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 0xff, 0xf0, 0x7f, 0x80})
	f.Add(-3.0, []byte{0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0xff, 1})
	f.Fuzz(func(t *testing.T, a float64, raw []byte) {
		x := floatsFromBytes(raw)
		y := make([]float64, len(x))
		for i := range y {
			y[i] = float64(i) - 2.5
		}
		x32 := make([]float32, len(raw)/4)
		for k := range x32 {
			x32[k] = math.Float32frombits(uint32(raw[4*k]) | uint32(raw[4*k+1])<<8 | uint32(raw[4*k+2])<<16 | uint32(raw[4*k+3])<<24)
		}
		y32, x64 := make([]float32, len(x32)), make([]float64, len(x32))
		for i := range y32 {
			y32[i] = float32(i) - 1.5
			x64[i] = float64(x32[i])
		}
		for _, p := range asmImpls(t) {
			got, want := make([]float64, len(x)), make([]float64, len(x))
			p.mul(got, x, y, a)
			mulGeneric(want, x, y, a)
			checkSameBits(t, p.name+" mul", got, want)
			g32, w32 := make([]float32, len(x32)), make([]float32, len(x32))
			p.mul32(g32, x32, y32, float32(a))
			generic.mul32(w32, x32, y32, float32(a))
			checkSameBits32(t, p.name+" mul32", g32, w32)
			gw, ww := make([]float64, len(x32)), make([]float64, len(x32))
			for i := range gw {
				gw[i] = float64(i) * 0.25
				ww[i] = gw[i]
			}
			p.axpyWiden(a, x32, gw)
			axpyWidenGeneric(a, x32, ww)
			if runtime.GOARCH == "amd64" {
				checkSameBits(t, p.name+" axpyWiden", gw, ww)
			} else {
				checkAxpy(t, p.name+" axpyWiden", a, x64, gw, ww)
			}
		}
	})
}
