package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Tests of the float32 kernels: every tier against the float32 generic
// kernels, and the float32 generic kernels against the float64 ones (on the
// same float32-rounded inputs, so that only float32 arithmetic differs).

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// round32 rounds x to float32 precision (in place) and returns it.
func round32(x []float64) []float64 {
	for i, v := range x {
		x[i] = float64(float32(v))
	}
	return x
}

var guardVal32 = math.Float32frombits(0x7fc0beef)

func guarded32(n int, fill []float32) (buf, view []float32) {
	buf = make([]float32, n+2*guardLen)
	for i := range buf {
		buf[i] = guardVal32
	}
	view = buf[guardLen : guardLen+n : guardLen+n]
	if fill != nil {
		copy(view, fill)
	} else {
		clear(view)
	}
	return buf, view
}

func checkGuards32(t testing.TB, what string, buf []float32) {
	t.Helper()
	n := len(buf) - 2*guardLen
	for i := range buf {
		if (i < guardLen || i >= guardLen+n) && math.Float32bits(buf[i]) != math.Float32bits(guardVal32) {
			t.Fatalf("%s: guard zone overwritten at offset %d (value %v)", what, i-guardLen, buf[i])
		}
	}
}

// checkClose32 is checkClose for float32 results against float64 (or
// float32) references.
func checkClose32(t testing.TB, what string, got []float32, want []float64, rtol, atol float64) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !close(float64(got[i]), want[i], rtol, atol) {
			t.Fatalf("%s: [%d] = %v, want %v (rtol %g, atol %g)", what, i, got[i], want[i], rtol, atol)
		}
	}
}

// Tolerances. Tier against float32 generic: both round every operation to
// float32 but sum in different orders (and the tiers fuse multiply-adds),
// so each step differs by up to about M·eps32 relative, in practice √M·eps32
// (eps32 = 6e-8); the forward map contracts, so errors do not build up over
// T. Float32 against float64: the same bound. 2e-5 covers M ≤ 256 (√256·6e-8
// = 1e-6, ×20 margin) while a wrong or missing term changes the random test
// cases' results by far more.
const (
	fb32Tol  = 2e-5
	fb32Atol = 1e-30 // underflow noise: α entries below float32's normal range
)

// fb32Kinds are makeFB's kinds whose values fit float32.
var fb32Kinds = []string{"uniform", "normalised", "wide32", "zeros", "dead", "nan", "inf"}

func makeFB32(r *rand.Rand, kind string, T, M int) fbCase {
	if kind != "wide32" {
		c := makeFB(r, kind, T, M)
		round32(c.psi)
		round32(c.e)
		return c
	}
	// Ψ rows spread over 10^±15 with a row factor 10^±12, E over 10^±6: the
	// products stay normal float32s.
	psi, e := make([]float64, T*M), make([]float64, M*M)
	for t := 0; t < T; t++ {
		f := logUniform(r, -12, 12)
		for k := t * M; k < (t+1)*M; k++ {
			psi[k] = f * logUniform(r, -3, 3)
		}
	}
	for k := range e {
		e[k] = logUniform(r, -6, 6)
	}
	return fbCase{name: fmt.Sprintf("%s/T=%d/M=%d", kind, T, M), T: T, M: M, psi: round32(psi), e: round32(e)}
}

// fb32Result is what one tier computes on a case.
type fb32Result struct {
	alpha, scale, beta, g []float32
}

func runFB32(t testing.TB, p *impl, c fbCase) fb32Result {
	T, M := c.T, c.M
	psi, e := to32(c.psi), to32(c.e)
	et := to32(transpose(c.e, M))
	abuf, a := guarded32(T*M, nil)
	sbuf, s := guarded32(T, nil)
	p.forward32(a, s, psi, e, T, M)
	checkGuards32(t, p.name+" "+c.name+" forward32 alpha", abuf)
	checkGuards32(t, p.name+" "+c.name+" forward32 scale", sbuf)
	bbuf, b := guarded32(T*M, nil)
	p.backward32(b, s, psi, et, T, M)
	checkGuards32(t, p.name+" "+c.name+" backward32", bbuf)
	res := fb32Result{alpha: a, scale: s, beta: b}
	if T >= 2 {
		gbuf, g := guarded32(M*M, nil)
		wbuf, w := guarded32(T*M, nil)
		p.transitions32(g, e, a, b, psi, s, w, T, M)
		checkGuards32(t, p.name+" "+c.name+" transitions32 g", gbuf)
		checkGuards32(t, p.name+" "+c.name+" transitions32 work", wbuf)
		res.g = g
	}
	// BackwardTransitions32 against the two kernels above: β and, for
	// T ≥ 2, the counts (g starts at zero).
	bbuf, bt := guarded32(T*M, nil)
	gbuf, g := guarded32(M*M, nil)
	wbuf, w := guarded32(T*M, nil)
	p.backwardTransitions32(g, e, a, bt, psi, s, et, w, T, M)
	checkGuards32(t, p.name+" "+c.name+" backwardTransitions32 beta", bbuf)
	checkGuards32(t, p.name+" "+c.name+" backwardTransitions32 g", gbuf)
	checkGuards32(t, p.name+" "+c.name+" backwardTransitions32 work", wbuf)
	checkBeta32(t, p.name+" "+c.name+" backwardTransitions32 beta", bt, to64(b), T, M, fb32Tol)
	if T >= 2 {
		big := 0.0
		for _, v := range res.g {
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				big = max(big, math.Abs(float64(v)))
			}
		}
		checkClose32(t, p.name+" "+c.name+" backwardTransitions32 g", g, to64(res.g), fb32Tol, fb32Tol*big)
	} else {
		checkClose32(t, p.name+" "+c.name+" backwardTransitions32 g (T = 1)", g, make([]float64, M*M), 0, 0)
	}
	return res
}

