package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// shiftInputs returns T×M scores and M column scores with the values the
// engine feeds ShiftRows: moderate and huge magnitudes, tiny values, signed
// zeros and −Inf (forbidden labels), whole −Inf rows; never NaN or +Inf
// (the documented precondition).
func shiftInputs(r *rand.Rand, T, M int) (in, a []float64) {
	odd := []float64{0, math.Copysign(0, -1), 1e300, -1e300, 1e-300, -math.MaxFloat64, math.Inf(-1), math.SmallestNonzeroFloat64, 700, -700}
	in = make([]float64, T*M)
	for t := range T {
		row := in[t*M : (t+1)*M]
		kind := r.IntN(8)
		for j := range row {
			row[j] = 5 * r.NormFloat64()
			switch {
			case kind == 0: // all −Inf
				row[j] = math.Inf(-1)
			case kind == 1 && r.IntN(3) == 0:
				row[j] = odd[r.IntN(len(odd))]
			case kind == 2 && r.IntN(2) == 0:
				row[j] = math.Inf(-1)
			}
		}
	}
	a = make([]float64, M)
	for j := range a {
		a[j] = r.NormFloat64()
		if r.IntN(6) == 0 {
			a[j] = math.Inf(-1)
		}
	}
	return in, a
}

// sameShift says two results agree: equal (the sign of a zero may differ, as
// the doc allows), or both NaN. ShiftRows does one addition and one
// subtraction per entry and exact maxima and minima, so every tier must
// give the generic tier's values exactly.
func sameShift(x, y float64) bool { return x == y || (x != x && y != y) }

func checkShiftRows(t testing.TB, what string, p *impl, in, a []float64, T, M int) {
	t.Helper()
	wantOut, wantMx, wantLo := make([]float64, T*M), make([]float64, T), make([]float64, T)
	shiftRowsGeneric(wantOut, wantMx, wantLo, in, a, T, M)
	ob, out := guarded(T*M, nil)
	mb, mx := guarded(T, nil)
	lb, lo := guarded(T, nil)
	p.shiftRows(out, mx, lo, in, a, T, M)
	checkGuards(t, what+" out", ob)
	checkGuards(t, what+" mx", mb)
	checkGuards(t, what+" lo", lb)
	for k := range out {
		if !sameShift(out[k], wantOut[k]) {
			t.Fatalf("%s: out[%d][%d] = %v, generic %v (in %v a %v)", what, k/M, k%M, out[k], wantOut[k], in[k], a[k%M])
		}
	}
	for k := range mx {
		if !sameShift(mx[k], wantMx[k]) || !sameShift(lo[k], wantLo[k]) {
			t.Fatalf("%s: row %d max, min %v %v, generic %v %v", what, k, mx[k], lo[k], wantMx[k], wantLo[k])
		}
	}
	// In place (out = in) gives the same.
	ib, inp := guarded(T*M, in)
	p.shiftRows(inp, mx, lo, inp, a, T, M)
	checkGuards(t, what+" in place", ib)
	for k := range inp {
		if !sameShift(inp[k], wantOut[k]) {
			t.Fatalf("%s in place: out[%d] = %v, generic %v", what, k, inp[k], wantOut[k])
		}
	}
}

func TestShiftRows(t *testing.T) {
	forTiers(t, func(t *testing.T, p *impl) {
		r := newRand(11)
		for _, M := range labelCounts() {
			for _, T := range []int{1, 2, 7, 40} {
				in, a := shiftInputs(r, T, M)
				checkShiftRows(t, fmt.Sprintf("M=%d T=%d", M, T), p, in, a, T, M)
			}
		}
		T := 100000
		if testing.Short() {
			T = 2000
		}
		in, a := shiftInputs(r, T, 3)
		checkShiftRows(t, fmt.Sprintf("M=3 T=%d", T), p, in, a, T, 3)
	})
	// The generic tier against the definition, with the finite minimum and
	// the −Inf row spelled out.
	in := []float64{1, math.Inf(-1), -2, math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	a := []float64{0.5, 0, -1}
	out, mx, lo := make([]float64, 6), make([]float64, 2), make([]float64, 2)
	ShiftRows(out, mx, lo, in, a, 2, 3)
	if mx[0] != 1.5 || lo[0] != -3 || out[0] != 0 || !math.IsInf(out[1], -1) || out[2] != -4.5 {
		t.Errorf("row 0: mx %v lo %v out %v", mx[0], lo[0], out[:3])
	}
	if !math.IsInf(mx[1], -1) || !math.IsInf(lo[1], 1) || !math.IsNaN(out[3]) {
		t.Errorf("row 1 (all −Inf): mx %v lo %v out %v", mx[1], lo[1], out[3:])
	}
}

func FuzzShiftRows(f *testing.F) {
	f.Add(uint8(22), uint8(3), uint64(1))
	f.Add(uint8(1), uint8(1), uint64(2))
	f.Add(uint8(9), uint8(40), uint64(3))
	f.Add(uint8(255), uint8(2), uint64(4))
	f.Fuzz(func(t *testing.T, m, n uint8, seed uint64) {
		M, T := 1+int(m)%100, 1+int(n)%50
		in, a := shiftInputs(newRand(seed), T, M)
		for _, p := range asmImpls(t) {
			checkShiftRows(t, p.name, p, in, a, T, M)
		}
	})
}

func BenchmarkShiftRows(b *testing.B) {
	for _, M := range []int{22, 49} {
		T := 20
		in, a := shiftInputs(newRand(1), T, M)
		for k := range in {
			in[k] = float64(k%13) - 6 // finite: the engine's case
		}
		out, mx, lo := make([]float64, T*M), make([]float64, T), make([]float64, T)
		for _, p := range append([]*impl{generic}, asmImpls(b)...) {
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				for b.Loop() {
					p.shiftRows(out, mx, lo, in, a, T, M)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*T), "ns/row")
			})
		}
	}
}
