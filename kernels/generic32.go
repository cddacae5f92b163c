package kernels

import "math"

// The float32 generic kernels: the float64 ones' loops in float32 (every
// operation rounded to float32, as the assembly's are), the oracle of the
// float32 tiers. They are checked against the float64 kernels in turn.

func exp32Generic(dst, src []float32) {
	for i, x := range src {
		dst[i] = exp32Scalar(x)
	}
}

// exp32Scalar rounds the float64 exp (< 1 ulp of float64) to float32: within
// about 0.5 ulp of the correctly rounded float32; flushed below ExpMin32.
func exp32Scalar(x float32) float32 {
	switch {
	case x != x:
		return x
	case float64(x) > ExpMax32: // compared in float64: the constants are not float32s
		return inf32(1)
	case float64(x) < ExpMin32:
		return 0
	}
	return float32(expScalar(float64(x)))
}

func normalize32(row []float32) float32 {
	var sum float32
	for _, v := range row {
		sum += v
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
	return sum
}

func forward32Generic(alpha, scale, psi, e []float32, T, M int) {
	copy(alpha[:M], psi[:M])
	scale[0] = normalize32(alpha[:M])
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
		scale[t] = normalize32(cur)
	}
}

func forwardBatch32Generic(alpha, scale, psi, e []float32, T, K, M int) {
	for k := 0; k < K; k++ {
		a := alpha[k*M : (k+1)*M]
		copy(a, psi[k*M:(k+1)*M])
		scale[k] = normalize32(a)
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
			scale[t*K+k] = normalize32(cur)
		}
	}
}

func backward32Generic(beta, scale, psi, et []float32, T, M int) {
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

func transitions32Generic(g, e, alpha, beta, psi, scale, work []float32, T, M int) {
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

func shiftRows32Generic(out, mx, lo, in, a []float32, T, M int) {
	a = a[:M]
	for t := range T {
		row, src := out[t*M:(t+1)*M], in[t*M:(t+1)*M]
		m, l := inf32(-1), inf32(1)
		for j, v := range src {
			v += a[j]
			row[j] = v
			m = max(m, v)
			if v >= -math.MaxFloat32 {
				l = min(l, v)
			}
		}
		for j := range row {
			row[j] -= m
		}
		mx[t], lo[t] = m, l
	}
}

func viterbi32Generic(delta []float32, bp []int32, s, tr []float32, T, M int) {
	copy(delta[:M], s[:M])
	for t := 1; t < T; t++ {
		prev := delta[(t-1)*M : t*M]
		cur := delta[t*M : (t+1)*M]
		arg := bp[t*M : (t+1)*M]
		d0 := prev[0]
		for j, v := range tr[:M] {
			cur[j] = d0 + v
			arg[j] = 0
		}
		for i := 1; i < M; i++ {
			di := prev[i]
			row := tr[i*M : (i+1)*M]
			for j, v := range row {
				if c := di + v; c > cur[j] {
					cur[j] = c
					arg[j] = int32(i)
				}
			}
		}
		st := s[t*M : (t+1)*M]
		for j := range cur {
			cur[j] += st[j]
		}
	}
}

func viterbiMax32Generic(delta []float32, s, tr []float32, T, M int) {
	copy(delta[:M], s[:M])
	for t := 1; t < T; t++ {
		prev := delta[(t-1)*M : t*M]
		cur := delta[t*M : (t+1)*M]
		d0 := prev[0]
		for j, v := range tr[:M] {
			cur[j] = d0 + v
		}
		for i := 1; i < M; i++ {
			di := prev[i]
			row := tr[i*M : (i+1)*M]
			for j, v := range row {
				if c := di + v; c > cur[j] {
					cur[j] = c
				}
			}
		}
		st := s[t*M : (t+1)*M]
		for j := range cur {
			cur[j] += st[j]
		}
	}
}

func gather32Generic(s, w []float32, ld int, ptr, ids []int32, vals []float32, T, M int) {
	for t := 0; t < T; t++ {
		row := s[t*M : (t+1)*M]
		for f := ptr[t]; f < ptr[t+1]; f++ {
			v := vals[f]
			wr := w[int(ids[f])*ld : int(ids[f])*ld+M]
			for j, x := range wr {
				row[j] += v * x
			}
		}
	}
}

func scatter32Generic(g []float32, ld int, p []float32, ptr, ids []int32, vals []float32, c float32, T, M int) {
	for t := 0; t < T; t++ {
		row := p[t*M : (t+1)*M]
		for f := ptr[t]; f < ptr[t+1]; f++ {
			v := c * vals[f]
			gr := g[int(ids[f])*ld : int(ids[f])*ld+M]
			for j, x := range row {
				gr[j] += v * x
			}
		}
	}
}

func dot32Generic(x, y []float32) float64 {
	sum := 0.0
	for i, v := range x {
		sum += float64(v) * float64(y[i])
	}
	return sum
}

func axpy32Generic(a float32, x, y []float32) {
	for i, v := range x {
		y[i] += a * v
	}
}

func scale32Generic(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}
