package kernels

import (
	"fmt"
	"testing"
)

// TestSpMVPageEnd puts x, idx, v, y (and q, xi, yi) each at the end of a
// mapping followed by an inaccessible page, with the last row (last
// entries) of every length 0..17: an index or value load past the end (a
// missing or wrong tail mask) crashes the test.
func TestSpMVPageEnd(t *testing.T) {
	r := newRand(39)
	forTiers(t, func(t *testing.T, p *impl) {
		if !maskedLoadsSafe(t, p) {
			t.Skip("masked-off lanes fault at a page end on this CPU (qemu-user does this; hardware does not)")
		}
		for n := 0; n <= 17; n++ {
			x0 := randSlice(r, 9, -1, 1)
			c := randSpm(r, 3, len(x0), 0, func(row int) int { return []int{5, 11, n}[row] })
			want := make([]float64, 3)
			spmvGeneric(want, x0, c.ptr, c.idx, c.v)
			x, y := pageEndOf(t, x0), pageEndOf(t, make([]float64, 3))
			idx, v := pageEndOf(t, c.idx), pageEndOf(t, c.v)
			p.spmv(y, x, c.ptr, idx, v)
			checkSameBits(t, fmt.Sprintf("%s spmv last row %d", p.name, n), y, want)

			m := len(c.idx)
			q0, xi, yi := randSlice(r, m, -1, 1), randIdx(r, m, len(x0)), randIdx(r, m, len(x0))
			wantQ := append([]float64(nil), q0...)
			gatherMulAddGeneric(wantQ, x0, xi, x0, yi)
			q := pageEndOf(t, q0)
			p.gatherMulAdd(q, x, pageEndOf(t, xi), x, pageEndOf(t, yi))
			checkSameBits(t, fmt.Sprintf("%s gatherMulAdd n=%d", p.name, m), q, wantQ)
		}
	})
}
