package kernels

import "math"

func expGeneric(dst, src []float64) {
	for i, x := range src {
		if x < ExpMin {
			dst[i] = 0
		} else {
			dst[i] = math.Exp(x)
		}
	}
}

func logGeneric(dst, src []float64) {
	for i, x := range src {
		dst[i] = math.Log(x)
	}
}

func logMatVecGeneric(out, a, tr []float64, M int) {
	// Column maxima first (row-wise, so tr is read in order), then the sums.
	for j := range out[:M] {
		out[j] = math.Inf(-1)
	}
	for i, ai := range a[:M] {
		row := tr[i*M : (i+1)*M]
		for j, v := range row {
			if x := ai + v; x > out[j] {
				out[j] = x
			}
		}
	}
	for j := 0; j < M; j++ {
		m := out[j]
		if math.IsInf(m, 0) {
			continue
		}
		sum := 0.0
		for i, ai := range a[:M] {
			x := ai + tr[i*M+j] - m
			if x >= ExpMin {
				sum += math.Exp(x)
			} else if x != x {
				sum += x
			}
		}
		out[j] = m + math.Log(sum)
	}
}
