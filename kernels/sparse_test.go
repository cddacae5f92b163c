package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// csr is a sequence's features in CSR form over a weight matrix of rows rows.
type csr struct {
	T, rows int
	ptr     []int32
	ids     []int32
	vals    []float64
}

// randCSR makes T positions with 0..maxF features each (some positions get
// none), ids uniform over rows, always including ids 0 and rows−1 and a
// duplicate id inside one position. With sp > 0, that fraction of the values
// are specials.
func randCSR(r *rand.Rand, T, rows, maxF int, sp float64) csr {
	c := csr{T: T, rows: rows, ptr: make([]int32, T+1)}
	for t := 0; t < T; t++ {
		n := r.IntN(maxF + 1)
		if r.IntN(5) == 0 {
			n = 0
		}
		for k := 0; k < n; k++ {
			id := int32(r.IntN(rows))
			switch r.IntN(8) {
			case 0:
				id = 0
			case 1:
				id = int32(rows - 1)
			case 2:
				if k > 0 { // a duplicate of an earlier feature of this position
					id = c.ids[int(c.ptr[t])+r.IntN(k)]
				}
			}
			c.ids = append(c.ids, id)
			v := r.NormFloat64()
			if r.IntN(6) == 0 {
				v = 0
			}
			if sp > 0 && r.Float64() < sp {
				v = specials[r.IntN(len(specials))]
			}
			c.vals = append(c.vals, v)
		}
		c.ptr[t+1] = int32(len(c.ids))
	}
	return c
}

// fillSpecial returns n normal values, a fraction sp of them specials.
func fillSpecial(r *rand.Rand, n int, sp float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
		if sp > 0 && r.Float64() < sp {
			x[i] = specials[r.IntN(len(specials))]
		}
	}
	return x
}

// sparseTerm is one product a·b added to an output element; a is vals[f]
// (gather) or the rounded c·vals[f] (scatter), which the tiers compute the
// same way.
type sparseTerm struct{ a, b float64 }

// sparseOK says whether got is an acceptable value for an output element
// that starts at s0 and has the terms added in order, given the reference's
// result want.
//
// Tolerance. The reference rounds each product and then each sum; a tier
// fuses them (one rounding per term). Both are recursive summations of the
// n+1 values s0, p_1..p_n, so each is within γ_n·B of the exact sum, with
// B = |s0| + Σ|p_i|, and the reference is off by u·|p_i| more for the
// rounding of each product (u = 2⁻⁵³). Hence
// |got − want| ≤ (2n+1)·u·B·(1+O(n·u)) ≤ (n+1)·2.3e-16·B; products in the
// subnormal range are rounded to an absolute 2⁻¹⁰⁷⁵ each, covered by
// (n+1)·1e-323.
//
// Specials. An element no feature touches must keep its bits. A NaN product
// (a NaN input or 0·Inf) is NaN fused or not, so NaN must come out. A product
// of finite inputs that overflows unfused may not overflow fused (and partial
// sums near MaxFloat64 may round to Inf in one and not the other): such
// elements are not checked. Otherwise infinite inputs give the same result
// class both ways: ±Inf, or NaN when both signs meet.
func sparseOK(got, want, s0 float64, terms []sparseTerm) bool {
	if len(terms) == 0 {
		return math.Float64bits(got) == math.Float64bits(s0)
	}
	nan, inf := math.IsNaN(s0), math.IsInf(s0, 0)
	bound := 0.0
	if !nan && !inf {
		bound = math.Abs(s0)
	}
	for _, t := range terms {
		p := t.a * t.b
		switch {
		case math.IsNaN(p):
			nan = true
		case math.IsInf(t.a, 0) || math.IsInf(t.b, 0):
			inf = true
		case math.IsInf(p, 0):
			return true // overflow of finite inputs: see above
		default:
			bound += math.Abs(p)
		}
	}
	if nan {
		return math.IsNaN(got)
	}
	if bound > math.MaxFloat64/4 {
		return true
	}
	if inf {
		return got == want || math.IsNaN(got) && math.IsNaN(want)
	}
	n := float64(len(terms) + 1)
	return math.Abs(got-want) <= n*2.3e-16*bound+n*1e-323
}

