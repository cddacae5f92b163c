package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Every Viterbi operation is a single IEEE addition or an ordered
// comparison, so every tier must give δ and bp bit-identical to generic: all
// comparisons below are exact (NaN compares equal to NaN whatever its
// payload, since x86 and Go propagate different NaN payloads through
// additions; where a NaN appears must still agree).

// bpSentinel pre-fills bp: row 0 is never written (by any tier), so it must
// still hold the sentinel afterwards; other rows are all overwritten.
const bpSentinel = -7

// deltaSentinel pre-fills delta, so that an element a tier forgets to write
// shows up as a mismatch.
const deltaSentinel = 1234.5

// runViterbi runs p.viterbi on guarded outputs and returns them.
func runViterbi(t testing.TB, p *impl, s, tr []float64, T, M int) ([]float64, []int32) {
	t.Helper()
	dbuf, delta := guarded(T*M, nil)
	for i := range delta {
		delta[i] = deltaSentinel
	}
	bbuf, bp := guardedInt32(T * M)
	for i := range bp {
		bp[i] = bpSentinel
	}
	p.viterbi(delta, bp, s, tr, T, M)
	checkGuards(t, p.name+" viterbi delta", dbuf)
	checkGuardsInt32(t, p.name+" viterbi bp", bbuf)
	return delta, bp
}

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// checkViterbiTier compares tier p with generic on one problem, bit for bit.
func checkViterbiTier(t testing.TB, p *impl, what string, s, tr []float64, T, M int) {
	t.Helper()
	wd, wb := runViterbi(t, generic, s, tr, T, M)
	gd, gb := runViterbi(t, p, s, tr, T, M)
	for k := range wd {
		if !sameFloat(gd[k], wd[k]) {
			t.Fatalf("%s: %s T=%d M=%d: delta[t=%d][j=%d] = %v (%#x), want %v (%#x)", what, p.name, T, M,
				k/M, k%M, gd[k], math.Float64bits(gd[k]), wd[k], math.Float64bits(wd[k]))
		}
	}
	for k := range wb {
		if gb[k] != wb[k] {
			t.Fatalf("%s: %s T=%d M=%d: bp[t=%d][j=%d] = %d, want %d", what, p.name, T, M, k/M, k%M, gb[k], wb[k])
		}
	}
	for k := 0; k < M; k++ {
		if wb[k] != bpSentinel {
			t.Fatalf("%s: generic wrote bp row 0", what)
		}
	}
	checkViterbiMaxTier(t, p, what, s, tr, T, M, wd, wb)
}

// checkViterbiMaxTier checks p.viterbiMax (and generic's) against
// viterbiGeneric's δ (wd) bit for bit, and that the max-only backtrace
// finds the labelling and score Backtrace finds from the back-pointers wb.
func checkViterbiMaxTier(t testing.TB, p *impl, what string, s, tr []float64, T, M int, wd []float64, wb []int32) {
	t.Helper()
	for _, q := range []*impl{generic, p} {
		dbuf, delta := guarded(T*M, nil)
		for i := range delta {
			delta[i] = deltaSentinel
		}
		q.viterbiMax(delta, s, tr, T, M)
		checkGuards(t, q.name+" viterbiMax delta", dbuf)
		for k := range wd {
			if !sameFloat(delta[k], wd[k]) {
				t.Fatalf("%s: %s viterbiMax T=%d M=%d: delta[t=%d][j=%d] = %v (%#x), want %v (%#x)", what, q.name, T, M,
					k/M, k%M, delta[k], math.Float64bits(delta[k]), wd[k], math.Float64bits(wd[k]))
			}
		}
		if T == 0 || M == 0 {
			continue
		}
		want := make([]int32, T)
		ws := Backtrace(want, wd[(T-1)*M:T*M], wb, T, M)
		trT := make([]float64, M*M)
		for i := range M {
			for j := range M {
				trT[j*M+i] = tr[i*M+j]
			}
		}
		for _, tt := range [][]float64{nil, trT} {
			pbuf, path := guardedInt32(T)
			got := backtraceMax(path, delta, s, tr, tt, T, M)
			checkGuardsInt32(t, q.name+" backtraceMax path", pbuf)
			if !sameFloat(got, ws) {
				t.Fatalf("%s: %s T=%d M=%d transposed=%v: backtraceMax score %v, Backtrace %v", what, q.name, T, M, tt != nil, got, ws)
			}
			for k := range want {
				if path[k] != want[k] {
					t.Fatalf("%s: %s T=%d M=%d transposed=%v: backtraceMax path %v, Backtrace %v", what, q.name, T, M, tt != nil, path, want)
				}
			}
		}
	}
}

