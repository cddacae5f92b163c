package kernels

func dotGeneric(x, y []float64) float64 {
	sum := 0.0
	for i, v := range x {
		sum += v * y[i]
	}
	return sum
}

func axpyGeneric(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

func scaleGeneric(a float64, x []float64) {
	for i := range x {
		x[i] *= a
	}
}
