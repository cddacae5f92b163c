package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The spmv family: SpMV and GatherMulAdd. Every tier computes exactly the
// generic reference's arithmetic (SpMV: eight FMA lanes per row, added in a
// fixed tree; GatherMulAdd: one FMA per entry), so the tiers are compared
// with generic bit for bit (NaN payloads aside); the reference itself is
// compared with a plain sum within a rounding bound.

// sameBits reports whether a and b are the same float64 (any NaNs count as
// the same; +0 and −0 do not).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func checkSameBits(t testing.TB, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s: [%d] = %v (%#x), want %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// spm is a CSR matrix for SpMV: rows len(ptr)−1, entries from ptr[0] (which
// need not be 0).
type spm struct {
	ptr, idx []int32
	v        []float64
}

// fuzzSpm decodes a sparse matrix over columns [0, n) from fuzz bytes: each
// row is a length (mod 41) then that many column indices (mod n), until the
// bytes run out (missing bytes read as 0); entry k has the value value(k).
func fuzzSpm(shape []byte, n int, value func(k int) float64) spm {
	c := spm{ptr: []int32{0}}
	var b int
	next := func() int {
		if b >= len(shape) {
			return 0
		}
		b++
		return int(shape[b-1])
	}
	for b < len(shape) {
		for range next() % 41 {
			c.idx = append(c.idx, int32(next()%n))
			c.v = append(c.v, value(len(c.v)))
		}
		c.ptr = append(c.ptr, int32(len(c.idx)))
	}
	return c
}

// randSpm makes rows rows over columns [0, n): lens(r) gives row r's length;
// ptr starts at off. Indices include both ends of x (0 and n−1) whenever
// there are at least two entries.
func randSpm(r *rand.Rand, rows, n, off int, lens func(int) int) spm {
	c := spm{ptr: make([]int32, rows+1)}
	c.idx = make([]int32, off)
	c.v = randSlice(r, off, -1, 1)
	c.ptr[0] = int32(off)
	for row := range rows {
		for range lens(row) {
			c.idx = append(c.idx, int32(r.IntN(n)))
			c.v = append(c.v, 2*r.Float64()-1)
		}
		c.ptr[row+1] = int32(len(c.idx))
	}
	if k := len(c.idx) - off; k >= 2 {
		c.idx[off+r.IntN(k)] = 0
		c.idx[off+r.IntN(k)] = int32(n - 1)
	}
	return c
}

// testSpMV runs p.spmv on guarded y and compares it with generic bit for
// bit, and generic with a plain sum within n·ε·Σ|terms| per row.
func testSpMV(t testing.TB, what string, p *impl, x []float64, c spm) {
	t.Helper()
	rows := len(c.ptr) - 1
	want := make([]float64, rows)
	for i := range want {
		want[i] = 12345 // overwritten
	}
	spmvGeneric(want, x, c.ptr, c.idx, c.v)
	for r := range rows {
		sum, bound, nan := 0.0, 0.0, false
		for k := c.ptr[r]; k < c.ptr[r+1]; k++ {
			sum += x[c.idx[k]] * c.v[k]
			bound += math.Abs(x[c.idx[k]] * c.v[k])
			nan = nan || math.IsNaN(x[c.idx[k]]*c.v[k])
		}
		n := float64(c.ptr[r+1] - c.ptr[r])
		// Both sums are within (n+1)·ε·Σ|terms| of the exact one (ε =
		// 2^−53 ≈ 1.1e-16; the FMAs round less, not more), plus, where
		// the terms are subnormal, half a step of the subnormal grid
		// (2^−1075) per rounding, which ε does not cover.
		tol := 2*(n+1)*1.12e-16*bound + 2*(n+1)*math.SmallestNonzeroFloat64
		if !math.IsInf(bound, 0) && !math.IsNaN(bound) && !close(want[r], sum, 0, tol) {
			t.Fatalf("%s: generic row %d = %v, plain sum %v", what, r, want[r], sum)
		}
		// A NaN term (NaN, or 0·Inf) makes the row NaN. Other infinite
		// or overflowing rows are not compared with the plain sum: the
		// regrouping may overflow to Inf−Inf = NaN where it does not.
		if nan && !math.IsNaN(want[r]) {
			t.Fatalf("%s: generic row %d = %v, has a NaN term", what, r, want[r])
		}
	}
	if p == nil {
		return
	}
	buf, y := guarded(rows, nil)
	for i := range y {
		y[i] = 54321
	}
	p.spmv(y, x, c.ptr, c.idx, c.v)
	checkGuards(t, what, buf)
	checkSameBits(t, what, y, want)
}

