package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// restricted runs the restricted-label forward–backward of a chain of T
// positions under c and fills p (nil: log Z alone) as Posteriors does. ok
// is false when the chain must go to the full path instead (nothing has
// been added to p then).
func (tr *Transitions) restricted(ws *Workspace, emit []float64, T int, c *ChainOptions, p *Posteriors) (logZ float64, ok bool) {
	M := tr.m
	// NaN, ±Inf anywhere (the full path's errors and −Inf handling).
	if chk := kernels.Dot(emit[:T*M], emit[:T*M]); !(chk <= math.MaxFloat64) {
		return 0, false
	}
	rb := &ws.rs
	if !rb.sets(c, T, M) {
		return 0, false
	}
	n := len(rb.lab)
	rb.s, rb.alpha, rb.beta, rb.w = grow(rb.s, n), grow(rb.alpha, n), grow(rb.beta, n), grow(rb.w, n)
	rb.scale, rb.shift = grow(rb.scale, T), grow(rb.shift, T)
	np := tr.pairScores(rb, c, T)
	if !tr.restrictScores(rb, emit, T) || !rb.shiftExp(T, np) {
		return 0, false
	}
	if logZ, ok = rb.forward(T); !ok {
		return 0, false
	}
	if p == nil || (p.Marginals == nil && p.Edges == nil && p.Transitions == nil && p.Start == nil && p.End == nil && p.Tied == nil) {
		return logZ, true
	}
	if !rb.backward(T) {
		return 0, false
	}
	rb.marginals(p, T, M)
	if p.Transitions != nil || p.Tied != nil || p.Edges != nil {
		rb.pairCounts(p, T, M)
	}
	return logZ, true
}

// restrictScores sets rb.s to the local scores of the labels of rb.sets
// (emission, plus start at t = 0 and end at t = T−1), and takes each
// column's maximum over its predecessors out of the pair weights rb.pw into
// the state score (the full path's colShift, over the allowed pairs only).
// It returns false when a column spreads wider than scaledRange.
func (tr *Transitions) restrictScores(rb *restrictBuf, emit []float64, T int) bool {
	M := tr.m
	off, lab, s, pw := rb.off[:T+1], rb.lab, rb.s, rb.pw
	ninf := math.Inf(-1)
	for t := range T {
		k0, k1 := off[t], off[t+1]
		row := emit[t*M : (t+1)*M]
		for k := k0; k < k1; k++ {
			y := lab[k]
			v := row[y]
			if t == 0 {
				v += tr.start[y]
			}
			if t == T-1 {
				v += tr.end[y]
			}
			s[k] = v
		}
		if t == 0 {
			continue
		}
		pl := lab[off[t-1]:k0]
		nb := int(k1 - k0)
		blk := pw[rb.poff[t]:rb.poff[t+1]]
		for b := range nb {
			hi, lo := ninf, math.Inf(1)
			for a := range pl {
				v := blk[a*nb+b]
				hi = max(hi, v)
				if v < lo && v >= -math.MaxFloat64 {
					lo = v
				}
			}
			if hi == ninf {
				hi = 0 // no allowed predecessor: the state is unreachable
			} else if !fits(hi-lo, scaledRange) {
				return false
			}
			for a := range pl {
				blk[a*nb+b] -= hi
			}
			s[int(k0)+b] += hi
		}
	}
	return true
}

// shiftExp shifts each position's scores by their maximum (to rb.shift),
// checks their spread, and exponentiates them into ψ and the np pair
// weights. It returns false when a position has no finite score or spreads
// wider than scaledRange.
func (rb *restrictBuf) shiftExp(T, np int) bool {
	off, s, pw := rb.off[:T+1], rb.s, rb.pw
	ninf := math.Inf(-1)
	for t := range T {
		row := s[off[t]:off[t+1]]
		hi, lo := rowRange(row)
		if hi == ninf || !fits(hi-lo, scaledRange) {
			return false
		}
		rb.shift[t] = hi
		for k := range row {
			row[k] -= hi
		}
	}
	kernels.Exp(s, s) // ψ
	kernels.Exp(pw[:np], pw[:np])
	return true
}

