package train

import "time"

// Stats receives where the time of an L-BFGS or OWL-QN training goes
// (Config.Stats), for the "where an iteration's time goes" table of
// BENCHMARKS.md. The clock is read a few times per sequence, never per
// position (on CoNLL-2000 about 36k reads an evaluation, ≈ 1% of it); with
// Config.Stats nil nothing is read. Train adds to the fields, so one
// Stats may sum several trainings.
type Stats struct {
	// SkipFirst leaves the start out of the figures: the evaluation at
	// the starting point and the first iteration (whose line search takes
	// two evaluations: libLBFGS's first step, 1/‖d‖, then ×4), so that they
	// describe the iterations that follow (≈ 1.06 evaluations each over a
	// whole CoNLL-2000 training, against 1.2 over its first 10).
	SkipFirst bool

	Iterations int // accepted iterations
	Evals      int // objective evaluations (line search trials)
	// Total is the wall time of the optimisation, from the first
	// evaluation to the last iteration's end.
	Total time.Duration
	// Eval is the wall time inside the objective's evaluations; Sequences
	// the part of it in the parallel pass over the sequences (the rest:
	// building the transitions, copying the weights for the workers,
	// adding the workers' gradients and the L2 term).
	Eval, Sequences time.Duration
	// Progress is the wall time of the per-iteration report (the active
	// parameter count, holdout tagging and the Progress callback); with
	// Config.Progress nil it is about 0.
	Progress time.Duration
	// Refined is set when precision=float32 handed over to float64.
	Refined bool
	// Workers has each worker's busy time in the phases of the pass over
	// the sequences, summed over the evaluations.
	Workers []PhaseTimes
	// Shape is the size of what the last training's evaluations worked on.
	Shape Shape
}

// Shape is the size of what one evaluation works on, counted from the
// split of the training data the evaluations use (hybrid.go), so that a
// roofline of the phases (simdcrf-bench roofline) counts the work as
// implemented.
type Shape struct {
	Labels               int // M
	Sequences, Tokens    int
	Params               int // θ, every parameter the optimiser moves
	StateParams          int // the state weights: HotRows·HotStride, then the cold weights
	HotRows              int // attributes with a dense row of M weights
	HotStride            int // their rows' stride: M, or M padded to whole cache lines
	HotFeatures          int // occurrences of hot attributes: an M-wide row each
	ColdFeatures         int // occurrences of the other attributes
	ColdLabels           int // their labels, all occurrences: one weight each
	Values               bool
	Memories             int  // L-BFGS's history size m
	Lockstep, SubLabels  bool // lockstep groups; sub-label weights
	Float32, Pruned, Tri bool // precision float32; pruned sets; order 2
}

// PhaseTimes is one worker's time in each phase of the gradient.
type PhaseTimes struct {
	// Score: gathering the state scores of a sequence's features
	// (emissions), sub-label scores included.
	Score time.Duration
	// ForwardBackward: log Z, the marginals and the expected transition
	// counts, with the observed counts and the path score.
	ForwardBackward time.Duration
	// Scatter: adding the marginals minus the observed counts into the
	// state gradient.
	Scatter time.Duration
	Seqs    int64 // sequences evaluated
}

// Optimiser returns the wall time spent in the optimiser proper: the
// L-BFGS vector passes (history update, two-loop direction, steps) and the
// line search's own work, i.e. Total without the evaluations and the
// progress reports.
func (s *Stats) Optimiser() time.Duration { return s.Total - s.Eval - s.Progress }

// add adds o's figures to s.
func (s *Stats) add(o *Stats) {
	s.Iterations += o.Iterations
	s.Evals += o.Evals
	s.Total += o.Total
	s.Eval += o.Eval
	s.Sequences += o.Sequences
	s.Progress += o.Progress
	s.Refined = s.Refined || o.Refined
	s.Shape = o.Shape
	for len(s.Workers) < len(o.Workers) {
		s.Workers = append(s.Workers, PhaseTimes{})
	}
	for w, p := range o.Workers {
		ws := &s.Workers[w]
		ws.Score += p.Score
		ws.ForwardBackward += p.ForwardBackward
		ws.Scatter += p.Scatter
		ws.Seqs += p.Seqs
	}
}