// checkGather runs p.gather on a guarded copy of s0 and compares it with the
// generic gather, element by element.
func checkGather(t testing.TB, what string, p *impl, s0, w []float64, ld int, c csr, M int) {
	t.Helper()
	buf, s := guarded(len(s0), s0)
	p.gather(s, w, ld, c.ptr, c.ids, c.vals, c.T, M)
	checkGuards(t, what+": s", buf)
	want := append([]float64(nil), s0...)
	gatherGeneric(want, w, ld, c.ptr, c.ids, c.vals, c.T, M)
	var terms []sparseTerm
	for tt := 0; tt < c.T; tt++ {
		for j := 0; j < M; j++ {
			terms = terms[:0]
			for f := c.ptr[tt]; f < c.ptr[tt+1]; f++ {
				terms = append(terms, sparseTerm{c.vals[f], w[int(c.ids[f])*ld+j]})
			}
			k := tt*M + j
			if !sparseOK(s[k], want[k], s0[k], terms) {
				t.Fatalf("%s: s[%d][%d] = %v, want %v (from %v, %d terms %v)", what, tt, j, s[k], want[k], s0[k], len(terms), terms)
			}
		}
	}
}

// checkScatter runs p.scatter on a guarded copy of g0 and compares it with
// the generic scatter; every element of g, including the columns M..ld−1
// and the rows no feature touches, is checked.
func checkScatter(t testing.TB, what string, p *impl, g0 []float64, ld int, pm []float64, c csr, cc float64, M int) {
	t.Helper()
	buf, g := guarded(len(g0), g0)
	p.scatter(g, ld, pm, c.ptr, c.ids, c.vals, cc, c.T, M)
	checkGuards(t, what+": g", buf)
	want := append([]float64(nil), g0...)
	scatterGeneric(want, ld, pm, c.ptr, c.ids, c.vals, cc, c.T, M)
	// For each row of g, the features that hit it, in order.
	type hit struct{ t, f int }
	hits := make([][]hit, c.rows)
	for tt := 0; tt < c.T; tt++ {
		for f := int(c.ptr[tt]); f < int(c.ptr[tt+1]); f++ {
			hits[c.ids[f]] = append(hits[c.ids[f]], hit{tt, f})
		}
	}
	var terms []sparseTerm
	for k := range g {
		row, j := k/ld, k%ld
		terms = terms[:0]
		if j < M {
			for _, h := range hits[row] {
				terms = append(terms, sparseTerm{cc * c.vals[h.f], pm[h.t*M+j]})
			}
		}
		if !sparseOK(g[k], want[k], g0[k], terms) {
			t.Fatalf("%s: g[%d][%d] = %v, want %v (from %v, %d terms %v)", what, row, j, g[k], want[k], g0[k], len(terms), terms)
		}
	}
}

// sparseLDs returns the row strides tested for M: M, M+1, M rounded up to
// a multiple of 8, M+13.
func sparseLDs(M int) []int {
	lds := []int{M, M + 1}
	if r := (M + 7) &^ 7; r != M && r != M+1 {
		lds = append(lds, r)
	}
	return append(lds, M+13)
}

func TestGatherScatter(t *testing.T) {
	r := newRand(7)
	cs := []float64{1, -0.5, 0, math.Copysign(0, -1), -3.25, 1e-3}
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range labelCounts() {
			for _, ld := range sparseLDs(M) {
				for _, T := range []int{1, 2, 5, 40} {
					for _, sp := range []float64{0, 0.05} {
						rows := 1 + r.IntN(9)
						c := randCSR(r, T, rows, 7, sp)
						// w and g end exactly with their last row.
						n := (rows-1)*ld + M
						w := fillSpecial(r, n, sp/4)
						s0 := fillSpecial(r, T*M, sp/4)
						what := fmt.Sprintf("M=%d ld=%d T=%d rows=%d sp=%v", M, ld, T, rows, sp)
						checkGather(t, "gather "+what, p, s0, w, ld, c, M)

						g0 := fillSpecial(r, n, sp/4)
						pm := fillSpecial(r, T*M, sp/4)
						cc := cs[r.IntN(len(cs))]
						checkScatter(t, fmt.Sprintf("scatter %s c=%v", what, cc), p, g0, ld, pm, c, cc, M)
					}
				}
			}
		}
	})
}