// checkBeta32 compares β row by row, with an absolute slack relative to the
// row's largest entry.
func checkBeta32(t testing.TB, what string, got []float32, want []float64, T, M int, rtol float64) {
	t.Helper()
	for r := 0; r < T; r++ {
		big := 0.0
		for _, v := range want[r*M : (r+1)*M] {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				big = max(big, math.Abs(v))
			}
		}
		checkClose32(t, fmt.Sprintf("%s row %d", what, r), got[r*M:(r+1)*M], want[r*M:(r+1)*M], rtol, rtol*big+fb32Atol)
	}
}

// checkFB32Against compares got with want (float64 numbers) as the
// tolerances above allow.
func checkFB32Against(t testing.TB, what string, got fb32Result, wa, ws, wb, wg []float64, T, M int) {
	t.Helper()
	checkClose32(t, what+" scale", got.scale, ws, fb32Tol, 0)
	checkClose32(t, what+" alpha", got.alpha, wa, fb32Tol, fb32Atol)
	checkBeta32(t, what+" beta", got.beta, wb, T, M, fb32Tol)
	if wg != nil {
		big := 0.0
		for _, v := range wg {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				big = max(big, math.Abs(v))
			}
		}
		checkClose32(t, what+" transitions", got.g, wg, fb32Tol, fb32Tol*big)
	}
}

func TestForwardBackward32(t *testing.T) {
	r := newRand(32)
	for _, kind := range fb32Kinds {
		for _, T := range []int{1, 2, 3, 7, 50} {
			// 57, 71, 72 and 89: AVX2 rows of two chunks (4, 4; 5, 4; 5, 4;
			// 6, 6).
			for _, M := range append(labelCounts(), 57, 71, 72, 89) {
				if testing.Short() && M > 45 && T > 7 {
					continue // emulated CI runs: the small cases cover every tail
				}
				c := makeFB32(r, kind, T, M)
				// float64 reference on the same inputs.
				alpha, scale := make([]float64, T*M), make([]float64, T)
				forwardGeneric(alpha, scale, c.psi, c.e, T, M)
				beta := make([]float64, T*M)
				backwardGeneric(beta, scale, c.psi, transpose(c.e, M), T, M)
				var g []float64
				if T >= 2 {
					g = make([]float64, M*M)
					transitionsGeneric(g, c.e, alpha, beta, c.psi, scale, make([]float64, T*M), T, M)
				}
				ref := runFB32(t, generic, c)
				checkFB32Against(t, "generic32 vs float64 "+c.name, ref, alpha, scale, beta, g, T, M)
				for _, p := range asmImpls(t) {
					got := runFB32(t, p, c)
					var rg []float64
					if T >= 2 {
						rg = to64(ref.g)
					}
					checkFB32Against(t, p.name+" vs generic32 "+c.name, got, to64(ref.alpha), to64(ref.scale), to64(ref.beta), rg, T, M)
				}
			}
		}
	}
}

// TestTransitions32Adds checks that Transitions32 adds to g (not
// overwrites) in every tier, and that the work rows past T·M are untouched.
func TestTransitions32Adds(t *testing.T) {
	r := newRand(33)
	for _, p := range append([]*impl{generic}, asmImpls(t)...) {
		for _, M := range []int{1, 5, 9, 17, 45} {
			T := 6
			c := makeFB32(r, "uniform", T, M)
			res := runFB32(t, p, c)
			g0 := to32(randSlice(r, M*M, -1, 1))
			g := append([]float32(nil), g0...)
			p.transitions32(g, to32(c.e), res.alpha, res.beta, to32(c.psi), res.scale, make([]float32, T*M), T, M)
			for k := range g {
				want := float64(g0[k]) + float64(res.g[k])
				if !close(float64(g[k]), want, 1e-5, 1e-6) {
					t.Fatalf("%s M=%d: g[%d] = %v, want %v + %v", p.name, M, k, g[k], g0[k], res.g[k])
				}
			}
		}
	}
}

