package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// csrOf makes n random sequences (randCSR) over rows rows and the CSR that
// holds them all, with ptr offset by a few entries (ptr[0] need not be 0).
func csrOf(t testing.TB, r *rand.Rand, n, rows, maxF int, sp float64) ([]csr, *CSR) {
	t.Helper()
	seqs := make([]csr, n)
	seq, ptr, ids := []int{0}, []int32{3}, []int32{-7, 99, 1 << 30} // junk before ptr[0]
	for b := range seqs {
		T := r.IntN(8)
		if b == 1 {
			T = 0 // an empty sequence
		}
		seqs[b] = randCSR(r, T, rows, maxF, sp)
		seqs[b].T = T
		base := int32(len(ids))
		for _, p := range seqs[b].ptr[1:] {
			ptr = append(ptr, base+p)
		}
		ids = append(ids, seqs[b].ids...)
		seq = append(seq, seq[b]+T)
	}
	c, err := NewCSR(seq, ptr, append(ids, -1, 1<<30), rows) // junk after the end
	if err != nil {
		t.Fatal(err)
	}
	return seqs, c
}

// TestCSR checks CSR.Gather and CSR.Scatter (float64 and float32) against
// the generic kernels on every tier, each sequence of a CSR of several,
// with guard zones around the outputs and weight matrices that end with
// their last row.
func TestCSR(t *testing.T) {
	r := newRand(71)
	test := func(t *testing.T, p *impl) {
		useTier(t, p.name)
		for _, M := range []int{1, 3, 5, 8, 9, 17, 22, 45, 64} {
			for _, ld := range sparseLDs(M) {
				rows := 1 + r.IntN(9)
				seqs, c := csrOf(t, r, 5, rows, 7, 0.02)
				n := (rows-1)*ld + M
				w := fillSpecial(r, n, 0.01)
				w32 := to32(randSlice(r, n, -1, 1))
				for b, sq := range seqs {
					what := fmt.Sprintf("%s M=%d ld=%d rows=%d seq %d", p.name, M, ld, rows, b)
					if c.Positions(b) != sq.T {
						t.Fatalf("%s: %d positions, want %d", what, c.Positions(b), sq.T)
					}
					// The CSR's Gather as p's kernel (sq's ptr and ids
					// are the same as the CSR's sequence b).
					q := *p
					q.gather = func(s, w []float64, ld int, _, _ []int32, vals []float64, _, M int) {
						c.Gather(s, w, ld, vals, b, M)
					}
					q.scatter = func(g []float64, ld int, pm []float64, _, _ []int32, vals []float64, cc float64, _, M int) {
						c.Scatter(g, ld, pm, vals, cc, b, M)
					}
					checkGather(t, "CSR.Gather "+what, &q, fillSpecial(r, sq.T*M, 0.01), w, ld, sq, M)
					checkScatter(t, "CSR.Scatter "+what, &q, fillSpecial(r, n, 0.01), ld, fillSpecial(r, sq.T*M, 0.01), sq, -0.75, M)

					// float32, against float64 generic on the same
					// (float32) values, as TestSparse32.
					vals := round32(randSlice(r, len(sq.vals), -1, 1))
					s0 := round32(randSlice(r, sq.T*M, -1, 1))
					want := append([]float64(nil), s0...)
					gatherGeneric(want, to64(w32), ld, sq.ptr, sq.ids, vals, sq.T, M)
					sbuf, s := guarded32(sq.T*M, to32(s0))
					c.Gather32(s, w32, ld, to32(vals), b, M)
					checkGuards32(t, "CSR.Gather32 "+what, sbuf)
					checkClose32(t, "CSR.Gather32 "+what, s, want, 0, 1e-6)
					pm := round32(randSlice(r, sq.T*M, 0, 1))
					wantG := to64(w32)
					scatterGeneric(wantG, ld, pm, sq.ptr, sq.ids, vals, 0.75, sq.T, M)
					gbuf, g := guarded32(n, w32)
					c.Scatter32(g, ld, to32(pm), to32(vals), 0.75, b, M)
					checkGuards32(t, "CSR.Scatter32 "+what, gbuf)
					checkClose32(t, "CSR.Scatter32 "+what, g, wantG, 0, 1e-6)
				}
			}
		}
	}
	t.Run("generic", func(t *testing.T) { test(t, generic) })
	forTiers(t, test)
}

