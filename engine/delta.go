package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// The scaled (probability-domain) forward–backward with per-position
// transition deltas: E_t = E ∘ exp(Δ_t) at the positions with a delta
// (one vector exp of M² entries per such position, shared by the forward
// pass, the backward pass and the edge expectations), E elsewhere. The
// log-domain path it replaces costs an exp per pair per position in each
// of the three (kernels.LogMatVec, then scalar exps for the edges): on
// CoNLL-2000 with B01:%x[0,1] an evaluation took 13× the plain one that
// way.

// deltaScaledMax bounds |Δ| for the scaled path: E's entries are at most 1
// (shifted by column maxima), so E_t's stay within e^±deltaScaledMax of
// them, far from overflow with the score ranges the scaled path accepts
// (scaledRange); larger deltas go to the log domain.
const deltaScaledMax = 100

// makeEt fills ws.et with E_t = E ∘ exp(Δ_t) for the positions with a
// delta, and reports false (ws.et then unusable) as soon as an E_t's log
// spreads beyond what the scaled path represents: the log domain takes
// such a chain. Each E_t is three SIMD passes: kernels.ShiftRows of
// Δ_t + log E (its maximum and smallest finite entry, and the entries
// shifted by the maximum), kernels.Exp, and kernels.Scale by exp(max).
func (tr *Transitions) makeEt(ws *Workspace, T int) bool {
	M := tr.m
	M2 := M * M
	ws.et = grow(ws.et, T*M2)
	ws.logE = grow(ws.logE, M2)
	for i := range M {
		row := tr.score[i*M : (i+1)*M]
		out := ws.logE[i*M : (i+1)*M]
		for j, v := range row {
			out[j] = v - tr.colShift[j]
		}
	}
	var mx, lo [1]float64
	ws.etAt = grow(ws.etAt, T)
	for t := 1; t < T; t++ {
		ws.etAt[t] = int32(t)
		d := ws.opts.delta(t)
		if d == nil {
			continue
		}
		// A delta given again (the same slice: a caller shares one
		// between positions with the same observation) reuses its E_t.
		if u := ws.sameDelta(d, t); u > 0 {
			ws.etAt[t] = int32(u)
			continue
		}
		et := ws.et[t*M2 : (t+1)*M2]
		kernels.ShiftRows(et, mx[:], lo[:], d, ws.logE, 1, M2)
		// log E ≤ 0 spreads at most scaledRange within a column; the
		// deltas add at most deltaScaledMax either way.
		if mx[0] > deltaScaledMax || lo[0] < -(scaledRange+deltaScaledMax) || math.IsInf(mx[0], -1) {
			return false
		}
		kernels.Exp(et, et)
		if mx[0] != 0 {
			kernels.Scale(math.Exp(mx[0]), et)
		}
	}
	return true
}

// sameDelta returns an earlier position u < t whose delta is the slice d
// itself, or 0.
func (ws *Workspace) sameDelta(d []float64, t int) int {
	for u := 1; u < t; u++ {
		if p := ws.opts.delta(u); p != nil && int(ws.etAt[u]) == u && len(p) == len(d) && &p[0] == &d[0] {
			return u
		}
	}
	return 0
}

// eAtPos returns the transition matrix into position t (E_t or E).
func (ws *Workspace) eAtPos(tr *Transitions, t int) []float64 {
	if ws.opts.delta(t) == nil {
		return tr.e
	}
	M2 := tr.m * tr.m
	u := int(ws.etAt[t])
	return ws.et[u*M2 : (u+1)*M2]
}

// forwardDelta is kernels.Forward with E_t.
func (tr *Transitions) forwardDelta(ws *Workspace, psi []float64, T int) {
	M := tr.m
	alpha, scale := ws.alpha[:T*M], ws.scale[:T]
	copy(alpha[:M], psi[:M])
	scale[0] = normalizeRow(alpha[:M])
	for t := 1; t < T; t++ {
		e := ws.eAtPos(tr, t)
		prev, cur := alpha[(t-1)*M:t*M], alpha[t*M:(t+1)*M]
		clear(cur)
		for i, a := range prev {
			if a != 0 {
				kernels.Axpy(a, e[i*M:(i+1)*M], cur)
			}
		}
		ps := psi[t*M : (t+1)*M]
		for j := range cur {
			cur[j] *= ps[j]
		}
		scale[t] = normalizeRow(cur)
	}
}

func normalizeRow(row []float64) float64 {
	sum := 0.0
	for _, v := range row {
		sum += v
	}
	if sum > 0 {
		kernels.Scale(1/sum, row)
	}
	return sum
}

// backwardDelta is kernels.Backward with E_t.
func (tr *Transitions) backwardDelta(ws *Workspace, psi []float64, T int) {
	M := tr.m
	beta, scale, w := ws.beta[:T*M], ws.scale[:T], ws.work[:M]
	last := beta[(T-1)*M : T*M]
	for i := range last {
		last[i] = 1
	}
	for t := T - 2; t >= 0; t-- {
		e := ws.eAtPos(tr, t+1)
		next, cur := beta[(t+1)*M:(t+2)*M], beta[t*M:(t+1)*M]
		inv := 1 / scale[t+1]
		ps := psi[(t+1)*M : (t+2)*M]
		for j := range w {
			w[j] = ps[j] * next[j] * inv
		}
		for i := range cur {
			cur[i] = kernels.Dot(e[i*M:(i+1)*M], w)
		}
	}
}

// edgesDelta adds the expected transition counts to trans (M×M) and sets
// the edge marginals in edges ((T−1)×M×M), either of them nil. A
// position's edge marginals E_t ∘ (α_{t−1} ⊗ Ψ_t∘β_t/scale_t) are
// kernels.Transitions over the two-row window (t−1, t) of the chain's own
// arrays, with E_t for E.
func (tr *Transitions) edgesDelta(ws *Workspace, psi []float64, T int, trans, edges []float64) {
	M := tr.m
	M2 := M * M
	alpha, beta, scale, work := ws.alpha[:T*M], ws.beta[:T*M], ws.scale[:T], ws.work[:2*M]
	for t := 1; t < T; t++ {
		e := ws.eAtPos(tr, t)
		lo, hi := (t-1)*M, (t+1)*M
		if edges == nil {
			kernels.Transitions(trans, e, alpha[lo:hi], beta[lo:hi], psi[lo:hi], scale[t-1:t+1], work, 2, M)
			continue
		}
		out := edges[(t-1)*M2 : t*M2]
		clear(out)
		kernels.Transitions(out, e, alpha[lo:hi], beta[lo:hi], psi[lo:hi], scale[t-1:t+1], work, 2, M)
		if trans != nil {
			kernels.Axpy(1, out, trans)
		}
	}
}