// TestLogZ32Accuracy runs the float32 pipeline a CRF layer runs (shift the
// scores, exp, forward, backward, log Z summed in float64) against the float64
// one, for T up to 1000 and scores up to ±50 (emissions) and ±10
// (transitions), and checks the accuracy kernels32.go promises: log Z within
// 1e-5 relative (and 1e-6·T absolute), marginals and transition counts per
// position within 1e-5 absolute. It logs the worst errors seen.
func TestLogZ32Accuracy(t *testing.T) {
	r := newRand(34)
	for _, tc := range []struct {
		T, M       int
		emit, tran float64
	}{{1, 9, 50, 10}, {50, 9, 50, 10}, {1000, 9, 50, 10}, {50, 45, 50, 10}, {1000, 45, 50, 10}, {200, 128, 30, 10}, {1000, 9, 20, 20}} {
		T, M := tc.T, tc.M
		if testing.Short() && T*M*M > 1000*9*9 {
			continue // the larger cases under emulation: run them natively
		}
		emit := round32(randSlice(r, T*M, -tc.emit, tc.emit))
		tr := round32(randSlice(r, M*M, -tc.tran, tc.tran))
		for _, p := range append([]*impl{generic}, asmImpls(t)...) {
			name := fmt.Sprintf("%s T=%d M=%d emit ±%g trans ±%g", p.name, T, M, tc.emit, tc.tran)
			z64, m64, n64 := pipeline64(emit, tr, T, M)
			z32, m32, n32 := pipeline32(p, to32(emit), to32(tr), T, M)
			if d := math.Abs(z32 - z64); d > 1e-5*math.Abs(z64) || d > 1e-6*float64(T)+1e-6 {
				t.Errorf("%s: log Z %v, float64 %v (diff %.3g)", name, z32, z64, d)
			}
			dm := 0.0
			for k := range m64 {
				dm = max(dm, math.Abs(float64(m32[k])-m64[k]))
			}
			dn := 0.0
			for k := range n64 {
				dn = max(dn, math.Abs(float64(n32[k])-n64[k])/float64(T))
			}
			if dm > 1e-5 || dn > 1e-5 {
				t.Errorf("%s: marginals off by %.3g, transition counts per position by %.3g", name, dm, dn)
			}
			t.Logf("%s: log Z %.6g, rel err %.2g; marginals %.2g; counts/T %.2g", name, z64, math.Abs(z32-z64)/math.Abs(z64), dm, dn)
		}
	}
}

// pipeline64 returns log Z, the marginals and the expected transition counts
// of a chain with emissions emit (T×M) and transition scores tr, the engine's
// way: transitions shifted by column maxima, emission rows by their maxima.
func pipeline64(emit, tr []float64, T, M int) (float64, []float64, []float64) {
	col := make([]float64, M)
	for j := range col {
		col[j] = math.Inf(-1)
		for i := 0; i < M; i++ {
			col[j] = max(col[j], tr[i*M+j])
		}
	}
	e := make([]float64, M*M)
	for k := range e {
		e[k] = tr[k] - col[k%M]
	}
	Exp(e, e)
	psi, mx, lo := make([]float64, T*M), make([]float64, T), make([]float64, T)
	zero := make([]float64, M)
	shiftRowsGeneric(psi[:M], mx[:1], lo[:1], emit[:M], zero, 1, M)
	if T > 1 {
		shiftRowsGeneric(psi[M:], mx[1:], lo[1:], emit[M:], col, T-1, M)
	}
	expGeneric(psi, psi)
	alpha, scale, beta := make([]float64, T*M), make([]float64, T), make([]float64, T*M)
	forwardGeneric(alpha, scale, psi, e, T, M)
	backwardGeneric(beta, scale, psi, transpose(e, M), T, M)
	z := 0.0
	for t := range T {
		z += mx[t] + math.Log(scale[t])
	}
	marg := make([]float64, T*M)
	for k := range marg {
		marg[k] = alpha[k] * beta[k]
	}
	g := make([]float64, M*M)
	if T > 1 {
		transitionsGeneric(g, e, alpha, beta, psi, scale, make([]float64, T*M), T, M)
	}
	return z, marg, g
}