// viterbiCase builds s (T×M) and tr (M×M) of one kind.
type viterbiCase struct {
	name string
	gen  func(r *rand.Rand, n int) []float64 // n values
	// patch may overwrite some entries (forbidden transitions etc.).
	patch func(r *rand.Rand, s, tr []float64, T, M int)
}

func smallInts(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(r.IntN(3) - 1) // {-1, 0, 1}: many ties
	}
	return v
}

func withSpecials(r *rand.Rand, n int) []float64 {
	v := smallInts(r, n)
	for i := range v {
		if r.IntN(5) == 0 {
			v[i] = specials[r.IntN(len(specials))]
		}
	}
	return v
}

func viterbiCases() []viterbiCase {
	rnd := func(r *rand.Rand, n int) []float64 { return randSlice(r, n, -3, 3) }
	return []viterbiCase{
		{name: "random", gen: rnd},
		{name: "ties", gen: smallInts},
		{name: "zeros", gen: func(r *rand.Rand, n int) []float64 { return make([]float64, n) }},
		{name: "signedzeros", gen: func(r *rand.Rand, n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				if r.IntN(2) == 0 {
					v[i] = math.Copysign(0, -1)
				}
			}
			return v
		}},
		{name: "forbidden", gen: smallInts, patch: func(r *rand.Rand, s, tr []float64, T, M int) {
			// -Inf rows and columns of tr, -Inf entries in s.
			ninf := math.Inf(-1)
			for i := 0; i < M; i++ {
				if r.IntN(3) == 0 {
					for j := 0; j < M; j++ {
						tr[i*M+j] = ninf
					}
				}
				if r.IntN(3) == 0 {
					for k := 0; k < M; k++ {
						tr[k*M+i] = ninf
					}
				}
			}
			for k := range s {
				if r.IntN(4) == 0 {
					s[k] = ninf
				}
			}
		}},
		{name: "allforbidden", gen: rnd, patch: func(r *rand.Rand, s, tr []float64, T, M int) {
			for k := range tr {
				tr[k] = math.Inf(-1)
			}
		}},
		{name: "specials", gen: withSpecials},
		{name: "nan-first", gen: smallInts, patch: func(r *rand.Rand, s, tr []float64, T, M int) {
			// NaN in row 0 of tr (the first candidate) and in s.
			for j := 0; j < M; j++ {
				if r.IntN(2) == 0 {
					tr[j] = math.NaN()
				}
			}
			s[r.IntN(len(s))] = math.NaN()
		}},
		{name: "huge", gen: func(r *rand.Rand, n int) []float64 {
			big := []float64{1e300, -1e300, math.MaxFloat64, -math.MaxFloat64, 1, 0}
			v := make([]float64, n)
			for i := range v {
				v[i] = big[r.IntN(len(big))]
			}
			return v
		}},
		{name: "posinf", gen: smallInts, patch: func(r *rand.Rand, s, tr []float64, T, M int) {
			tr[r.IntN(len(tr))] = math.Inf(1)
			s[r.IntN(len(s))] = math.Inf(1)
			s[r.IntN(len(s))] = math.Inf(-1)
		}},
	}
}

func TestViterbiTiers(t *testing.T) {
	r := newRand(41)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, c := range viterbiCases() {
			for _, M := range labelCounts() {
				for _, T := range []int{1, 2, 3, 10} {
					s, tr := c.gen(r, T*M), c.gen(r, M*M)
					if c.patch != nil {
						c.patch(r, s, tr, T, M)
					}
					checkViterbiTier(t, p, c.name, s, tr, T, M)
				}
			}
		}
	})
}