// TestGatherScatterLong runs one long sequence (many positions, many
// features each, a large weight matrix).
func TestGatherScatterLong(t *testing.T) {
	r := newRand(8)
	T := 100000
	if testing.Short() {
		T = 3000
	}
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range []int{3, 9, 45} {
			ld := M + 1
			rows := 5000
			c := randCSR(r, T, rows, 12, 0)
			n := (rows-1)*ld + M
			w := randSlice(r, n, -1, 1)
			s0 := randSlice(r, T*M, -1, 1)
			checkGather(t, fmt.Sprintf("gather long M=%d", M), p, s0, w, ld, c, M)
			pm := randSlice(r, T*M, 0, 1)
			checkScatter(t, fmt.Sprintf("scatter long M=%d", M), p, w, ld, pm, c, -0.75, M)
			if testing.Short() {
				break
			}
		}
	})
}

// TestGatherScatterSpecialRows puts a special value in every position of a
// weight row (and of s, p and g) and checks it propagates like the
// reference's, including Inf·0 = NaN and Inf − Inf.
func TestGatherScatterSpecialRows(t *testing.T) {
	r := newRand(9)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range []int{1, 5, 9, 17, 45} {
			for _, sv := range specials {
				rows, ld, T := 4, M+3, 6
				n := (rows-1)*ld + M
				w := randSlice(r, n, -1, 1)
				for j := 0; j < M; j++ {
					w[2*ld+j] = sv
				}
				c := csr{T: T, rows: rows, ptr: []int32{0, 2, 2, 5, 6, 9, 11}}
				c.ids = []int32{2, 0, 2, 2, 3, 1, 2, 0, 3, 3, 2}
				c.vals = []float64{1, 2, -1, 0, sv, sv, -2, 1, 0, sv, math.Inf(1)}
				s0 := randSlice(r, T*M, -1, 1)
				s0[3*M] = sv
				checkGather(t, fmt.Sprintf("gather M=%d special %v", M, sv), p, s0, w, ld, c, M)
				pm := randSlice(r, T*M, -1, 1)
				pm[4*M+M-1] = sv
				for _, cc := range []float64{1, 0, -2, sv} {
					checkScatter(t, fmt.Sprintf("scatter M=%d special %v c=%v", M, sv, cc), p, w, ld, pm, c, cc, M)
				}
			}
		}
	})
}