// forward is the restricted forward pass:
// α_t[b] = ψ_t[b]·Σ_a α_{t−1}[a]·pw_t[a][b], normalised (the sums to
// rb.scale). It returns log Z, or false when a position's sum is 0 or
// overflows.
func (rb *restrictBuf) forward(T int) (logZ float64, ok bool) {
	off, s, pw := rb.off[:T+1], rb.s, rb.pw
	alpha, scale := rb.alpha, rb.scale
	for t := range T {
		k0, k1 := off[t], off[t+1]
		cur := alpha[k0:k1]
		ps := s[k0:k1]
		if t == 0 {
			copy(cur, ps)
		} else {
			clear(cur)
			prev := alpha[off[t-1]:k0]
			nb := len(cur)
			blk := pw[rb.poff[t]:rb.poff[t+1]]
			for a, x := range prev {
				if x == 0 {
					continue
				}
				r := blk[a*nb : (a+1)*nb]
				for b, v := range r {
					cur[b] += x * v
				}
			}
			for b := range cur {
				cur[b] *= ps[b]
			}
		}
		sum := 0.0
		for _, v := range cur {
			sum += v
		}
		if !(sum > 0) || sum > math.MaxFloat64 {
			return 0, false
		}
		inv := 1 / sum
		for b := range cur {
			cur[b] *= inv
		}
		scale[t] = sum
		logZ += rb.shift[t] + math.Log(sum)
	}
	return logZ, true
}

// backward is the restricted backward pass:
// β_{t−1}[a] = Σ_b pw_t[a][b]·w_t[b], w_t = ψ_t·β_t/scale_t (kept in rb.w).
// It returns false on overflow or NaN.
func (rb *restrictBuf) backward(T int) bool {
	off, s, pw := rb.off[:T+1], rb.s, rb.pw
	beta, w, scale := rb.beta, rb.w, rb.scale
	for k := off[T-1]; k < off[T]; k++ {
		beta[k] = 1
	}
	for t := T - 1; t >= 1; t-- {
		k0, k1 := off[t], off[t+1]
		inv := 1 / scale[t]
		wt := w[k0:k1]
		for b := range wt {
			wt[b] = s[int(k0)+b] * beta[int(k0)+b] * inv
		}
		prev := beta[off[t-1]:k0]
		nb := len(wt)
		blk := pw[rb.poff[t]:rb.poff[t+1]]
		sum := 0.0
		for a := range prev {
			r := blk[a*nb : (a+1)*nb]
			v := 0.0
			for b, e := range r {
				v += e * wt[b]
			}
			prev[a] = v
			sum += v
		}
		if !(sum <= math.MaxFloat64) { // overflow or NaN: nothing added yet
			return false
		}
	}
	return true
}

// marginals sets p.Marginals and adds to p.Start and p.End (those not nil)
// from α and β.
func (rb *restrictBuf) marginals(p *Posteriors, T, M int) {
	off, lab, alpha, beta := rb.off[:T+1], rb.lab, rb.alpha, rb.beta
	if p.Marginals != nil {
		mg := p.Marginals[:T*M]
		clear(mg)
		for t := range T {
			row := mg[t*M : (t+1)*M]
			for k := off[t]; k < off[t+1]; k++ {
				row[lab[k]] = alpha[k] * beta[k]
			}
		}
	}
	if p.Start != nil {
		for k := off[0]; k < off[1]; k++ {
			p.Start[lab[k]] += alpha[k] * beta[k]
		}
	}
	if p.End != nil {
		for k := off[T-1]; k < off[T]; k++ {
			p.End[lab[k]] += alpha[k] * beta[k]
		}
	}
}

// pairCounts adds the expected counts of the allowed pairs to
// p.Transitions, or to p.Tied (by exception; the default-scored pairs
// together in its last entry), and sets p.Edges (those not nil).
func (rb *restrictBuf) pairCounts(p *Posteriors, T, M int) {
	off, lab, pw, alpha, w := rb.off[:T+1], rb.lab, rb.pw, rb.alpha, rb.w
	if p.Edges != nil {
		clear(p.Edges[:(T-1)*M*M])
	}
	var def float64 // tied: the default-scored pairs' expected count
	for t := 1; t < T; t++ {
		k0, k1 := off[t], off[t+1]
		pl, cl := lab[off[t-1]:k0], lab[k0:k1]
		prev, wt := alpha[off[t-1]:k0], w[k0:k1]
		nb := len(cl)
		base := int(rb.poff[t])
		blk := pw[base:rb.poff[t+1]]
		for a, i := range pl {
			x := prev[a]
			if x == 0 {
				continue
			}
			r := blk[a*nb : (a+1)*nb]
			if p.Transitions != nil {
				trow := p.Transitions[int(i)*M : (int(i)+1)*M]
				for b, j := range cl {
					trow[j] += x * r[b] * wt[b]
				}
			}
			if p.Edges != nil {
				ed := p.Edges[((t-1)*M+int(i))*M:][:M]
				for b, j := range cl {
					ed[j] = x * r[b] * wt[b]
				}
			}
			if p.Tied != nil {
				ks := rb.pk[base+a*nb:][:nb]
				for b, e := range ks {
					v := x * r[b] * wt[b]
					if e >= 0 {
						p.Tied[e] += v
					} else {
						def += v
					}
				}
			}
		}
	}
	if p.Tied != nil {
		p.Tied[len(p.Tied)-1] += def
	}
}