// TestViterbiAllM sweeps M densely, so that every chunk size the kernels
// generate code for (1..5 vectors on AVX2, 1..12 on AVX-512, with and
// without a partial last vector, in every split of a row into chunks) runs.
func TestViterbiAllM(t *testing.T) {
	maxM := 400
	if testing.Short() {
		maxM = 120
	}
	r := newRand(46)
	forTiers(t, func(t *testing.T, p *impl) {
		for M := 1; M <= maxM; M++ {
			T := 3
			s, tr := smallInts(r, T*M), withSpecials(r, M*M)
			checkViterbiTier(t, p, "allM", s, tr, T, M)
		}
	})
}

// TestViterbiLong runs long sequences (values stay finite and δ grows, so
// late rows test large magnitudes too).
func TestViterbiLong(t *testing.T) {
	T := 100000
	if testing.Short() {
		T = 3000
	}
	r := newRand(42)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range []int{1, 2, 3, 4, 5, 8, 9, 13} {
			s, tr := smallInts(r, T*M), randSlice(r, M*M, -2, 1)
			checkViterbiTier(t, p, "long", s, tr, T, M)
			s = withSpecials(r, T*M)
			checkViterbiTier(t, p, "long-specials", s, tr, T, M)
		}
	})
}

// TestViterbiEmpty checks the tiers do nothing for T ≤ 0 or M ≤ 0.
func TestViterbiEmpty(t *testing.T) {
	forTiers(t, func(t *testing.T, p *impl) {
		d, b := []float64{5}, []int32{9}
		p.viterbi(d, b, []float64{1}, []float64{1}, 0, 1)
		p.viterbi(d, b, []float64{1}, []float64{1}, 3, 0)
		p.viterbiMax(d, []float64{1}, []float64{1}, 0, 1)
		p.viterbiMax(d, []float64{1}, []float64{1}, 3, 0)
		if d[0] != 5 || b[0] != 9 {
			t.Fatalf("T or M = 0 wrote output")
		}
	})
}

// pathScore sums the labelling's score left to right, in the order the
// recursion adds: s_0, then tr, s_t for each step. With that order the
// Viterbi score is exactly the maximum over labellings (rounding is monotone).
func pathScore(y []int32, s, tr []float64, M int) float64 {
	v := s[y[0]]
	for t := 1; t < len(y); t++ {
		v += tr[int(y[t-1])*M+int(y[t])]
		v += s[t*M+int(y[t])]
	}
	return v
}

// bruteViterbi enumerates all M^T labellings and returns the best score and
// the labelling the lowest-index rule picks: with exact (integer) scores,
// the reverse-lexicographically smallest of the optimal labellings (smallest
// last label, then smallest label before it, ...).
func bruteViterbi(s, tr []float64, T, M int) (float64, []int32) {
	y := make([]int32, T)
	best := math.Inf(-1)
	var arg []int32
	for {
		v := pathScore(y, s, tr, M)
		if arg == nil || v > best || (v == best && revLess(y, arg)) {
			best, arg = v, append(arg[:0], y...)
		}
		// next labelling (y[0] fastest)
		k := 0
		for k < T {
			y[k]++
			if int(y[k]) < M {
				break
			}
			y[k] = 0
			k++
		}
		if k == T {
			return best, arg
		}
	}
}

func revLess(a, b []int32) bool {
	for t := len(a) - 1; t >= 0; t-- {
		if a[t] != b[t] {
			return a[t] < b[t]
		}
	}
	return false
}

