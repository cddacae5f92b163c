package kernels

import "math"

// normalize divides row by its sum and returns the sum.
func normalize(row []float64) float64 {
	sum := 0.0
	for _, v := range row {
		sum += v
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
	return sum
}

func forwardGeneric(alpha, scale, psi, e []float64, T, M int) {
	copy(alpha[:M], psi[:M])
	scale[0] = normalize(alpha[:M])
	for t := 1; t < T; t++ {
		prev := alpha[(t-1)*M : t*M]
		cur := alpha[t*M : (t+1)*M]
		clear(cur)
		for i, a := range prev {
			row := e[i*M : (i+1)*M]
			for j, v := range row {
				cur[j] += a * v
			}
		}
		ps := psi[t*M : (t+1)*M]
		for j := range cur {
			cur[j] *= ps[j]
		}
		scale[t] = normalize(cur)
	}
}

func backwardGeneric(beta, scale, psi, et []float64, T, M int) {
	last := beta[(T-1)*M : T*M]
	for i := range last {
		last[i] = 1
	}
	for t := T - 2; t >= 0; t-- {
		next := beta[(t+1)*M : (t+2)*M]
		ps := psi[(t+1)*M : (t+2)*M]
		cur := beta[t*M : (t+1)*M]
		clear(cur)
		for j, b := range next {
			w := ps[j] * b
			row := et[j*M : (j+1)*M]
			for i, v := range row {
				cur[i] += w * v
			}
		}
		inv := 1 / scale[t+1]
		for i := range cur {
			cur[i] *= inv
		}
	}
}

func forwardBatchGeneric(alpha, scale, psi, e []float64, T, K, M int) {
	for k := 0; k < K; k++ {
		a := alpha[k*M : (k+1)*M]
		copy(a, psi[k*M:(k+1)*M])
		scale[k] = normalize(a)
	}
	for t := 1; t < T; t++ {
		for k := 0; k < K; k++ {
			prev := alpha[((t-1)*K+k)*M : ((t-1)*K+k+1)*M]
			cur := alpha[(t*K+k)*M : (t*K+k+1)*M]
			clear(cur)
			for i, a := range prev {
				row := e[i*M : (i+1)*M]
				for j, v := range row {
					cur[j] += a * v
				}
			}
			ps := psi[(t*K+k)*M : (t*K+k+1)*M]
			for j := range cur {
				cur[j] *= ps[j]
			}
			scale[t*K+k] = normalize(cur)
		}
	}
}

func transitionsGeneric(g, e, alpha, beta, psi, scale, work []float64, T, M int) {
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
			a := alpha[(t-1)*M+i]
			row := bb[(t-1)*M : t*M]
			for j, v := range row {
				acc[j] += a * v
			}
		}
		gi := g[i*M : (i+1)*M]
		ei := e[i*M : (i+1)*M]
		for j := range gi {
			gi[j] += ei[j] * acc[j]
		}
	}
}

func shiftRowsGeneric(out, mx, lo, in, a []float64, T, M int) {
	a = a[:M]
	for t := range T {
		row, src := out[t*M:(t+1)*M], in[t*M:(t+1)*M]
		m, l := math.Inf(-1), math.Inf(1)
		for j, v := range src {
			v += a[j]
			row[j] = v
			m = max(m, v)
			if v >= -math.MaxFloat64 {
				l = min(l, v)
			}
		}
		for j := range row {
			row[j] -= m
		}
		mx[t], lo[t] = m, l
	}
}
