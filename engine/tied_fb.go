package engine

import "github.com/simdcrf/simdcrf/kernels"

// forward is the scaled forward recursion with the tied structure:
// α'_t[j] = Ψ_t[j]·(D_j·Σ_i α_{t−1}[i] + Σ_{exceptions i→j} α_{t−1}[i]·(E_ij − D_j)).
// The exception sums of a step are one kernels.Rows.SpMV over the columns
// (and backward's one over the rows): colI and rowJ are label indices < M,
// checked once when the exceptions were indexed, so no per-step scan.
func (tf *tiedForm) forward(alpha, scale, psi []float64, T, M int) {
	copy(alpha[:M], psi[:M])
	ones := tf.ones[:M]
	scale[0] = normalize(alpha[:M], ones)
	for t := 1; t < T; t++ {
		prev, cur, ps := alpha[(t-1)*M:t*M], alpha[t*M:(t+1)*M], psi[t*M:(t+1)*M]
		a := kernels.Dot(prev, ones)
		// cur[j] = Σ_{exceptions i→j} α_{t−1}[i]·(E_ij − D_j), all columns
		// in one call (index arrays built and checked once, in index).
		tf.colRows.SpMV(cur, prev, tf.colV)
		dcol := tf.dcol[:M]
		ps = ps[:M]
		for j, x := range cur {
			cur[j] = ps[j] * (dcol[j]*a + x)
		}
		scale[t] = normalize(cur, ones)
	}
}

// backward is the tied backward recursion:
// β_t[i] = (Σ_j D_j·w_j + Σ_{exceptions i→j} (E_ij − D_j)·w_j)/scale_{t+1},
// w_j = Ψ_{t+1}[j]·β_{t+1}[j].
func (tf *tiedForm) backward(beta, scale, psi, w []float64, T, M int) {
	last := beta[(T-1)*M : T*M]
	for i := range last {
		last[i] = 1
	}
	for t := T - 2; t >= 0; t-- {
		next, ps, cur := beta[(t+1)*M:(t+2)*M], psi[(t+1)*M:(t+2)*M], beta[t*M:(t+1)*M]
		w, ps, next := w[:M], ps[:M], next[:M]
		for j := range w {
			w[j] = ps[j] * next[j]
		}
		// The sums over labels are kernels.Dot (vector lanes): one add
		// chain over M = 1,208 labels waited on the add latency at every
		// label.
		W := kernels.Dot(tf.dcol[:M], w)
		inv := 1 / scale[t+1]
		tf.rowRows.SpMV(cur, w[:M], tf.rowV)
		for i, x := range cur {
			cur[i] = (W + x) * inv
		}
	}
}

// counts adds the expected count of every exception (counts[k]) and of all
// default-scored transitions together (counts[len(exc)]):
// Σ_t α_{t−1}[i]·E_ij·Ψ_t[j]·β_t[j]/scale_t over the respective pairs.
// It sums q_k = Σ_t α_{t−1}[i]·b_t[j] (b_t = Ψ_t·β_t/scale_t) for each
// exception in column order in q (len(exc) entries), and applies E_ij and
// the default's D_j once per sequence: the per-step pass is then two
// gathers and a fused multiply-add in order per exception
// (kernels.Pairs.GatherMulAdd; it was a scatter into counts and a read of
// the M×M matrix, 11 MB at M = 1,208: every entry a miss).
func (tf *tiedForm) counts(counts, alpha, beta, psi, scale, bb, q []float64, T, M int) {
	n := len(tf.exc)
	q = q[:n]
	clear(q)
	def := 0.0
	colJ := tf.colJ[:n]
	for t := 1; t < T; t++ {
		inv := 1 / scale[t]
		prev := alpha[(t-1)*M : t*M]
		a := kernels.Dot(prev, tf.ones[:M])
		ps, bt, b := psi[t*M:(t+1)*M], beta[t*M:(t+1)*M], bb[:M]
		for j := range b {
			b[j] = ps[j] * bt[j] * inv
		}
		db := kernels.Dot(tf.dcol[:M], b)
		def += a * db
		tf.colPairs.GatherMulAdd(q, prev, bb[:M])
	}
	for k, v := range q {
		counts[tf.colK[k]] += v * tf.colE[k]
		def -= v * tf.dcol[colJ[k]]
	}
	counts[n] += def
}

// normalize divides row by its sum (kernels.Dot with ones, len(row) ones)
// and returns the sum.
func normalize(row, ones []float64) float64 {
	sum := kernels.Dot(row, ones)
	kernels.Scale(1/sum, row)
	return sum
}
