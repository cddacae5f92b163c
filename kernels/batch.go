package kernels

// BackwardBatch runs Backward on K sequences of the same length T in
// lockstep (the layouts of ForwardBatch: beta and psi T×K×M, scale T×K from
// ForwardBatch), each step a matrix–matrix product (K×M times Eᵀ). work is
// scratch space of at least K·M elements. Sequence k's β equals Backward's
// on its own rows, up to rounding.
//
// Sequences of different lengths, shortest first, skip their padding when
// from is T long: the step to row t computes sequences from[t].. only and
// leaves the others' rows as they are. Aligned at the end (AlignBatchEnd),
// from does not increase: a sequence starts at the first step that takes
// it. Aligned at the start, as ForwardBatch leaves them, from does not
// decrease: a sequence of length L < T takes the steps to rows L−2 .. 0,
// and the caller sets its row L−1 to 1. from is at most K; from[T−1] is
// ignored (row T−1, set to 1, is every sequence's). An empty from runs
// every sequence over all T rows.
func BackwardBatch(beta, scale, psi, et, work []float64, from []int32, T, K, M int) {
	if backwardBatchArgs("BackwardBatch", len(beta), len(scale), len(psi), len(et), len(work), T, K, M) &&
		fromArgs("BackwardBatch", from, T, K, true) {
		cur().backwardBatch(beta, scale, psi, et, work, from, T, K, M)
	}
}

// AlignBatchEnd moves each of K chains of a lockstep batch (psi and alpha
// T×K×M, scale T×K, as ForwardBatch leaves them, chain k's P = pad[k]
// padding rows at the end) to end at row T−1, its first P rows then
// Ψ = 0, α = 0 and scale 1: BackwardBatch runs every chain from the last
// row, so a shorter chain must end there. pad[k] = T (a chain left out)
// clears all its rows, so that sums over the batch's chains (the
// transition counts) get nothing from it.
func AlignBatchEnd[F float32 | float64](psi, alpha, scale []F, pad []int32, T, K, M int) {
	for k := range K {
		P := min(int(pad[k]), T)
		if P == 0 {
			continue
		}
		for t := T - 1 - P; t >= 0; t-- {
			src, dst := (t*K+k)*M, ((t+P)*K+k)*M
			copy(psi[dst:dst+M], psi[src:src+M])
			copy(alpha[dst:dst+M], alpha[src:src+M])
			scale[(t+P)*K+k] = scale[t*K+k]
		}
		for t := range P {
			r := (t*K + k) * M
			clear(psi[r : r+M])
			clear(alpha[r : r+M])
			scale[t*K+k] = 1
		}
	}
}

// BackwardBatch32 is BackwardBatch in float32.
func BackwardBatch32(beta, scale, psi, et, work []float32, from []int32, T, K, M int) {
	if backwardBatchArgs("BackwardBatch32", len(beta), len(scale), len(psi), len(et), len(work), T, K, M) &&
		fromArgs("BackwardBatch32", from, T, K, true) {
		cur().backwardBatch32(beta, scale, psi, et, work, from, T, K, M)
	}
}

func backwardBatchArgs(kernel string, lbeta, lscale, lpsi, let, lwork, T, K, M int) bool {
	ok := fbArgs(kernel, "beta", "et", lbeta, lscale, lpsi, let, area(kernel, T, K), M)
	need(kernel, "work", lwork, area(kernel, K, M))
	return ok
}

// TransitionsBatch adds the expected transition counts of K sequences run
// in lockstep (the layouts of ForwardBatch: alpha, beta and psi T×K×M with
// row t·K+k for sequence k at position t, scale T×K) to g, summed over the
// sequences. Row r of alpha pairs with row r+K of Ψ, β and the scales, so
// the sum over every sequence and position is one matrix product, the one
// Transitions forms for a single sequence: this is Transitions on the rows
// shifted by K−1, with (T−1)·K pairs. work needs (T−1)·K+1 rows of M.
func TransitionsBatch(g, e, alpha, beta, psi, scale, work []float64, T, K, M int) {
	transitionsBatch("TransitionsBatch", Transitions, g, e, alpha, beta, psi, scale, work, T, K, M)
}

// TransitionsBatch32 is TransitionsBatch in float32 (see Transitions32).
func TransitionsBatch32(g, e, alpha, beta, psi, scale, work []float32, T, K, M int) {
	transitionsBatch("TransitionsBatch32", Transitions32, g, e, alpha, beta, psi, scale, work, T, K, M)
}

// transitionsBatch is TransitionsBatch for either element type, on
// transitions (Transitions or Transitions32).
func transitionsBatch[F float](kernel string, transitions func(g, e, alpha, beta, psi, scale, work []F, T, M int), g, e, alpha, beta, psi, scale, work []F, T, K, M int) {
	checkSeq(kernel, area(kernel, T, K), M, "alpha", len(alpha), "beta", len(beta))
	if T < 2 || K < 1 {
		return
	}
	need(kernel, "psi", len(psi), T*K*M)
	need(kernel, "scale", len(scale), T*K)
	s := (K - 1) * M
	transitions(g, e, alpha, beta[s:], psi[s:], scale[K-1:], work, (T-1)*K+1, M)
}
