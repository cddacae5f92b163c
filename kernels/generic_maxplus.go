package kernels

import "math"

// maxPlusCSRGeneric is the reference of MaxPlusCSR: each row's entries in
// order, a NaN (y[r] or candidate) taken as -Inf, a candidate replacing the
// best so far when it is larger, or equal with a lower index (an index
// compared as uint32, so that a negative arg, "no index", loses every tie).
func maxPlusCSRGeneric(y []float64, arg []int32, x []float64, ptr, idx []int32, v []float64) {
	ninf := math.Inf(-1)
	arg = arg[:len(y)]
	for r, best := range y {
		bi := arg[r]
		if best != best {
			best = ninf
		}
		lo, hi := ptr[r], ptr[r+1]
		for k, i := range idx[lo:hi] {
			c := x[i] + v[int(lo)+k]
			if c != c {
				c = ninf
			}
			if c > best || (c == best && uint32(i) < uint32(bi)) {
				best, bi = c, i
			}
		}
		y[r], arg[r] = best, bi
	}
}