func TestSpMV(t *testing.T) {
	r := newRand(31)
	shapes := map[string]func(M int) func(int) int{
		"fixed12": func(int) func(int) int { return func(int) int { return 12 } },
		"1..40":   func(int) func(int) int { return func(row int) int { return 1 + row%40 } },
		"0..40":   func(int) func(int) int { return func(int) int { return r.IntN(41) } },
		"sparse":  func(int) func(int) int { return func(int) int { return []int{0, 0, 0, 1, 7, 8, 9, 16, 17}[r.IntN(9)] } },
		"empty":   func(int) func(int) int { return func(int) int { return 0 } },
	}
	forTiers(t, func(t *testing.T, p *impl) {
		for _, M := range append(labelCounts(), 1208) {
			x := randSlice(r, M, -1, 1)
			for name, shape := range shapes {
				for _, off := range []int{0, 5} {
					c := randSpm(r, M, M, off, shape(M))
					testSpMV(t, fmt.Sprintf("%s M=%d off=%d", name, M, off), p, x, c)
				}
			}
		}
		// Every row length 0..40 at every alignment of its start.
		for off := range 9 {
			for n := 0; n <= 40; n++ {
				x := randSlice(r, 50, -2, 2)
				c := randSpm(r, 3, len(x), off, func(row int) int { return []int{n, n, 1}[row] })
				testSpMV(t, fmt.Sprintf("len %d off %d", n, off), p, x, c)
			}
		}
	})
}

// TestSpMVGenericOnly checks the reference against the plain sum (every tier
// compares with it above; this covers builds without asm tiers too).
func TestSpMVGenericOnly(t *testing.T) {
	r := newRand(32)
	for _, M := range []int{1, 7, 45, 256} {
		x := randSlice(r, M, -1, 1)
		testSpMV(t, fmt.Sprintf("M=%d", M), nil, x, randSpm(r, M, M, 3, func(int) int { return r.IntN(30) }))
	}
}

// TestSpMVSpecials puts a special value in x or v at every lane position
// of rows of every length 1..17: NaN and Inf must propagate (and cancel
// to NaN) exactly as in the reference, and huge values overflow the same.
func TestSpMVSpecials(t *testing.T) {
	r := newRand(33)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, sv := range specials {
			for n := 1; n <= 17; n++ {
				for pos := range n {
					x := randSlice(r, 20, -1, 1)
					c := randSpm(r, 2, len(x), 1, func(int) int { return n })
					// In x: every entry that reads column c.idx[k] sees it.
					x[c.idx[int(c.ptr[0])+pos]] = sv
					testSpMV(t, fmt.Sprintf("x special %v n=%d pos=%d", sv, n, pos), p, x, c)
					c.v[int(c.ptr[1])+pos] = sv
					c.v[int(c.ptr[0])+n-1-pos] = -sv
					testSpMV(t, fmt.Sprintf("v special %v n=%d pos=%d", sv, n, pos), p, x, c)
				}
			}
		}
		// Huge values: lanes that overflow to ±Inf and one that cancels.
		x := []float64{math.MaxFloat64, -math.MaxFloat64, 1e300, 1e-300}
		c := spm{ptr: []int32{0, 9, 18}, idx: []int32{0, 0, 1, 2, 3, 0, 0, 1, 1, 0, 1, 2, 3, 0, 1, 2, 3, 0},
			v: []float64{1, 1, 1, 1e10, 1e300, 1, 1, -1, -1, 1e-10, 2, -2, 1, 1, 1, 1, 1, 1}}
		testSpMV(t, "huge", p, x, c)
	})
}

// TestSpMVLong is one matrix at the Czech tied size (M = 1,208 labels, about
// 12 exceptions per row).
func TestSpMVLong(t *testing.T) {
	r := newRand(34)
	M := 1208
	c := randSpm(r, M, M, 0, func(int) int { return r.IntN(25) })
	x := randSlice(r, M, 0, 1)
	forTiers(t, func(t *testing.T, p *impl) {
		testSpMV(t, "long", p, x, c)
	})
}

