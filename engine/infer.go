package engine

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// Posteriors selects what one forward–backward computes besides log Z. Nil
// fields are not computed; when all are nil only the forward pass runs.
type Posteriors struct {
	// Marginals, T×M, is set to P(y_t = j).
	Marginals []float64
	// Edges, (T−1)×M×M, is set to P(y_{t−1} = i, y_t = j) at index
	// ((t−1)·M + i)·M + j.
	Edges []float64
	// Transitions, M×M, has the expected transition counts
	// Σ_t P(y_{t−1} = i, y_t = j) ADDED to it (so that a batch accumulates).
	Transitions []float64
	// Start and End, M each, have P(y_0 = j) and P(y_{T−1} = j) added.
	Start, End []float64
	// Tied, for the Tied structure only, has len(exceptions)+1 entries:
	// the expected count of exception k (in the order Exceptions returns)
	// is added to Tied[k], that of all default-scored transitions together
	// to the last. It costs O(M + exceptions) per position, where
	// Transitions costs O(M²).
	Tied []float64
}

// LogZ returns the log partition function of a chain with emission scores
// emit (T×M), restricted by c if it is not nil.
func (tr *Transitions) LogZ(ws *Workspace, emit []float64, c *ChainOptions) (float64, error) {
	return tr.Posteriors(ws, emit, c, nil)
}

// Posteriors runs one forward–backward over a chain and fills what p asks
// for; it returns log Z. An empty chain has log Z = 0.
func (tr *Transitions) Posteriors(ws *Workspace, emit []float64, c *ChainOptions, p *Posteriors) (float64, error) {
	T, err := tr.chainLen(emit)
	if err != nil {
		return 0, err
	}
	M := tr.m
	if err := c.check(T, M); err != nil {
		return 0, err
	}
	if p != nil {
		if err := p.check(tr, T, M); err != nil {
			return 0, err
		}
	}
	if T == 0 {
		return 0, nil
	}
	// Few allowed labels per position: the pairs K_{t−1}×K_t alone
	// (restrict_fb.go), unless that path hands the chain back.
	if tr.restrictPays(c, T) {
		if logZ, ok := tr.restricted(ws, emit, T, c, p); ok {
			return logZ, nil
		}
	}
	return tr.posteriorsFull(ws, emit, T, c, p)
}

// posteriorsFull is Posteriors over all M labels at every position (a
// constraint sets the excluded labels' scores to −Inf), for a checked
// chain of T ≥ 1 positions.
func (tr *Transitions) posteriorsFull(ws *Workspace, emit []float64, T int, c *ChainOptions, p *Posteriors) (float64, error) {
	M := tr.m
	ws.grow(T, M)
	logZ, err := tr.forward(ws, emit, T, c)
	if err != nil || p == nil || (p.Marginals == nil && p.Edges == nil && p.Transitions == nil && p.Start == nil && p.End == nil && p.Tied == nil) {
		return logZ, err
	}
	if ws.logMode {
		tr.logPosteriors(ws, T, logZ, p)
		return logZ, nil
	}
	alpha, beta, psi, scale := ws.alpha[:T*M], ws.beta[:T*M], ws.psi[:T*M], ws.scale[:T]
	counted := false // the transition counts are in p.Transitions
	if ws.scaledD {
		tr.backwardDelta(ws, psi, T)
	} else if tr.tied != nil {
		tr.tied.backward(beta, scale, psi, ws.work[:M], T, M)
		if p.Tied != nil {
			ws.excSum = grow(ws.excSum, len(tr.tied.exc))
			tr.tied.counts(p.Tied, alpha, beta, psi, scale, ws.work[:M], ws.excSum, T, M)
		}
	} else if p.Transitions != nil && T > 1 {
		tr.dense()
		kernels.BackwardTransitions(p.Transitions, tr.e, alpha, beta, psi, scale, tr.et, ws.work[:T*M], T, M)
		counted = true
	} else {
		kernels.Backward(beta, scale, psi, tr.et, T, M)
	}
	if p.Marginals != nil {
		kernels.Mul(p.Marginals, alpha, beta, 1)
	}
	if p.Start != nil {
		for j := range M {
			p.Start[j] += alpha[j] * beta[j]
		}
	}
	if p.End != nil {
		last := (T - 1) * M
		for j := range M {
			p.End[j] += alpha[last+j] * beta[last+j]
		}
	}
	if ws.scaledD {
		if T > 1 && (p.Transitions != nil || p.Edges != nil) {
			tr.edgesDelta(ws, psi, T, p.Transitions, p.Edges)
		}
		return logZ, nil
	}
	if (p.Transitions != nil || p.Edges != nil) && T > 1 {
		tr.dense()
	}
	if p.Transitions != nil && T > 1 && !counted {
		kernels.Transitions(p.Transitions, tr.e, alpha, beta, psi, scale, ws.work[:T*M], T, M)
	}
	if p.Edges != nil {
		for t := 1; t < T; t++ {
			inv := 1 / scale[t]
			out := p.Edges[(t-1)*M*M : t*M*M]
			for i := range M {
				a := alpha[(t-1)*M+i] * inv
				row := out[i*M : (i+1)*M]
				e := tr.e[i*M : (i+1)*M]
				for j := range M {
					row[j] = a * e[j] * psi[t*M+j] * beta[t*M+j]
				}
			}
		}
	}
	return logZ, nil
}