// TestCSRLikeGather checks that CSR.Gather and CSR.Scatter give Gather's
// and Scatter's results bit for bit (the same kernel after other checks),
// with values all 1 given as a short slice of ones, and that a CSR does
// not see later changes to the arrays it was made from.
func TestCSRLikeGather(t *testing.T) {
	r := newRand(72)
	for _, M := range []int{1, 5, 22, 49} {
		ld, rows := M+3, 40
		seqs, c := csrOf(t, r, 6, rows, 5, 0)
		w := randSlice(r, (rows-1)*ld+M, -2, 2)
		longest := 0
		for _, sq := range seqs {
			longest = max(longest, len(sq.ids))
		}
		ones := make([]float64, longest)
		for k := range ones {
			ones[k] = 1
		}
		for b, sq := range seqs {
			vals := sq.vals
			if b%2 == 1 {
				vals = ones
				sq.vals = ones[:len(sq.ids)]
			}
			p := randSlice(r, sq.T*M, -2, 2)
			s1, s2 := randSlice(r, sq.T*M, -2, 2), make([]float64, sq.T*M)
			copy(s2, s1)
			Gather(s1, w, ld, sq.ptr, sq.ids, sq.vals, sq.T, M)
			c.Gather(s2, w, ld, vals, b, M)
			g1, g2 := randSlice(r, len(w), -2, 2), make([]float64, len(w))
			copy(g2, g1)
			Scatter(g1, ld, p, sq.ptr, sq.ids, sq.vals, -0.5, sq.T, M)
			c.Scatter(g2, ld, p, vals, -0.5, b, M)
			for k := range s1 {
				if math.Float64bits(s1[k]) != math.Float64bits(s2[k]) {
					t.Fatalf("M=%d seq %d: CSR.Gather s[%d] = %v, Gather %v", M, b, k, s2[k], s1[k])
				}
			}
			for k := range g1 {
				if math.Float64bits(g1[k]) != math.Float64bits(g2[k]) {
					t.Fatalf("M=%d seq %d: CSR.Scatter g[%d] = %v, Scatter %v", M, b, k, g2[k], g1[k])
				}
			}
		}
	}
	// The CSR copied its arrays: changing them afterwards changes nothing.
	seq, ptr, ids := []int{0, 2}, []int32{0, 1, 2}, []int32{0, 1}
	c, err := NewCSR(seq, ptr, ids, 2)
	if err != nil {
		t.Fatal(err)
	}
	ids[0], ptr[1], ptr[2], seq[1] = 1<<30, 2, 0, 9
	s, w := make([]float64, 2), []float64{1, 10}
	c.Gather(s, w, 1, []float64{1, 1}, 0, 1)
	if s[0] != 1 || s[1] != 10 {
		t.Errorf("after changes to its arrays, CSR.Gather gives %v, want [1 10]", s)
	}
}

