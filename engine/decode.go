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
	if tr.restrictViterbiPays(c, T) {
		if best, ok := tr.restrictedViterbi(ws, emit, T, c, path); ok {
			if math.IsInf(best, -1) {
				return best, ErrNoLabelling
			}
			return best, nil
		}
	}
	M := tr.m
	// The scores without row maxima (Viterbi reads none), the excluded
	// labels then set to −Inf: logScores' row maxima and minima, taken
	// twice under constraints, were a third of tagging a candidate-label
	// model (M = 1,208) whose chains the restricted path does not take.
	ws.s = grow(ws.s, T*M)
	if err = tr.viterbiScores(ws, emit, T); err != nil {
		return 0, err
	}
	if c != nil {
		ws.mark = grow(ws.mark, M)
		ws.keepv = grow(ws.keepv, M)
		c.apply(ws.s[:T*M], T, M, ws.mark, ws.keepv)
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
	} else if M >= boundedDenseLabels && tr.viterbiBounded(ws, T) {
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
	for t := 1; t < T; t++ {
		ws.windowStep(delta[(t-1)*M:t*M], s[t*M:(t+1)*M], ws.transAt(tr, t, false), delta[t*M:(t+1)*M], bp[t*M:(t+1)*M])
	}
}

// windowStep is one Viterbi step on the SIMD tiers: kernels.Viterbi over
// the two-row window (prev = δ_{t−1}, st = s_t) with transition scores S
// writes δ_t to cur and its back-pointers to arg, with the kernels' tie
// rule.
func (ws *Workspace) windowStep(prev, st, S, cur []float64, arg []int32) {
	M := len(prev)
	ws.vwin = grow(ws.vwin, 4*M)
	ws.vbp = grow(ws.vbp, 2*M)
	win, wd := ws.vwin[:2*M], ws.vwin[2*M:4*M]
	copy(win[:M], prev)
	copy(win[M:], st)
	var path [2]int32
	kernels.Viterbi(path[:], wd, ws.vbp[:2*M], win, S, 2, M)
	copy(cur, wd[M:])
	copy(arg, ws.vbp[M:2*M])
}

// boundedDenseLabels is the label count from which the dense Viterbi runs
// step by step over the rows that can win (viterbiBounded) instead of the
// O(M²) kernel at every step: at M = 1,208 a step of the kernel streams an
// 11.7 MB matrix, a bounded step a few of its rows. Measured (AVX2, one
// run each, go test -bench ViterbiDense, the engine benchmark's scores):
// M = 512 10.4k tokens/s before, 127k after; M = 1,024 1.7k and 49k. It
// was not measured below 512: 256 keeps the small label sets of the other
// tasks (at most a few dozen labels) on the kernels.
const boundedDenseLabels = 256

// viterbiBounded is the dense Viterbi recursion, step by step: a step over
// the rows that can win (boundedDense) where there are at most maxBounded
// of them, else a windowStep (as viterbiDelta runs it). δ and the
// back-pointers are the kernel's, bit for bit. When the first step cannot be bounded (flat scores, such as random
// ones: few steps will be) it returns false having written only δ's first
// row, and the caller runs the whole-chain kernel, whose max-only form
// (kernels.ViterbiMax) is faster than a step with back-pointers.
func (tr *Transitions) viterbiBounded(ws *Workspace, T int) bool {
	M := tr.m
	ws.bp = grow(ws.bp, T*M)
	s, delta, bp := ws.s, ws.delta, ws.bp
	copy(delta[:M], s[:M])
	ws.cand, ws.probs = grow(ws.cand, min(M, maxBounded)), grow(ws.probs, M+2)
	for t := 1; t < T; t++ {
		prev, cur, arg := delta[(t-1)*M:t*M], delta[t*M:(t+1)*M], bp[t*M:(t+1)*M]
		st := s[t*M : (t+1)*M]
		if tr.boundedDense(prev, cur, arg, ws.cand, ws.probs) {
			kernels.Axpy(1, st, cur) // 1·s + δ is s + δ, bit for bit
			continue
		}
		if t == 1 {
			return false
		}
		ws.windowStep(prev, st, tr.score, cur, arg)
	}
	return true
}

// boundedDense is a dense Viterbi step (before the emission) over the rows
// that can win, as tiedForm.bounded's: row b = argmax_i δ[i] + rowLo[i]
// gives every column at least LB = δ[b] + rowLo[b], so a row with
// δ[i] + rowHi[i] < LB can neither win a column nor tie with its winner.
// The kept rows are taken in increasing index, the first filling every
// column and the others replacing on a strictly larger sum, as the kernel
// does over all rows. It returns false, doing nothing, with more than
// len(cand) such rows or an all −Inf δ. scr is scratch of M+2 entries.
func (tr *Transitions) boundedDense(prev, cur []float64, arg []int32, cand []int32, scr []float64) bool {
	M := tr.m
	nc, ok := winRows(prev, tr.rowLo, tr.rowHi, cand, scr)
	if !ok {
		return false
	}
	i0 := cand[0]
	// δ[i0] + S[i0][·] in vector lanes: δ[i0]·1 + S is δ[i0] + S, bit for bit.
	copy(cur, tr.score[int(i0)*M:int(i0+1)*M])
	kernels.Axpy(prev[i0], tr.ones, cur)
	fill(arg, i0)
	for _, i := range cand[1:nc] {
		p := prev[i]
		row := tr.score[int(i)*M : int(i+1)*M]
		row = row[:len(cur)]
		for j, v := range row {
			if c := p + v; c > cur[j] {
				cur[j], arg[j] = c, i
			}
		}
	}
	return true
}
