package model

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// FirstOrderPruner is a first-order CRF over the model's state features that
// narrows the zeroth-order pruner's sets (Model.Pruner, Model.Prune): at each
// position it keeps, within the zeroth-order set, the labels whose posterior
// marginal (forward–backward over the zeroth-order sets) is at least
// Rule.Threshold times the position's best, at most Rule.Max of them. The
// model is scored and tagged over those sets.
type FirstOrderPruner struct {
	Rule  prune.Rule          // applied to the log marginals, within the zeroth-order sets
	State sparse.Weights      // layout and pattern of Model.State
	Trans *engine.Transitions // the structure of Model.Trans: dense, or tied with the same exception pairs
	Sub   []float64           // sub-label weights (as Model.Sub.W), exactly when the model has Sub
}

// A model with a first-order pruner (-p prune.by=first) stores it in
// sections 35–38, marked needed like every section (a reader that skipped
// them would tag over the wider zeroth-order sets):
const (
	// 35: its rule, laid out as section 20: uint32 Max, uint32 zero,
	// float64 Threshold.
	secPruner1Rule = 35 + iota
	// 36: its state weights, float64s in the order of the model's (same
	// layout and, for sparse rows, the same pattern), as section 21.
	secPruner1State
	// 37: its transitions, float64s: M start scores, M end scores, then
	// for the dense structure the M×M scores row-major, for the tied one
	// the default followed by the exception scores, in the order of the
	// model's exceptions (whose label pairs it shares).
	secPruner1Trans
	// 38: its sub-label weights, float64s in the order of Sub.W, exactly
	// when the model has sub-label weights.
	secPruner1Sub
)

// checkPruner1 checks m's first-order pruner against the model and its
// zeroth-order pruner.
func (m *Model) checkPruner1() error {
	p := m.Pruner1
	if p == nil {
		return nil
	}
	if m.Pruner == nil || m.Prune == nil {
		return fmt.Errorf("model: a first-order pruner needs a zeroth-order pruner and its rule (Pruner and Prune)")
	}
	if err := p.Rule.Check(); err != nil {
		return fmt.Errorf("model: first-order pruner: %v", err)
	}
	if p.State == nil || !sameShape(p.State, m.State) {
		return fmt.Errorf("model: first-order pruner weights of another shape than the state weights")
	}
	if k := nonFinite(params(p.State)); k >= 0 {
		return fmt.Errorf("model: first-order pruner weight %d is %v", k, params(p.State)[k])
	}
	if err := sameStructure(p.Trans, m.Trans); err != nil {
		return fmt.Errorf("model: first-order pruner: %v", err)
	}
	if (m.Sub == nil) != (p.Sub == nil) || m.Sub != nil && len(p.Sub) != len(m.Sub.W) {
		return fmt.Errorf("model: a first-order pruner needs sub-label weights exactly when the model has them, as many")
	}
	if k := nonFinite(p.Sub); k >= 0 {
		return fmt.Errorf("model: first-order pruner sub-label weight %d is %v", k, p.Sub[k])
	}
	return nil
}

// sameStructure checks that transitions p have the structure of tr: as
// many labels, dense both, or tied both with the same exception pairs in
// the same order (the file stores p's scores in tr's order). Their scores
// were checked when they were made (−Inf, a forbidden transition, is
// allowed as in the model's).
func sameStructure(p, tr *engine.Transitions) error {
	if p == nil {
		return fmt.Errorf("no transitions")
	}
	if p.Labels() != tr.Labels() {
		return fmt.Errorf("transitions over %d labels, want %d", p.Labels(), tr.Labels())
	}
	if p.Structure() != tr.Structure() {
		return fmt.Errorf("%v transitions, the model's are %v", p.Structure(), tr.Structure())
	}
	_, pe := p.Exceptions()
	_, te := tr.Exceptions()
	if len(pe) != len(te) {
		return fmt.Errorf("%d transition exceptions, the model has %d", len(pe), len(te))
	}
	for k, e := range te {
		if pe[k].From != e.From || pe[k].To != e.To {
			return fmt.Errorf("transition exception %d is %d→%d, the model's %d→%d", k, pe[k].From, pe[k].To, e.From, e.To)
		}
	}
	return nil
}

// pruner1Sections returns the sections of m's first-order pruner (none
// without).
func (m *Model) pruner1Sections() []section {
	p := m.Pruner1
	if p == nil {
		return nil
	}
	tr := p.Trans
	M := tr.Labels()
	v := make([]float64, 2*M, 2*M+M*M)
	for j := range M {
		v[j], v[M+j] = tr.Start(j), tr.End(j)
	}
	if def, exc := tr.Exceptions(); tr.Structure() == engine.Tied {
		v = append(v, def)
		for _, e := range exc {
			v = append(v, e.Score)
		}
	} else {
		for i := range M {
			for j := range M {
				v = append(v, tr.Score(i, j))
			}
		}
	}
	secs := []section{
		{secPruner1Rule, ruleBytes(p.Rule)},
		{secPruner1State, leBytes(params(p.State))},
		{secPruner1Trans, leBytes(v)},
	}
	if p.Sub != nil {
		secs = append(secs, section{secPruner1Sub, leBytes(p.Sub)})
	}
	return secs
}

