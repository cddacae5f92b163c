package kernels

import (
	"fmt"
	"testing"
)

// TestByteMasksPageEnd puts src and both outputs at the end of a mapping
// followed by an inaccessible page: a read past src's last block or a write
// past the last word crashes the test.
func TestByteMasksPageEnd(t *testing.T) {
	r := newRand(64)
	forTiers(t, func(t *testing.T, p *impl) {
		for nb := 1; nb <= 9; nb++ {
			in := maskInputs(r, nb, maskClasses[0])["classes+neighbours"]
			want, wantB := make([]uint64, nb), make([]uint64, nb)
			byteMasksGeneric(want, wantB, in, '\t', ':', '\\')
			src := pageEndOf(t, in)
			a, b := pageEndOf(t, make([]uint64, nb)), pageEndOf(t, make([]uint64, nb))
			p.byteMasks(a, b, src, '\t', ':', '\\')
			what := fmt.Sprintf("%s nb=%d", p.name, nb)
			checkMasks(t, what+" a", a, want)
			checkMasks(t, what+" b", b, wantB)
		}
	})
}
