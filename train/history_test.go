package train

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// TestHistoryDirection compares the coefficient-space two-loop recursion
// with the textbook one over the vectors, for every fill of the ring (and
// after it wraps), with and without OWL-QN's projection; and checks that
// running the blocks in parallel gives the same bits.
func TestHistoryDirection(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, m = 3*qnBlock + 77, 4
	vec := func() []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	par := func(nb int, f func(b int)) {
		var wg sync.WaitGroup
		for b := range nb {
			wg.Add(1)
			go func() { defer wg.Done(); f(b) }()
		}
		wg.Wait()
	}
	h, hp := newHistory(m, newVecOps(n, nil)), newHistory(m, newVecOps(n, par))
	var ss, ys [][]float64
	for it := range 7 {
		// A convex-looking pair: y = A·s with A diagonal and positive.
		x, xp, gp := vec(), vec(), vec()
		g := make([]float64, n)
		for i := range g {
			g[i] = gp[i] + (1+float64(i%5))*(x[i]-xp[i])
		}
		dir := vec()
		xx, dd := h.update(x, xp, g, gp, dir)
		hp.update(x, xp, g, gp, dir)
		if !closeRel(xx, kernels.Dot(x, x)) || !closeRel(dd, kernels.Dot(dir, dir)) {
			t.Fatalf("update: x·x %v dir·dir %v, want %v %v", xx, dd, kernels.Dot(x, x), kernels.Dot(dir, dir))
		}
		s, y := make([]float64, n), make([]float64, n)
		for i := range s {
			s[i], y[i] = x[i]-xp[i], g[i]-gp[i]
		}
		ss, ys = append(ss, s), append(ys, y)
		if len(ss) > m {
			ss, ys = ss[1:], ys[1:]
		}
		// The textbook recursion (oldest pair first in ss).
		want := make([]float64, n)
		for i, v := range dir {
			want[i] = -v
		}
		alpha := make([]float64, len(ss))
		for j := len(ss) - 1; j >= 0; j-- {
			alpha[j] = kernels.Dot(ss[j], want) / kernels.Dot(ss[j], ys[j])
			kernels.Axpy(-alpha[j], ys[j], want)
		}
		last := len(ss) - 1
		kernels.Scale(kernels.Dot(ss[last], ys[last])/kernels.Dot(ys[last], ys[last]), want)
		for j := range ss {
			beta := kernels.Dot(ys[j], want) / kernels.Dot(ss[j], ys[j])
			kernels.Axpy(alpha[j]-beta, ss[j], want)
		}
		for _, owl := range []bool{false, true} {
			var pg []float64
			lo, hi := 0, 0
			w := append([]float64(nil), want...)
			if owl {
				pg, lo, hi = vec(), 100, n-100
				for i := lo; i < hi; i++ {
					if w[i]*pg[i] >= 0 {
						w[i] = 0
					}
				}
			}
			d, dp := vec(), vec()
			dg := h.direction(d, dir, pg, lo, hi)
			hp.direction(dp, dir, pg, lo, hi)
			if !closeRel(dg, kernels.Dot(dir, d)) {
				t.Fatalf("direction returned dir·d = %v, want %v", dg, kernels.Dot(dir, d))
			}
			scale := math.Sqrt(kernels.Dot(want, want) / n)
			for i := range d {
				// Both recursions round differently; the coefficient form
				// adds a few products of the pairs' inner products (≈ n
				// in size), so allow 1e-9 of the direction's scale.
				if math.Abs(d[i]-w[i]) > 1e-9*scale && !(w[i] == 0 && d[i] == 0) {
					t.Fatalf("iteration %d owl %v: d[%d] = %v, textbook %v", it, owl, i, d[i], w[i])
				}
				if math.Float64bits(d[i]) != math.Float64bits(dp[i]) {
					t.Fatalf("iteration %d: parallel d[%d] = %v, sequential %v", it, i, dp[i], d[i])
				}
			}
		}
	}
}

// closeRel: blocked and whole-vector sums of n ≈ 12k products agree to
// well within 1e-12 relative.
func closeRel(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// BenchmarkHistory is one iteration's update and direction at the size of
// CoNLL-2000's parameter vector (m = 6).
func BenchmarkHistory(b *testing.B) {
	const n, m = 537883, 6
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	x, xp, g, gp, d := vec(), vec(), vec(), vec(), vec()
	h := newHistory(m, newVecOps(n, nil))
	for range m {
		h.update(x, xp, g, gp, g)
		xp = vec()
	}
	for b.Loop() {
		h.update(x, xp, g, gp, g)
		h.direction(d, g, nil, 0, 0)
	}
}
