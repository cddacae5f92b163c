package kernels

import "math"

// selectGEGeneric is SelectGE's loop: the count, or −1 at the first index
// past len(dst) (dst then holds the first len(dst)).
func selectGEGeneric[F float](dst []int32, x []F, bound F) int {
	n := 0
	for i, v := range x {
		if v >= bound {
			if n == len(dst) {
				return -1
			}
			dst[n] = int32(i)
			n++
		}
	}
	return n
}

// selectSumGEGeneric is SelectSumGE's loop, as selectGEGeneric; len(y) ≥
// len(x).
func selectSumGEGeneric[F float](dst []int32, x, y []F, bound F) int {
	y = y[:len(x)]
	n := 0
	for i, v := range x {
		if v+y[i] >= bound {
			if n == len(dst) {
				return -1
			}
			dst[n] = int32(i)
			n++
		}
	}
	return n
}

// maxGeneric is Max: v > m skips NaN; adding +0 turns a −0 maximum into +0
// (−0 + 0 = +0), so that the result does not depend on which zero came
// first, which the vector tiers cannot follow.
func maxGeneric[F float](x []F) F {
	m := F(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m + 0
}