// TestNewCSRErrors: wrong arrays are errors naming the problem, not
// panics, and nothing outside [ptr[0], ptr[end]) of ids is checked.
func TestNewCSRErrors(t *testing.T) {
	ids := []int32{0, 1, 2}
	for _, tc := range []struct {
		what  string
		seq   []int
		ptr   []int32
		ids   []int32
		bound int
		want  string
	}{
		{"id = bound", []int{0, 2}, []int32{0, 1, 3}, ids, 2, "ids[2] = 2 is out of range [0, 2)"},
		{"negative id", []int{0, 1}, []int32{0, 2}, []int32{0, -1}, 5, "ids[1] = -1"},
		{"huge id", []int{0, 1}, []int32{0, 1}, []int32{1 << 30}, 5, "out of range"},
		{"negative bound", []int{0, 1}, []int32{0, 0}, nil, -1, "bound -1"},
		{"zero bound", []int{0, 1}, []int32{0, 1}, ids, 0, "out of range [0, 0)"},
		{"descending ptr", []int{0, 2}, []int32{0, 2, 1}, ids, 3, "ptr not ascending at 1"},
		{"ptr past ids", []int{0, 2}, []int32{0, 2, 4}, ids, 3, "beyond the 3 ids"},
		{"negative ptr[0]", []int{0, 1}, []int32{-1, 1}, ids, 3, "ptr[0] = -1"},
		{"short ptr", []int{0, 3}, []int32{0, 1, 2}, ids, 3, "3 entries of ptr for 3 positions"},
		{"long ptr", []int{0, 1}, []int32{0, 1, 2}, ids, 3, "3 entries of ptr for 1 positions"},
		{"seq from 1", []int{1, 2}, []int32{0, 1, 2}, ids, 3, "start with 0"},
		{"no seq", nil, []int32{0}, ids, 3, "start with 0"},
		{"descending seq", []int{0, 2, 1}, []int32{0, 1}, ids, 3, "seq not ascending at 2"},
	} {
		var c *CSR
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: NewCSR panicked: %v", tc.what, p)
				}
			}()
			c, err = NewCSR(tc.seq, tc.ptr, tc.ids, tc.bound)
		}()
		if err == nil || c != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewCSR = %v, %v; want an error mentioning %q", tc.what, c, err, tc.want)
		}
	}
	// Only the ids between ptr[0] and the end are checked.
	if _, err := NewCSR([]int{0, 1}, []int32{1, 2}, []int32{-1, 0, 99}, 1); err != nil {
		t.Errorf("ids outside the list: %v", err)
	}
	// No sequences, no positions.
	c, err := NewCSR([]int{0}, []int32{0}, nil, 0)
	if err != nil || c.Len() != 0 {
		t.Errorf("empty CSR: %v, %v", c, err)
	}
}

