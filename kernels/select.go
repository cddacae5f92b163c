package kernels

import (
	"fmt"
	"math"
)

// SelectGE writes to dst, in increasing order, the indices i with
// x[i] ≥ bound (a NaN never qualifies, on either side) and returns their
// count n and ok = true. When more than len(dst) qualify it returns
// n = len(dst) and ok = false, dst holding the first len(dst) of them.
// Entries of dst past n may be overwritten: the vector tiers store whole
// vectors of indices. len(x) must not exceed 1<<31 (the indices are
// int32).
//
// It is the selection of the bounded Viterbi's rows and of pruning's
// labels (the entries within a margin of the maximum, from Max), whose
// hits are few: the vector tiers test a block of 16 entries with one
// branch and store a block's hits with no branch per hit.
func SelectGE(dst []int32, x []float64, bound float64) (n int, ok bool) {
	selectArgs("SelectGE", len(x))
	return selected(dst, cur().selectGE(dst, x, bound))
}

// SelectSumGE is SelectGE for the sums x[i] + y[i] ≥ bound, rounded as Go
// rounds them (so the indices are exactly those of the scalar loop), for
// i < len(x); len(y) must be at least len(x).
func SelectSumGE(dst []int32, x, y []float64, bound float64) (n int, ok bool) {
	selectArgs("SelectSumGE", len(x))
	need("SelectSumGE", "y", len(y), len(x))
	return selected(dst, cur().selectSumGE(dst, x, y[:len(x)], bound))
}

// Max returns the largest non-NaN x[i], or −Inf if there is none (x empty
// or all NaN). A zero maximum is returned as +0, whichever zeros x holds.
func Max(x []float64) float64 { return cur().max(x) }

// SelectGE32 is SelectGE for float32.
func SelectGE32(dst []int32, x []float32, bound float32) (n int, ok bool) {
	selectArgs("SelectGE32", len(x))
	return selected(dst, cur().selectGE32(dst, x, bound))
}

// SelectSumGE32 is SelectSumGE for float32 (the sums rounded to float32).
func SelectSumGE32(dst []int32, x, y []float32, bound float32) (n int, ok bool) {
	selectArgs("SelectSumGE32", len(x))
	need("SelectSumGE32", "y", len(y), len(x))
	return selected(dst, cur().selectSumGE32(dst, x, y[:len(x)], bound))
}

// Max32 is Max for float32.
func Max32(x []float32) float32 { return cur().max32(x) }

// selectArgs panics when some index of x would not fit an int32.
func selectArgs(kernel string, n int) {
	if n > math.MaxInt32+1 {
		panic(fmt.Sprintf("kernels: %s: len(x) = %d, more than int32 indices reach", kernel, n))
	}
}

// selected turns a selection kernel's count (−1: dst overflowed) into
// SelectGE's results.
func selected(dst []int32, n int) (int, bool) {
	if n < 0 {
		return len(dst), false
	}
	return n, true
}
