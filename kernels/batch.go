package kernels

// TransitionsBatch adds the expected transition counts of K sequences run
// in lockstep (the layouts of ForwardBatch: alpha, beta and psi T×K×M with
// row t·K+k for sequence k at position t, scale T×K) to g, summed over the
// sequences. Row r of alpha pairs with row r+K of Ψ, β and the scales, so
// the sum over every sequence and position is one matrix product, the one
// Transitions forms for a single sequence: this is Transitions on the rows
// shifted by K−1, with (T−1)·K pairs. work needs (T−1)·K+1 rows of M.
func TransitionsBatch(g, e, alpha, beta, psi, scale, work []float64, T, K, M int) {
	if T < 2 || K < 1 {
		checkSeq("TransitionsBatch", T*K, M, "alpha", len(alpha), "beta", len(beta))
		return
	}
	checkSeq("TransitionsBatch", T*K, M, "alpha", len(alpha), "beta", len(beta))
	need("TransitionsBatch", "psi", len(psi), T*K*M)
	need("TransitionsBatch", "scale", len(scale), T*K)
	s := (K - 1) * M
	Transitions(g, e, alpha, beta[s:], psi[s:], scale[K-1:], work, (T-1)*K+1, M)
}

// TransitionsBatch32 is TransitionsBatch in float32 (see Transitions32).
func TransitionsBatch32(g, e, alpha, beta, psi, scale, work []float32, T, K, M int) {
	if T < 2 || K < 1 {
		checkSeq("TransitionsBatch32", T*K, M, "alpha", len(alpha), "beta", len(beta))
		return
	}
	checkSeq("TransitionsBatch32", T*K, M, "alpha", len(alpha), "beta", len(beta))
	need("TransitionsBatch32", "psi", len(psi), T*K*M)
	need("TransitionsBatch32", "scale", len(scale), T*K)
	s := (K - 1) * M
	Transitions32(g, e, alpha, beta[s:], psi[s:], scale[K-1:], work, (T-1)*K+1, M)
}
