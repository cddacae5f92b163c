package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// fbTol is the relative tolerance between a tier and generic for Forward,
// Backward, ForwardBatch and Transitions on non-negative inputs. Every
// quantity is a sum of non-negative products, so a different summation order
// changes each step's results by at most about (M+2)·eps relative (in
// practice √M·eps), and the normalisation by a sum of the same terms keeps
// the errors relative; over T steps they add up, but for positive E the
// forward map contracts (Birkhoff), so they do not grow without bound.
// 1e-12 covers M ≤ 256 and T = 50 (measured worst ≈ 8e-15) with margin while
// still catching any wrong term (a missing or extra product changes results
// by far more than 1e-12 for the random inputs used).
const fbTol = 1e-12

// fbAtol is the absolute slack: entries of α are at most 1 and entries that
// small are underflow noise (a product that rounds to a subnormal in one
// summation order and to 0 in another).
const fbAtol = 1e-280

type fbCase struct {
	name   string
	T, M   int
	psi, e []float64
}

// logUniform returns 10^U(lo,hi).
func logUniform(r *rand.Rand, lo, hi float64) float64 {
	return math.Pow(10, lo+(hi-lo)*r.Float64())
}

// makeFB builds a test case of the given kind.
func makeFB(r *rand.Rand, kind string, T, M int) fbCase {
	psi := make([]float64, T*M)
	e := make([]float64, M*M)
	switch kind {
	case "uniform":
		for k := range psi {
			psi[k] = r.Float64()
		}
		for k := range e {
			e[k] = r.Float64()
		}
	case "normalised":
		for t := 0; t < T; t++ {
			row := psi[t*M : (t+1)*M]
			for k := range row {
				row[k] = r.ExpFloat64()
			}
			normalize(row)
		}
		for i := 0; i < M; i++ {
			row := e[i*M : (i+1)*M]
			for k := range row {
				row[k] = r.ExpFloat64()
			}
			normalize(row)
		}
	case "wide-psi":
		// Entries of Ψ from 1e-300 to 1e300: a row factor 10^±280 times
		// 10^±10 per entry (so that products stay finite and normal).
		for t := 0; t < T; t++ {
			f := logUniform(r, -280, 280)
			for k := t * M; k < (t+1)*M; k++ {
				psi[k] = f * logUniform(r, -10, 10)
			}
		}
		for k := range e {
			e[k] = logUniform(r, -8, 8)
		}
	case "wide-e":
		for k := range psi {
			psi[k] = logUniform(r, -20, 20)
		}
		for k := range e {
			e[k] = logUniform(r, -150, 150)
		}
	case "zeros":
		// Forbidden transitions (whole rows and columns of E zero, random
		// zeros) and impossible labels (zeros in Ψ).
		for k := range psi {
			if r.IntN(4) != 0 {
				psi[k] = r.Float64()
			}
		}
		for k := range e {
			if r.IntN(3) != 0 {
				e[k] = r.Float64()
			}
		}
		if M > 2 {
			zi, zj := r.IntN(M), r.IntN(M)
			for k := 0; k < M; k++ {
				e[zi*M+k] = 0
				e[k*M+zj] = 0
			}
		}
	case "dead":
		// Every label impossible at one position: scale 0 and NaN after it.
		for k := range psi {
			psi[k] = r.Float64()
		}
		for k := range e {
			e[k] = r.Float64()
		}
		t := r.IntN(T)
		clear(psi[t*M : (t+1)*M])
	case "nan":
		for k := range psi {
			psi[k] = r.Float64()
		}
		for k := range e {
			e[k] = r.Float64()
		}
		if r.IntN(2) == 0 {
			psi[r.IntN(T*M)] = math.NaN()
		} else {
			e[r.IntN(M*M)] = math.NaN()
		}
	case "inf":
		for k := range psi {
			psi[k] = r.Float64()
		}
		for k := range e {
			e[k] = r.Float64()
		}
		psi[r.IntN(T*M)] = math.Inf(1)
	default:
		panic(kind)
	}
	return fbCase{name: fmt.Sprintf("%s/T=%d/M=%d", kind, T, M), T: T, M: M, psi: psi, e: e}
}

