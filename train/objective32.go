package train

import (
	"fmt"
	"sync/atomic"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// The float32 evaluation (Config.Precision "float32"): the state weights,
// their gradient and the emission scores are float32 during an evaluation,
// and the sequence's forward–backward runs on the engine's float32 path
// (engine.Scaled: one shift for the whole transition matrix). What grows
// with the data stays float64: log Z is Σ_t (mx_t + log scale_t) summed in
// float64, the loss and the transition gradient are float64 totals (a
// worker's float32 transition counts, engine.Counts, go into them every few
// transitions), the workers' state gradients are added in float64, and θ,
// the L2 term and the optimiser (its inner products, the line search) are
// the float64 ones. A sequence the float32 path cannot hold (a spread
// beyond kernels.ScaledRange32, or a scale of 0) is done by the float64
// path instead.

// state32 is an objective's float32 state.
// flush32 is the number of transitions whose float32 counts a worker sums
// before adding them into its float64 total (engine.Counts.Every), so that
// the M² additions are paid once per flush32 transitions.
const flush32 = 256

type state32 struct {
	hot     []float32              // hot state weights, nHot rows of ld
	tr      engine.Scaled[float32] // the transitions
	vals    seqVals[float32]       // the split corpus's values
	workers []worker32
}

type worker32 struct {
	g  []float32 // hot state gradient
	cw []float32 // cold weight j at cw[2j], its gradient at cw[2j+1]
	// transition counts not yet in the float64 total; start and end
	// counts go straight into it.
	counts     engine.Counts[float32]
	ws         engine.ScaledWork[float32]
	emit, marg []float32
	fallbacks  int64 // sequences done by the float64 path
	_          [64]byte
}

// newState32 makes the float32 state of o, or says why its model needs
// float64.
func newState32(o *objective) (*state32, error) {
	md := o.md
	switch {
	case md.tied || md.noTrans:
		return nil, fmt.Errorf("train: precision=float32 needs dense transitions (this model has %s)", map[bool]string{true: "tied transitions", false: "no transitions"}[md.tied])
	case md.sub != nil:
		return nil, fmt.Errorf("train: precision=float32 does not support sub-label weights (feature.sublabels)")
	case md.big != nil:
		return nil, fmt.Errorf("train: precision=float32 does not support bigram attributes (B lines with %%x)")
	case md.allowed != nil:
		return nil, fmt.Errorf("train: precision=float32 does not support candidate labels (feature.candidates, --lexicon)")
	case md.prune != nil:
		return nil, fmt.Errorf("train: precision=float32 does not support pruning (prune.max)")
	}
	m := md.m
	s := &state32{hot: make([]float32, md.hy.hotSize())}
	sc := o.sc
	s.vals = valsTo32(&sc.v64)
	maxLen := o.d.Corpus.MaxLen()
	nCold := md.nState - md.hy.hotSize()
	s.workers = make([]worker32, len(o.workers))
	for w := range s.workers {
		wk := &s.workers[w]
		wk.g = make([]float32, md.hy.hotSize())
		wk.cw = make([]float32, 2*nCold)
		wk.emit, wk.marg = make([]float32, maxLen*m), make([]float32, maxLen*m)
		wk.counts.Every = flush32
	}
	return s, nil
}

func to32(x []float64) []float32 {
	if x == nil {
		return nil
	}
	y := make([]float32, len(x))
	for k, v := range x {
		y[k] = float32(v)
	}
	return y
}

// prepare sets the float32 weights and transition forms from θ, and
// clears the workers' buffers.
func (s *state32) prepare(o *objective, theta []float64) {
	md := o.md
	m := md.m
	s.tr.Set(md.transParams(theta), m)
	nh := md.hy.hotSize()
	for k, v := range theta[:nh] {
		s.hot[k] = float32(v)
	}
	coldTheta := theta[nh:md.nState]
	_ = o.pool.Run(len(s.workers), func(_ *engine.Workspace, _, w int) error {
		wk := &s.workers[w]
		cw := wk.cw[:2*len(coldTheta)]
		for j, v := range coldTheta {
			cw[2*j], cw[2*j+1] = float32(v), 0
		}
		wk.counts.Reset()
		return nil
	})
}

// run evaluates every sequence into the workers' buffers.
func (s *state32) run(o *objective, tr *engine.Transitions, theta []float64, stop *atomic.Bool) error {
	err := o.pool.Run(len(o.sc.labels), func(ws *engine.Workspace, w, i int) error {
		if stop != nil && stop.Load() {
			return errInterrupted
		}
		return s.seq(o, ws, &o.workers[w], &s.workers[w], tr, theta, i)
	})
	for w := range s.workers {
		s.workers[w].counts.Flush(o.workers[w].tg, 1)
	}
	return err
}

// forwardBackward sets wk.marg to the marginals of the T positions of
// wk.emit, adds their transition counts times c to wk.counts (flushed into
// tg as they grow) and returns log Z; ok is false (nothing added) when the
// engine's float32 path cannot hold the sequence.
func (s *state32) forwardBackward(wk *worker32, T, m int, tg []float64, c float64) (logZ float64, ok bool) {
	logZ, ok = s.tr.ForwardCounts(&wk.ws, wk.emit[:T*m], &wk.counts, tg, c)
	if !ok {
		return 0, false
	}
	alpha, beta := wk.ws.Alpha(), wk.ws.Beta()
	kernels.Mul32(wk.marg[:T*m], alpha, beta, 1)
	return logZ, true
}

// seq adds one sequence's weighted NLL and gradient into wb (loss,
// transitions) and wk (state gradient): objective.seq in float32.
func (s *state32) seq(o *objective, ws *engine.Workspace, wb *workerBuf, wk *worker32, tr *engine.Transitions, theta []float64, i int) error {
	md := o.md
	m := md.m
	y, c := o.sc.labels[i], o.d.Weight(i)
	T := len(y)
	if T == 0 || c == 0 {
		return nil
	}
	n := T * m
	emit, marg := wk.emit[:n], wk.marg[:n]
	wb.pc.start()
	scoreSeq(md.hy, &s.vals, s.hot, wk.cw, 2, emit, o.sc, i)
	if o.prefetch { // as the float64 seq does
		prefetchAll(md.hy, s.hot, wk.cw, wk.g, o.sc, i)
	}
	wb.pc.mark(phaseScore)
	nt := md.bigOff - md.nState
	tg := wb.tg
	weight := 1.0
	if o.weighted { // each sequence's counts alone: wk.counts holds none
		weight = c
	}
	logZ, ok := s.forwardBackward(wk, T, m, tg, weight)
	if ok {
		// Start and end counts.
		for j := range m {
			tg[nt-2*m+j] += c * float64(marg[j])
			tg[nt-m+j] += c * float64(marg[n-m+j])
		}
		if o.weighted {
			wk.counts.Flush(tg, c)
		}
	} else {
		// The float64 path, on the float32 scores.
		wk.fallbacks++
		e64, m64 := wb.emit[:n], wb.marg[:n]
		for k, v := range emit {
			e64[k] = float64(v)
		}
		acc := tg
		if o.weighted {
			acc = wb.tmp
			clear(acc)
		}
		var err error
		logZ, err = md.posteriors(tr, ws, e64, m64, acc, &wb.ps, T, nil, nil)
		if err != nil {
			return fmt.Errorf("train: sequence %d: %w", i, err)
		}
		if o.weighted {
			for k, v := range acc[:nt] {
				tg[k] += c * v
			}
		}
		for k, v := range m64 {
			marg[k] = float32(v)
		}
	}
	if err := addNLL(wb, md, theta, emit, marg, y, c, logZ, 0, i); err != nil {
		return err
	}
	wb.pc.mark(phaseFB)
	addGradientSeq(md.hy, &s.vals, wk.g, wk.cw[min(1, len(wk.cw)):], 2, marg, o.sc, i, float32(c))
	wb.pc.mark(phaseScatter)
	return nil
}

// fallbacks returns the number of sequences the float64 path took so far.
func (s *state32) fallbacks() int64 {
	n := int64(0)
	for w := range s.workers {
		n += s.workers[w].fallbacks
	}
	return n
}

// reduceStates is objective.reduceStates for the float32 workers: it sets
// g[0:nState] to the sum of their state gradients in float64 plus the L2
// gradient, zeroing their buffers, and returns C2·‖θ_state‖².
func (s *state32) reduceStates(o *objective, theta, g []float64) float64 {
	return o.reduceBlocks(theta, g, func(lo, hi, nh int, gb []float64) {
		if lo < nh { // hot rows
			h := min(hi, nh)
			g0 := s.workers[0].g[lo:h]
			for k, v := range g0 {
				gb[k] = float64(v)
			}
			clear(g0)
			for w := 1; w < len(s.workers); w++ {
				gw := s.workers[w].g[lo:h]
				for k, v := range gw {
					gb[k] += float64(v)
				}
				clear(gw)
			}
		}
		for k := max(lo, nh); k < hi; k++ { // cold weights
			j := 2*(k-nh) + 1
			v := 0.0
			for w := range s.workers {
				v += float64(s.workers[w].cw[j])
			}
			g[k] = v
		}
	})
}
