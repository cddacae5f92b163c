package engine

import (
	"fmt"
	"math"
)

// chainLen checks emit against M and returns T.
func (tr *Transitions) chainLen(emit []float64) (int, error) {
	if len(emit)%tr.m != 0 {
		return 0, fmt.Errorf("engine: %d emission scores is not a multiple of %d labels", len(emit), tr.m)
	}
	return len(emit) / tr.m, nil
}

// logScores fills ws.s with the log-domain scores of every position:
// emissions plus start (t = 0) and end (t = T−1) scores, plus colShift for
// t ≥ 1 when shifted (the probability-domain path), with constrained-out
// labels at -Inf, and ws.rowMax/ws.rowMin with each row's maximum and
// smallest finite score, in the same pass. It rejects NaN and +Inf
// emissions.
func (tr *Transitions) logScores(ws *Workspace, emit []float64, T int, c *ChainOptions, shifted bool) error {
	M := tr.m
	s := ws.s[:T*M]
	ws.rowMin = grow(ws.rowMin, T)
	for t := range T {
		a, b := tr.zeros, tr.zeros
		switch {
		case t == 0:
			a = tr.start
		case shifted:
			a = tr.colShift
		}
		if t == T-1 {
			b = tr.end
		}
		m, lo, bad := scoreRow(s[t*M:(t+1)*M], emit[t*M:(t+1)*M], a, b)
		if bad >= 0 {
			v := emit[t*M+bad]
			return fmt.Errorf("engine: emission score [%d][%d] is %v", t, bad, v)
		}
		ws.rowMax[t], ws.rowMin[t] = m, lo
	}
	if c != nil {
		ws.mark = grow(ws.mark, M)
		ws.keepv = grow(ws.keepv, M)
		c.apply(s, T, M, ws.mark, ws.keepv)
		for t := range T {
			m, lo := rowRange(s[t*M : (t+1)*M])
			ws.rowMax[t], ws.rowMin[t] = m, lo
		}
	}
	return nil
}

// viterbiScores fills ws.s like logScores(ws, emit, T, nil, false), without
// the row maxima and minima, which Viterbi does not read. The middle rows
// (1..T−2) are the emissions as they are: one copy, checked for NaN and +Inf
// by one SIMD sum (a NaN or +Inf entry makes the sum NaN or +Inf; only then,
// or when large finite entries overflow, are the entries scanned). Unlike
// logScores (emission + 0), a −0 emission stays −0 there, which can change
// the sign of a zero δ or score, never a comparison. Rows 0 and T−1 add the
// start and end scores as logScores does.
func (tr *Transitions) viterbiScores(ws *Workspace, emit []float64, T int) error {
	M := tr.m
	s := ws.s[:T*M]
	if T > 2 {
		mid := emit[M : (T-1)*M]
		copy(s[M:(T-1)*M], mid)
		if !noNaNPosInf(mid, &ws.ones) {
			for k, v := range mid {
				if !(v <= math.MaxFloat64) {
					return fmt.Errorf("engine: emission score [%d][%d] is %v", 1+k/M, k%M, v)
				}
			}
		}
	}
	for _, t := range [2]int{0, T - 1} {
		a, b := tr.zeros, tr.zeros
		if t == 0 {
			a = tr.start
		}
		if t == T-1 {
			b = tr.end
		}
		row, in := s[t*M:(t+1)*M], emit[t*M:(t+1)*M]
		if bad := addRow(row, in, a, b); bad >= 0 {
			return fmt.Errorf("engine: emission score [%d][%d] is %v", t, bad, in[bad])
		}
		if T == 1 {
			break
		}
	}
	return nil
}

// addRow sets row = in + (a + b) and returns the index of the first NaN or
// +Inf entry of in, or −1.
func addRow(row, in, a, b []float64) int {
	a, b, row = a[:len(in)], b[:len(in)], row[:len(in)]
	for j, v := range in {
		if !(v <= math.MaxFloat64) {
			return j
		}
		row[j] = v + (a[j] + b[j])
	}
	return -1
}

// scoreRow sets row = in + a + b and returns its maximum and smallest finite
// entry, or the index of a NaN or +Inf entry of in as bad (else −1).
func scoreRow(row, in, a, b []float64) (m, lo float64, bad int) {
	m, lo = math.Inf(-1), math.Inf(1)
	a, b, row = a[:len(in)], b[:len(in)], row[:len(in)]
	for j, v := range in {
		if v != v || v > math.MaxFloat64 {
			return 0, 0, j
		}
		v += a[j] + b[j]
		row[j] = v
		if v > m {
			m = v
		}
		if v < lo && v >= -math.MaxFloat64 {
			lo = v
		}
	}
	return m, lo, -1
}

// rowRange returns the maximum and the smallest finite entry of row.
func rowRange(row []float64) (m, lo float64) {
	m, lo = math.Inf(-1), math.Inf(1)
	for _, v := range row {
		if v > m {
			m = v
		}
		if v < lo && v >= -math.MaxFloat64 {
			lo = v
		}
	}
	return m, lo
}
