package train

import "github.com/simdcrf/simdcrf/kernels"

// history is the L-BFGS memory in vector-free form (Chen, Wang & Zhou,
// "Large-scale L-BFGS using MapReduce", 2014): the pairs (s, y) in a ring,
// and the inner products among them and with the current direction vector
// (the gradient, or OWL-QN's pseudo-gradient), so that the two-loop
// recursion runs on 2m+1 coefficients and the direction is formed in one
// pass. The vectors are far larger than L2 (4.3 MB each on CoNLL-2000), and
// the two-loop recursion over them streamed ≈ 70 vectors through memory per
// iteration, as much time as a fifth of an evaluation; this streams ≈ 30.
//
// The passes go in blocks of qnBlock elements on run (the pool's workers);
// each block's partial inner products are kept and added in block order,
// so the results do not depend on the number of threads.
type history struct {
	m, n       int
	s, y       [][]float64
	ss, sy, yy []float64 // m×m by ring slot: ss[a·m+b] = s_a·s_b, sy = s_a·y_b, yy = y_a·y_b
	gs, gy     []float64 // dir·s_a, dir·y_a
	count, end int       // valid pairs; the next slot
	run        func(n int, f func(b int))
	parts      []float64
	slots      []int
	alpha      []float64
	ds, dy     []float64 // the direction's coefficients on s_a, y_a
}

const qnBlock = 4096

func newHistory(m, n int, run func(n int, f func(b int))) *history {
	h := &history{m: m, n: n, run: run}
	h.s, h.y = make([][]float64, m), make([][]float64, m)
	for i := range m {
		h.s[i], h.y[i] = make([]float64, n), make([]float64, n)
	}
	h.ss, h.sy, h.yy = make([]float64, m*m), make([]float64, m*m), make([]float64, m*m)
	h.gs, h.gy = make([]float64, m), make([]float64, m)
	h.alpha, h.ds, h.dy = make([]float64, m), make([]float64, m), make([]float64, m)
	if h.run == nil {
		h.run = func(n int, f func(b int)) {
			for b := range n {
				f(b)
			}
		}
	}
	return h
}

func (h *history) blocks() int { return (h.n + qnBlock - 1) / qnBlock }

// valid sets h.slots to the ring slots of the valid pairs, oldest first.
func (h *history) valid() []int {
	h.slots = h.slots[:0]
	for i := h.count; i > 0; i-- {
		h.slots = append(h.slots, (h.end-i+h.m)%h.m)
	}
	return h.slots
}

// update adds the pair s = x − xp, y = g − gp and computes its inner
// products with the other pairs, and those of dir with every pair.
func (h *history) update(x, xp, g, gp, dir []float64) {
	e := h.end
	h.end = (h.end + 1) % h.m
	h.count = min(h.count+1, h.m)
	sl := h.valid()
	c := len(sl)
	K := 6 * c
	nb := h.blocks()
	if cap(h.parts) < nb*K {
		h.parts = make([]float64, nb*K)
	}
	parts := h.parts[:nb*K]
	se, ye := h.s[e], h.y[e]
	h.run(nb, func(b int) {
		lo, hi := b*qnBlock, min((b+1)*qnBlock, h.n)
		sb, yb := se[lo:hi], ye[lo:hi]
		xb, xpb, gb, gpb := x[lo:hi], xp[lo:hi], g[lo:hi], gp[lo:hi]
		for i := range sb {
			sb[i] = xb[i] - xpb[i]
			yb[i] = gb[i] - gpb[i]
		}
		p := parts[b*K : (b+1)*K]
		db := dir[lo:hi]
		for k, a := range sl {
			sa, ya := h.s[a][lo:hi], h.y[a][lo:hi]
			p[6*k] = kernels.Dot(sb, sa)
			p[6*k+1] = kernels.Dot(sb, ya)
			p[6*k+2] = kernels.Dot(yb, sa)
			p[6*k+3] = kernels.Dot(yb, ya)
			p[6*k+4] = kernels.Dot(db, sa)
			p[6*k+5] = kernels.Dot(db, ya)
		}
	})
	m := h.m
	for k, a := range sl {
		var v [6]float64
		for b := range nb {
			p := parts[b*K+6*k : b*K+6*k+6]
			for q := range v {
				v[q] += p[q]
			}
		}
		h.ss[e*m+a], h.ss[a*m+e] = v[0], v[0]
		h.sy[e*m+a] = v[1]
		h.sy[a*m+e] = v[2]
		h.yy[e*m+a], h.yy[a*m+e] = v[3], v[3]
		h.gs[a], h.gy[a] = v[4], v[5]
	}

}

// direction sets d = −H·dir by the two-loop recursion over the
// coefficients (d = cg·dir + Σ ds_a·s_a + Σ dy_a·y_a), then forms d in one
// pass. With pg non-nil (OWL-QN), entries of d whose sign agrees with pg
// in [lo, hi) are set to 0.
func (h *history) direction(d, dir, pg []float64, lo, hi int) {
	sl := h.valid()
	m := h.m
	ds, dy := h.ds, h.dy
	clear(ds)
	clear(dy)
	cg := -1.0
	for i := len(sl) - 1; i >= 0; i-- {
		a := sl[i]
		num := cg * h.gs[a]
		for _, b := range sl {
			num += ds[b]*h.ss[a*m+b] + dy[b]*h.sy[a*m+b]
		}
		h.alpha[a] = num / h.sy[a*m+a]
		dy[a] -= h.alpha[a]
	}
	e := sl[len(sl)-1]
	gamma := h.sy[e*m+e] / h.yy[e*m+e]
	cg *= gamma
	for _, b := range sl {
		ds[b] *= gamma
		dy[b] *= gamma
	}
	for _, a := range sl {
		num := cg * h.gy[a]
		for _, b := range sl {
			num += ds[b]*h.sy[b*m+a] + dy[b]*h.yy[a*m+b]
		}
		beta := num / h.sy[a*m+a]
		ds[a] += h.alpha[a] - beta
	}
	h.run(h.blocks(), func(b int) {
		l, r := b*qnBlock, min((b+1)*qnBlock, h.n)
		db := d[l:r]
		copy(db, dir[l:r])
		kernels.Scale(cg, db)
		for _, a := range sl {
			kernels.Axpy(ds[a], h.s[a][l:r], db)
			kernels.Axpy(dy[a], h.y[a][l:r], db)
		}
		if pg != nil {
			for i := max(l, lo); i < min(r, hi); i++ {
				if d[i]*pg[i] >= 0 {
					d[i] = 0
				}
			}
		}
	})
}