// parsePruner1 reads the first-order pruner's sections, if any, into m,
// whose state weights, transitions, sub-label weights and zeroth-order
// pruner are read.
func parsePruner1(name string, secs map[uint32][]byte, m *Model) error {
	rb, hasRule := secs[secPruner1Rule]
	wb, hasState := secs[secPruner1State]
	tb, hasTrans := secs[secPruner1Trans]
	sb, hasSub := secs[secPruner1Sub]
	if !hasRule && !hasState && !hasTrans && !hasSub {
		return nil
	}
	if m.Pruner == nil {
		return formatError(name, "first-order pruner sections without a zeroth-order pruner")
	}
	if !hasRule || !hasState || !hasTrans {
		return formatError(name, "incomplete first-order pruner: its rule, weights and transitions sections are all needed")
	}
	rule, err := parseRule(name, "first-order pruning", rb)
	if err != nil {
		return err
	}
	p := &FirstOrderPruner{Rule: rule}
	if n := m.State.NumParams(); len(wb) != 8*n {
		return formatError(name, "first-order pruner section of %d bytes, want %d weights", len(wb), n)
	}
	if p.State, err = WeightsLike(m.State, view[float64](wb)); err != nil {
		return formatError(name, "bad first-order pruner: %v", err)
	}
	tr := m.Trans
	M := tr.Labels()
	_, exc := tr.Exceptions()
	n := 2*M + M*M // (the model's transitions hold M×M scores already)
	if tr.Structure() == engine.Tied {
		n = 2*M + 1 + len(exc)
	}
	if len(tb) != 8*n {
		return formatError(name, "first-order pruner transitions section of %d bytes, want %d scores", len(tb), n)
	}
	v := view[float64](tb)
	start, end, rest := v[:M], v[M:2*M], v[2*M:]
	if tr.Structure() == engine.Tied {
		pe := make([]engine.Exception, len(exc))
		for k, e := range exc {
			pe[k] = engine.Exception{From: e.From, To: e.To, Score: rest[1+k]}
		}
		p.Trans, err = engine.NewTied(M, rest[0], pe, start, end)
	} else {
		p.Trans, err = engine.NewTransitionsWith(M, rest, start, end, engine.Options{Structure: engine.Dense})
	}
	if err != nil {
		return formatError(name, "bad first-order pruner transitions: %v", err)
	}
	if hasSub {
		if m.Sub == nil || len(sb) != 8*len(m.Sub.W) {
			return formatError(name, "first-order pruner sub-label section of %d bytes for a model without sub-label weights or with another number", len(sb))
		}
		p.Sub = view[float64](sb)
	} else if m.Sub != nil {
		return formatError(name, "no first-order pruner sub-label section in a model with sub-label weights")
	}
	m.Pruner1 = p
	return nil
}

// pruned1 narrows the zeroth-order sets s0 of s (checked) by the
// first-order pruner (Model.Pruner1): its emission scores at s0's labels,
// forward–backward over s0, and its rule over the log marginals within
// s0. The sets are views into w.prune1 (s0 are views into w.prune).
func (t *Tagger) pruned1(w *work, s sparse.Seq, s0 [][]int32) ([][]int32, error) {
	p := t.m.Pruner1
	M := t.m.State.Labels()
	n := s.Len() * M
	w.p1emit = resize(w.p1emit, n)
	w.p1marg = resize(w.p1marg, n)
	emit, marg := w.p1emit, w.p1marg
	if t.p1hot != nil {
		t.p1hot.score(w, p.State.(*sparse.Sparse), emit, s, s0)
	} else {
		p.State.Score(emit, s)
	}
	if t.p1sub != nil {
		w.sbuf = resize(w.sbuf, s.Len()*t.p1sub.NSub)
		t.p1sub.AddScoresSets(emit, s, w.sbuf, s0)
	}
	// (in the work, as the options and posteriors of Tag: taking their
	// addresses here would allocate)
	w.co1 = engine.ChainOptions{Allowed: s0}
	w.post1 = engine.Posteriors{Marginals: marg}
	if _, err := p.Trans.Posteriors(w.ws, emit, &w.co1, &w.post1); err != nil {
		return nil, err
	}
	// The rule reads s0's labels alone: their logs suffice (a nil set
	// is all labels).
	for i, set := range s0 {
		row := marg[i*M : (i+1)*M]
		if set == nil {
			for y, v := range row {
				row[y] = math.Log(v)
			}
		}
		for _, y := range set {
			row[y] = math.Log(row[y])
		}
	}
	return p.Rule.Sets(&w.prune1, marg, M, s0, nil), nil
}
