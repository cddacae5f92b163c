package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// forward runs the forward pass and returns log Z. Normally that is the
// scaled probability-domain pass, leaving Ψ in ws.psi, α in ws.alpha and the
// scales in ws.scale. When a position's scores or a transition column spread
// wider than scaledRange (or the scaled pass finds no labelling, to make
// sure), it runs in the log domain instead and sets ws.logMode.
func (tr *Transitions) forward(ws *Workspace, emit []float64, T int, c *ChainOptions) (float64, error) {
	M := tr.m
	ws.logMode, ws.opts, ws.scaledD = false, c, false
	deltas := c.hasDelta()
	logOnly := tr.logOnly || deltas && (tr.tied != nil || !tr.makeEt(ws, T))
	psi := ws.psi[:T*M]
	shift := 0.0
	// Without constraints, and when a sum of squares shows no emission is
	// NaN or ±Inf, kernels.ShiftRows puts the shifted scores straight into
	// Ψ (the scalar path below was a sixth of a training evaluation at
	// M = 22).
	if chk := kernels.Dot(emit[:T*M], emit[:T*M]); c == nil && !logOnly && chk <= math.MaxFloat64 {
		ws.rowMin = grow(ws.rowMin, T)
		mx, lo := ws.rowMax[:T], ws.rowMin[:T]
		f := tr.scaledForm(false) // the offsets only: E may not be made yet
		f.shiftRows(psi, mx, lo, emit, T, M)
		for t, m := range mx {
			if math.IsInf(m, -1) {
				return math.Inf(-1), ErrNoLabelling
			}
			if !fits(m-lo[t], scaledRange) {
				tr.logScores(ws, emit, T, c, false)
				return tr.forwardLog(ws, T)
			}
			shift += m
		}
	} else {
		if err := tr.logScores(ws, emit, T, c, !logOnly); err != nil {
			return 0, err
		}
		if logOnly {
			return tr.forwardLog(ws, T)
		}
		s := ws.s[:T*M]
		for t := range T {
			row := s[t*M : (t+1)*M]
			m, lo := ws.rowMax[t], ws.rowMin[t]
			if math.IsInf(m, -1) {
				return math.Inf(-1), ErrNoLabelling
			}
			if !fits(m-lo, scaledRange) {
				tr.logScores(ws, emit, T, c, false)
				return tr.forwardLog(ws, T)
			}
			shift += m
			out := psi[t*M : (t+1)*M]
			for j, v := range row {
				out[j] = v - m
			}
		}
	}
	kernels.Exp(psi, psi)
	if deltas {
		tr.forwardDelta(ws, psi, T)
		ws.scaledD = true
	} else if tr.tied != nil {
		tr.tied.forward(ws.alpha, ws.scale, psi, T, M)
	} else {
		kernels.Forward(ws.alpha, ws.scale, psi, tr.e, T, M)
	}
	ls, ok := sumLogs(ws.scale[:T])
	if !ok {
		tr.logScores(ws, emit, T, c, false)
		return tr.forwardLog(ws, T)
	}
	return shift + ls, nil
}

// sumLogs returns Σ log s over the scales, or false if one is not > 0 (or
// NaN). It takes about one logarithm a sequence, of the scales' product,
// not one a position (those were 4.5 % of forward–backward at M = 23).
func sumLogs[E float32 | float64](scale []E) (float64, bool) {
	return sumLogsStrided(scale, len(scale), 1)
}

// sumLogsStrided is sumLogs over the n scales s[0], s[stride], … (those
// of a chain in a lockstep group): factors within [2⁻⁵⁰⁰, 2⁵⁰⁰] multiply
// a running product, which is logged and restarted when it leaves that
// range; others are logged alone.
func sumLogsStrided[E float32 | float64](s []E, n, stride int) (float64, bool) {
	const lo, hi = 0x1p-500, 0x1p500
	z, p := 0.0, 1.0
	for k := 0; k < n*stride; k += stride {
		x := float64(s[k])
		if !(x > 0) {
			return 0, false
		}
		if x < lo || x > hi {
			z += math.Log(x)
			continue
		}
		p *= x
		if p < lo || p > hi {
			z += math.Log(p)
			p = 1
		}
	}
	return z + math.Log(p), true
}

// forwardLog is the log-domain forward pass over ws.s (unshifted scores).
func (tr *Transitions) forwardLog(ws *Workspace, T int) (float64, error) {
	ws.logMode = true
	logZ := tr.logForward(ws, T)
	if math.IsInf(logZ, -1) {
		return logZ, ErrNoLabelling
	}
	return logZ, nil
}
