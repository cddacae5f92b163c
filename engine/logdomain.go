package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// scaledRange is the widest spread (in nats) of finite scores within one
// position's emissions, or within one column of the transition matrix, that
// the probability-domain path accepts. exp of a spread beyond ~708 is
// subnormal or zero, so such entries would silently vanish; the log-domain
// path (kernels.LogMatVec per step, about 10× slower) handles any range.
// Both ranges together stay far from the limit, so the normalised α and β
// keep every entry that matters.
const scaledRange = 300

// colRange returns the largest spread of finite scores in any column of the
// transition matrix.
func colRange(score []float64, colShift []float64, m int) float64 {
	r := 0.0
	for i := range m {
		for j := range m {
			if v := score[i*m+j]; !math.IsInf(v, -1) {
				r = max(r, colShift[j]-v)
			}
		}
	}
	return r
}

// logForward fills ws.alpha with log-domain forward scores
// α̃_t[j] = s_t[j] + log Σ_i exp(α̃_{t−1}[i] + S[i][j]) over ws.s (which
// logScores filled without the column shift) and returns log Z.
func (tr *Transitions) logForward(ws *Workspace, T int) float64 {
	M := tr.m
	s, a := ws.s[:T*M], ws.alpha[:T*M]
	copy(a[:M], s[:M])
	for t := 1; t < T; t++ {
		cur := a[t*M : (t+1)*M]
		kernels.LogMatVec(cur, a[(t-1)*M:t*M], ws.transAt(tr, t, false), M)
		for j := range cur {
			cur[j] += s[t*M+j]
		}
	}
	return logSumExp(a[(T-1)*M : T*M])
}

// logBackward fills ws.beta with β̃_{T−1} = 0,
// β̃_t[i] = log Σ_j exp(S[i][j] + s_{t+1}[j] + β̃_{t+1}[j]).
func (tr *Transitions) logBackward(ws *Workspace, T int) {
	M := tr.m
	s, b, tmp := ws.s[:T*M], ws.beta[:T*M], ws.work[:M]
	clear(b[(T-1)*M : T*M])
	for t := T - 2; t >= 0; t-- {
		for j := range M {
			tmp[j] = s[(t+1)*M+j] + b[(t+1)*M+j]
		}
		kernels.LogMatVec(b[t*M:(t+1)*M], tmp, ws.transAt(tr, t+1, true), M)
	}
}

// logPosteriors is the rest of Posteriors after a log-domain forward pass
// (ws.logMode), for chains whose score ranges the scaled path cannot
// represent. ws.s holds unshifted scores, ws.alpha log-domain α.
func (tr *Transitions) logPosteriors(ws *Workspace, T int, logZ float64, p *Posteriors) {
	M := tr.m
	tr.logBackward(ws, T)
	a, b, s := ws.alpha[:T*M], ws.beta[:T*M], ws.s[:T*M]
	marg := func(t, j int) float64 { return math.Exp(a[t*M+j] + b[t*M+j] - logZ) }
	if p.Marginals != nil {
		for t := range T {
			for j := range M {
				p.Marginals[t*M+j] = marg(t, j)
			}
		}
	}
	if p.Start != nil {
		for j := range M {
			p.Start[j] += marg(0, j)
		}
	}
	if p.End != nil {
		for j := range M {
			p.End[j] += marg(T-1, j)
		}
	}
	if p.Edges != nil || p.Transitions != nil || p.Tied != nil {
		// The tied counts too (this path had left them out: a tied chain
		// with deltas or a spread beyond scaledRange got none), by each
		// pair's exception (restrict.go's index).
		var px *pairIndex
		if p.Tied != nil {
			px = tr.pairIndex()
		}
		for t := 1; t < T; t++ {
			S := ws.transAt(tr, t, false)
			for i := range M {
				ai := a[(t-1)*M+i] - logZ
				for j := range M {
					v := math.Exp(ai + S[i*M+j] + s[t*M+j] + b[t*M+j])
					if p.Edges != nil {
						p.Edges[((t-1)*M+i)*M+j] = v
					}
					if p.Transitions != nil {
						p.Transitions[i*M+j] += v
					}
					if px != nil {
						k := int(px.find(int32(i), int32(j)))
						if k < 0 {
							k = len(p.Tied) - 1
						}
						p.Tied[k] += v
					}
				}
			}
		}
	}
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	if math.IsInf(m, 0) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