var fbKinds = []string{"uniform", "normalised", "wide-psi", "wide-e", "zeros", "dead", "nan", "inf"}

func transpose(e []float64, M int) []float64 {
	et := make([]float64, M*M)
	for i := 0; i < M; i++ {
		for j := 0; j < M; j++ {
			et[j*M+i] = e[i*M+j]
		}
	}
	return et
}

// checkFB runs every kernel of the family of tier p on c and compares with
// generic. Each kernel gets generic's outputs as inputs, so that a fault is
// reported where it is.
func checkFB(t *testing.T, p *impl, c fbCase) {
	t.Helper()
	T, M := c.T, c.M
	// Reference.
	alpha, scale := make([]float64, T*M), make([]float64, T)
	forwardGeneric(alpha, scale, c.psi, c.e, T, M)
	et := transpose(c.e, M)
	beta := make([]float64, T*M)
	backwardGeneric(beta, scale, c.psi, et, T, M)

	abuf, a := guarded(T*M, nil)
	sbuf, s := guarded(T, nil)
	p.forward(a, s, c.psi, c.e, T, M)
	checkGuards(t, c.name+" forward alpha", abuf)
	checkGuards(t, c.name+" forward scale", sbuf)
	checkClose(t, c.name+" forward scale", s, scale, fbTol, 0)
	checkClose(t, c.name+" forward alpha", a, alpha, fbTol, fbAtol)

	bbuf, b := guarded(T*M, nil)
	p.backward(b, scale, c.psi, et, T, M)
	checkGuards(t, c.name+" backward beta", bbuf)
	checkBeta(t, c.name+" backward beta", b, beta, T, M)

	if T >= 2 {
		r := newRand(uint64(T*1000 + M))
		g0 := randSlice(r, M*M, 0, 1)
		want := append([]float64(nil), g0...)
		work := make([]float64, T*M)
		transitionsGeneric(want, c.e, alpha, beta, c.psi, scale, work, T, M)
		gbuf, g := guarded(M*M, g0)
		wbuf, w := guarded(T*M, nil)
		p.transitions(g, c.e, alpha, beta, c.psi, scale, w, T, M)
		checkGuards(t, c.name+" transitions g", gbuf)
		checkGuards(t, c.name+" transitions work", wbuf)
		checkClose(t, c.name+" transitions g", g, want, fbTol, 0)
	}

	// BackwardTransitions: β and, for T ≥ 2, the counts added to g0.
	r := newRand(uint64(T*1000 + M + 1))
	g0 := randSlice(r, M*M, 0, 1)
	want := append([]float64(nil), g0...)
	if T >= 2 {
		transitionsGeneric(want, c.e, alpha, beta, c.psi, scale, make([]float64, T*M), T, M)
	}
	bbuf, b = guarded(T*M, nil)
	gbuf, g := guarded(M*M, g0)
	wbuf, w := guarded(T*M, nil)
	p.backwardTransitions(g, c.e, alpha, b, c.psi, scale, et, w, T, M)
	checkGuards(t, c.name+" backwardTransitions beta", bbuf)
	checkGuards(t, c.name+" backwardTransitions g", gbuf)
	checkGuards(t, c.name+" backwardTransitions work", wbuf)
	checkBeta(t, c.name+" backwardTransitions beta", b, beta, T, M)
	checkClose(t, c.name+" backwardTransitions g", g, want, fbTol, 0)
}

// checkBeta compares β row by row with an absolute slack relative to the
// row's largest entry (β is not bounded by 1 as α is).
func checkBeta(t testing.TB, what string, got, want []float64, T, M int) {
	t.Helper()
	for r := 0; r < T; r++ {
		big := 0.0
		for _, v := range want[r*M : (r+1)*M] {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				big = max(big, math.Abs(v))
			}
		}
		for j := r * M; j < (r+1)*M; j++ {
			if !close(got[j], want[j], fbTol, fbAtol*big) {
				t.Fatalf("%s: [%d][%d] = %v, want %v", what, r, j-r*M, got[j], want[j])
			}
		}
	}
}

