package kernels

import "math"

// The probability-domain kernels, one function for float64 and float32:
// the float32 instances round every operation to float32, as the float32
// assembly does, and are the oracle of the float32 tiers (checked against
// the float64 instances in turn).

// normalize divides row by its sum and returns the sum.
func normalize[F float](row []F) F {
	var sum F
	for _, v := range row {
		sum += v
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
	return sum
}

// forwardStep sets cur = Ψ_t∘(prevᵀE) / scale_t and returns scale_t (ps is
// Ψ_t, e is M×M with M = len(cur)).
func forwardStep[F float](cur, prev, ps, e []F) F {
	M := len(cur)
	clear(cur)
	for i, a := range prev {
		row := e[i*M : (i+1)*M]
		for j, v := range row {
			cur[j] += a * v
		}
	}
	for j := range cur {
		cur[j] = ps[j] * cur[j]
	}
	return normalize(cur)
}

// backwardStep sets cur[i] = Σ_j et[j][i]·ps[j]·next[j] / scale (ps is
// Ψ_{t+1}, et is Eᵀ, M×M with M = len(cur), scale is scale_{t+1}).
func backwardStep[F float](cur, next, ps, et []F, scale F) {
	M := len(cur)
	clear(cur)
	for j, b := range next {
		w := ps[j] * b
		row := et[j*M : (j+1)*M]
		for i, v := range row {
			cur[i] += w * v
		}
	}
	inv := 1 / scale
	for i := range cur {
		cur[i] *= inv
	}
}

func forwardGeneric[F float](alpha, scale, psi, e []F, T, M int) {
	copy(alpha[:M], psi[:M])
	scale[0] = normalize(alpha[:M])
	for t := 1; t < T; t++ {
		scale[t] = forwardStep(alpha[t*M:(t+1)*M], alpha[(t-1)*M:t*M], psi[t*M:(t+1)*M], e)
	}
}

func backwardGeneric[F float](beta, scale, psi, et []F, T, M int) {
	last := beta[(T-1)*M : T*M]
	for i := range last {
		last[i] = 1
	}
	for t := T - 2; t >= 0; t-- {
		backwardStep(beta[t*M:(t+1)*M], beta[(t+1)*M:(t+2)*M], psi[(t+1)*M:(t+2)*M], et, scale[t+1])
	}
}

func forwardBatchGeneric[F float](alpha, scale, psi, e []F, from []int32, T, K, M int) {
	for k := 0; k < K; k++ {
		a := alpha[k*M : (k+1)*M]
		copy(a, psi[k*M:(k+1)*M])
		scale[k] = normalize(a)
	}
	for t := 1; t < T; t++ {
		for k := first(from, t); k < K; k++ {
			r, p := (t*K+k)*M, ((t-1)*K+k)*M
			scale[t*K+k] = forwardStep(alpha[r:r+M], alpha[p:p+M], psi[r:r+M], e)
		}
	}
}

// backwardBatchGeneric is the generic BackwardBatch (Backward's steps per
// sequence; work is not needed).
func backwardBatchGeneric[F float](beta, scale, psi, et, _ []F, from []int32, T, K, M int) {
	last := beta[(T-1)*K*M : T*K*M]
	for i := range last {
		last[i] = 1
	}
	for t := T - 2; t >= 0; t-- {
		for k := first(from, t); k < K; k++ {
			r, n := (t*K+k)*M, ((t+1)*K+k)*M
			backwardStep(beta[r:r+M], beta[n:n+M], psi[n:n+M], et, scale[(t+1)*K+k])
		}
	}
}

// first is from[t], or 0 when from is empty: the first sequence of a
// lockstep batch whose row t is computed.
func first(from []int32, t int) int {
	if len(from) == 0 {
		return 0
	}
	return int(from[t])
}

func transitionsGeneric[F float](g, e, alpha, beta, psi, scale, work []F, T, M int) {
	// bb_t = Ψ_t∘β_t/scale_t for t = 1..T−1 in rows 0..T−2 of work; the
	// last row of work accumulates one row of the product.
	bb := work[:(T-1)*M]
	for t := 1; t < T; t++ {
		inv := 1 / scale[t]
		row := bb[(t-1)*M : t*M]
		ps := psi[t*M : (t+1)*M]
		be := beta[t*M : (t+1)*M]
		for j := range row {
			row[j] = ps[j] * be[j] * inv
		}
	}
	acc := work[(T-1)*M : T*M]
	for i := 0; i < M; i++ {
		clear(acc)
		for t := 1; t < T; t++ {
			// acc += a·bb_t, four at a time: the rolled loop's speed hung on
			// its alignment (×1.6 between builds); each acc[j] rounds as before.
			a := alpha[(t-1)*M+i]
			row := bb[(t-1)*M : t*M]
			j := 0
			for ; j+4 <= M; j += 4 {
				r, c := row[j:j+4:j+4], acc[j:j+4:j+4]
				c[0] += a * r[0]
				c[1] += a * r[1]
				c[2] += a * r[2]
				c[3] += a * r[3]
			}
			for ; j < M; j++ {
				acc[j] += a * row[j]
			}
		}
		gi := g[i*M : (i+1)*M]
		ei := e[i*M : (i+1)*M]
		for j := range gi {
			gi[j] += ei[j] * acc[j]
		}
	}
}

// backwardTransitionsOf returns BackwardTransitions made of a tier's
// Backward and Transitions: for tiers without the fused kernel, and above
// its labels.
func backwardTransitionsOf[F float](bw func(beta, scale, psi, et []F, T, M int), tr func(g, e, alpha, beta, psi, scale, work []F, T, M int)) func(g, e, alpha, beta, psi, scale, et, work []F, T, M int) {
	return func(g, e, alpha, beta, psi, scale, et, work []F, T, M int) {
		bw(beta, scale, psi, et, T, M)
		if T >= 2 {
			tr(g, e, alpha, beta, psi, scale, work, T, M)
		}
	}
}

func shiftRowsGeneric[F float](out, mx, lo, in, a []F, T, M int) {
	a = a[:M]
	ninf, pinf := F(math.Inf(-1)), F(math.Inf(1))
	for t := range T {
		row, src := out[t*M:(t+1)*M], in[t*M:(t+1)*M]
		m, l := ninf, pinf
		for j, v := range src {
			v += a[j]
			row[j] = v
			m = max(m, v)
			if v > ninf { // v ≥ −MaxFloat: not −Inf (nor NaN)
				l = min(l, v)
			}
		}
		for j := range row {
			row[j] -= m
		}
		mx[t], lo[t] = m, l
	}
}

// lagSafe reports whether the scales the amd64 Forward kernels' lagged
// division (lagChecked) used all lie in [2⁻ᵇ, 2ᵇ], b = 32 in float64 and
// 16 in float32. Then a lagged product c_{t−1}·α'_t overflows only where
// α'_t itself would (and the scale that follows is out of range), and an
// entry of α above the kernel tests' absolute slack (1e−280, 1e−30) keeps
// its precision.
func lagSafe[F float](scale []F) bool {
	lo, hi := F(0x1p-32), F(0x1p32)
	if _, ok := any(lo).(float32); ok {
		lo, hi = 0x1p-16, 0x1p16
	}
	for _, c := range scale {
		if !(c >= lo && c <= hi) {
			return false
		}
	}
	return true
}