// pipeline32 is pipeline64 with tier p's float32 kernels (log Z in float64).
func pipeline32(p *impl, emit, tr []float32, T, M int) (float64, []float32, []float32) {
	col := make([]float32, M)
	for j := range col {
		col[j] = inf32(-1)
		for i := 0; i < M; i++ {
			col[j] = max(col[j], tr[i*M+j])
		}
	}
	e := make([]float32, M*M)
	for k := range e {
		e[k] = tr[k] - col[k%M]
	}
	p.exp32(e, e)
	psi, mx, lo := make([]float32, T*M), make([]float32, T), make([]float32, T)
	zero := make([]float32, M)
	p.shiftRows32(psi[:M], mx[:1], lo[:1], emit[:M], zero, 1, M)
	if T > 1 {
		p.shiftRows32(psi[M:], mx[1:], lo[1:], emit[M:], col, T-1, M)
	}
	p.exp32(psi, psi)
	alpha, scale, beta := make([]float32, T*M), make([]float32, T), make([]float32, T*M)
	p.forward32(alpha, scale, psi, e, T, M)
	et := make([]float32, M*M)
	for i := 0; i < M; i++ {
		for j := 0; j < M; j++ {
			et[j*M+i] = e[i*M+j]
		}
	}
	p.backward32(beta, scale, psi, et, T, M)
	z := 0.0
	for t := range T {
		z += float64(mx[t]) + math.Log(float64(scale[t]))
	}
	marg := make([]float32, T*M)
	for k := range marg {
		marg[k] = alpha[k] * beta[k]
	}
	g := make([]float32, M*M)
	if T > 1 {
		p.transitions32(g, e, alpha, beta, psi, scale, make([]float32, T*M), T, M)
	}
	return z, marg, g
}

func TestExp32(t *testing.T) {
	r := newRand(35)
	var xs []float32
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 1e-30, -1e-30, ExpMin32, ExpMin32 - 1e-5, ExpMin32 + 1e-5,
		ExpMax32, ExpMax32 + 1e-4, 88.7, -87.3, -87.4, -103, -150, 100, -1e30, 1e30,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat32, -math.MaxFloat32, 0.5 * math.Ln2, -0.5 * math.Ln2} {
		xs = append(xs, float32(v))
	}
	for range 20000 {
		xs = append(xs, float32(-90+180*r.Float64()))
	}
	for range 2000 {
		xs = append(xs, float32(-1+2*r.Float64()))
	}
	check := func(name string, got []float32) {
		t.Helper()
		for k, x := range xs {
			want := exp32Want(x)
			if math.IsNaN(float64(want)) != math.IsNaN(float64(got[k])) {
				t.Fatalf("%s: exp(%v) = %v, want %v", name, x, got[k], want)
			}
			if math.IsNaN(float64(want)) {
				continue
			}
			if u := ulps32(got[k], want); u > 2 {
				t.Fatalf("%s: exp(%v) = %v, want %v (%v ulp)", name, x, got[k], want, u)
			}
			if float64(x) < ExpMin32 && got[k] != 0 {
				t.Fatalf("%s: exp(%v) = %v, want +0 (flushed)", name, x, got[k])
			}
		}
	}
	for _, p := range append([]*impl{generic}, asmImpls(t)...) {
		for _, n := range lengths() {
			src := xs[:min(n, len(xs))]
			buf, dst := guarded32(len(src), nil)
			p.exp32(dst, src)
			checkGuards32(t, p.name+" exp32", buf)
			for k := range src {
				if w := exp32Want(src[k]); math.Float32bits(dst[k]) != math.Float32bits(w) && ulps32(dst[k], w) > 2 {
					t.Fatalf("%s n=%d: exp(%v) = %v, want %v", p.name, n, src[k], dst[k], w)
				}
			}
		}
		got := make([]float32, len(xs))
		p.exp32(got, xs)
		check(p.name, got)
		// in place
		in := append([]float32(nil), xs...)
		p.exp32(in, in)
		check(p.name+" in place", in)
	}
}

// exp32Want is the correctly rounded float32 exp (through float64, whose
// error is far below float32's ulp), flushed as Exp32 promises.
func exp32Want(x float32) float32 {
	switch {
	case x != x:
		return x
	case float64(x) < ExpMin32:
		return 0
	}
	return float32(math.Exp(float64(x)))
}

func ulps32(a, b float32) float64 {
	if a == b {
		return 0
	}
	fa, fb := float64(a), float64(b)
	if math.IsInf(fa, 0) || math.IsInf(fb, 0) || math.Signbit(fa) != math.Signbit(fb) {
		return math.Inf(1)
	}
	d := int64(math.Float32bits(a)&0x7fffffff) - int64(math.Float32bits(b)&0x7fffffff)
	return math.Abs(float64(d))
}