func FuzzSparse(f *testing.F) {
	f.Add(uint8(9), uint8(0), uint8(3), -1.5, []byte{0x81, 2, 3, 0x82, 0x80, 5, 5, 5, 0x87, 1})
	f.Add(uint8(45), uint8(13), uint8(7), 0.0, []byte{0x80, 0x80, 0x86, 0x06, 0x06, 0x86})
	f.Add(uint8(0), uint8(2), uint8(0), math.Inf(-1), []byte{0x80, 0x00, 0x80})
	f.Add(uint8(255), uint8(255), uint8(255), 3.0, []byte{0x81, 0x9f, 0x11, 0x22, 0x33, 0xff, 0x7f, 0x80, 0x81})
	vt := append([]float64{0.5, -2, 3.75, -0.125, 1e10, -1e-10}, specials...)
	f.Fuzz(func(t *testing.T, m, extra, nrows uint8, cc float64, raw []byte) {
		M := 1 + int(m)%70
		ld := M + int(extra)%17
		rows := 1 + int(nrows)%16
		// Each byte is a feature: bit 7 starts a new position first, the low
		// bits pick the id and the value.
		c := csr{rows: rows, ptr: []int32{0}}
		for k, b := range raw {
			if b&0x80 != 0 || k == 0 {
				c.ptr = append(c.ptr, int32(len(c.ids)))
				c.T++
			}
			if b&0x40 != 0 { // an empty position
				continue
			}
			c.ids = append(c.ids, int32(int(b&0x3f)%rows))
			c.vals = append(c.vals, vt[(int(b)*7+k)%len(vt)])
			c.ptr[c.T] = int32(len(c.ids))
		}
		if c.T == 0 {
			return
		}
		r := newRand(uint64(len(raw)))
		n := (rows-1)*ld + M
		w := fillSpecial(r, n, 0.02)
		s0 := fillSpecial(r, c.T*M, 0.02)
		pm := fillSpecial(r, c.T*M, 0.02)
		for _, p := range asmImpls(t) {
			checkGather(t, p.name+" gather", p, s0, w, ld, c, M)
			checkScatter(t, p.name+" scatter", p, w, ld, pm, c, cc, M)
		}
	})
}

// TestSparseOK makes sure the checker itself rejects what it must.
func TestSparseOK(t *testing.T) {
	one := []sparseTerm{{1, 1}}
	cases := []struct {
		got, want, s0 float64
		terms         []sparseTerm
		ok            bool
	}{
		{1, 1, 1, nil, true},
		{math.Nextafter(1, 2), 1, 1, nil, false}, // untouched must keep its bits
		{2, 2, 1, one, true},                     // exact
		{2 + 4.5e-16, 2, 1, one, true},           // within (n+1)·2.3e-16·B = 9.2e-16
		{2 + 1.5e-15, 2, 1, one, false},          // beyond
		{math.NaN(), 2, 1, one, false},           // NaN where none belongs
		{2, math.NaN(), math.NaN(), one, false},  // NaN must propagate
		{math.Inf(1), math.Inf(1), 1, []sparseTerm{{math.Inf(1), 2}}, true},
		{math.NaN(), math.Inf(1), 1, []sparseTerm{{math.Inf(1), 2}}, false},
		{math.NaN(), math.NaN(), 1, []sparseTerm{{0, math.Inf(1)}}, true},
		{5, math.NaN(), 1, []sparseTerm{{0, math.Inf(1)}}, false},
	}
	for i, c := range cases {
		if got := sparseOK(c.got, c.want, c.s0, c.terms); got != c.ok {
			t.Errorf("case %d: sparseOK(%v, %v, %v, %v) = %v, want %v", i, c.got, c.want, c.s0, c.terms, got, c.ok)
		}
	}
}

// Benchmarks in the setting of machine-limits §4 (d, d2): a 500 000 × M
// weight matrix (rows padded to 8 float64 = one cache line) far beyond the
// caches, F features per position, ids uniform or Zipf(1) over a random
// permutation of the ids. Each op is a window of benchT positions of a long
// sequence, so consecutive ops touch different rows; ns/pos is the figure to
// compare with the C one.
const (
	benchRows = 500000
	benchT    = 1000
	benchSeqs = 60 // windows per CSR
)

var benchW = map[int][]float64{}

func benchMatrix(ld int) []float64 {
	if w, ok := benchW[ld]; ok {
		return w
	}
	clear(benchW) // keep at most one (M = 256 is 1 GB)
	w := make([]float64, benchRows*ld)
	r := newRand(11)
	for i := range w {
		w[i] = r.Float64() - 0.5
	}
	benchW[ld] = w
	return w
}