// Mean returns the workers' mean busy time per phase (the wall time of
// each phase when the workers are balanced).
func (s *Stats) Mean() PhaseTimes {
	var m PhaseTimes
	n := time.Duration(max(len(s.Workers), 1))
	for _, w := range s.Workers {
		m.Score += w.Score
		m.ForwardBackward += w.ForwardBackward
		m.Scatter += w.Scatter
		m.Seqs += w.Seqs
	}
	m.Score /= n
	m.ForwardBackward /= n
	m.Scatter /= n
	return m
}

// The phases of a sequence's gradient.
const (
	phaseScore = iota
	phaseFB
	phaseScatter
	nPhases
)

// phaseClock times one worker's phases: start at a sequence's beginning,
// mark at the end of each phase. Its methods do nothing on a nil clock (no
// Stats), so the evaluation calls them unconditionally.
type phaseClock struct {
	last int64
	ns   [nPhases]int64
	seqs int64
	_    [64]byte // one worker's clock per cache line
}

var clockBase = time.Now()

// monoNow reads the monotonic clock (ns since clockBase).
func monoNow() int64 { return int64(time.Since(clockBase)) }

func (c *phaseClock) start() { c.startSeqs(1) }

// startSeqs starts n sequences timed together (a lockstep group).
func (c *phaseClock) startSeqs(n int) {
	if c != nil {
		c.last = monoNow()
		c.seqs += int64(n)
	}
}

func (c *phaseClock) mark(p int) {
	if c != nil {
		t := monoNow()
		c.ns[p] += t - c.last
		c.last = t
	}
}

// phaseTimer holds an objective's clocks and wall times while Stats is set.
type phaseTimer struct {
	clocks []phaseClock
	seqRun time.Duration // wall time of the passes over the sequences
}

func newPhaseTimer(workers int) *phaseTimer {
	return &phaseTimer{clocks: make([]phaseClock, workers)}
}

// clock returns worker w's clock (nil without a timer).
func (p *phaseTimer) clock(w int) *phaseClock {
	if p == nil {
		return nil
	}
	return &p.clocks[w]
}

// reset forgets the times so far (Stats.SkipFirst).
func (p *phaseTimer) reset() {
	clear(p.clocks)
	p.seqRun = 0
}

// addTo adds the timer's totals to s.
func (p *phaseTimer) addTo(s *Stats) {
	if p == nil || s == nil {
		return
	}
	s.Sequences += p.seqRun
	for len(s.Workers) < len(p.clocks) {
		s.Workers = append(s.Workers, PhaseTimes{})
	}
	for w := range p.clocks {
		c := &p.clocks[w]
		ws := &s.Workers[w]
		ws.Score += time.Duration(c.ns[phaseScore])
		ws.ForwardBackward += time.Duration(c.ns[phaseFB])
		ws.Scatter += time.Duration(c.ns[phaseScatter])
		ws.Seqs += c.seqs
	}
}

// shape returns the Shape of o's evaluations (m: L-BFGS's history size).
func (o *objective) shape(m int) Shape {
	md, sc := o.md, o.sc
	if m == 0 {
		m = 6
	}
	return Shape{
		Labels: md.m, Sequences: len(sc.labels), Tokens: sc.pos[len(sc.pos)-1],
		Params: md.nTotal(), StateParams: md.nState, HotRows: md.hy.nHot, HotStride: md.hy.ld,
		HotFeatures: len(sc.hotIDs), ColdFeatures: len(sc.cOff), ColdLabels: len(sc.cLab),
		Values: sc.v64.hot != nil || sc.v64.cold != nil, Memories: m,
		Lockstep: o.lock != nil, SubLabels: md.sub != nil, Float32: o.f32 != nil,
		Pruned: md.prune != nil, Tri: md.order2(),
	}
}
