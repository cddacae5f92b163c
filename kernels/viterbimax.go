package kernels

// ViterbiMax is Viterbi without back-pointers, for callers that want the
// labelling only: the forward pass keeps δ alone (a max per candidate
// instead of a max and an argmax: about half the work of Viterbi's), and the
// backtrace recovers the pointer of each chosen label by recomputing
// argmax_i δ_{t−1}[i] + tr[i][y_t] with Viterbi's additions, order and tie
// rule (O(M) per position). delta, path and the returned score are exactly
// Viterbi's (δ bit-identical in every tier; the recomputed pointers are the
// ones Viterbi's bp holds along the path). trT may be nil, or tr
// transposed (M×M), which the backtrace then reads instead of tr's columns.
// With T == 0 it returns 0.
func ViterbiMax(path []int32, delta []float64, s, tr, trT []float64, T, M int) float64 {
	if !viterbiMaxArgs("ViterbiMax", len(path), len(delta), len(s), len(tr), trT != nil, len(trT), T, M) {
		return 0
	}
	cur().viterbiMax(delta, s, tr, T, M)
	return backtraceMax(path, delta, s, tr, trT, T, M)
}

// viterbiMaxArgs is viterbiArgs with the optional trT (hasTrT: not nil).
func viterbiMaxArgs(kernel string, lpath, ldelta, ls, ltr int, hasTrT bool, ltrT, T, M int) bool {
	if hasTrT {
		need(kernel, "trT", ltrT, area(kernel, M, M))
	}
	return viterbiArgs(kernel, lpath, ldelta, ls, ltr, T, M)
}