func TestShiftRows32(t *testing.T) {
	r := newRand(36)
	for _, M := range labelCounts() {
		for _, T := range []int{1, 2, 5} {
			in := round32(randSlice(r, T*M, -50, 50))
			a := round32(randSlice(r, M, -20, 20))
			if M > 2 {
				in[r.IntN(T*M)] = math.Inf(-1)
				a[r.IntN(M)] = math.Inf(-1)
				in[r.IntN(T*M)] = 3e38
			}
			if M > 3 && T > 1 {
				for j := 0; j < M; j++ {
					in[M+j] = math.Inf(-1) // an impossible position
				}
			}
			out, mx, lo := make([]float64, T*M), make([]float64, T), make([]float64, T)
			shiftRowsGeneric(out, mx, lo, in, a, T, M)
			var ref [3][]float32
			for _, p := range append([]*impl{generic}, asmImpls(t)...) {
				obuf, o := guarded32(T*M, nil)
				xbuf, x := guarded32(T, nil)
				lbuf, l := guarded32(T, nil)
				p.shiftRows32(o, x, l, to32(in), to32(a), T, M)
				checkGuards32(t, p.name+" shiftRows32 out", obuf)
				checkGuards32(t, p.name+" shiftRows32 mx", xbuf)
				checkGuards32(t, p.name+" shiftRows32 lo", lbuf)
				if p == generic {
					ref = [3][]float32{o, x, l}
					// Against float64: each result is one or two roundings
					// of the float64 one's operands.
					for k := range out {
						tol := 2 * 6e-8 * (math.Abs(in[k]) + math.Abs(a[k%M]) + math.Abs(mx[k/M]))
						if !close(float64(o[k]), out[k], 0, tol) {
							t.Fatalf("generic32 M=%d T=%d: out[%d] = %v, float64 %v", M, T, k, o[k], out[k])
						}
					}
					checkClose32(t, "generic32 mx", x, mx, 1.2e-7, 0)
					checkClose32(t, "generic32 lo", l, lo, 1.2e-7, 0)
					continue
				}
				for q, got := range [3][]float32{o, x, l} {
					for k := range got {
						if got[k] != ref[q][k] && !(got[k] != got[k] && ref[q][k] != ref[q][k]) {
							t.Fatalf("%s M=%d T=%d: output %d [%d] = %v, generic %v", p.name, M, T, q, k, got[k], ref[q][k])
						}
					}
				}
			}
		}
	}
}

// TestViterbi32 checks every tier bit for bit against generic32, and
// generic32 against float64 Viterbi on integer scores (exact in both types,
// so the paths and scores must agree exactly) and on real scores (the
// float32 path's float64 score within rounding of the best).
func TestViterbi32(t *testing.T) {
	r := newRand(37)
	for _, M := range labelCounts() {
		for _, T := range []int{1, 2, 3, 9, 40} {
			if testing.Short() && M > 45 && T > 9 {
				continue
			}
			for _, kind := range []string{"int", "real", "masked", "nan"} {
				var s, tr []float64
				switch kind {
				case "int":
					s, tr = make([]float64, T*M), make([]float64, M*M)
					for k := range s {
						s[k] = float64(r.IntN(21) - 10)
					}
					for k := range tr {
						tr[k] = float64(r.IntN(21) - 10)
					}
				default:
					s, tr = round32(randSlice(r, T*M, -50, 50)), round32(randSlice(r, M*M, -10, 10))
				}
				if kind == "masked" {
					for k := range tr {
						if r.IntN(3) == 0 {
							tr[k] = math.Inf(-1)
						} else if r.IntN(5) == 0 {
							tr[k] = -1e9
						}
					}
				}
				if kind == "nan" {
					s[r.IntN(T*M)] = math.NaN()
				}
				what := fmt.Sprintf("%s T=%d M=%d", kind, T, M)
				s32, tr32 := to32(s), to32(tr)
				gd, gb := runViterbi32(t, generic, s32, tr32, T, M)
				gpath := make([]int32, T)
				gscore := backtrace(gpath, gd[(T-1)*M:], gb, T, M)
				if kind == "int" {
					wd, wb := runViterbi(t, generic, s, tr, T, M)
					for k := range wd {
						if float64(gd[k]) != wd[k] || (k >= M && gb[k] != wb[k]) {
							t.Fatalf("%s: generic32 δ/bp[%d] = %v/%d, float64 %v/%d", what, k, gd[k], gb[k], wd[k], wb[k])
						}
					}
				}
				if kind == "real" || kind == "masked" {
					path := make([]int32, T)
					best := Viterbi(path, make([]float64, T*M), make([]int32, T*M), s, tr, T, M)
					got := pathScore(gpath, s, tr, M)
					if math.Abs(got-best) > 1e-6*float64(T)*(math.Abs(best)+50) || math.Abs(float64(gscore)-best) > 1e-6*float64(T)*(math.Abs(best)+50) {
						t.Fatalf("%s: float32 path scores %v (reported %v), float64 best %v", what, got, gscore, best)
					}
				}
				// ViterbiMax32's δ and path.
				md := make([]float32, T*M)
				generic.viterbiMax32(md, s32, tr32, T, M)
				for k := range md {
					if math.Float32bits(md[k]) != math.Float32bits(gd[k]) && !(md[k] != md[k] && gd[k] != gd[k]) {
						t.Fatalf("%s: viterbiMax32 δ[%d] = %v, viterbi32 %v", what, k, md[k], gd[k])
					}
				}
				for _, p := range asmImpls(t) {
					d, b := runViterbi32(t, p, s32, tr32, T, M)
					for k := range d {
						if math.Float32bits(d[k]) != math.Float32bits(gd[k]) && !(d[k] != d[k] && gd[k] != gd[k]) {
							t.Fatalf("%s: %s δ[%d] = %v, generic %v", what, p.name, k, d[k], gd[k])
						}
						if b[k] != gb[k] {
							t.Fatalf("%s: %s bp[%d] = %d, generic %d", what, p.name, k, b[k], gb[k])
						}
					}
					p.viterbiMax32(md, s32, tr32, T, M)
					for k := range md {
						if math.Float32bits(md[k]) != math.Float32bits(gd[k]) && !(md[k] != md[k] && gd[k] != gd[k]) {
							t.Fatalf("%s: %s viterbiMax32 δ[%d] = %v, generic %v", what, p.name, k, md[k], gd[k])
						}
					}
				}
				// The exported functions agree with each other.
				path, mpath := make([]int32, T), make([]int32, T)
				sc := Viterbi32(path, make([]float32, T*M), make([]int32, T*M), s32, tr32, T, M)
				msc := ViterbiMax32(mpath, make([]float32, T*M), s32, tr32, nil, T, M)
				if math.Float32bits(sc) != math.Float32bits(msc) && !(sc != sc && msc != msc) {
					t.Fatalf("%s: Viterbi32 score %v, ViterbiMax32 %v", what, sc, msc)
				}
				for k := range path {
					if path[k] != mpath[k] || path[k] != gpath[k] {
						t.Fatalf("%s: paths differ at %d: Viterbi32 %v, ViterbiMax32 %v, generic %v", what, k, path, mpath, gpath)
					}
				}
			}
		}
	}
}