// checkGMA runs p.gatherMulAdd on guarded q and compares with generic.
func checkGMA(t testing.TB, what string, p *impl, q0, x []float64, xi []int32, y []float64, yi []int32) {
	t.Helper()
	want := append([]float64(nil), q0...)
	gatherMulAddGeneric(want, x, xi, y, yi)
	for k := range q0 {
		// The reference is one FMA: within one rounding of q + x·y.
		e := q0[k] + x[xi[k]]*y[yi[k]]
		if !math.IsInf(e, 0) && !close(want[k], e, 0, 2.3e-16*(math.Abs(q0[k])+math.Abs(x[xi[k]]*y[yi[k]]))) {
			t.Fatalf("%s: generic q[%d] = %v, want about %v", what, k, want[k], e)
		}
	}
	if p == nil {
		return
	}
	buf, q := guarded(len(q0), q0)
	p.gatherMulAdd(q, x, xi, y, yi)
	checkGuards(t, what, buf)
	checkSameBits(t, what, q, want)
}

func randIdx(r *rand.Rand, n, hi int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(r.IntN(hi))
	}
	if n >= 2 {
		s[0], s[n-1] = int32(hi-1), 0
	}
	return s
}

func TestGatherMulAdd(t *testing.T) {
	r := newRand(35)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, n := range append(lengths(), 14718) {
			for _, M := range []int{1, 9, 256, 1208} {
				x, y := randSlice(r, M, -1, 1), randSlice(r, M+3, -1, 1)
				q0 := randSlice(r, n, -1, 1)
				checkGMA(t, fmt.Sprintf("n=%d M=%d", n, M), p, q0, x, randIdx(r, n, M), y, randIdx(r, n, M+3))
			}
		}
		for _, sv := range specials {
			for n := 1; n <= 17; n++ {
				x, y := randSlice(r, 5, -1, 1), randSlice(r, 6, -1, 1)
				xi, yi := randIdx(r, n, 5), randIdx(r, n, 6)
				q0 := randSlice(r, n, -1, 1)
				pos := r.IntN(n)
				x[xi[pos]] = sv
				checkGMA(t, fmt.Sprintf("x special %v n=%d", sv, n), p, q0, x, xi, y, yi)
				y[yi[n-1-pos]] = -sv
				q0[pos] = sv
				checkGMA(t, fmt.Sprintf("y,q special %v n=%d", sv, n), p, q0, x, xi, y, yi)
			}
		}
	})
}

