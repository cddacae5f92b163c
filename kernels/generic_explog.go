package kernels

import "math"

func expGeneric(dst, src []float64) {
	for i, x := range src {
		dst[i] = expScalar(x)
	}
}

// exp32Generic is not expGeneric in float32: a float32 exp is the float64
// one rounded (within about 0.5 ulp of the correctly rounded float32),
// with float32's own flush and overflow thresholds.
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

// expScalar is Exp for one value: flush below ExpMin, else the portable
// fdlibm exp of Go's math/exp.go (< 1 ulp).
//
// It does not call math.Exp because Go's amd64 math.Exp (assembly) is both
// less accurate (we measured errors up to 1.88 ulp against a 200-bit
// reference) and overflows early: it returns +Inf for x from about 709.436
// (where its round(x·log2e) reaches 1024) up to ExpMax, although exp(x) is
// finite there.
func expScalar(x float64) float64 {
	const (
		Ln2Hi = 6.93147180369123816490e-01
		Ln2Lo = 1.90821492927058770002e-10
		Log2e = 1.44269504088896338700e+00

		NearZero = 1.0 / (1 << 28) // 2**-28

		P1 = 1.66666666666666657415e-01  /* 0x3FC55555; 0x55555555 */
		P2 = -2.77777777770155933842e-03 /* 0xBF66C16C; 0x16BEBD93 */
		P3 = 6.61375632143793436117e-05  /* 0x3F11566A; 0xAF25DE2C */
		P4 = -1.65339022054652515390e-06 /* 0xBEBBBD41; 0xC5D26BF1 */
		P5 = 4.13813679705723846039e-08  /* 0x3E663769; 0x72BEA4D0 */
	)
	switch {
	case x != x:
		return x
	case x > ExpMax: // handles +Inf
		return math.Inf(1)
	case x < ExpMin: // handles -Inf; flush instead of subnormal results
		return 0
	case -NearZero < x && x < NearZero:
		return 1 + x
	}
	// reduce; computed as r = hi - lo for extra precision.
	var k int
	switch {
	case x < 0:
		k = int(Log2e*x - 0.5)
	case x > 0:
		k = int(Log2e*x + 0.5)
	}
	hi := x - float64(k)*Ln2Hi
	lo := float64(k) * Ln2Lo
	r := hi - lo
	t := r * r
	c := r - t*(P1+t*(P2+t*(P3+t*(P4+t*P5))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

func logGeneric(dst, src []float64) {
	for i, x := range src {
		dst[i] = logScalar(x)
	}
}

// logScalar is Log for one value: math.Log, except for subnormal x, where
// Go's amd64 math.Log is wrong (it returns about log(2^-1023) for every
// subnormal: its exponent extraction ignores them). Those go through
// subnormalLog.
func logScalar(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return subnormalLog(x)
	}
	return math.Log(x)
}

// subnormalLog is the portable fdlibm log of Go's math/log.go (whose Frexp
// normalises subnormals), for 0 < x < 2^-1022.
func subnormalLog(x float64) float64 {
	const (
		Ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		Ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		L1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		L2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		L3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		L4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		L5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		L6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		L7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := s2 * (L1 + s4*(L3+s4*(L5+s4*L7)))
	t2 := s4 * (L2 + s4*(L4+s4*L6))
	R := t1 + t2
	hfsq := 0.5 * f * f
	return k*Ln2Hi - ((hfsq - (s*(hfsq+R) + k*Ln2Lo)) - f)
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
