package kernels

import "math"

func expGeneric(dst, src []float64) {
	for i, x := range src {
		dst[i] = expScalar(x)
	}
}

// expScalar is Exp for one value: math.Exp with the flush below ExpMin.
//
// Go's amd64 math.Exp overflows early: it returns +Inf for x from about
// 709.436 (where round(x·log2e) reaches 1024) up to ExpMax, although exp(x)
// is finite there. That range goes through exp(x) = 2^1024·exp(r) with
// r = x − 1024·ln2 ∈ (−0.57, 0], computed as (x − 1024·ln2Hi) − 1024·ln2Lo:
// the first difference is exact (1024·ln2Hi is exact and within a factor 2
// of x), the second rounds once, an absolute error in r ≤ 2^-54, i.e. a
// relative error ≤ 0.25 ulp in the result on top of math.Exp's own.
func expScalar(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
	)
	switch {
	case x < ExpMin:
		return 0
	case x > 709 && x <= ExpMax:
		r := (x - 1024*ln2Hi) - 1024*ln2Lo
		return math.Ldexp(math.Exp(r), 1024)
	}
	return math.Exp(x)
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
