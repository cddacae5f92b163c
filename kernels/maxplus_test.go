package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The maxplus family: MaxPlusCSR. Every tier must give generic's y and arg
// bit for bit (values are only added once and compared, so there is no
// rounding to allow for), except for the sign of a zero that ties at an
// index repeated in a row (documented as unspecified); the reference itself
// is checked against a two-pass definition (the row maximum, then the
// lowest index attaining it).

var negZero = math.Copysign(0, -1)

// mpCase is one MaxPlusCSR problem: initial candidates (y0, arg0), x and a
// CSR matrix.
type mpCase struct {
	y0   []float64
	arg0 []int32
	x    []float64
	c    spm
}

// distinctRows reports whether no row of c repeats an index.
func distinctRows(c spm) bool {
	rows := len(c.ptr) - 1
	for r := range rows {
		seen := map[int32]bool{}
		for _, i := range c.idx[c.ptr[r]:c.ptr[r+1]] {
			if seen[i] {
				return false
			}
			seen[i] = true
		}
	}
	return true
}

// twoPass is an independent definition of a row's result when its indices
// are distinct: the largest value of all candidates (NaN as -Inf, the
// initial one included), then among the candidates equal to it the one with
// the lowest index as uint32 (the initial one on a tie of indices).
func twoPass(y0 float64, arg0 int32, x []float64, idx []int32, v []float64) (float64, int32) {
	canon := func(f float64) float64 {
		if math.IsNaN(f) {
			return math.Inf(-1)
		}
		return f
	}
	m := canon(y0)
	for k, i := range idx {
		m = math.Max(m, canon(x[i]+v[k]))
	}
	best, bi := 0.0, int32(-1)
	found := false
	if canon(y0) == m {
		best, bi, found = canon(y0), arg0, true
	}
	for k, i := range idx {
		if c := canon(x[i] + v[k]); c == m && (!found || uint32(i) < uint32(bi)) {
			best, bi, found = c, i, true
		}
	}
	return best, bi
}

// testMaxPlus runs generic (checked against twoPass when the rows have
// distinct indices) and p.maxPlusCSR on guarded y and arg, and compares
// them bit for bit (zeros of either sign where an index repeats).
func testMaxPlus(t testing.TB, what string, p *impl, mc mpCase) {
	t.Helper()
	rows := len(mc.c.ptr) - 1
	want, wantArg := slices.Clone(mc.y0), slices.Clone(mc.arg0)
	maxPlusCSRGeneric(want, wantArg, mc.x, mc.c.ptr, mc.c.idx, mc.c.v)
	distinct := distinctRows(mc.c)
	if distinct {
		for r := range rows {
			lo, hi := mc.c.ptr[r], mc.c.ptr[r+1]
			v, i := twoPass(mc.y0[r], mc.arg0[r], mc.x, mc.c.idx[lo:hi], mc.c.v[lo:hi])
			if !sameBits(want[r], v) || wantArg[r] != i {
				t.Fatalf("%s: generic row %d = (%v, %d), two-pass (%v, %d)", what, r, want[r], wantArg[r], v, i)
			}
		}
	}
	for r := range want {
		if math.IsNaN(want[r]) {
			t.Fatalf("%s: generic row %d is NaN", what, r)
		}
	}
	if p == nil {
		return
	}
	buf, y := guarded(rows, mc.y0)
	abuf, arg := guardedInt32(rows)
	copy(arg, mc.arg0)
	p.maxPlusCSR(y, arg, mc.x, mc.c.ptr, mc.c.idx, mc.c.v)
	checkGuards(t, what, buf)
	checkGuardsInt32(t, what, abuf)
	for r := range want {
		same := sameBits(y[r], want[r]) || (!distinct && y[r] == 0 && want[r] == 0)
		if !same || arg[r] != wantArg[r] {
			t.Fatalf("%s: row %d = (%v %#x, %d), generic (%v %#x, %d)", what, r,
				y[r], math.Float64bits(y[r]), arg[r], want[r], math.Float64bits(want[r]), wantArg[r])
		}
	}
}

// sortedSpm is randSpm with each row's indices distinct and increasing (as
// the engine's columns of exceptions are); a row asks for at most n.
func sortedSpm(r *rand.Rand, rows, n, off int, lens func(int) int) spm {
	c := randSpm(r, rows, n, off, func(int) int { return 0 })
	c.idx, c.v = c.idx[:off], c.v[:off]
	for row := range rows {
		k := min(lens(row), n)
		for _, i := range r.Perm(n)[:k] {
			c.idx = append(c.idx, int32(i))
		}
		slices.Sort(c.idx[len(c.idx)-k:])
		c.v = append(c.v, randSlice(r, k, -1, 1)...)
		c.ptr[row+1] = int32(len(c.idx))
	}
	return c
}