func (p *Posteriors) check(tr *Transitions, T, M int) error {
	if p.Tied != nil {
		if tr.tied == nil {
			return fmt.Errorf("engine: Posteriors.Tied needs the Tied structure")
		}
		if len(p.Tied) != len(tr.tied.exc)+1 {
			return fmt.Errorf("engine: Posteriors.Tied has %d entries, want %d", len(p.Tied), len(tr.tied.exc)+1)
		}
	}
	for _, c := range []struct {
		name string
		s    []float64
		n    int
	}{
		{"Marginals", p.Marginals, T * M},
		{"Edges", p.Edges, max(T-1, 0) * M * M},
		{"Transitions", p.Transitions, M * M},
		{"Start", p.Start, M},
		{"End", p.End, M},
	} {
		if c.s != nil && len(c.s) != c.n {
			return fmt.Errorf("engine: Posteriors.%s has %d entries, want %d", c.name, len(c.s), c.n)
		}
	}
	return nil
}

// PathScore returns the unnormalised log score of a labelling: emissions
// plus start, end and transition scores, plus the transition deltas of o if
// it has any (-Inf if it uses a forbidden transition). It ignores o's label
// constraints.
func (tr *Transitions) PathScore(emit []float64, labels []int32, o *ChainOptions) (float64, error) {
	T, err := tr.chainLen(emit)
	if err != nil {
		return 0, err
	}
	if len(labels) != T {
		return 0, fmt.Errorf("engine: %d labels for %d positions", len(labels), T)
	}
	if T == 0 {
		return 0, nil
	}
	M := tr.m
	for t, y := range labels {
		if y < 0 || int(y) >= M {
			return 0, fmt.Errorf("engine: label %d at position %d is out of range [0,%d)", y, t, M)
		}
	}
	s := tr.start[labels[0]] + tr.end[labels[T-1]]
	for t, y := range labels {
		s += emit[t*M+int(y)]
		if t > 0 {
			at := int(labels[t-1])*M + int(y)
			s += tr.score[at]
			if d := o.delta(t); d != nil {
				s += d[at]
			}
		}
	}
	return s, nil
}

// LogProb returns log p(labels | emit), restricted by c if not nil (a
// labelling the constraint excludes has log probability -Inf).
func (tr *Transitions) LogProb(ws *Workspace, emit []float64, labels []int32, c *ChainOptions) (float64, error) {
	s, err := tr.PathScore(emit, labels, c)
	if err != nil {
		return 0, err
	}
	if !c.admits(labels) {
		return math.Inf(-1), nil
	}
	logZ, err := tr.LogZ(ws, emit, c)
	if err != nil {
		return 0, err
	}
	return s - logZ, nil
}

// admits reports whether labels satisfies the constraint.
func (c *ChainOptions) admits(labels []int32) bool {
	if c == nil {
		return true
	}
	for t, y := range labels {
		if c.Forced != nil && c.Forced[t] >= 0 && c.Forced[t] != y {
			return false
		}
		if c.Allowed != nil && c.Allowed[t] != nil {
			ok := false
			for _, a := range c.Allowed[t] {
				ok = ok || a == y
			}
			if !ok {
				return false
			}
		}
	}
	return true
}

// Gradient is the derivative of a chain's negative log-likelihood
// −log p(labels | emit) = log Z − score(labels) with respect to the scores.
// Each non-nil slice has the derivative ADDED to it: DEmit (T×M) gets
// P(y_t = j) − [labels_t = j]; DTrans (M×M) the expected minus the observed
// transition counts; DStart and DEnd (M) likewise for the first and last
// labels. It is what a neural tagger back-propagates through its CRF layer.
type Gradient struct {
	DEmit, DTrans, DStart, DEnd []float64
}

// NLL returns −log p(labels | emit) and adds its gradient to g (which may
// be nil for the value alone). With a constraint c, the likelihood is that of
// the constrained chain.
func (tr *Transitions) NLL(ws *Workspace, emit []float64, labels []int32, c *ChainOptions, g *Gradient) (float64, error) {
	score, err := tr.PathScore(emit, labels, c)
	if err != nil {
		return 0, err
	}
	T, M := len(labels), tr.m
	if g == nil {
		g = &Gradient{}
	}
	if g.DEmit != nil && len(g.DEmit) != T*M {
		return 0, fmt.Errorf("engine: Gradient.DEmit has %d entries, want %d", len(g.DEmit), T*M)
	}
	if T == 0 {
		return 0, nil
	}
	ws.grow(T, M)
	p := Posteriors{Transitions: g.DTrans, Start: g.DStart, End: g.DEnd}
	if g.DEmit != nil {
		p.Marginals = ws.work2(T * M)
	}
	logZ, err := tr.Posteriors(ws, emit, c, &p)
	if err != nil {
		return 0, err
	}
	g.addNLL(g.DEmit, p.Marginals, labels, M)
	return logZ - score, nil
}

// addNLL adds to g what a chain labelled labels adds to the NLL's gradient
// besides the expected transition, start and end counts (which Posteriors
// added): its marginals marg (T×M) into dEmit, −1 at its gold entries of
// dEmit, DTrans, DStart and DEnd (each skipped when nil).
func (g *Gradient) addNLL(dEmit, marg []float64, labels []int32, M int) {
	T := len(labels)
	if dEmit != nil {
		for k, v := range marg {
			dEmit[k] += v
		}
		for t, y := range labels {
			dEmit[t*M+int(y)]--
		}
	}
	if g.DTrans != nil {
		for t := 1; t < T; t++ {
			g.DTrans[int(labels[t-1])*M+int(labels[t])]--
		}
	}
	if g.DStart != nil {
		g.DStart[labels[0]]--
	}
	if g.DEnd != nil {
		g.DEnd[labels[T-1]]--
	}
}

// work2 returns a second T×M scratch buffer (for marginals the caller did
// not supply).
func (ws *Workspace) work2(n int) []float64 {
	ws.delta = grow(ws.delta, n)
	return ws.delta
}
