package kernels

import (
	"fmt"
	"slices"
	"testing"
)

// TestMaxPlusCSRPageEnd puts x, idx, v, y and arg each at the end of a
// mapping followed by an inaccessible page, with the last row of every
// length 0..17 and 1..9 rows (every tail of the vector tiers' row blocks):
// a load or store past the end (a missing or wrong tail mask) crashes the
// test.
func TestMaxPlusCSRPageEnd(t *testing.T) {
	r := newRand(47)
	forTiers(t, func(t *testing.T, p *impl) {
		if !maskedLoadsSafe(t, p) {
			t.Skip("masked-off lanes fault at a page end on this CPU (qemu-user does this; hardware does not)")
		}
		for rows := 1; rows <= 9; rows++ {
			for n := 0; n <= 17; n++ {
				x0 := randSlice(r, 9, -1, 1)
				c := sortedSpm(r, rows, len(x0), 0, func(row int) int {
					if row == rows-1 {
						return n
					}
					return []int{5, 9, 0}[row%3]
				})
				y0, arg0 := randInit(r, rows, len(x0))
				want, wantArg := slices.Clone(y0), slices.Clone(arg0)
				maxPlusCSRGeneric(want, wantArg, x0, c.ptr, c.idx, c.v)
				x, y := pageEndOf(t, x0), pageEndOf(t, y0)
				arg := pageEndOf(t, arg0)
				idx, v := pageEndOf(t, c.idx), c.v
				if len(v) > 0 {
					v = pageEndOf(t, v)
				}
				p.maxPlusCSR(y, arg, x, c.ptr, idx, v)
				what := fmt.Sprintf("%s rows=%d last row %d", p.name, rows, n)
				checkSameBits(t, what, y, want)
				if !slices.Equal(arg, wantArg) {
					t.Fatalf("%s: arg %v, want %v", what, arg, wantArg)
				}
			}
		}
	})
}