// TestViterbiBrute checks the exported Viterbi (kernel, argmax and
// backtrace) in every implementation against brute-force enumeration.
func TestViterbiBrute(t *testing.T) {
	r := newRand(43)
	for _, name := range Impls() {
		t.Run(name, func(t *testing.T) {
			useTier(t, name)
			for M := 1; M <= 4; M++ {
				for T := 1; T <= 6; T++ {
					for rep := 0; rep < 8; rep++ {
						exact := rep%2 == 0
						var s, tr []float64
						if exact {
							s, tr = smallInts(r, T*M), smallInts(r, M*M)
							if rep == 4 {
								tr[r.IntN(M*M)] = math.Inf(-1)
								s[r.IntN(T*M)] = math.Inf(-1)
							}
						} else {
							s, tr = randSlice(r, T*M, -2, 2), randSlice(r, M*M, -2, 2)
						}
						path := make([]int32, T)
						delta := make([]float64, T*M)
						bp := make([]int32, T*M)
						got := Viterbi(path, delta, bp, s, tr, T, M)
						want, wpath := bruteViterbi(s, tr, T, M)
						if got != want {
							t.Fatalf("T=%d M=%d: score %v, brute force %v", T, M, got, want)
						}
						for _, l := range path {
							if l < 0 || int(l) >= M {
								t.Fatalf("T=%d M=%d: label %d out of range", T, M, l)
							}
						}
						if ps := pathScore(path, s, tr, M); ps != got {
							t.Fatalf("T=%d M=%d: path %v scores %v, Viterbi returned %v", T, M, path, ps, got)
						}
						if exact && fmt.Sprint(path) != fmt.Sprint(wpath) {
							t.Fatalf("T=%d M=%d: path %v, lowest-index optimum %v", T, M, path, wpath)
						}
					}
				}
			}
		})
	}
}

func FuzzViterbi(f *testing.F) {
	f.Add(uint8(4), uint8(5), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add(uint8(44), uint8(3), []byte{0xfc, 0x0c, 0x1d, 0x2e, 0x3f, 0xff, 0xf0})
	f.Add(uint8(8), uint8(1), []byte{0})
	f.Add(uint8(0), uint8(11), []byte{0xcd, 0xdc, 0x1c, 0x2c})
	f.Fuzz(func(t *testing.T, m, tt uint8, raw []byte) {
		if len(raw) == 0 {
			return
		}
		M, T := 1+int(m)%70, 1+int(tt)%12
		vals := floatsFromBytes(raw)
		// Mostly small integers (ties), some -Inf, specials and raw floats.
		val := func(k int) float64 {
			b := raw[k%len(raw)] ^ byte(k*131)
			switch lo := b & 15; {
			case lo < 12:
				return float64(int(b>>4) - 8)
			case lo == 12:
				return math.Inf(-1)
			case lo == 13 || len(vals) == 0:
				return specials[int(b>>4)%len(specials)]
			default:
				return vals[k%len(vals)]
			}
		}
		s, tr := make([]float64, T*M), make([]float64, M*M)
		for k := range s {
			s[k] = val(k)
		}
		for k := range tr {
			tr[k] = val(len(s) + k)
		}
		for _, p := range asmImpls(t) {
			checkViterbiTier(t, p, "fuzz", s, tr, T, M)
		}
	})
}

// BenchmarkViterbi reports ns per position of the kernel (δ and bp, no
// backtrace) for each implementation.
func BenchmarkViterbi(b *testing.B) {
	for _, M := range []int{9, 23, 45, 128, 256} {
		T := 200
		r := newRand(44)
		s, tr := randSlice(r, T*M, -3, 3), randSlice(r, M*M, -3, 0)
		delta, bp := make([]float64, T*M), make([]int32, T*M)
		for _, p := range all {
			if !p.available {
				continue
			}
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				for b.Loop() {
					p.viterbi(delta, bp, s, tr, T, M)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(T), "ns/pos")
			})
			path := make([]int32, T)
			b.Run(fmt.Sprintf("M=%d/%s-max", M, p.name), func(b *testing.B) {
				for b.Loop() {
					p.viterbiMax(delta, s, tr, T, M)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(T), "ns/pos")
			})
			b.Run(fmt.Sprintf("M=%d/%s-max+backtrace", M, p.name), func(b *testing.B) {
				for b.Loop() {
					p.viterbiMax(delta, s, tr, T, M)
					backtraceMax(path, delta, s, tr, nil, T, M)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(T), "ns/pos")
			})
		}
	}
}