// randInit makes initial candidates: random values, indices in [0, n) or
// negative (no index).
func randInit(r *rand.Rand, rows, n int) ([]float64, []int32) {
	y, arg := randSlice(r, rows, -1, 1), make([]int32, rows)
	for i := range arg {
		arg[i] = int32(r.IntN(n))
		switch r.IntN(4) {
		case 0:
			arg[i] = -1
		case 1:
			y[i] = math.Inf(-1)
		}
	}
	return y, arg
}

func TestMaxPlusCSR(t *testing.T) {
	r := newRand(41)
	shapes := map[string]func(int) int{
		"fixed12": func(int) int { return 12 },
		"1..40":   func(row int) int { return 1 + row%40 },
		"0..40":   func(int) int { return r.IntN(41) },
		"sparse":  func(int) int { return []int{0, 0, 0, 1, 7, 8, 9, 16, 17}[r.IntN(9)] },
		"empty":   func(int) int { return 0 },
	}
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range append(labelCounts(), 1208) {
			x := randSlice(r, M, -1, 1)
			for name, shape := range shapes {
				for _, off := range []int{0, 5} {
					y0, arg0 := randInit(r, M, M)
					testMaxPlus(t, fmt.Sprintf("sorted %s M=%d off=%d", name, M, off), p,
						mpCase{y0, arg0, x, sortedSpm(r, M, M, off, shape)})
					// Repeated indices in any order.
					testMaxPlus(t, fmt.Sprintf("random %s M=%d off=%d", name, M, off), p,
						mpCase{y0, arg0, x, randSpm(r, M, M, off, shape)})
				}
			}
		}
		// Every row length 0..40 at every alignment of its start, and
		// blocks of 1..9 rows (the vector tiers do 4 or 8 at a time).
		for off := range 9 {
			for n := 0; n <= 40; n++ {
				x := randSlice(r, 50, -2, 2)
				rows := 1 + (n+off)%9
				y0, arg0 := randInit(r, rows, len(x))
				lens := func(row int) int { return []int{n, n, 1}[row%3] }
				testMaxPlus(t, fmt.Sprintf("len %d off %d", n, off), p, mpCase{y0, arg0, x, sortedSpm(r, rows, len(x), off, lens)})
			}
		}
	})
}

// TestMaxPlusCSRTies draws x, v and y from a few small values with −0 and
// -Inf, so that rows are full of exact ties: equal values at different
// indices, −0 against +0, -Inf entries against a -Inf y with and without an
// index. The winner must be the lowest index, with its own sign of zero.
func TestMaxPlusCSRTies(t *testing.T) {
	r := newRand(42)
	vals := []float64{-1, 0, negZero, 1, math.Inf(-1)}
	pick := func() float64 { return vals[r.IntN(len(vals))] }
	forTiers(t, func(t *testing.T, p *impl) {
		for trial := range 3000 {
			n := 1 + r.IntN(40)
			rows := 1 + r.IntN(20)
			x := make([]float64, n)
			for i := range x {
				x[i] = pick()
			}
			var c spm
			if trial%2 == 0 {
				c = sortedSpm(r, rows, n, r.IntN(3), func(int) int { return r.IntN(n + 1) })
			} else {
				c = randSpm(r, rows, n, r.IntN(3), func(int) int { return r.IntN(25) })
			}
			for k := range c.v {
				c.v[k] = pick()
			}
			y0, arg0 := make([]float64, rows), make([]int32, rows)
			for i := range y0 {
				y0[i] = pick()
				arg0[i] = []int32{-1, int32(r.IntN(n)), -7, 0, int32(n - 1)}[r.IntN(5)]
			}
			testMaxPlus(t, fmt.Sprintf("trial %d", trial), p, mpCase{y0, arg0, x, c})
		}
		// All -Inf: a row's y stays -Inf; arg −1 takes the first index,
		// another arg keeps unless an index is lower.
		x := []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
		c := spm{ptr: []int32{0, 3, 5, 5, 6}, idx: []int32{0, 1, 2, 2, 1, 2}, v: []float64{0, 0, 0, 0, 0, 0}}
		for _, a := range []int32{-1, 0, 1, 2, 5, -3} {
			inf := math.Inf(-1)
			testMaxPlus(t, fmt.Sprintf("all -Inf arg %d", a), p, mpCase{[]float64{inf, inf, inf, inf}, []int32{a, a, a, a}, x, c})
		}
	})
}

