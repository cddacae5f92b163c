package train

import (
	"math/rand/v2"
	"testing"

	"github.com/simdcrf/simdcrf/sparse"
)

// TestHybridScoreGradient checks the hybrid layout's scoring and gradient
// (hot rows through the kernels, cold features through scoreCold's and
// gradientCold's loops) against a sum over the pattern's pairs feature by
// feature, with and without feature values, with the cold weights alone
// (stride 1) and beside their gradient (stride 2), in float64 and float32.
// At M = 24 an attribute is cold with 1 to 5 labels, so every loop of
// scoreCold runs; with shortIdx 0 the labels are stored with their
// features' positions apart (cBase), as for long sequences at large M.
func TestHybridScoreGradient(t *testing.T) {
	for _, short := range []bool{true, false} {
		for _, vals := range []bool{false, true} {
			testHybrid(t, short, vals)
		}
	}
}

func testHybrid(t *testing.T, short, vals bool) {
	const m, numAttrs = 24, 90
	if !short {
		defer func(n int) { shortIdx = n }(shortIdx)
		shortIdx = 0
	}
	r := rand.New(rand.NewPCG(11, uint64(b2i(vals))))
	c := sparse.NewCorpus()
	var b sparse.Builder
	for range 80 {
		b.Reset()
		for range 1 + r.IntN(9) {
			for range 1 + r.IntN(6) {
				v := 1.0
				if vals {
					v = 0.25 + r.Float64()
				}
				// skewed: a few attributes common (hot), most rare
				b.Add(int32(r.IntN(1+r.IntN(numAttrs))), v)
			}
			b.End(int32(r.IntN(m)))
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
	}
	d := &Data{Corpus: c, NumAttrs: numAttrs, Labels: m}
	cfg, _ := Defaults("lbfgs")
	md, err := newParamSpace(d, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	hy, pat := md.hy, md.pattern
	sc := hy.split(c)
	if (sc.cBase == nil) != short {
		t.Fatalf("short offsets %v: cBase set %v", short, sc.cBase != nil)
	}
	if (sc.v64.cold != nil) != vals {
		t.Fatalf("values %v: the split's cold values are %v", vals, sc.v64.cold != nil)
	}
	var seen [6]bool
	for _, g := range sc.cGrp {
		seen[min(g.n, 5)] = true
	}
	if !seen[1] || !seen[2] || !seen[3] || !seen[4] || !seen[5] || hy.nHot == 0 {
		t.Fatalf("values %v: cold groups with n = 1..5 %v, %d hot rows: the data does not reach every loop", vals, seen[1:], hy.nHot)
	}
	nh := hy.hotSize()
	theta := make([]float64, md.nState)
	for k := range theta {
		if md.trainable(k) {
			theta[k] = r.NormFloat64()
		}
	}
	// weight returns θ(a, the k-th label of a's row).
	weight := func(a int32, y int32, k int) float64 {
		if row := hy.hot.Row(a); row >= 0 {
			return theta[int(row)*hy.ld+int(y)]
		}
		return theta[nh+int(hy.coldOff[a])+k]
	}
	// masked clears the hot rows' gradient outside the pattern, which
	// ScatterHot fills and the objective masks (stateMask).
	masked := func(g []float64) {
		for k := range g[:nh] {
			if !md.trainable(k) {
				g[k] = 0
			}
		}
	}
	var lab []int32
	for i := range c.Len() {
		check := func(what string, stride int32, got, want []float64, tol float64) {
			t.Helper()
			if !near(got, want, tol) {
				t.Fatalf("%s, short offsets %v, values %v, stride %d, sequence %d: %v, want %v", what, short, vals, stride, i, got, want)
			}
		}
		s := c.Seq(i)
		T := s.Len()
		p := make([]float64, T*m)
		for k := range p {
			p[k] = r.Float64()
		}
		const coef = 0.75
		want := make([]float64, T*m)
		wantG := make([]float64, md.nState)
		for tt := range T {
			for f := s.Ptr[tt]; f < s.Ptr[tt+1]; f++ {
				a, v := s.IDs[f], s.Value(int(f))
				lab = pat.AttrLabels(lab[:0], a)
				for k, y := range lab {
					want[tt*m+int(y)] += v * weight(a, y, k)
					idx := nh + int(hy.coldOff[a]) + k
					if row := hy.hot.Row(a); row >= 0 {
						idx = int(row)*hy.ld + int(y)
					}
					wantG[idx] += coef * v * p[tt*m+int(y)]
				}
			}
		}
		for _, stride := range []int32{1, 2} {
			cold := make([]float64, int(stride)*(md.nState-nh))
			for j, w := range theta[nh:] {
				cold[int(stride)*j] = w
			}
			emit := make([]float64, T*m)
			scoreSeq(hy, &sc.v64, theta[:nh], cold, stride, emit, sc, i)
			check("score", stride, emit, want, 1e-12)
			g := make([]float64, md.nState)
			gc := make([]float64, len(cold))
			addGradientSeq(hy, &sc.v64, g[:nh], gc, stride, p, sc, i, coef)
			for j := range g[nh:] {
				g[nh+j] = gc[int(stride)*j]
			}
			masked(g)
			check("gradient", stride, g, wantG, 1e-12)

			v32 := valsTo32(&sc.v64)
			e32 := make([]float32, T*m)
			scoreSeq(hy, &v32, to32(theta[:nh]), to32(cold), stride, e32, sc, i)
			check("score (float32)", stride, to64(e32), want, 1e-5)
			g32 := make([]float32, nh)
			gc32 := make([]float32, len(cold))
			addGradientSeq(hy, &v32, g32, gc32, stride, to32(p), sc, i, coef)
			copy(g, to64(g32))
			for j := range g[nh:] {
				g[nh+j] = float64(gc32[int(stride)*j])
			}
			masked(g)
			check("gradient (float32)", stride, g, wantG, 1e-5)
		}
	}
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for k, v := range x {
		y[k] = float64(v)
	}
	return y
}