func runViterbi32(t testing.TB, p *impl, s, tr []float32, T, M int) ([]float32, []int32) {
	t.Helper()
	dbuf, delta := guarded32(T*M, nil)
	for i := range delta {
		delta[i] = deltaSentinel
	}
	bbuf, bp := guardedInt32(T * M)
	for i := range bp {
		bp[i] = bpSentinel
	}
	p.viterbi32(delta, bp, s, tr, T, M)
	checkGuards32(t, p.name+" viterbi32 delta", dbuf)
	checkGuardsInt32(t, p.name+" viterbi32 bp", bbuf)
	for k := range M {
		if bp[k] != bpSentinel {
			t.Fatalf("%s viterbi32 wrote bp row 0", p.name)
		}
	}
	return delta, bp
}

func TestSparse32(t *testing.T) {
	r := newRand(38)
	for _, M := range labelCounts() {
		T, rows := 7, 30
		ld := M + r.IntN(3)
		ptr := make([]int32, T+1)
		var ids []int32
		var vals []float64
		for t := 0; t < T; t++ {
			n := r.IntN(6)
			for range n {
				ids = append(ids, int32(r.IntN(rows)))
				vals = append(vals, float64(float32(r.Float64()*2-1)))
			}
			ptr[t+1] = int32(len(ids))
		}
		w := round32(randSlice(r, rows*ld, -1, 1))
		s0 := round32(randSlice(r, T*M, -1, 1))
		want := append([]float64(nil), s0...)
		gatherGeneric(want, w, ld, ptr, ids, vals, T, M)
		p0 := round32(randSlice(r, T*M, 0, 1))
		g0 := round32(randSlice(r, rows*ld, -1, 1))
		wantG := append([]float64(nil), g0...)
		scatterGeneric(wantG, ld, p0, ptr, ids, vals, 0.75, T, M)
		for _, p := range append([]*impl{generic}, asmImpls(t)...) {
			sbuf, s := guarded32(T*M, to32(s0))
			p.gather32(s, to32(w), ld, ptr, ids, to32(vals), T, M)
			checkGuards32(t, p.name+" gather32", sbuf)
			checkClose32(t, fmt.Sprintf("%s gather32 M=%d", p.name, M), s, want, 0, 1e-6)
			gbuf, g := guarded32(rows*ld, to32(g0))
			p.scatter32(g, ld, to32(p0), ptr, ids, to32(vals), 0.75, T, M)
			checkGuards32(t, p.name+" scatter32", gbuf)
			checkClose32(t, fmt.Sprintf("%s scatter32 M=%d", p.name, M), g, wantG, 0, 1e-6)
		}
	}
}