func TestForwardBackward(t *testing.T) {
	r := newRand(11)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, kind := range fbKinds {
			// 97, 103 and 150 add AVX-512 rows of several chunks with a tail;
			// 49, 52, 64 and 65: AVX2 rows of three chunks (5, 5, 3 vectors;
			// 5, 5, 3 full; 6, 6, 4; 6, 6, 5), float64 packed up to 49, not from 50.
			for _, M := range append(labelCounts(), 49, 52, 65, 97, 103, 150) {
				for _, T := range []int{1, 2, 3, 7, 50} {
					if testing.Short() && M > 64 && T > 7 {
						continue
					}
					checkFB(t, p, makeFB(r, kind, T, M))
				}
			}
		}
	})
}

// TestForwardBackwardMedium covers T beyond one block of Transitions'
// positions (128), with rows of several chunks and tails.
func TestForwardBackwardMedium(t *testing.T) {
	r := newRand(19)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range []int{5, 33, 45, 100} {
			for _, T := range []int{129, 130, 300} {
				checkFB(t, p, makeFB(r, "uniform", T, M))
				checkFB(t, p, makeFB(r, "zeros", T, M))
			}
		}
	})
}

// TestForwardBackwardLong runs T = 100000 at small M: errors must not grow
// along the sequence, and log Z = Σ log scale_t must be finite and match.
func TestForwardBackwardLong(t *testing.T) {
	T := 100000
	if testing.Short() {
		T = 5000
	}
	r := newRand(12)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range []int{1, 3, 9, 23} {
			c := makeFB(r, "uniform", T, M)
			checkFB(t, p, c)
			alpha, scale := make([]float64, T*M), make([]float64, T)
			forwardGeneric(alpha, scale, c.psi, c.e, T, M)
			a, s := make([]float64, T*M), make([]float64, T)
			p.forward(a, s, c.psi, c.e, T, M)
			var lz, lzw, mag float64
			for k := range s {
				lz += math.Log(s[k])
				lzw += math.Log(scale[k])
				mag += math.Abs(math.Log(scale[k]))
			}
			if math.IsNaN(lz) || math.IsInf(lz, 0) {
				t.Fatalf("M=%d: log Z = %v", M, lz)
			}
			// Each log scale_t is within ~1e-15 (absolute) of generic's.
			if math.Abs(lz-lzw) > 1e-12*mag+float64(T)*1e-15 {
				t.Fatalf("M=%d: log Z = %v, generic %v", M, lz, lzw)
			}
		}
	})
}

func TestForwardBatch(t *testing.T) {
	r := newRand(13)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, kind := range []string{"uniform", "wide-psi", "zeros", "dead", "nan"} {
			for _, M := range append(labelCounts(), 103) {
				for _, T := range []int{1, 2, 3, 7, 50} {
					for _, K := range []int{1, 2, 3, 4, 5, 7, 9, 13} {
						if testing.Short() && M > 45 && T*K > 20 {
							continue
						}
						checkBatch(t, p.name, func(alpha, scale, psi, e []float64, T, K, M int) {
							p.forwardBatch(alpha, scale, psi, e, nil, T, K, M)
						}, r, kind, T, K, M)
					}
				}
			}
		}
	})
}

// checkBatch runs a ForwardBatch implementation on K independent cases and
// compares it with generic Forward on each sequence.
func checkBatch(t *testing.T, name string, fb func(alpha, scale, psi, e []float64, T, K, M int), r *rand.Rand, kind string, T, K, M int) {
	t.Helper()
	psi := make([]float64, T*K*M)
	var e []float64
	seqs := make([]fbCase, K)
	for k := range seqs {
		seqs[k] = makeFB(r, kind, T, M)
		if k == 0 {
			e = seqs[0].e
		}
		for tt := 0; tt < T; tt++ {
			copy(psi[(tt*K+k)*M:(tt*K+k+1)*M], seqs[k].psi[tt*M:(tt+1)*M])
		}
	}
	abuf, a := guarded(T*K*M, nil)
	sbuf, s := guarded(T*K, nil)
	fb(a, s, psi, e, T, K, M)
	what := fmt.Sprintf("%s batch %s/T=%d/K=%d/M=%d", name, kind, T, K, M)
	checkGuards(t, what+" alpha", abuf)
	checkGuards(t, what+" scale", sbuf)
	for k := range seqs {
		alpha, scale := make([]float64, T*M), make([]float64, T)
		forwardGeneric(alpha, scale, seqs[k].psi, e, T, M)
		for tt := 0; tt < T; tt++ {
			w := fmt.Sprintf("%s k=%d t=%d", what, k, tt)
			checkClose(t, w+" scale", s[tt*K+k:tt*K+k+1], scale[tt:tt+1], fbTol, 0)
			checkClose(t, w+" alpha", a[(tt*K+k)*M:(tt*K+k+1)*M], alpha[tt*M:(tt+1)*M], fbTol, fbAtol)
		}
	}
}