// TestMaxPlusCSRSpecials puts a special value in x, v or y at every lane
// position of rows of every length 1..17: NaN counts as -Inf, +Inf wins,
// huge values stay finite or overflow the same on every tier.
func TestMaxPlusCSRSpecials(t *testing.T) {
	r := newRand(43)
	all := append(slices.Clone(specials), negZero, math.NaN(), math.Inf(1), math.Inf(-1))
	forTiers(t, func(t *testing.T, p *impl) {
		for _, sv := range all {
			for n := 1; n <= 17; n++ {
				for pos := range n {
					x := randSlice(r, 20, -1, 1)
					c := sortedSpm(r, 3, len(x), 1, func(int) int { return n })
					y0, arg0 := randInit(r, 3, len(x))
					x[c.idx[int(c.ptr[0])+pos]] = sv
					testMaxPlus(t, fmt.Sprintf("x special %v n=%d pos=%d", sv, n, pos), p, mpCase{y0, arg0, x, c})
					c.v[int(c.ptr[1])+pos] = sv
					c.v[int(c.ptr[2])+n-1-pos] = -sv
					y0[pos%3] = sv
					testMaxPlus(t, fmt.Sprintf("v,y special %v n=%d pos=%d", sv, n, pos), p, mpCase{y0, arg0, x, c})
				}
			}
		}
	})
}

// TestMaxPlusCSRLong: the Czech tied size (M = 1,208 rows, 14,718
// entries), and many short rows.
func TestMaxPlusCSRLong(t *testing.T) {
	r := newRand(44)
	M := 1208
	cz := sortedSpm(r, M, M, 0, func(int) int { return r.IntN(25) })
	x := randSlice(r, M, -50, 0)
	y0, arg0 := randInit(r, M, M)
	rows := 100000
	if testing.Short() {
		rows = 3000
	}
	many := sortedSpm(r, rows, 30, 0, func(int) int { return r.IntN(6) })
	y1, arg1 := randInit(r, rows, 30)
	forTiers(t, func(t *testing.T, p *impl) {
		testMaxPlus(t, "czech", p, mpCase{y0, arg0, x, cz})
		testMaxPlus(t, "many rows", p, mpCase{y1, arg1, x[:30], many})
	})
}