func TestBLAS32(t *testing.T) {
	r := newRand(39)
	for _, n := range lengths() {
		x, y := round32(randSlice(r, n, -1, 1)), round32(randSlice(r, n, -1, 1))
		want := dotGeneric(x, y)
		wantY := append([]float64(nil), y...)
		axpyGeneric(0.375, x, wantY)
		wantX := append([]float64(nil), x...)
		scaleGeneric(-1.5, wantX)
		for _, p := range append([]*impl{generic}, asmImpls(t)...) {
			if got := p.dot32(to32(x), to32(y)); !close(got, want, 1e-12, 1e-13) {
				t.Fatalf("%s n=%d: dot32 %v, float64 %v", p.name, n, got, want)
			}
			ybuf, yy := guarded32(n, to32(y))
			p.axpy32(0.375, to32(x), yy)
			checkGuards32(t, p.name+" axpy32", ybuf)
			checkClose32(t, p.name+" axpy32", yy, wantY, 0, 1.2e-7)
			xbuf, xx := guarded32(n, to32(x))
			p.scale32(-1.5, xx)
			checkGuards32(t, p.name+" scale32", xbuf)
			checkClose32(t, p.name+" scale32", xx, wantX, 1.2e-7, 0)
		}
	}
}

// TestKernels32Args checks that the exported float32 wrappers reject short
// slices with a panic naming the kernel.
func TestKernels32Args(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic on a short slice", name)
			}
		}()
		f()
	}
	s := make([]float32, 5)
	mustPanic("Forward32", func() { Forward32(s, s, s, s, 2, 3) })
	mustPanic("Backward32", func() { Backward32(s, s, s, s, 2, 3) })
	mustPanic("Transitions32", func() { Transitions32(s, s, s, s, s, s, s, 2, 3) })
	mustPanic("ShiftRows32", func() { ShiftRows32(s, s, s, s, s, 2, 3) })
	mustPanic("Viterbi32", func() { Viterbi32(make([]int32, 2), s, make([]int32, 6), s, s, 2, 3) })
	mustPanic("Exp32", func() { Exp32(s[:2], s) })
	mustPanic("Gather32", func() { Gather32(s, s, 1, []int32{0, 1}, []int32{9}, s, 1, 1) })
}