// TestForwardBatchGenericMatchesForward checks the reference batch against
// the reference Forward, bit for bit (same summation order).
func TestForwardBatchGenericMatchesForward(t *testing.T) {
	r := newRand(14)
	for _, M := range []int{1, 5, 9} {
		checkBatch(t, "generic", func(alpha, scale, psi, e []float64, T, K, M int) {
			forwardBatchGeneric(alpha, scale, psi, e, nil, T, K, M)
		}, r, "uniform", 7, 3, M)
	}
}

// TestMarginals is an end-to-end check of each tier: the marginals
// α_t∘β_t of its own Forward and Backward sum to 1 at every position.
func TestMarginals(t *testing.T) {
	r := newRand(15)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range []int{2, 9, 23, 45, 100} {
			T := 60
			c := makeFB(r, "uniform", T, M)
			a, s, b := make([]float64, T*M), make([]float64, T), make([]float64, T*M)
			p.forward(a, s, c.psi, c.e, T, M)
			p.backward(b, s, c.psi, transpose(c.e, M), T, M)
			for tt := 0; tt < T; tt++ {
				sum := 0.0
				for j := tt * M; j < (tt+1)*M; j++ {
					sum += a[j] * b[j]
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("M=%d t=%d: Σ marginals = %v", M, tt, sum)
				}
			}
		}
	})
}

// TestLogZBruteForce validates the reference itself: log Z by enumerating
// every labelling of a tiny case equals Σ log scale_t.
func TestLogZBruteForce(t *testing.T) {
	const T, M = 4, 3
	r := newRand(16)
	for trial := 0; trial < 20; trial++ {
		c := makeFB(r, "uniform", T, M)
		if trial%2 == 1 {
			c = makeFB(r, "zeros", T, M)
			c.psi[0] = 0.5 // keep at least one labelling possible
			for tt := 1; tt < T; tt++ {
				c.psi[tt*M] = 0.5
			}
			c.e[0] = 0.5
		}
		z := 0.0
		y := make([]int, T)
		for n := 0; n < 81; n++ {
			for k, v := 0, n; k < T; k, v = k+1, v/M {
				y[k] = v % M
			}
			w := c.psi[y[0]]
			for k := 1; k < T; k++ {
				w *= c.e[y[k-1]*M+y[k]] * c.psi[k*M+y[k]]
			}
			z += w
		}
		for _, p := range append([]*impl{generic}, asmImpls(t)...) {
			a, s := make([]float64, T*M), make([]float64, T)
			p.forward(a, s, c.psi, c.e, T, M)
			lz := 0.0
			for _, v := range s {
				lz += math.Log(v)
			}
			if math.Abs(lz-math.Log(z)) > 1e-13*math.Max(1, math.Abs(lz)) {
				t.Fatalf("%s trial %d: Σ log scale = %v, brute force log Z = %v", p.name, trial, lz, math.Log(z))
			}
		}
	}
}

// TestFBPanics checks the API's length checks.
func TestFBPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Forward with a short e did not panic")
		}
	}()
	Forward(make([]float64, 6), make([]float64, 2), make([]float64, 6), make([]float64, 8), 2, 3)
}

