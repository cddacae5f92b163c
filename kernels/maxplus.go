package kernels

// MaxPlusCSR is a max-plus CSR matrix–vector product that updates given
// candidates with argmax: for every row r < len(y), over the entries
// k ∈ [ptr[r], ptr[r+1]) with candidate c = x[idx[k]] + v[k],
//
//	if c > y[r] || (c == y[r] && (arg[r] < 0 || idx[k] < arg[r])) {
//		y[r], arg[r] = c, idx[k]
//	}
//
// that is, y[r] ends as the largest of its own value and the row's
// candidates and arg[r] as the lowest index among those equal to it (a
// negative arg[r] means "no index" and loses every tie; an initial
// (y[r], arg[r]) wins a tie with an entry of the same index). Equality is
// ==, so −0 and +0 tie and the value kept is the winner's own, sign of zero
// included: with distinct indices in a row this is what a dense scan over
// the indices in increasing order with a strict > keeps (the tied Viterbi
// in package engine relies on it).
//
// NaN: a NaN candidate (a NaN in x or v, or Inf−Inf) and a NaN y[r] count
// as -Inf, so y is never NaN afterwards (a NaN y[r] that nothing replaces
// becomes -Inf, keeping arg[r]).
//
// Every tier gives the same y and arg bit for bit, with one exception: when
// a row holds the same index more than once and two of those entries tie
// for the row's best at zero (+0 and −0, as above), which one's zero is
// kept is not specified (the vector tiers reduce a row's entries in a tree;
// the generic code keeps the first). Rows with distinct indices, such as
// the engine's, are not affected.
//
// ptr has at least len(y)+1 entries, ascending; its entries are offsets into
// idx and v, and ptr[0] need not be 0. len(arg) ≥ len(y). The indices must
// be in [0, len(x)); MaxPlusCSR checks them and ptr (an O(entries) scan: Rows
// checks a structure once).
//
// The amd64 tiers use VGATHERDPD for x[idx[k]] (AVX2 and AVX-512, the last
// step of a row masked to its remaining entries). arm64 has no gather
// instruction: NEON leaves MaxPlusCSR to the generic code.
func MaxPlusCSR(y []float64, arg []int32, x []float64, ptr, idx []int32, v []float64) {
	checkMaxPlusCSR(y, arg, ptr, idx, v)
	if len(y) == 0 {
		return
	}
	checkRowIndices("MaxPlusCSR", len(y), ptr, idx, len(x))
	cur().maxPlusCSR(y, arg[:len(y)], x, ptr, idx, v)
}

func checkMaxPlusCSR(y []float64, arg []int32, ptr, idx []int32, v []float64) {
	if len(y) > 0 {
		need("MaxPlusCSR", "arg", len(arg), len(y))
	}
	checkRows("MaxPlusCSR", len(y), ptr, idx, v)
}

// MaxPlusCSRVector reports whether MaxPlusCSR runs a vector tier (amd64 with
// AVX2 or AVX-512) under the implementation in use. Without one (arm64,
// purego builds, older CPUs) it is the generic loop over each row's entries,
// whose exit mispredicts at nearly every short row: a caller that has the
// row of every entry can do better with one flat pass over all entries
// (engine's tied Viterbi does).
func MaxPlusCSRVector() bool {
	return cur().vectorMaxPlus
}