// FuzzKernels32 compares every tier's float32 forward, backward,
// transitions and Viterbi with generic32 on fuzzed inputs.
func FuzzKernels32(f *testing.F) {
	f.Add(uint8(3), uint8(4), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add(uint8(1), uint8(1), []byte{128})
	f.Add(uint8(7), uint8(9), []byte{0, 128, 130, 200, 60, 255})
	f.Add(uint8(20), uint8(17), []byte{0, 0, 0, 128, 129})
	f.Add(uint8(5), uint8(45), []byte{254, 100, 150})
	f.Fuzz(func(t *testing.T, T8, M8 uint8, raw []byte) {
		T, M := int(T8%40)+1, int(M8%70)+1
		psi := fb32FromBytes(raw, T*M)
		e := fb32FromBytes(append([]byte{7}, raw...), M*M)
		c := fbCase{name: fmt.Sprintf("fuzz/T=%d/M=%d", T, M), T: T, M: M, psi: psi, e: e}
		ref := runFB32(t, generic, c)
		s, tr := to32(psi), to32(e)
		gd, gb := runViterbi32(t, generic, s, tr, T, M)
		for _, p := range asmImpls(t) {
			got := runFB32(t, p, c)
			var rg []float64
			if T >= 2 {
				rg = to64(ref.g)
			}
			checkFB32Against(t, p.name+" "+c.name, got, to64(ref.alpha), to64(ref.scale), to64(ref.beta), rg, T, M)
			d, b := runViterbi32(t, p, s, tr, T, M)
			for k := range d {
				if (math.Float32bits(d[k]) != math.Float32bits(gd[k]) && !(d[k] != d[k] && gd[k] != gd[k])) || b[k] != gb[k] {
					t.Fatalf("%s %s viterbi32 [%d] = %v/%d, generic %v/%d", p.name, c.name, k, d[k], b[k], gd[k], gb[k])
				}
			}
		}
	})
}

// fb32FromBytes maps bytes to non-negative values with zeros and a spread of
// 2^±8 (products stay normal in float32; NaN and Inf belong to the kind
// tests, where their propagation is checked separately).
func fb32FromBytes(raw []byte, n int) []float64 {
	out := make([]float64, n)
	for k := range out {
		if len(raw) == 0 {
			out[k] = 1
			continue
		}
		b := raw[k%len(raw)] ^ byte(k*37)
		if b < 16 {
			continue
		}
		out[k] = math.Ldexp(1+float64(b&15)/16, int(b>>4)-8)
	}
	return out
}

// TestForwardBatch32 checks ForwardBatch32 in every tier against Forward32
// (generic) run on each sequence alone, and generic32 against float64's
// ForwardBatch.
func TestForwardBatch32(t *testing.T) {
	r := newRand(40)
	for _, M := range []int{1, 2, 3, 5, 8, 9, 16, 17, 23, 33, 45, 64, 70, 130} {
		for _, TK := range [][2]int{{1, 1}, {1, 3}, {2, 1}, {5, 4}, {9, 7}, {3, 13}} {
			T, K := TK[0], TK[1]
			psi := round32(randSlice(r, T*K*M, 0, 1))
			e := round32(randSlice(r, M*M, 0, 1))
			if M > 2 {
				psi[r.IntN(T*K*M)] = 0
				e[r.IntN(M*M)] = 0
			}
			want64a, want64s := make([]float64, T*K*M), make([]float64, T*K)
			forwardBatchGeneric(want64a, want64s, psi, e, nil, T, K, M)
			for _, p := range append([]*impl{generic}, asmImpls(t)...) {
				abuf, a := guarded32(T*K*M, nil)
				sbuf, s := guarded32(T*K, nil)
				p.forwardBatch32(a, s, to32(psi), to32(e), nil, T, K, M)
				checkGuards32(t, p.name+" forwardBatch32 alpha", abuf)
				checkGuards32(t, p.name+" forwardBatch32 scale", sbuf)
				what := fmt.Sprintf("%s forwardBatch32 T=%d K=%d M=%d", p.name, T, K, M)
				if p == generic {
					checkClose32(t, what+" scale vs float64", s, want64s, fb32Tol, 0)
					checkClose32(t, what+" alpha vs float64", a, want64a, fb32Tol, fb32Atol)
				}
				for k := 0; k < K; k++ {
					sp := make([]float32, T*M)
					for tt := 0; tt < T; tt++ {
						copy(sp[tt*M:(tt+1)*M], to32(psi[(tt*K+k)*M:(tt*K+k+1)*M]))
					}
					wa, ws := make([]float32, T*M), make([]float32, T)
					forwardGeneric(wa, ws, sp, to32(e), T, M)
					for tt := 0; tt < T; tt++ {
						checkClose32(t, fmt.Sprintf("%s seq %d t %d alpha", what, k, tt), a[(tt*K+k)*M:(tt*K+k+1)*M], to64(wa[tt*M:(tt+1)*M]), fb32Tol, fb32Atol)
						checkClose32(t, fmt.Sprintf("%s seq %d t %d scale", what, k, tt), s[tt*K+k:tt*K+k+1], to64(ws[tt:tt+1]), fb32Tol, 0)
					}
				}
			}
		}
	}
}

// FuzzElementwise32 compares every tier's Exp32, Dot32, Axpy32 and
// ShiftRows32 with generic32 on arbitrary float32 bit patterns.
func FuzzElementwise32(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0x80, 0xff, 0x12, 0x34, 0xae, 0xc2, 1, 2, 3})
	f.Add([]byte{0xff, 0xff, 0x7f, 0x7f, 0, 0, 0xc0, 0x7f, 0x5a, 0xac, 0xae, 0xc2})
	f.Fuzz(func(t *testing.T, raw []byte) {
		n := len(raw) / 4
		x := make([]float32, n)
		for k := range x {
			x[k] = math.Float32frombits(uint32(raw[4*k]) | uint32(raw[4*k+1])<<8 | uint32(raw[4*k+2])<<16 | uint32(raw[4*k+3])<<24)
		}
		want := make([]float32, n)
		generic.exp32(want, x)
		for _, p := range asmImpls(t) {
			got := make([]float32, n)
			p.exp32(got, x)
			for k := range got {
				if (got[k] != got[k]) != (want[k] != want[k]) || (want[k] == want[k] && ulps32(got[k], want[k]) > 2) {
					t.Fatalf("%s exp32(%v) = %v, generic %v", p.name, x[k], got[k], want[k])
				}
			}
			// Dot32 of finite inputs: exact products, float64 sums.
			fin := make([]float32, 0, n)
			for _, v := range x {
				if !math.IsInf(float64(v), 0) && v == v && math.Abs(float64(v)) < 1e18 {
					fin = append(fin, v)
				}
			}
			big := 0.0
			for _, v := range fin {
				big += float64(v) * float64(v)
			}
			if d, w := p.dot32(fin, fin), generic.dot32(fin, fin); math.Abs(d-w) > 1e-12*big {
				t.Fatalf("%s dot32 = %v, generic %v", p.name, d, w)
			}
			// ShiftRows32 of inputs without NaN or +Inf, as one row.
			row := make([]float32, 0, n)
			for _, v := range fin {
				row = append(row, v)
			}
			if M := len(row); M > 0 {
				a := make([]float32, M)
				wo, wm, wl := make([]float32, M), make([]float32, 1), make([]float32, 1)
				generic.shiftRows32(wo, wm, wl, row, a, 1, M)
				o, m, l := make([]float32, M), make([]float32, 1), make([]float32, 1)
				p.shiftRows32(o, m, l, row, a, 1, M)
				if m[0] != wm[0] || l[0] != wl[0] {
					t.Fatalf("%s shiftRows32 mx/lo %v/%v, generic %v/%v", p.name, m[0], l[0], wm[0], wl[0])
				}
				for k := range o {
					if o[k] != wo[k] {
						t.Fatalf("%s shiftRows32 out[%d] = %v, generic %v", p.name, k, o[k], wo[k])
					}
				}
			}
		}
	})
}