// TestCSRChecks: the O(1) checks of CSR.Gather and CSR.Scatter panic with
// a message naming the argument.
func TestCSRChecks(t *testing.T) {
	c, err := NewCSR([]int{0, 1, 3}, []int32{0, 2, 2, 3}, []int32{0, 1, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	x, x32 := make([]float64, 16), make([]float32, 16)
	// Sequence 1 has 2 positions and 1 feature; w needs (3−1)·ld+M.
	c.Gather(x[:4], x[:6], 2, x[:1], 1, 2)
	c.Scatter(x[:6], 2, x[:4], x[:1], 1, 1, 2)
	mustPanicT(t, "short s", "len(s)", func() { c.Gather(x[:3], x, 2, x, 1, 2) })
	mustPanicT(t, "short p", "len(p)", func() { c.Scatter(x, 2, x[:3], x, 1, 1, 2) })
	mustPanicT(t, "short vals", "len(vals)", func() { c.Gather(x, x, 2, x[:1], 0, 2) })
	mustPanicT(t, "short vals32", "len(vals)", func() { c.Scatter32(x32, 2, x32, nil, 1, 1, 2) })
	mustPanicT(t, "short w", "fewer than 3 rows", func() { c.Gather(x, x[:5], 2, x, 1, 2) })
	mustPanicT(t, "short g", "fewer than 3 rows", func() { c.Scatter(x[:7], 3, x, x, 1, 1, 2) })
	mustPanicT(t, "short w32", "fewer than 3 rows", func() { c.Gather32(x32, x32[:5], 2, x32, 1, 2) })
	mustPanicT(t, "ld < M", "bad sizes", func() { c.Scatter(x, 1, x, x, 1, 1, 2) })
	mustPanicT(t, "negative M", "bad sizes", func() { c.Gather(x, x, 1, x, 1, -1) })
	mustPanicT(t, "sequence past the end", "sequence 2 of 2", func() { c.Gather(x, x, 2, x, 2, 2) })
	mustPanicT(t, "negative sequence", "sequence -1", func() { c.Scatter32(x32, 2, x32, x32, 1, -1, 2) })
	mustPanicT(t, "huge ld", "bad size", func() { c.Gather(x, x, 1<<62, x, 1, 2) })
	var z CSR
	if z.Len() != 0 {
		t.Errorf("zero CSR: Len() = %d", z.Len())
	}
	mustPanicT(t, "zero CSR", "sequence 0 of 0", func() { z.Gather(x, x, 2, x, 0, 2) })
	mustPanicT(t, "EndRow on a zero CSR", "not after Reset", func() { z.EndRow() })
	// M = 0 does nothing, whatever w holds.
	c.Gather(nil, nil, 0, x, 0, 0)
}

// TestCSRBuild builds a sequence in place (Reset, Add, EndRow) and checks
// it against NewCSR's, that rebuilding and gathering allocate nothing, and
// that a bad id panics.
func TestCSRBuild(t *testing.T) {
	r := newRand(73)
	var c CSR
	for _, M := range []int{1, 9, 45} {
		rows, ld := 30, M+1
		sq := randCSR(r, 9, rows, 6, 0)
		ref, err := NewCSR([]int{0, sq.T}, sq.ptr, sq.ids, rows)
		if err != nil {
			t.Fatal(err)
		}
		build := func() {
			c.Reset(rows)
			for tt := range sq.T {
				for _, id := range sq.ids[sq.ptr[tt]:sq.ptr[tt+1]] {
					c.Add(id)
				}
				c.EndRow()
			}
		}
		build()
		if c.Len() != 1 || c.Positions(0) != sq.T {
			t.Fatalf("built %d sequences, %d positions; want 1, %d", c.Len(), c.Positions(0), sq.T)
		}
		w := randSlice(r, (rows-1)*ld+M, -1, 1)
		s1, s2 := make([]float64, sq.T*M), make([]float64, sq.T*M)
		ref.Gather(s1, w, ld, sq.vals, 0, M)
		c.Gather(s2, w, ld, sq.vals, 0, M)
		for k := range s1 {
			if math.Float64bits(s1[k]) != math.Float64bits(s2[k]) {
				t.Fatalf("M=%d: built CSR gives s[%d] = %v, NewCSR's %v", M, k, s2[k], s1[k])
			}
		}
		if n := testing.AllocsPerRun(10, build); n != 0 {
			t.Errorf("rebuilding allocates %v times", n)
		}
		if n := testing.AllocsPerRun(10, func() { c.Gather(s2, w, ld, sq.vals, 0, M) }); n != 0 {
			t.Errorf("CSR.Gather allocates %v times", n)
		}
	}
	c.Reset(3)
	c.Add(2)
	mustPanicT(t, "id = bound", "id 3 out of range [0, 3)", func() { c.Add(3) })
	mustPanicT(t, "negative id", "id -1 out of range", func() { c.Add(-1) })
	c.EndRow()
	if c.Positions(0) != 1 {
		t.Errorf("%d positions after the panics, want 1", c.Positions(0))
	}
	mustPanicT(t, "negative bound", "bound -1", func() { c.Reset(-1) })
	// EndRow on a CSR of several sequences would extend the last one with
	// ids not checked against it; it panics instead.
	many, _ := NewCSR([]int{0, 1, 2}, []int32{0, 0, 0}, nil, 1)
	mustPanicT(t, "EndRow without Reset", "not after Reset", func() { many.EndRow() })
}