// TestMaxPlusCSRAPI checks the exported functions: the checked form and
// Rows.MaxPlus give the generic result on the active tier, and the checks
// panic.
func TestMaxPlusCSRAPI(t *testing.T) {
	r := newRand(45)
	M := 40
	c := sortedSpm(r, M, M, 2, func(int) int { return r.IntN(20) })
	x := randSlice(r, M, -1, 1)
	y0, arg0 := randInit(r, M, M)
	want, wantArg := slices.Clone(y0), slices.Clone(arg0)
	maxPlusCSRGeneric(want, wantArg, x, c.ptr, c.idx, c.v)
	y1, a1 := slices.Clone(y0), append(slices.Clone(arg0), 77) // arg may be longer
	y2, a2 := slices.Clone(y0), slices.Clone(arg0)
	MaxPlusCSR(y1, a1, x, c.ptr, c.idx, c.v)
	rows, v := checkedRows(t, c, M)
	rows.MaxPlus(y2, a2, x, v)
	checkSameBits(t, "MaxPlusCSR", y1, want)
	checkSameBits(t, "Rows.MaxPlus", y2, want)
	if !slices.Equal(a1[:M], wantArg) || a1[M] != 77 || !slices.Equal(a2, wantArg) {
		t.Fatalf("arg: %v and %v, want %v", a1, a2, wantArg)
	}
	MaxPlusCSR(nil, nil, x, nil, nil, nil) // no rows: nothing to check or do

	y, a := make([]float64, 2), make([]int32, 2)
	mustPanicT(t, "short arg", "len(arg)", func() { MaxPlusCSR(y, a[:1], x, []int32{0, 1, 3}, []int32{0, 1, 2}, x[:3]) })
	mustPanicT(t, "short ptr", "len(ptr)", func() { MaxPlusCSR(y, a, x, []int32{0, 1}, []int32{0}, x[:1]) })
	mustPanicT(t, "short idx", "len(idx)", func() { MaxPlusCSR(y, a, x, []int32{0, 1, 3}, []int32{0, 1}, x[:3]) })
	mustPanicT(t, "short v", "len(v)", func() { MaxPlusCSR(y, a, x, []int32{0, 1, 3}, []int32{0, 1, 2}, x[:2]) })
	mustPanicT(t, "negative ptr", "ptr[0]", func() { MaxPlusCSR(y, a, x, []int32{-1, 1, 3}, []int32{0, 1, 2}, x[:3]) })
	r3, err := NewRows([]int32{0, 1, 3}, []int32{0, 1, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	mustPanicT(t, "Rows: short arg", "len(arg)", func() { r3.MaxPlus(y, a[:1], x, x[:3]) })
	mustPanicT(t, "Rows: short v", "len(v)", func() { r3.MaxPlus(y, a, x, x[:2]) })
	mustPanicT(t, "Rows: short x", "len(x)", func() { r3.MaxPlus(y, a, x[:2], x[:3]) })
	mustPanicT(t, "descending ptr", "ascending", func() { MaxPlusCSR(y, a, x, []int32{0, 2, 1}, []int32{0, 1, 2}, x[:3]) })
	mustPanicT(t, "index high", "out of range", func() { MaxPlusCSR(y, a, x[:2], []int32{0, 1, 3}, []int32{0, 1, 2}, x[:3]) })
	mustPanicT(t, "index negative", "out of range", func() { MaxPlusCSR(y, a, x, []int32{0, 1, 3}, []int32{0, -1, 2}, x[:3]) })
}

// TestMaxPlusCSRVector: the vector tiers say so, the others do not.
func TestMaxPlusCSRVector(t *testing.T) {
	for _, name := range Impls() {
		restore, err := Use(name)
		if err != nil {
			t.Fatal(err)
		}
		got := MaxPlusCSRVector()
		restore()
		if want := name == "avx2" || name == "avx512"; got != want {
			t.Errorf("%s: MaxPlusCSRVector() = %v, want %v", name, got, want)
		}
	}
}

// FuzzMaxPlusCSR builds x from the fuzz floats (any values, NaN included)
// and a CSR matrix from the fuzz bytes (row lengths, indices; repeated
// indices allowed), initial candidates from both, and compares every tier
// with generic.
func FuzzMaxPlusCSR(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, []byte{3, 0, 12, 1, 1, 2, 9, 40})
	f.Add([]byte{0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f}, []byte{0, 0, 17, 8, 16, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, []byte{7, 33})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{9, 0, 1, 0, 1, 1, 0, 0, 1, 1, 5, 1, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, raw, shape []byte) {
		x := floatsFromBytes(raw)
		if len(x) == 0 {
			x = []float64{1}
		}
		n := len(x)
		c := fuzzSpm(shape, n, func(k int) float64 { return []float64{0, negZero, 1, -1, math.Inf(-1)}[k%5] })
		rows := len(c.ptr) - 1
		y0, arg0 := make([]float64, rows), make([]int32, rows)
		for r := range y0 {
			y0[r] = x[(r*3)%n]
			arg0[r] = int32(r%(n+1)) - 1
		}
		for _, p := range append(asmImpls(t), nil) {
			testMaxPlus(t, "fuzz", p, mpCase{y0, arg0, x, c})
		}
	})
}

// BenchmarkMaxPlusCSR: one product at the tied sizes, about 12 entries per
// row (uniform 6..18, distinct increasing indices as in the engine), x in
// L1; every iteration starts from the same candidates (a copy of y and arg,
// included in the time of every tier).
func BenchmarkMaxPlusCSR(b *testing.B) {
	for _, M := range []int{256, 1208} {
		r := newRand(46)
		c := sortedSpm(r, M, M, 0, func(int) int { return 6 + r.IntN(13) })
		x := randSlice(r, M, -20, 0)
		y0, arg0 := randSlice(r, M, -21, -1), make([]int32, M)
		for i := range arg0 {
			arg0[i] = int32(r.IntN(M))
		}
		y, arg := make([]float64, M), make([]int32, M)
		for _, p := range all {
			if !p.available {
				continue
			}
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				for b.Loop() {
					copy(y, y0)
					copy(arg, arg0)
					p.maxPlusCSR(y, arg, x, c.ptr, c.idx, c.v)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.idx)), "ns/entry")
			})
		}
	}
}