func benchCSR(F int, zipf bool) csr {
	r := newRand(uint64(12 + F))
	n := benchT * benchSeqs
	c := csr{T: n, rows: benchRows, ptr: make([]int32, n+1)}
	var cdf []float64
	var perm []int
	if zipf {
		cdf = make([]float64, benchRows)
		sum := 0.0
		for k := range cdf {
			sum += 1 / float64(k+1)
			cdf[k] = sum
		}
		for k := range cdf {
			cdf[k] /= sum
		}
		perm = r.Perm(benchRows)
	}
	for t := 0; t < n; t++ {
		for k := 0; k < F; k++ {
			id := r.IntN(benchRows)
			if zipf {
				u := r.Float64()
				lo, hi := 0, benchRows-1
				for lo < hi {
					m := (lo + hi) / 2
					if cdf[m] < u {
						lo = m + 1
					} else {
						hi = m
					}
				}
				id = perm[lo]
			}
			c.ids = append(c.ids, int32(id))
			c.vals = append(c.vals, 1)
		}
		c.ptr[t+1] = int32(len(c.ids))
	}
	return c
}

func benchSparse(b *testing.B, scatter bool) {
	for _, M := range []int{9, 45, 256} {
		ld := (M + 7) &^ 7
		for _, F := range []int{20, 60} {
			for _, dist := range []string{"uniform", "zipf"} {
				c := benchCSR(F, dist == "zipf")
				s := make([]float64, benchT*M)
				p := randSlice(newRand(13), benchT*M, 0, 1)
				for _, im := range all {
					if !im.available {
						continue
					}
					b.Run(fmt.Sprintf("M=%d/F=%d/%s/%s", M, F, dist, im.name), func(b *testing.B) {
						w := benchMatrix(ld)
						b.ResetTimer()
						for it := 0; it < b.N; it++ {
							o := (it % benchSeqs) * benchT
							ptr := c.ptr[o : o+benchT+1]
							if scatter {
								im.scatter(w, ld, p, ptr, c.ids, c.vals, 1e-9, benchT, M)
							} else {
								im.gather(s, w, ld, ptr, c.ids, c.vals, benchT, M)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchT), "ns/pos")
					})
				}
			}
		}
	}
}

func BenchmarkGather(b *testing.B)  { benchSparse(b, false) }
func BenchmarkScatter(b *testing.B) { benchSparse(b, true) }

// BenchmarkGatherHot and BenchmarkScatterHot time the exported call a
// trainer makes per sequence on its hot weight rows, in the shape of
// CoNLL-2000 chunking (7000 rows of M = 22 in cache, sequences of 10..40
// positions with 10 features each, Zipf ids, values all 1 given as a short
// slice of ones): CSR.Gather and CSR.Scatter, whose checks are O(1).
func BenchmarkGatherHot(b *testing.B)  { benchHot(b, false) }
func BenchmarkScatterHot(b *testing.B) { benchHot(b, true) }

func benchHot(b *testing.B, scatter bool) {
	const rows, M, F, nseq = 7000, 22, 10, 300
	r := newRand(14)
	z := rand.NewZipf(r, 1.1, 1, rows-1)
	seq, ptr, ids := []int{0}, []int32{0}, []int32(nil)
	longest := 0
	for range nseq {
		T := 10 + r.IntN(31)
		for range T {
			for range F {
				ids = append(ids, int32(z.Uint64()))
			}
			ptr = append(ptr, int32(len(ids)))
		}
		seq = append(seq, len(ptr)-1)
		longest = max(longest, T*F)
	}
	cs, err := NewCSR(seq, ptr, ids, rows)
	if err != nil {
		b.Fatal(err)
	}
	ones := make([]float64, longest)
	for k := range ones {
		ones[k] = 1
	}
	w := randSlice(r, rows*M, -1, 1)
	s, p := make([]float64, 40*M), randSlice(r, 40*M, 0, 1)
	for _, name := range Impls() {
		b.Run(name, func(b *testing.B) {
			useTier(b, name)
			k, pos := 0, 0
			for b.Loop() {
				if scatter {
					cs.Scatter(w, M, p, ones, -1e-9, k, M)
				} else {
					cs.Gather(s, w, M, ones, k, M)
				}
				pos += cs.Positions(k)
				k = (k + 1) % nseq
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pos), "ns/pos")
		})
	}
}
