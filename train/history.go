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
	sy, yy     []float64 // m×m by ring slot: sy[a·m+b] = s_a·y_b, yy = y_a·y_b (s_a·s_b is never needed)
	gs, gy     []float64 // dir·s_a, dir·y_a
	count, end int       // valid pairs; the next slot
	run        func(n int, f func(b int))
	parts      []float64 // partial inner products, block by block
	dparts     []float64 // direction's dir·d, block by block
	slots      []int
	alpha      []float64
	ds, dy     []float64 // the direction's coefficients on s_a, y_a
}

// qnBlock is small enough that a block of the vectors an inner product
// pass reads stays in L1 across its inner products (BenchmarkHistory: 7.0
// ms against 8.5 with blocks of 4096).
const qnBlock = 1024

// vecOps runs the optimiser's other passes over whole vectors in the same
// blocks on run, adding partial sums in block order (deterministic for any
// number of threads).
type vecOps struct {
	n     int
	run   func(n int, f func(b int))
	parts []float64
}

func newVecOps(n int, run func(n int, f func(b int))) *vecOps {
	if run == nil {
		run = func(n int, f func(b int)) {
			for b := range n {
				f(b)
			}
		}
	}
	v := &vecOps{n: n, run: run}
	v.parts = make([]float64, v.blocks())
	return v
}

func (v *vecOps) blocks() int { return (v.n + qnBlock - 1) / qnBlock }

// dot returns x·y.
func (v *vecOps) dot(x, y []float64) float64 {
	v.run(v.blocks(), func(b int) {
		lo, hi := b*qnBlock, min((b+1)*qnBlock, v.n)
		v.parts[b] = kernels.Dot(x[lo:hi], y[lo:hi])
	})
	s := 0.0
	for _, p := range v.parts {
		s += p
	}
	return s
}

// step sets x = xp + a·d.
func (v *vecOps) step(x, xp, d []float64, a float64) {
	v.run(v.blocks(), func(b int) {
		lo, hi := b*qnBlock, min((b+1)*qnBlock, v.n)
		xb, pb, db := x[lo:hi], xp[lo:hi], d[lo:hi]
		for i := range xb {
			xb[i] = pb[i] + a*db[i]
		}
	})
}

func newHistory(m int, v *vecOps) *history {
	h := &history{m: m, n: v.n, run: v.run}
	h.s, h.y = make([][]float64, m), make([][]float64, m)
	for i := range m {
		h.s[i], h.y[i] = make([]float64, v.n), make([]float64, v.n)
	}
	h.sy, h.yy = make([]float64, m*m), make([]float64, m*m)
	h.gs, h.gy = make([]float64, m), make([]float64, m)
	h.alpha, h.ds, h.dy = make([]float64, m), make([]float64, m), make([]float64, m)
	h.dparts = make([]float64, h.blocks())
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
// products with the other pairs, and those of dir with every pair. It
// returns x·x and dir·dir, taken in the same pass.
func (h *history) update(x, xp, g, gp, dir []float64) (xx, dd float64) {
	e := h.end
	h.end = (h.end + 1) % h.m
	h.count = min(h.count+1, h.m)
	sl := h.valid()
	c := len(sl)
	K := 5*c + 2
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
			p[5*k] = kernels.Dot(sb, ya)
			p[5*k+1] = kernels.Dot(yb, sa)
			p[5*k+2] = kernels.Dot(yb, ya)
			p[5*k+3] = kernels.Dot(db, sa)
			p[5*k+4] = kernels.Dot(db, ya)
		}
		p[5*c] = kernels.Dot(xb, xb)
		p[5*c+1] = kernels.Dot(db, db)
	})
	m := h.m
	for k, a := range sl {
		var v [5]float64
		for b := range nb {
			p := parts[b*K+5*k : b*K+5*k+5]
			for q := range v {
				v[q] += p[q]
			}
		}
		h.sy[e*m+a] = v[0]
		h.sy[a*m+e] = v[1]
		h.yy[e*m+a], h.yy[a*m+e] = v[2], v[2]
		h.gs[a], h.gy[a] = v[3], v[4]
	}
	for b := range nb {
		xx += parts[b*K+5*c]
		dd += parts[b*K+5*c+1]
	}
	return xx, dd

}

// setDir takes dir's inner products with every pair again (dir·s_a,
// dir·y_a), for a direction vector that changed without a new pair (the
// gradient re-evaluated in float64 at the same point).
func (h *history) setDir(dir []float64) {
	sl := h.valid()
	c := len(sl)
	K := 2 * c
	nb := h.blocks()
	if cap(h.parts) < nb*K {
		h.parts = make([]float64, nb*K)
	}
	parts := h.parts[:nb*K]
	h.run(nb, func(b int) {
		lo, hi := b*qnBlock, min((b+1)*qnBlock, h.n)
		db := dir[lo:hi]
		p := parts[b*K : (b+1)*K]
		for k, a := range sl {
			p[2*k] = kernels.Dot(db, h.s[a][lo:hi])
			p[2*k+1] = kernels.Dot(db, h.y[a][lo:hi])
		}
	})
	for k, a := range sl {
		var gs, gy float64
		for b := range nb {
			gs += parts[b*K+2*k]
			gy += parts[b*K+2*k+1]
		}
		h.gs[a], h.gy[a] = gs, gy
	}
}

// direction sets d = −H·dir by the two-loop recursion over the
// coefficients (d = cg·dir + Σ ds_a·s_a + Σ dy_a·y_a), then forms d in one
// pass. With pg non-nil (OWL-QN), entries of d whose sign agrees with pg
// in [lo, hi) are set to 0. It returns dir·d (taken in the same pass).
func (h *history) direction(d, dir, pg []float64, lo, hi int) float64 {
	sl := h.valid()
	m := h.m
	ds, dy := h.ds, h.dy
	clear(ds)
	clear(dy)
	cg := -1.0
	for i := len(sl) - 1; i >= 0; i-- {
		a := sl[i]
		// s_a·d; ds is still 0 in this loop.
		num := cg * h.gs[a]
		for _, b := range sl {
			num += dy[b] * h.sy[a*m+b]
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
		h.dparts[b] = kernels.Dot(dir[l:r], db)
	})
	s := 0.0
	for _, p := range h.dparts {
		s += p
	}
	return s
}
