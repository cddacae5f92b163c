package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// Viterbi32 is Viterbi with the recursion in float32 (kernels.Viterbi32, or
// kernels.ViterbiMax32 from maxOnlyLabels labels): half the vector work of
// the float64 kernels at the same lane width. The scores (emissions plus the
// start or end scores) are summed in float64 and rounded once; the returned
// score is the float64 score of the labelling found, summed in the order of
// Viterbi's recursion (so it is Viterbi's, bit for bit, when the labellings
// agree).
//
// The labelling can differ from Viterbi's where two labellings score within
// float32 rounding of each other (a few units in 1e-7 of the scores'
// magnitude along the chain): the ties are then decided on rounded sums.
// Viterbi32 runs Viterbi itself (float64, same result and errors) where
// float32 would not serve: with chain options, the Tied structure, from
// boundedDenseLabels labels (the bounded recursion), when a score is NaN,
// +Inf or beyond ±2¹⁰⁰ (the float32 sums must not overflow), on chains
// longer than 2²⁴ positions, and when float32 finds no labelling.
func (tr *Transitions) Viterbi32(ws *Workspace, emit []float64, c *ChainOptions, path []int32) (float64, error) {
	T, err := tr.chainLen(emit)
	M := tr.m
	if err != nil || len(path) != T || T == 0 || T > max32Len || c != nil || tr.tied != nil || M >= boundedDenseLabels {
		return tr.Viterbi(ws, emit, c, path)
	}
	p := tr.prep32()
	if !p.ok {
		return tr.Viterbi(ws, emit, c, path)
	}
	v := &ws.v32
	v.s, v.delta = grow(v.s, T*M), grow(v.delta, T*M)
	s := v.s[:T*M]
	if !tr.scores32(s, emit, T) {
		return tr.Viterbi(ws, emit, c, path)
	}
	var best float32
	if M >= maxOnlyLabels {
		best = kernels.ViterbiMax32(path, v.delta[:T*M], s, p.trans, p.transT, T, M)
	} else {
		ws.bp = grow(ws.bp, T*M)
		best = kernels.Viterbi32(path, v.delta[:T*M], ws.bp[:T*M], s, p.trans, T, M)
	}
	if math.IsInf(float64(best), -1) {
		return tr.Viterbi(ws, emit, c, path) // the float64 path's answer (perhaps ErrNoLabelling)
	}
	return tr.viterbiScore(emit, path), nil
}

// bound32 is the largest magnitude of a finite score Viterbi32 takes: a
// chain of max32Len positions sums at most 2·2²⁴ of them (an emission and a
// transition a position), below float32's 2¹²⁸.
const (
	bound32  = 0x1p100
	max32Len = 1 << 24
)

// viterbi32Buf is a Workspace's float32 scratch for Viterbi32.
type viterbi32Buf struct {
	s, delta []float32 // T×M
}

// trans32 holds the float32 forms of a Transitions' matrix for Viterbi32,
// made on first use (prep32) and dropped when the scores change (derive).
type trans32 struct {
	trans, transT []float32 // M×M and its transpose
	ok            bool      // every entry finite within ±bound32 or −Inf
}

// prep32 returns tr's float32 forms, making them if need be. Concurrent
// callers may each make them; they make the same forms, and one is kept.
func (tr *Transitions) prep32() *trans32 {
	if p := tr.f32.Load(); p != nil {
		return p
	}
	M := tr.m
	p := &trans32{trans: make([]float32, M*M), transT: make([]float32, M*M), ok: true}
	for i := range M {
		for j := range M {
			v := tr.score[i*M+j]
			if !(v >= -bound32 && v <= bound32) && !math.IsInf(v, -1) {
				p.ok = false
			}
			p.trans[i*M+j], p.transT[j*M+i] = float32(v), float32(v)
		}
	}
	tr.f32.CompareAndSwap(nil, p)
	return tr.f32.Load()
}

// scores32 sets s to the float32 rounding of the scores Viterbi's
// recursion reads (viterbiScores: the emissions, plus the start scores on
// the first row and the end scores on the last, added in float64). It
// returns false if one is NaN, +Inf or finite beyond ±bound32.
func (tr *Transitions) scores32(s []float32, emit []float64, T int) bool {
	M := tr.m
	in := emit[:T*M]
	s = s[:len(in)]
	for k, v := range in {
		if !(v >= -bound32 && v <= bound32) && !math.IsInf(v, -1) {
			return false
		}
		s[k] = float32(v)
	}
	for _, t := range [2]int{0, T - 1} {
		a, b := tr.zeros, tr.zeros
		if t == 0 {
			a = tr.start
		}
		if t == T-1 {
			b = tr.end
		}
		row, e := s[t*M:(t+1)*M], emit[t*M:(t+1)*M]
		for j, v := range e {
			x := v + (a[j] + b[j])
			if !(x >= -bound32 && x <= bound32) && !math.IsInf(x, -1) {
				return false
			}
			row[j] = float32(x)
		}
		if T == 1 {
			break
		}
	}
	return true
}

// viterbiScore is the float64 score of path, summed as Viterbi's recursion
// sums δ along it: (δ_{t−1} + S[y_{t−1}][y_t]) + s_t[y_t], the first and
// last rows' s with the start and end scores added as viterbiScores adds
// them.
func (tr *Transitions) viterbiScore(emit []float64, path []int32) float64 {
	M, T := tr.m, len(path)
	row := func(t int) float64 {
		y := int(path[t])
		v := emit[t*M+y]
		if t != 0 && t != T-1 {
			return v
		}
		a, b := 0.0, 0.0
		if t == 0 {
			a = tr.start[y]
		}
		if t == T-1 {
			b = tr.end[y]
		}
		return v + (a + b)
	}
	sc := row(0)
	for t := 1; t < T; t++ {
		sc = sc + tr.score[int(path[t-1])*M+int(path[t])] + row(t)
	}
	return sc
}
