package engine

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/simdcrf/simdcrf/kernels"
)

// Viterbi writes the best labelling of a chain (restricted by c if not nil)
// to path (len T) and returns its score, PathScore of that labelling. Ties go
// to the lowest label index, identically in every kernel tier.
func (tr *Transitions) Viterbi(ws *Workspace, emit []float64, c *ChainOptions, path []int32) (float64, error) {
	T, err := tr.chainLen(emit)
	if err != nil {
		return 0, err
	}
	if len(path) != T {
		return 0, fmt.Errorf("engine: path has room for %d labels, chain has %d positions", len(path), T)
	}
	if err := c.check(T, tr.m); err != nil {
		return 0, err
	}
	if T == 0 {
		return 0, nil
	}
	M := tr.m
	if c == nil { // the fast path: no row maxima, nothing to constrain
		ws.s = grow(ws.s, T*M)
		err = tr.viterbiScores(ws, emit, T)
	} else {
		ws.grow(T, M)
		err = tr.logScores(ws, emit, T, c, false)
	}
	if err != nil {
		return 0, err
	}
	ws.delta = grow(ws.delta, T*M)
	maxOnly := !c.hasDelta() && tr.tied == nil && M >= maxOnlyLabels
	if !maxOnly {
		ws.bp = grow(ws.bp, T*M)
	}
	var best float64
	if c.hasDelta() {
		ws.opts = c
		tr.viterbiDelta(ws, T)
		best = kernels.Backtrace(path, ws.delta[(T-1)*M:T*M], ws.bp, T, M)
	} else if tr.tied != nil {
		ws.order, ws.mark = grow(ws.order, min(M, maxTop)), grow(ws.mark, longShortTop*M)
		ws.cand, ws.probs = grow(ws.cand, min(M, maxBounded)), grow(ws.probs, M+2)
		tr.tied.viterbi(ws.delta, ws.bp, ws.s[:T*M], T, M, ws.order, ws.mark, ws.cand, ws.probs)
		best = kernels.Backtrace(path, ws.delta[(T-1)*M:T*M], ws.bp, T, M)
	} else if maxOnly {
		best = kernels.ViterbiMax(path, ws.delta, ws.s[:T*M], tr.score, tr.scoreT, T, M)
	} else {
		best = kernels.Viterbi(path, ws.delta, ws.bp, ws.s[:T*M], tr.score, T, M)
	}
	if math.IsInf(best, -1) {
		return best, ErrNoLabelling
	}
	return best, nil
}

// maxOnlyLabels is the label count from which dense Viterbi runs the
// max-only kernel (kernels.ViterbiMax: δ without back-pointers, each pointer
// of the path recomputed in O(M)) instead of max + argmax. Measured (thread
// CPU time per position, kernel + backtrace, T=24): at M=45 AVX-512 176 ns
// against 195, AVX2 194 against 303; M=128 1211 against 1395 and 1381
// against 2358; at M ≤ 23 on AVX-512 the backtrace costs more than the
// kernel saves (M=23: 59 against 48).
const maxOnlyLabels = 32

// Sample draws a labelling from p(y | emit) (restricted by c if not nil) by
// forward filtering and backward sampling, writes it to path and returns its
// log probability. The draw depends only on the inputs and on r, so a seeded
// generator reproduces it.
func (tr *Transitions) Sample(ws *Workspace, emit []float64, c *ChainOptions, r *rand.Rand, path []int32) (float64, error) {
	T, err := tr.chainLen(emit)
	if err != nil {
		return 0, err
	}
	if len(path) != T {
		return 0, fmt.Errorf("engine: path has room for %d labels, chain has %d positions", len(path), T)
	}
	if err := c.check(T, tr.m); err != nil {
		return 0, err
	}
	if T == 0 {
		return 0, nil
	}
	M := tr.m
	ws.grow(T, M)
	logZ, err := tr.forward(ws, emit, T, c)
	if err != nil {
		return logZ, err
	}
	ws.probs = grow(ws.probs, M)
	w := ws.probs
	// weights turns log-domain α̃ + transition scores into weights w.
	weights := func(t, y int) {
		a := ws.alpha[t*M : (t+1)*M]
		var S []float64
		if y >= 0 {
			S = ws.transAt(tr, t+1, false)
		}
		m := math.Inf(-1)
		for i := range M {
			w[i] = a[i]
			if y >= 0 {
				w[i] += S[i*M+y]
			}
			m = max(m, w[i])
		}
		for i := range M {
			w[i] = math.Exp(w[i] - m)
		}
	}
	if ws.logMode {
		weights(T-1, -1)
	} else {
		copy(w, ws.alpha[(T-1)*M:T*M])
	}
	y := draw(r, w)
	path[T-1] = int32(y)
	if !ws.logMode {
		tr.dense()
	}
	for t := T - 2; t >= 0; t-- {
		if ws.logMode {
			weights(t, y)
		} else {
			a := ws.alpha[t*M : (t+1)*M]
			for i := range M {
				w[i] = a[i] * tr.e[i*M+y]
			}
		}
		y = draw(r, w)
		path[t] = int32(y)
	}
	s, _ := tr.PathScore(emit, path, c)
	return s - logZ, nil
}

// draw picks index i with probability w[i]/Σw.
func draw(r *rand.Rand, w []float64) int {
	total := 0.0
	for _, v := range w {
		total += v
	}
	u := r.Float64() * total
	last := 0
	for i, v := range w {
		if v > 0 {
			last = i
			if u < v {
				return i
			}
			u -= v
		}
	}
	return last // rounding left u ≥ the remaining mass
}

// viterbiDelta is the Viterbi recursion with per-position transition
// matrices (S + Δ_t), with the kernels' tie rule (strict >, lowest index):
// each step is kernels.Viterbi over a two-row window (δ_{t−1}, s_t), so it
// runs on the SIMD tiers.
func (tr *Transitions) viterbiDelta(ws *Workspace, T int) {
	M := tr.m
	s, delta, bp := ws.s, ws.delta, ws.bp
	copy(delta[:M], s[:M])
	ws.vwin = grow(ws.vwin, 4*M)
	ws.vbp = grow(ws.vbp, 2*M)
	win, wd := ws.vwin[:2*M], ws.vwin[2*M:4*M]
	var path [2]int32
	for t := 1; t < T; t++ {
		S := ws.transAt(tr, t, false)
		copy(win[:M], delta[(t-1)*M:t*M])
		copy(win[M:], s[t*M:(t+1)*M])
		kernels.Viterbi(path[:], wd, ws.vbp, win, S, 2, M)
		copy(delta[t*M:(t+1)*M], wd[M:])
		copy(bp[t*M:(t+1)*M], ws.vbp[M:2*M])
	}
}