// fbFromBytes maps bytes to non-negative values over a wide range (2^±64), 0
// and, rarely, NaN and +Inf.
func fbFromBytes(raw []byte, n int) []float64 {
	x := make([]float64, n)
	for k := range x {
		b := byte(k*37 + 11)
		if len(raw) > 0 {
			b = raw[k%len(raw)] + byte(k/len(raw))
		}
		switch b {
		case 0:
			x[k] = 0
		case 255:
			x[k] = math.NaN()
		case 254:
			x[k] = math.Inf(1)
		default:
			x[k] = math.Exp2(float64(int(b)-128) / 2)
		}
	}
	return x
}

func FuzzForwardBackward(f *testing.F) {
	f.Add(uint8(3), uint8(4), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add(uint8(1), uint8(1), []byte{128})
	f.Add(uint8(7), uint8(9), []byte{0, 128, 130, 200, 60, 255})
	f.Add(uint8(20), uint8(17), []byte{0, 0, 0, 128, 129})
	f.Add(uint8(5), uint8(45), []byte{254, 100, 150})
	f.Fuzz(func(t *testing.T, T8, M8 uint8, raw []byte) {
		T, M := int(T8%40)+1, int(M8%70)+1
		c := fbCase{name: fmt.Sprintf("fuzz/T=%d/M=%d", T, M), T: T, M: M,
			psi: fbFromBytes(raw, T*M), e: fbFromBytes(append([]byte{7}, raw...), M*M)}
		for _, p := range asmImpls(t) {
			checkFBFuzz(t, p, c)
		}
	})
}

// checkFBFuzz is checkFB for inputs with Inf and values 2^±64: a sum can
// overflow in one order and not in another near the limit, so only finite
// references are compared by value; NaN-ness must agree when generic's
// result is finite or NaN.
func checkFBFuzz(t *testing.T, p *impl, c fbCase) {
	T, M := c.T, c.M
	alpha, scale := make([]float64, T*M), make([]float64, T)
	forwardGeneric(alpha, scale, c.psi, c.e, T, M)
	a, s := make([]float64, T*M), make([]float64, T)
	p.forward(a, s, c.psi, c.e, T, M)
	checkClose(t, c.name+" forward scale", s, scale, fbTol, 0)
	checkClose(t, c.name+" forward alpha", a, alpha, fbTol, fbAtol)
	et := transpose(c.e, M)
	beta, b := make([]float64, T*M), make([]float64, T*M)
	backwardGeneric(beta, scale, c.psi, et, T, M)
	p.backward(b, scale, c.psi, et, T, M)
	checkBeta(t, c.name+" backward", b, beta, T, M)
	if T >= 2 {
		g, want := make([]float64, M*M), make([]float64, M*M)
		work := make([]float64, T*M)
		transitionsGeneric(want, c.e, alpha, beta, c.psi, scale, work, T, M)
		p.transitions(g, c.e, alpha, beta, c.psi, scale, work, T, M)
		checkClose(t, c.name+" transitions", g, want, fbTol, 0)
		clear(g)
		p.backwardTransitions(g, c.e, alpha, b, c.psi, scale, et, work, T, M)
		checkBeta(t, c.name+" backwardTransitions beta", b, beta, T, M)
		checkClose(t, c.name+" backwardTransitions", g, want, fbTol, 0)
	}
	K := 3
	psi := make([]float64, T*K*M)
	for tt := 0; tt < T; tt++ {
		for k := 0; k < K; k++ {
			copy(psi[(tt*K+k)*M:(tt*K+k+1)*M], c.psi[tt*M:(tt+1)*M])
		}
	}
	ab, sb := make([]float64, T*K*M), make([]float64, T*K)
	p.forwardBatch(ab, sb, psi, c.e, nil, T, K, M)
	for tt := 0; tt < T; tt++ {
		for k := 0; k < K; k++ {
			checkClose(t, c.name+" batch scale", sb[tt*K+k:tt*K+k+1], scale[tt:tt+1], fbTol, 0)
			checkClose(t, c.name+" batch alpha", ab[(tt*K+k)*M:(tt*K+k+1)*M], alpha[tt*M:(tt+1)*M], fbTol, fbAtol)
		}
	}
}

// Benchmarks (quick sanity measurements; the shared suite is elsewhere).
// ns/pos is per position (per position and sequence for the batch). Each
// iteration also runs the tier's FMA peak probe, timed apart, so that
// %peak compares the kernel with the core's peak under the same load (this
// machine is shared and noisy).

func fbBenchImpls(b testing.TB) []*impl { return append([]*impl{generic}, asmImpls(b)...) }

var fbBenchM = []int{9, 23, 45, 128, 256, 1024}

func fbBenchT(M int) int { return max(32, min(2000, 4000000/(M*M))) }

// fbBench runs f b.N times, reporting ns/pos, GFLOP/s and %peak.
func fbBench(b *testing.B, p *impl, positions, flops int, f func()) {
	peak := p
	if peak.fmaPeak == nil {
		peak = lookup("avx512")
		if peak == nil || !peak.available {
			peak = lookup("avx2")
		}
	}
	var kt, pt time.Duration
	pf := 0.0
	for b.Loop() {
		t0 := time.Now()
		f()
		t1 := time.Now()
		kt += t1.Sub(t0)
		if peak != nil && peak.fmaPeak != nil {
			// About as long as the kernel at 80 GFLOP/s.
			n := max(256, int(t1.Sub(t0).Nanoseconds())*80/peak.peakFlops)
			peak.fmaPeak(n)
			pt += time.Since(t1)
			pf += float64(n) * float64(peak.peakFlops)
		}
	}
	b.ReportMetric(float64(kt.Nanoseconds())/float64(b.N)/float64(positions), "ns/pos")
	g := float64(b.N) * float64(flops) / kt.Seconds() / 1e9
	b.ReportMetric(g, "GFLOP/s")
	if pt > 0 {
		b.ReportMetric(100*g/(pf/pt.Seconds()/1e9), "%peak")
	}
}

func BenchmarkForward(b *testing.B) {
	for _, M := range fbBenchM {
		T := fbBenchT(M)
		c := makeFB(newRand(1), "uniform", T, M)
		a, s := make([]float64, T*M), make([]float64, T)
		for _, p := range fbBenchImpls(b) {
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				fbBench(b, p, T, 2*M*M*(T-1), func() { p.forward(a, s, c.psi, c.e, T, M) })
			})
		}
	}
}