// TestSpMVAPI checks the exported functions: the checked forms and the
// forms over a structure checked once (Rows, Pairs) give the generic result
// on the active tier, and the checks panic.
func TestSpMVAPI(t *testing.T) {
	r := newRand(36)
	M := 40
	c := randSpm(r, M, M, 2, func(int) int { return r.IntN(20) })
	x := randSlice(r, M, -1, 1)
	want := make([]float64, M)
	spmvGeneric(want, x, c.ptr, c.idx, c.v)
	y1, y2 := make([]float64, M), make([]float64, M)
	SpMV(y1, x, c.ptr, c.idx, c.v)
	rows, v := checkedRows(t, c, M)
	rows.SpMV(y2, x, v)
	checkSameBits(t, "SpMV", y1, want)
	checkSameBits(t, "Rows.SpMV", y2, want)
	SpMV(nil, x, nil, nil, nil) // no rows: nothing to check or do

	n := int(c.ptr[M])
	q0 := randSlice(r, n, -1, 1)
	xi, yi := randIdx(r, n, M), randIdx(r, n, M)
	wantQ := append([]float64(nil), q0...)
	gatherMulAddGeneric(wantQ, x, xi, x, yi)
	q1, q2 := append([]float64(nil), q0...), append([]float64(nil), q0...)
	GatherMulAdd(q1, x, xi, x, yi)
	pairs, err := NewPairs(xi, yi, M, M)
	if err != nil {
		t.Fatal(err)
	}
	pairs.GatherMulAdd(q2, x, x)
	checkSameBits(t, "GatherMulAdd", q1, wantQ)
	checkSameBits(t, "Pairs.GatherMulAdd", q2, wantQ)

	y := make([]float64, 2)
	mustPanicT(t, "short ptr", "len(ptr)", func() { SpMV(y, x, []int32{0, 1}, []int32{0}, x[:1]) })
	mustPanicT(t, "short idx", "len(idx)", func() { SpMV(y, x, []int32{0, 1, 3}, []int32{0, 1}, x[:3]) })
	mustPanicT(t, "short v", "len(v)", func() { SpMV(y, x, []int32{0, 1, 3}, []int32{0, 1, 2}, x[:2]) })
	mustPanicT(t, "negative ptr", "ptr[0]", func() { SpMV(y, x, []int32{-1, 1, 3}, []int32{0, 1, 2}, x[:3]) })
	r3, err := NewRows([]int32{0, 1, 3}, []int32{0, 1, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	mustPanicT(t, "Rows: short v", "len(v)", func() { r3.SpMV(y, x, x[:2]) })
	mustPanicT(t, "Rows: short x", "len(x)", func() { r3.SpMV(y, x[:2], x[:3]) })
	mustPanicT(t, "Rows: short y", "len(y)", func() { r3.SpMV(y[:1], x, x[:3]) })
	mustPanicT(t, "descending ptr", "ascending", func() { SpMV(y, x, []int32{0, 2, 1}, []int32{0, 1, 2}, x[:3]) })
	mustPanicT(t, "index high", "out of range", func() { SpMV(y, x[:2], []int32{0, 1, 3}, []int32{0, 1, 2}, x[:3]) })
	mustPanicT(t, "index negative", "out of range", func() { SpMV(y, x, []int32{0, 1, 3}, []int32{0, -1, 2}, x[:3]) })
	mustPanicT(t, "short xi", "len(xi)", func() { GatherMulAdd(y, x, []int32{0}, x, []int32{0, 0}) })
	mustPanicT(t, "short yi", "len(yi)", func() { GatherMulAdd(y, x, []int32{0, 0}, x, []int32{0}) })
	p2, err := NewPairs([]int32{0, 2}, []int32{1, 0}, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	mustPanicT(t, "Pairs: short q", "len(q)", func() { p2.GatherMulAdd(y[:1], x, x) })
	mustPanicT(t, "Pairs: short x", "len(x)", func() { p2.GatherMulAdd(y, x[:2], x) })
	mustPanicT(t, "Pairs: short y", "len(y)", func() { p2.GatherMulAdd(y, x, x[:1]) })
	mustPanicT(t, "xi high", "out of range", func() { GatherMulAdd(y, x[:3], []int32{0, 3}, x, []int32{0, 0}) })
	mustPanicT(t, "yi negative", "out of range", func() { GatherMulAdd(y, x, []int32{0, 0}, x, []int32{-1, 0}) })
}

// checkedRows returns c's structure as a Rows over n columns (its offsets from
// 0) and its values.
func checkedRows(t *testing.T, c spm, n int) (*Rows, []float64) {
	t.Helper()
	off := c.ptr[0]
	ptr := make([]int32, len(c.ptr))
	for i, p := range c.ptr {
		ptr[i] = p - off
	}
	rows, err := NewRows(ptr, c.idx[off:c.ptr[len(c.ptr)-1]], n)
	if err != nil {
		t.Fatal(err)
	}
	return rows, c.v[off:]
}

// TestNewRowsPairs: a structure or pair list that is not checked out is an
// error naming what is wrong, and the copies do not alias the arguments.
func TestNewRowsPairs(t *testing.T) {
	for _, c := range []struct {
		ptr, idx []int32
		cols     int
		want     string
	}{
		{nil, nil, 1, "start with 0"},
		{[]int32{1, 2}, []int32{0, 0}, 1, "start with 0"},
		{[]int32{0, 2, 1}, []int32{0, 0}, 1, "not ascending"},
		{[]int32{0, 2}, []int32{0}, 1, "idx has 1"},
		{[]int32{0, 2}, []int32{0, 1}, 1, "idx[1] = 1 is out of range"},
		{[]int32{0, 1}, []int32{-1}, 1, "out of range"},
		{[]int32{0}, nil, -1, "-1 columns"},
	} {
		if _, err := NewRows(c.ptr, c.idx, c.cols); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewRows(%v, %v, %d): %v, want %q", c.ptr, c.idx, c.cols, err, c.want)
		}
	}
	for _, c := range []struct {
		xi, yi []int32
		want   string
	}{
		{[]int32{0}, nil, "1 and 0 indices"},
		{[]int32{0, 3}, []int32{0, 0}, "pair 1 (3, 0)"},
		{[]int32{0}, []int32{-1}, "out of range"},
	} {
		if _, err := NewPairs(c.xi, c.yi, 3, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewPairs(%v, %v): %v, want %q", c.xi, c.yi, err, c.want)
		}
	}
	ptr, idx := []int32{0, 1, 2}, []int32{0, 1}
	rows, err := NewRows(ptr, idx, 2)
	if err != nil {
		t.Fatal(err)
	}
	idx[0] = 99 // the caller's array changes after the check
	y := make([]float64, 2)
	rows.SpMV(y, []float64{3, 5}, []float64{1, 1})
	if y[0] != 3 || y[1] != 5 || rows.Len() != 2 || rows.NNZ() != 2 {
		t.Errorf("Rows after its argument changed: %v, %d rows, %d entries", y, rows.Len(), rows.NNZ())
	}
	x, v := []float64{3, 5}, []float64{1, 1}
	if n := testing.AllocsPerRun(10, func() { rows.SpMV(y, x, v) }); n != 0 {
		t.Errorf("Rows.SpMV allocates %v times", n)
	}
}

// FuzzSpMV builds x from the fuzz floats and a CSR matrix and an index list
// from the fuzz bytes (row lengths, indices), and compares every tier with
// generic for SpMV and GatherMulAdd.
func FuzzSpMV(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, []byte{3, 0, 12, 1, 1, 2, 9, 40})
	f.Add([]byte{0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f}, []byte{0, 0, 17, 8, 16, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, []byte{7, 33})
	// Subnormal terms, found by the fuzzer: the plain sum and the generic
	// kernel's lanes differ by steps of the subnormal grid.
	f.Add([]byte("10000\x00\x00\x00200000\x00\x00"), []byte("701"))
	f.Fuzz(func(t *testing.T, raw, shape []byte) {
		x := floatsFromBytes(raw)
		if len(x) == 0 {
			x = []float64{1}
		}
		n := len(x)
		c := fuzzSpm(shape, n, func(k int) float64 { return float64(k%7) - 2.5 })
		for _, p := range append(asmImpls(t), nil) {
			testSpMV(t, "fuzz spmv", p, x, c)
			q0 := make([]float64, len(c.idx))
			for k := range q0 {
				q0[k] = float64(k) - 3
			}
			yi := make([]int32, len(c.idx))
			for k := range yi {
				yi[k] = int32((k * 7) % n)
			}
			checkGMA(t, "fuzz gatherMulAdd", p, q0, x, c.idx, x, yi)
		}
	})
}

// BenchmarkSpMV: one product at the tied sizes, about 12 entries per row
// (uniform 6..18), x in L1.
func BenchmarkSpMV(b *testing.B) {
	for _, M := range []int{256, 1208} {
		r := newRand(37)
		c := randSpm(r, M, M, 0, func(int) int { return 6 + r.IntN(13) })
		x, y := randSlice(r, M, 0, 1), make([]float64, M)
		for _, p := range all {
			if !p.available {
				continue
			}
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				for b.Loop() {
					p.spmv(y, x, c.ptr, c.idx, c.v)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.idx)), "ns/entry")
			})
		}
	}
}

// BenchmarkGatherMulAdd: the tied counts pass, 12·M entries.
func BenchmarkGatherMulAdd(b *testing.B) {
	for _, M := range []int{256, 1208} {
		r := newRand(38)
		n := 12 * M
		x, y, q := randSlice(r, M, 0, 1), randSlice(r, M, 0, 1), make([]float64, n)
		xi, yi := randIdx(r, n, M), randIdx(r, n, M)
		for _, p := range all {
			if !p.available {
				continue
			}
			b.Run(fmt.Sprintf("M=%d/%s", M, p.name), func(b *testing.B) {
				for b.Loop() {
					p.gatherMulAdd(q, x, xi, y, yi)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
			})
		}
	}
}
