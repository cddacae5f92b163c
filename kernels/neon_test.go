//go:build arm64 && !purego

package kernels

import (
	"fmt"
	"math"
	"os"
	"testing"

	"golang.org/x/sys/cpu"
)

// These tests call the NEON functions directly and compare them with the
// generic references. (Once the family tests that go through forTiers are
// merged they cover the neon tier as well; these stay as the arm64-specific
// checks.) Under qemu they are slow, so -short trims the big sizes.

func needNEON(t *testing.T) {
	t.Helper()
	if !cpu.ARM64.HasASIMD {
		t.Skip("CPU has no ASIMD")
	}
}

// same reports whether a and b are the same float64 (NaNs of any payload
// count as the same; +0 and -0 do not).
func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func checkSame(t testing.TB, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !same(got[i], want[i]) {
			t.Fatalf("%s: [%d] = %v (%#x), want %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

func TestNEONSelected(t *testing.T) {
	needNEON(t)
	if os.Getenv(EnvVar) != "" {
		t.Skipf("%s is set", EnvVar)
	}
	if Impl() != "neon" {
		t.Fatalf("Impl() = %q on an ASIMD CPU, want neon (note: %q)", Impl(), Note())
	}
}

func TestNEONBLAS(t *testing.T) {
	needNEON(t)
	r := newRand(11)
	for _, n := range lengths() {
		x, y := randSlice(r, n, -1, 1), randSlice(r, n+3, -1, 1)
		got, want := dotNEON(x, y[:n]), dotGeneric(x, y[:n])
		// Summation order differs: |error| ≤ n·eps·Σ|x·y| (plus one for the tail).
		bound := 0.0
		for i := range x {
			bound += math.Abs(x[i] * y[i])
		}
		if !close(got, want, 0, float64(n+1)*2.3e-16*bound) {
			t.Fatalf("dot n=%d: %v, want %v", n, got, want)
		}
		xs := append(append([]float64(nil), x...), specials...)
		y0 := append(randSlice(r, n, -1, 1), specials...)
		a := r.NormFloat64()
		// axpy and scale do the same operations as the reference (Go fuses
		// y += a·x into FMADD on arm64), so they must agree bit for bit.
		buf, yv := guarded(len(y0), y0)
		axpyNEON(a, xs, yv)
		checkGuards(t, "axpy", buf)
		want2 := append([]float64(nil), y0...)
		axpyGeneric(a, xs, want2)
		checkSame(t, fmt.Sprintf("axpy n=%d", n), yv, want2)

		buf, z := guarded(len(y0), y0)
		scaleNEON(a, z)
		checkGuards(t, "scale", buf)
		want2 = append(want2[:0], y0...)
		scaleGeneric(a, want2)
		checkSame(t, fmt.Sprintf("scale n=%d", n), z, want2)
	}
	for _, s := range specials {
		x := []float64{1, 2, 3, 4, 5, s, 7, 8, 9}
		if got, want := dotNEON(x, x), dotGeneric(x, x); !close(got, want, 1e-15, 0) {
			t.Errorf("special %v: dot = %v, want %v", s, got, want)
		}
	}
}

// fbInput returns Ψ (T×M) and E (M×M) for the forward/backward tests: random
// in (0,1], with some exact zeros (forbidden labels and transitions) and,
// for kind 1, a wide dynamic range.
func fbInput(seed uint64, T, M, kind int) (psi, e []float64) {
	r := newRand(seed)
	psi = randSlice(r, T*M, 0, 1)
	e = randSlice(r, M*M, 0, 1)
	for i := range e {
		if r.IntN(7) == 0 {
			e[i] = 0
		}
		if kind == 1 {
			e[i] *= math.Exp(r.Float64()*200 - 100)
		}
	}
	for i := range psi {
		if r.IntN(9) == 0 {
			psi[i] = 0
		}
		if kind == 1 {
			psi[i] *= math.Exp(r.Float64()*200 - 100)
		}
	}
	return psi, e
}

func fbSizes(t *testing.T) [][2]int {
	var tm [][2]int
	for _, M := range labelCounts() {
		for _, T := range []int{1, 2, 7} {
			tm = append(tm, [2]int{T, M})
		}
	}
	long := 100000
	if testing.Short() {
		long = 5000
	}
	return append(tm, [2]int{long, 3}, [2]int{long / 10, 9}, [2]int{40, 45})
}

func TestNEONForwardBackward(t *testing.T) {
	needNEON(t)
	for _, tm := range fbSizes(t) {
		T, M := tm[0], tm[1]
		for kind := 0; kind < 2; kind++ {
			psi, e := fbInput(uint64(T*1000+M), T, M, kind)
			what := fmt.Sprintf("T=%d M=%d kind=%d", T, M, kind)

			abuf, alpha := guarded(T*M, nil)
			sbuf, scale := guarded(T, nil)
			forwardNEON(alpha, scale, psi, e, T, M, 1)
			checkGuards(t, what+" alpha", abuf)
			checkGuards(t, what+" scale", sbuf)
			wa, ws := make([]float64, T*M), make([]float64, T)
			forwardGeneric(wa, ws, psi, e, T, M)
			// Each row's unnormalised values are the same FMA chains as the
			// reference; only the order of the sum over j differs, so each
			// row's scale and alpha differ by O(M·eps), and the differences
			// do not grow much over t (every step renormalises). 1e-10 is
			// about 1e6 eps.
			checkClose(t, what+" scale", scale, ws, 1e-10, 0)
			checkClose(t, what+" alpha", alpha, wa, 1e-10, 1e-300)

			// Backward from the reference's scales: the same operations in the
			// same order as the reference, so bit-identical.
			bbuf, beta := guarded(T*M, nil)
			et := make([]float64, M*M)
			for i := 0; i < M; i++ {
				for j := 0; j < M; j++ {
					et[j*M+i] = e[i*M+j]
				}
			}
			backwardNEON(beta, ws, psi, et, T, M, 1)
			checkGuards(t, what+" beta", bbuf)
			wb := make([]float64, T*M)
			backwardGeneric(wb, ws, psi, et, T, M)
			checkSame(t, what+" beta", beta, wb)
		}
	}
	// A position no label can take: scale 0 and a NaN row, as the reference.
	T, M := 4, 5
	psi, e := fbInput(3, T, M, 0)
	for j := 0; j < M; j++ {
		psi[2*M+j] = 0
	}
	alpha, scale := make([]float64, T*M), make([]float64, T)
	forwardNEON(alpha, scale, psi, e, T, M, 1)
	wa, ws := make([]float64, T*M), make([]float64, T)
	forwardGeneric(wa, ws, psi, e, T, M)
	checkClose(t, "dead position scale", scale, ws, 1e-12, 0)
	checkClose(t, "dead position alpha", alpha, wa, 1e-12, 0)
	if scale[2] != 0 || !math.IsNaN(alpha[2*M]) {
		t.Fatalf("dead position: scale %v alpha %v", scale[2], alpha[2*M:3*M])
	}
}

func viterbiInput(seed uint64, T, M, kind int) (s, tr []float64) {
	r := newRand(seed)
	s = randSlice(r, T*M, -3, 3)
	tr = randSlice(r, M*M, -3, 3)
	switch kind {
	case 1: // ties everywhere and forbidden transitions
		for i := range s {
			s[i] = float64(r.IntN(3))
		}
		for i := range tr {
			tr[i] = float64(r.IntN(2))
			if r.IntN(5) == 0 {
				tr[i] = math.Inf(-1)
			}
		}
	case 2: // specials, including NaN (never wins) and -Inf rows/columns
		sp := []float64{math.NaN(), math.Inf(-1), math.Inf(1), 1e300, -1e300, 0, math.Copysign(0, -1)}
		for i := range tr {
			if r.IntN(4) == 0 {
				tr[i] = sp[r.IntN(len(sp))]
			}
		}
		for i := range s {
			if r.IntN(6) == 0 {
				s[i] = sp[r.IntN(len(sp))]
			}
		}
		if M > 1 {
			c := r.IntN(M)
			for i := 0; i < M; i++ {
				tr[i*M+c] = math.Inf(-1)
			}
		}
	}
	return s, tr
}

func TestNEONViterbi(t *testing.T) {
	needNEON(t)
	for _, tm := range fbSizes(t) {
		T, M := tm[0], tm[1]
		for kind := 0; kind < 3; kind++ {
			s, tr := viterbiInput(uint64(T*1000+M+kind), T, M, kind)
			what := fmt.Sprintf("T=%d M=%d kind=%d", T, M, kind)
			dbuf, delta := guarded(T*M, nil)
			bbuf, bp := guardedInt32(T * M)
			viterbiNEON(delta, bp, s, tr, T, M)
			checkGuards(t, what+" delta", dbuf)
			checkGuardsInt32(t, what+" bp", bbuf)
			wd, wbp := make([]float64, T*M), make([]int32, T*M)
			viterbiGeneric(wd, wbp, s, tr, T, M)
			// Single additions and strict comparisons in the same order:
			// bit-identical scores and identical back-pointers.
			checkSame(t, what+" delta", delta, wd)
			for i := range wbp {
				if bp[i] != wbp[i] {
					t.Fatalf("%s: bp[%d] = %d, want %d", what, i, bp[i], wbp[i])
				}
			}
		}
	}
}

// expLogInputs: a dense sweep over the whole interesting range, random
// points, the boundaries and specials.
func expLogInputs(lo, hi float64, n int, extra []float64) []float64 {
	r := newRand(7)
	var x []float64
	for i := 0; i < n; i++ {
		x = append(x, lo+(hi-lo)*float64(i)/float64(n-1))
	}
	for i := 0; i < n/4; i++ {
		x = append(x, lo+(hi-lo)*r.Float64())
	}
	x = append(x, extra...)
	return append(x, specials...)
}

func sweepSize() int {
	if testing.Short() {
		return 1 << 16
	}
	return 1 << 20
}

func TestNEONExp(t *testing.T) {
	needNEON(t)
	edge := []float64{ExpMin, math.Nextafter(ExpMin, 0), math.Nextafter(ExpMin, -1000), ExpMax,
		math.Nextafter(ExpMax, 0), math.Nextafter(ExpMax, 1000), -745.2, -746, 710, 1000, -1000,
		0.5 * math.Ln2, -0.5 * math.Ln2, 1e-300, -1e-300, 5e-324, 1e-17}
	x := expLogInputs(-746, 711, sweepSize(), edge)
	got, want := make([]float64, len(x)), make([]float64, len(x))
	expNEON(got, x)
	expGeneric(want, x)
	worst, at := 0.0, 0.0
	for i := range x {
		u := ulps(got[i], want[i])
		if u > worst {
			worst, at = u, x[i]
		}
		// Specials must match exactly: +0 below ExpMin, +Inf above ExpMax, NaN.
		if (want[i] == 0 || math.IsInf(want[i], 0) || math.IsNaN(want[i])) && !same(got[i], want[i]) {
			t.Fatalf("exp(%v) = %v, want %v", x[i], got[i], want[i])
		}
	}
	t.Logf("exp: max %v ulp (at x=%v) over %d points", worst, at, len(x))
	if worst > 2 {
		t.Fatalf("exp: max error %v ulp at x=%v, want ≤ 2", worst, at)
	}
	checkElementwise(t, "exp", expNEON, expGeneric, -800, 800, 2)
}

func TestNEONLog(t *testing.T) {
	needNEON(t)
	edge := []float64{math.SmallestNonzeroFloat64, 0x1p-1022, math.Nextafter(0x1p-1022, 0), 0x1p-1060,
		math.MaxFloat64, 1, math.Nextafter(1, 2), math.Nextafter(1, 0), math.Sqrt2, math.Sqrt2 / 2,
		math.Nextafter(math.Sqrt2, 0), math.Nextafter(math.Sqrt2/2, 0), -1e-310, math.Inf(-1)}
	x := expLogInputs(0, 4, sweepSize()/2, edge)
	// Also logarithmically spaced points over every binade, subnormals included.
	for i := 0; i < sweepSize()/2; i++ {
		x = append(x, math.Exp2(-1074+2098*float64(i)/float64(sweepSize()/2)))
	}
	got, want := make([]float64, len(x)), make([]float64, len(x))
	logNEON(got, x)
	logGeneric(want, x)
	worst, at := 0.0, 0.0
	for i := range x {
		u := ulps(got[i], want[i])
		if u > worst {
			worst, at = u, x[i]
		}
		if (math.IsInf(want[i], 0) || math.IsNaN(want[i]) || want[i] == 0) && !same(got[i], want[i]) {
			t.Fatalf("log(%v) = %v, want %v", x[i], got[i], want[i])
		}
	}
	t.Logf("log: max %v ulp (at x=%v) over %d points", worst, at, len(x))
	if worst > 2 {
		t.Fatalf("log: max error %v ulp at x=%v, want ≤ 2", worst, at)
	}
	checkElementwise(t, "log", logNEON, logGeneric, -1, 1e6, 2)
}

// checkElementwise runs f on every length with guards (and in place) and
// compares with ref within maxUlp.
func checkElementwise(t *testing.T, name string, f, ref func(dst, src []float64), lo, hi, maxUlp float64) {
	t.Helper()
	r := newRand(5)
	for _, n := range lengths() {
		src := randSlice(r, n, lo, hi)
		for i := range src {
			if r.IntN(10) == 0 {
				src[i] = specials[r.IntN(len(specials))]
			}
		}
		buf, dst := guarded(n, nil)
		f(dst, src)
		checkGuards(t, name, buf)
		want := make([]float64, n)
		ref(want, src)
		inplace := append([]float64(nil), src...)
		f(inplace, inplace)
		for i := range want {
			if ulps(dst[i], want[i]) > maxUlp || !same(inplace[i], dst[i]) {
				t.Fatalf("%s n=%d: [%d] %s(%v) = %v (in place %v), want %v", name, n, i, name, src[i], dst[i], inplace[i], want[i])
			}
		}
	}
}

// sparseInput returns a CSR feature list for T positions over nattr
// attributes: 0–5 features per position (some empty), repeated ids within a
// position, some special values.
func sparseInput(seed uint64, T, nattr int) (ptr, ids []int32, vals []float64) {
	r := newRand(seed)
	ptr = []int32{0}
	for t := 0; t < T; t++ {
		k := r.IntN(6)
		for f := 0; f < k; f++ {
			id := int32(r.IntN(nattr))
			if f > 0 && r.IntN(4) == 0 {
				id = ids[len(ids)-1]
			}
			ids = append(ids, id)
			v := r.NormFloat64()
			if r.IntN(20) == 0 {
				v = specials[r.IntN(len(specials))]
			}
			vals = append(vals, v)
		}
		ptr = append(ptr, int32(len(ids)))
	}
	return ptr, ids, vals
}

func TestNEONGatherScatter(t *testing.T) {
	needNEON(t)
	for _, M := range labelCounts() {
		for _, T := range []int{1, 5, 60} {
			const nattr = 7
			ld := M + M%3
			ptr, ids, vals := sparseInput(uint64(T*1000+M), T, nattr)
			r := newRand(uint64(M))
			w := randSlice(r, (nattr-1)*ld+M, -1, 1)
			s0 := randSlice(r, T*M, -1, 1)
			what := fmt.Sprintf("T=%d M=%d", T, M)

			// Same FMAs in the same order as the reference (fused on arm64):
			// bit-identical.
			buf, s := guarded(T*M, s0)
			gatherNEON(s, w, ld, ptr, ids, vals, T, M)
			checkGuards(t, what+" gather", buf)
			want := append([]float64(nil), s0...)
			gatherGeneric(want, w, ld, ptr, ids, vals, T, M)
			checkSame(t, what+" gather", s, want)

			c := r.NormFloat64()
			p := randSlice(r, T*M, 0, 1)
			gbuf, g := guarded(len(w), w)
			scatterNEON(g, ld, p, ptr, ids, vals, c, T, M)
			checkGuards(t, what+" scatter", gbuf)
			wantG := append([]float64(nil), w...)
			scatterGeneric(wantG, ld, p, ptr, ids, vals, c, T, M)
			checkSame(t, what+" scatter", g, wantG)
		}
	}
}

func TestNEONForwardBatch(t *testing.T) {
	needNEON(t)
	for _, M := range labelCounts() {
		for _, tk := range [][2]int{{1, 1}, {1, 3}, {5, 2}, {9, 4}} {
			T, K := tk[0], tk[1]
			psi, e := fbInput(uint64(M*100+T*10+K), T*K, M, M%2)
			what := fmt.Sprintf("T=%d K=%d M=%d", T, K, M)
			abuf, alpha := guarded(T*K*M, nil)
			sbuf, scale := guarded(T*K, nil)
			neonImpl.forwardBatch(alpha, scale, psi, e, nil, T, K, M)
			checkGuards(t, what+" alpha", abuf)
			checkGuards(t, what+" scale", sbuf)
			wa, ws := make([]float64, T*K*M), make([]float64, T*K)
			forwardBatchGeneric(wa, ws, psi, e, nil, T, K, M)
			// As for Forward: only the order of each row's sum differs.
			checkClose(t, what+" scale", scale, ws, 1e-10, 0)
			checkClose(t, what+" alpha", alpha, wa, 1e-10, 1e-300)
			// Each sequence exactly as Forward on its own rows.
			for k := 0; k < K; k++ {
				p1, a1, s1 := make([]float64, T*M), make([]float64, T*M), make([]float64, T)
				for tt := 0; tt < T; tt++ {
					copy(p1[tt*M:(tt+1)*M], psi[(tt*K+k)*M:])
				}
				forwardNEON(a1, s1, p1, e, T, M, 1)
				for tt := 0; tt < T; tt++ {
					checkSame(t, what+" batch vs single alpha", alpha[(tt*K+k)*M:(tt*K+k+1)*M], a1[tt*M:(tt+1)*M])
					checkSame(t, what+" batch vs single scale", scale[tt*K+k:tt*K+k+1], s1[tt:tt+1])
				}
			}
		}
	}
}

func TestNEONTransitions(t *testing.T) {
	needNEON(t)
	for _, tm := range fbSizes(t) {
		T, M := tm[0], tm[1]
		if T*M*M > 3e6 {
			T = max(2, int(3e6)/(M*M))
		}
		psi, e := fbInput(uint64(T*7+M), T, M, 0)
		alpha, scale := make([]float64, T*M), make([]float64, T)
		forwardGeneric(alpha, scale, psi, e, T, M)
		beta := make([]float64, T*M)
		et := make([]float64, M*M)
		for i := 0; i < M; i++ {
			for j := 0; j < M; j++ {
				et[j*M+i] = e[i*M+j]
			}
		}
		backwardGeneric(beta, scale, psi, et, T, M)
		r := newRand(uint64(M))
		g0 := randSlice(r, M*M, -1, 1)
		what := fmt.Sprintf("T=%d M=%d", T, M)
		gbuf, g := guarded(M*M, g0)
		wbuf, work := guarded(T*M, nil)
		if T >= 2 {
			transitionsNEON(g, e, alpha, beta, psi, scale, work, T, M)
		}
		checkGuards(t, what+" g", gbuf)
		checkGuards(t, what+" work", wbuf)
		want := append([]float64(nil), g0...)
		if T >= 2 {
			transitionsGeneric(want, e, alpha, beta, psi, scale, make([]float64, T*M), T, M)
		}
		// The reference's products and FMAs in its order: bit-identical.
		checkSame(t, what+" g", g, want)
	}
}

func TestNEONLogMatVec(t *testing.T) {
	needNEON(t)
	for _, M := range labelCounts() {
		for kind := 0; kind < 3; kind++ {
			a, tr := viterbiInput(uint64(M*3+kind), 1, M, kind)
			if kind == 0 {
				// A wide range, so that some terms flush below ExpMin.
				for i := range tr {
					tr[i] *= 300
				}
			}
			if kind == 2 && M > 2 {
				// A whole column of -Inf (forbidden label) and one with +Inf.
				for i := 0; i < M; i++ {
					tr[i*M+1] = math.Inf(-1)
				}
				tr[M+2] = math.Inf(1)
			}
			what := fmt.Sprintf("M=%d kind=%d", M, kind)
			buf, out := guarded(M, nil)
			logMatVecNEON(out, a, tr, M)
			checkGuards(t, what, buf)
			want := make([]float64, M)
			logMatVecGeneric(want, a, tr, M)
			// Maxima are exact; exp and log are each within 1 ulp of math's
			// and the sums run in the same order, so the result differs by a
			// few ulp of max(|m|, log M) at most.
			for j := range want {
				tol := 1e-14 * (math.Abs(want[j]) + math.Log(float64(M)) + 1)
				if !close(out[j], want[j], 0, tol) {
					t.Fatalf("%s: out[%d] = %v, want %v", what, j, out[j], want[j])
				}
			}
		}
	}
}

// FuzzNEON feeds arbitrary float64s to the elementwise and sequence kernels
// and compares with the references (same rules as the tests above).
func FuzzNEON(f *testing.F) {
	f.Add(uint8(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Add(uint8(1), []byte{0, 0, 0, 0, 0, 0, 0xf0, 0xff, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	f.Add(uint8(5), make([]byte, 8*60))
	f.Fuzz(func(t *testing.T, m uint8, raw []byte) {
		if !cpu.ARM64.HasASIMD {
			t.Skip()
		}
		x := floatsFromBytes(raw)
		got, want := make([]float64, len(x)), make([]float64, len(x))
		expNEON(got, x)
		expGeneric(want, x)
		for i := range x {
			if ulps(got[i], want[i]) > 2 {
				t.Fatalf("exp(%v) = %v, want %v", x[i], got[i], want[i])
			}
		}
		logNEON(got, x)
		logGeneric(want, x)
		for i := range x {
			if ulps(got[i], want[i]) > 2 {
				t.Fatalf("log(%v) = %v, want %v", x[i], got[i], want[i])
			}
		}
		M := int(m%12) + 1
		if len(x) < M*M+M {
			return
		}
		tr, s := x[:M*M], x[M*M:]
		T := len(s) / M
		s = s[:T*M]
		delta, bp := make([]float64, T*M), make([]int32, T*M)
		wd, wbp := make([]float64, T*M), make([]int32, T*M)
		viterbiNEON(delta, bp, s, tr, T, M)
		viterbiGeneric(wd, wbp, s, tr, T, M)
		checkSame(t, "viterbi delta", delta, wd)
		for i := range wbp {
			if bp[i] != wbp[i] {
				t.Fatalf("viterbi bp[%d] = %d, want %d", i, bp[i], wbp[i])
			}
		}
		out, wout := make([]float64, M), make([]float64, M)
		logMatVecNEON(out, s[:M], tr, M)
		logMatVecGeneric(wout, s[:M], tr, M)
		for j := range wout {
			if !close(out[j], wout[j], 0, 1e-14*(math.Abs(wout[j])+math.Log(float64(M))+1)) {
				t.Fatalf("logMatVec out[%d] = %v, want %v", j, out[j], wout[j])
			}
		}
	})
}

// Quick sanity benchmarks (meaningless under qemu; run on a real arm64 host):
// go test -run '^$' -bench NEON -benchtime=200ms -count=3 ./kernels/
func BenchmarkNEON(b *testing.B) {
	for _, M := range []int{9, 23, 45, 256} {
		T := 64
		psi, e := fbInput(1, T, M, 0)
		alpha, scale := make([]float64, T*M), make([]float64, T)
		s, tr := viterbiInput(1, T, M, 0)
		delta, bp := make([]float64, T*M), make([]int32, T*M)
		for _, tier := range []string{"neon", "generic"} {
			fw, vi := neonImpl.forward, viterbiNEON
			if tier == "generic" {
				fw, vi = forwardGeneric, viterbiGeneric
			}
			b.Run(fmt.Sprintf("Forward/M=%d/%s", M, tier), func(b *testing.B) {
				for b.Loop() {
					fw(alpha, scale, psi, e, T, M)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*T), "ns/pos")
			})
			b.Run(fmt.Sprintf("Viterbi/M=%d/%s", M, tier), func(b *testing.B) {
				for b.Loop() {
					vi(delta, bp, s, tr, T, M)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*T), "ns/pos")
			})
		}
	}
	x := randSlice(newRand(1), 4096, -700, 700)
	y := make([]float64, len(x))
	b.Run("Exp/neon", func(b *testing.B) {
		for b.Loop() {
			expNEON(y, x)
		}
	})
	b.Run("Exp/generic", func(b *testing.B) {
		for b.Loop() {
			expGeneric(y, x)
		}
	})
}

func TestNEONFMAProbe(t *testing.T) {
	needNEON(t)
	// 24 accumulators, each 0.5·0.125 added n times: 24·2 lanes·n/16.
	if got := fmaPeakNEON(100); got != 24*2*100.0/16 {
		t.Fatalf("fmaPeakNEON(100) = %v, want %v", got, 24*2*100.0/16)
	}
}