func BenchmarkBackward(b *testing.B) {
	for _, M := range fbBenchM {
		T := fbBenchT(M)
		c := makeFB(newRand(1), "uniform", T, M)
		a, s := make([]float64, T*M), make([]float64, T)
		forwardGeneric(a, s, c.psi, c.e, T, M)
		et := transpose(c.e, M)
		for _, p := range fbBenchImpls(b) {
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				fbBench(b, p, T, 2*M*M*(T-1), func() { p.backward(a, s, c.psi, et, T, M) })
			})
		}
	}
}

func BenchmarkForwardBatch(b *testing.B) {
	const K = 36
	for _, M := range []int{9, 23, 45, 128, 256, 512, 1024} {
		T := max(3, fbBenchT(M)/K)
		psi := randSlice(newRand(1), T*K*M, 0, 1)
		e := randSlice(newRand(2), M*M, 0, 1)
		a, s := make([]float64, T*K*M), make([]float64, T*K)
		for _, p := range fbBenchImpls(b) {
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				fbBench(b, p, T*K, 2*M*M*(T-1)*K, func() { p.forwardBatch(a, s, psi, e, nil, T, K, M) })
			})
		}
	}
}

func BenchmarkTransitions(b *testing.B) {
	for _, M := range fbBenchM {
		T := fbBenchT(M)
		c := makeFB(newRand(1), "uniform", T, M)
		a, s, be := make([]float64, T*M), make([]float64, T), make([]float64, T*M)
		forwardGeneric(a, s, c.psi, c.e, T, M)
		backwardGeneric(be, s, c.psi, transpose(c.e, M), T, M)
		g, work := make([]float64, M*M), make([]float64, T*M)
		for _, p := range fbBenchImpls(b) {
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				fbBench(b, p, T, 2*M*M*(T-1), func() { p.transitions(g, c.e, a, be, c.psi, s, work, T, M) })
			})
		}
	}
}
