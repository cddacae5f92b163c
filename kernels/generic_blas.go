package kernels

// dotGeneric sums in float64 for both element types: Dot32 promises exact
// products and a float64 sum (for float64 the conversions are no-ops).
func dotGeneric[F float](x, y []F) float64 {
	sum := 0.0
	for i, v := range x {
		sum += float64(v) * float64(y[i])
	}
	return sum
}

func axpyGeneric[F float](a F, x, y []F) {
	for i, v := range x {
		y[i] += a * v
	}
}

// mulGeneric is Mul: (x·y)·a, rounded in that order.
func mulGeneric[F float](dst, x, y []F, a F) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v * y[i] * a
	}
}

func axpyWidenGeneric(a float64, x []float32, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * float64(v)
	}
}

func scaleGeneric[F float](a F, x []F) {
	for i := range x {
		x[i] *= a
	}
}
