package train

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// objective evaluates f(θ) = Σ_i w_i·(−log p(y_i | x_i)) + C2·‖θ‖² and its
// gradient on a Pool. Each worker adds the sequences of its contiguous
// block into its own gradient buffers (for the hot rows, worker 0 straight
// into the output), and the buffers are added in worker order, so a fixed
// thread count gives bit-identical results.
type objective struct {
	md      *paramSpace
	d       *Data
	c2      float64
	pool    *engine.Pool
	workers []workerBuf
	excBuf  []engine.Exception
	tr      *engine.Transitions // of the last evaluation
	sc      *splitCorpus
	// weighted is true when some instance weight is not 1.
	weighted bool
	pt       *phaseTimer         // Config.Stats: per-phase clocks (nil: none)
	f32      *state32            // Config.Precision float32 (nil: float64)
	lock     *lockstep           // dense transitions at large M in float64, else nil
	prefetch bool                // prefetch the next sequence's rows (M ≤ prefetchMaxM)
	so       *engine.SecondOrder // Config.Order 2: tr with md.tri
}

type workerBuf struct {
	g []float64 // hot state gradient (worker 0: the output's)
	// cw holds cold weight j at cw[2j] and its gradient at cw[2j+1]: a
	// rare attribute's weight and gradient then share a cache line, and a
	// cold feature costs one miss instead of two.
	cw   []float64
	tg   []float64 // transition gradient, in θ order from transOff
	tmp  []float64 // weighted: one sequence's expected transition counts
	emit []float64
	marg []float64
	ps   postScratch
	co   engine.ChainOptions
	sg   []float64 // sub-label gradient
	sbuf []float64 // sub-label scratch
	bb   bigramBuf
	pb   prune.Buf   // Config.PruneMax: the pruned sets
	tri  []float64   // Config.Order 2: the trigram gradient
	tri1 []float64   // and one weighted sequence's expected counts
	pc   *phaseClock // nil without Config.Stats
	loss float64
	_    [64]byte // keep workers' hot fields on separate lines
}

func newObjective(md *paramSpace, d *Data, c2 float64, pool *engine.Pool) *objective {
	o := &objective{md: md, d: d, c2: c2, pool: pool, sc: md.hy.split(d.Corpus), prefetch: md.m <= prefetchMaxM}
	for _, w := range d.Weights {
		if w != 1 {
			o.weighted = true
		}
	}
	nt := md.nParams - md.nState
	maxLen := d.Corpus.MaxLen()
	o.workers = make([]workerBuf, pool.Threads())
	for w := range o.workers {
		wb := &o.workers[w]
		if w > 0 {
			wb.g = sparse.MakeParams(md.hy.hotSize())
		}
		wb.cw = sparse.MakeParams(2 * (md.nState - md.hy.hotSize()))
		wb.tg = make([]float64, nt)
		wb.tmp = make([]float64, nt)
		wb.emit = make([]float64, maxLen*md.m)
		wb.marg = make([]float64, maxLen*md.m)
		wb.ps = md.newPostScratch(maxLen)
		if md.sub != nil {
			wb.sg = make([]float64, len(md.sub.IDs))
			wb.sbuf = make([]float64, maxLen*md.sub.NSub)
		}
		wb.bb = md.big.newBuf(maxLen)
		wb.tri = make([]float64, md.nTri())
		wb.tri1 = make([]float64, md.nTri())
	}
	o.excBuf = make([]engine.Exception, len(md.excs))
	o.lock = o.newLockstep(md.m >= engine.LockstepLabels)
	return o
}

// postScratch is posteriors' scratch space for a model without transition
// weights (else empty): row maxima and minima, and M zeros.
type postScratch struct {
	mx, lo, zeros []float64
	mark          []int32
}

func (md *paramSpace) newPostScratch(maxLen int) postScratch {
	if !md.noTrans {
		return postScratch{}
	}
	return postScratch{mx: make([]float64, maxLen), lo: make([]float64, maxLen), zeros: make([]float64, md.m), mark: make([]int32, md.m)}
}

// posteriors sets marg (T×M) to a sequence's label marginals given its
// emissions and tr (under opts, if not nil: candidate labels, and
// observation-dependent transitions, whose edge marginals ((T−1)×M²) then
// go to edges), adds its expected transition, start and end counts to acc
// (θ order from transOff, up to bigOff), and returns log Z. Without
// transition weights the positions are independent
// (independentPosteriors): acc is left alone, and tr is not used.
func (md *paramSpace) posteriors(tr *engine.Transitions, ws *engine.Workspace, emit, marg, acc []float64, ps *postScratch, T int, opts *engine.ChainOptions, edges []float64) (float64, error) {
	m := md.m
	if md.noTrans { // (then there are no observation-dependent transitions)
		if opts != nil {
			maskAllowed(emit[:T*m], opts.Allowed, m, ps.mark)
		}
		return independentPosteriors(marg, emit, ps.mx[:T], ps.lo[:T], ps.zeros, T, m), nil
	}
	acc = acc[:md.bigOff-md.nState]
	nt := len(acc)
	p := engine.Posteriors{Marginals: marg, Start: acc[nt-2*m : nt-m], End: acc[nt-m:]}
	if opts != nil && opts.TransDelta != nil {
		p.Edges = edges[:(T-1)*m*m]
	}
	if md.tied {
		p.Tied = acc[:len(md.excs)+1]
	} else {
		p.Transitions = acc[:m*m]
	}
	return tr.Posteriors(ws, emit, opts, &p)
}

// independentPosteriors sets marg (T×M) to the label marginals of a CRF
// with no transition weights, whose positions are independent: the softmax
// of each row of emit. It returns log Z = Σ_t log Σ_j exp(emit[t][j]). This
// is O(T·M), where the forward–backward over zero transitions is O(T·M²).
// mx and lo are scratch of T entries, zeros M zeros.
func independentPosteriors(marg, emit, mx, lo, zeros []float64, T, m int) float64 {
	kernels.ShiftRows(marg, mx, lo, emit, zeros, T, m)
	kernels.Exp(marg[:T*m], marg[:T*m])
	logZ := 0.0
	for t := range T {
		row := marg[t*m : (t+1)*m]
		sum := 0.0
		for _, v := range row {
			sum += v
		}
		kernels.Scale(1/sum, row)
		logZ += mx[t] + math.Log(sum)
	}
	return logZ
}

// eval sets g to the gradient of f at theta and returns f. It returns
// errInterrupted soon after stop is set.
func (o *objective) eval(theta, g []float64, stop *atomic.Bool) (float64, error) {
	md := o.md
	// One Transitions, its scores refreshed in place after the first
	// evaluation (at M = 1,208 a new one allocated tens of MB each time).
	var err error
	if o.tr == nil {
		o.tr, err = md.transitions(theta, o.excBuf)
	} else {
		md.setSubTrans(theta)
		err = md.setTransitions(o.tr, md.transParams(theta))
	}
	if err != nil { // (SetScores and SetTied leave o.tr as it was)
		return 0, fmt.Errorf("train: transition weights: %w", err)
	}
	tr := o.tr
	if md.order2() {
		if o.so == nil {
			if o.so, err = engine.NewSecondOrder(tr, md.tri); err != nil {
				return 0, err
			}
		}
		if err := md.tri.SetScores(theta[md.triOff():md.nTotal()]); err != nil {
			return 0, fmt.Errorf("train: trigram weights: %w", err)
		}
	}
	if md.sub != nil {
		md.sub.W = theta[md.nParams : md.nParams+len(md.sub.IDs)]
	}
	nh := md.hy.hotSize()
	gs := g[:nh]
	clear(gs)
	coldTheta := theta[nh:md.nState]
	for w := range o.workers {
		wb := &o.workers[w]
		wb.loss = 0
		clear(wb.tg)
		clear(wb.tri)
		if w == 0 {
			wb.g = gs
		}
	}
	if o.f32 != nil {
		o.f32.prepare(o, theta)
	} else {
		_ = o.pool.Run(len(o.workers), func(_ *engine.Workspace, _, w int) error {
			cw := o.workers[w].cw
			cw = cw[:2*len(coldTheta)]
			for j, v := range coldTheta {
				cw[2*j], cw[2*j+1] = v, 0
			}
			return nil
		})
	}
	var t0 time.Time
	if o.pt != nil {
		t0 = time.Now()
	}
	if o.f32 != nil {
		err = o.f32.run(o, tr, theta, stop)
	} else {
		n := len(o.sc.labels)
		if o.lock != nil { // dense at large M: lockstep groups (lockstep.go)
			n = len(o.lock.units)
		}
		err = o.pool.Run(n, func(ws *engine.Workspace, w, i int) error {
			if stop != nil && stop.Load() {
				return errInterrupted
			}
			if o.lock != nil {
				return o.unit(ws, w, tr, theta, i)
			}
			return o.seq(ws, &o.workers[w], tr, theta, i)
		})
	}
	if o.pt != nil {
		o.pt.seqRun += time.Since(t0)
	}
	if err != nil {
		return 0, err
	}
	return o.reduce(theta, g), nil
}

// prefetchLevel has a bit for each prefetch of prefetchAll (0: none); a
// variable for the A/B of TestPrefetchChunking and TestPrefetchEWT. Only
// the next sequence's cold lines (1) pay on both machines measured; the hot
// rows (2, 4) sit in L2 on the Intel Xeon (2 MiB a core), where their
// prefetches cost load slots for nothing. CoNLL-2000, CPU per evaluation
// against level 0, median of per-round ratios (TRAIN_ROUNDS=21–31):
//
//	            level 1        level 7
//	Intel Xeon  ×0.96–0.98     ×1.05–1.09  (1 and 2 threads)
//	AMD EPYC    ×0.91–0.93     ×0.87–0.99  (7–11 rounds)
var prefetchLevel = 1

// prefetchMaxM is the largest M at which the evaluation prefetches
// (objective.prefetch). CPU per evaluation, levels 7 against 0, in turns:
// CoNLL-2000 (M = 22) ×0.79–0.90; EWT XPOS (M = 49) ×0.98–1.08, no gain
// (level 1 on the Intel Xeon: ×0.995 and ×1.009, float64 and float32).
// (A guess, not measured: at M = 49 forward–backward's own working set,
// the M×M factors alone 19 KB, fills most of L1, which the prefetched
// lines then compete for.)
const prefetchMaxM = 32

// joinOpts returns the chain options of candidate labels c (the caller's
// own, from chainOpts: modified) and observation-dependent transitions d
// together; either may be nil.
func joinOpts(c, d *engine.ChainOptions) *engine.ChainOptions {
	if c == nil {
		return d
	}
	c.TransDelta = nil
	if d != nil {
		c.TransDelta = d.TransDelta
	}
	return c
}

// seq adds one sequence's weighted NLL and gradient into wb.
func (o *objective) seq(ws *engine.Workspace, wb *workerBuf, tr *engine.Transitions, theta []float64, i int) error {
	md := o.md
	m := md.m
	y, c := o.sc.labels[i], o.d.Weight(i)
	T := len(y)
	if T == 0 || c == 0 {
		return nil
	}
	emit := wb.emit[:T*m]
	marg := wb.marg[:T*m]
	wb.pc.start()
	if sets := o.fixedSets(i); sets != nil {
		// A zeroth-order pruner's fixed sets: hot rows and sub-labels at
		// their labels alone (scoreSets).
		scoreSets(md.hy, &o.sc.v64, theta[:md.hy.hotSize()], wb.cw, 2, emit, o.sc, i, sets)
		if md.sub != nil {
			md.sub.AddScoresSets(emit, o.d.Corpus.Seq(i), wb.sbuf, sets)
		}
	} else {
		o.scoreSeq(wb, theta, i, emit)
	}
	// The rows the next sequence scores and the hot gradient rows this
	// one scatters into are fetched while forward–backward computes.
	if o.prefetch {
		prefetchAll(md.hy, theta[:md.hy.hotSize()], wb.cw, wb.g, o.sc, i)
	}
	wb.pc.mark(phaseScore)
	acc := wb.tg
	if o.weighted {
		acc = wb.tmp
		clear(acc)
	}
	var bs sparse.Seq
	var bo *engine.ChainOptions // observation-dependent transitions
	if md.big != nil {
		bs = o.d.Bigram.Seq(i)
		bo = wb.bb.options(md.big, md.bigramParams(theta), 1, bs)
	}
	opts := joinOpts(chainOpts(&wb.co, md.allowed, i), bo)
	if md.prune != nil {
		opts = md.prune.apply(&wb.pb, &wb.co, opts, emit, y, m, i)
	}
	nt := md.bigOff - md.nState
	var logZ float64
	var err error
	if md.order2() {
		logZ, err = o.posteriors2(ws, wb, emit, marg, acc, T, opts, c)
	} else {
		logZ, err = md.posteriors(tr, ws, emit, marg, acc, &wb.ps, T, opts, wb.bb.edges)
	}
	if err != nil {
		return fmt.Errorf("train: sequence %d: %w", i, err)
	}
	if o.weighted {
		for k, v := range acc[:nt] {
			wb.tg[k] += c * v
		}
	}
	return o.finishSeq(wb, theta, i, emit, marg, logZ, bs, bo)
}

// posteriors2 is posteriors for a second-order chain (Config.Order 2): it
// also adds the sequence's expected trigram counts, times its weight c, to
// wb.tri.
func (o *objective) posteriors2(ws *engine.Workspace, wb *workerBuf, emit, marg, acc []float64, T int, opts *engine.ChainOptions, c float64) (float64, error) {
	md, m := o.md, o.md.m
	acc = acc[:md.bigOff-md.nState]
	nt := len(acc)
	p := engine.Posteriors2{Posteriors: engine.Posteriors{Marginals: marg[:T*m], Start: acc[nt-2*m : nt-m], End: acc[nt-m:]}, Trigrams: wb.tri}
	if md.tied {
		p.Tied = acc[:len(md.excs)+1]
	} else {
		p.Transitions = acc[:m*m]
	}
	if c != 1 {
		p.Trigrams = wb.tri1
		clear(wb.tri1)
	}
	logZ, err := o.so.Posteriors(ws, emit, opts, &p)
	if err == nil && c != 1 {
		kernels.Axpy(c, wb.tri1, wb.tri)
	}
	return logZ, err
}

// goldTrigrams returns the trigram score of the labelling y and subtracts
// c from the gradient of each of its trigrams (Config.Order 2; 0 else).
func (o *objective) goldTrigrams(wb *workerBuf, theta []float64, y []int32, c float64) float64 {
	md := o.md
	if !md.order2() {
		return 0
	}
	s, off := 0.0, md.triOff()
	for t := 2; t < len(y); t++ {
		if k := md.tri.Index(y[t-2], y[t-1], y[t]); k >= 0 {
			s += theta[off+k]
			wb.tri[k] -= c
		}
	}
	return s
}

// fixedSets returns sequence i's pruned sets when a zeroth-order pruner
// fixed them (Config.PruneBy "zeroth"), else nil.
func (o *objective) fixedSets(i int) [][]int32 {
	if pr := o.md.prune; pr != nil && pr.fixed != nil {
		return pr.fixed[i]
	}
	return nil
}

// scoreSeq sets emit (T×M) to sequence i's emission scores under θ.
func (o *objective) scoreSeq(wb *workerBuf, theta []float64, i int, emit []float64) {
	md := o.md
	nh := md.hy.hotSize()
	scoreSeq(md.hy, &o.sc.v64, theta[:nh], wb.cw, 2, emit, o.sc, i)
	if md.sub != nil {
		md.sub.AddScores(emit, o.d.Corpus.Seq(i), wb.sbuf)
	}
}

// finishSeq adds what sequence i adds besides its expected transition
// counts, given its emissions, marginals (turned into the emission
// gradient here) and log Z: the observed counts, its NLL and the state
// gradient.
func (o *objective) finishSeq(wb *workerBuf, theta []float64, i int, emit, marg []float64, logZ float64, bs sparse.Seq, bo *engine.ChainOptions) error {
	md := o.md
	y, c := o.sc.labels[i], o.d.Weight(i)
	var delta float64 // the path's observation-dependent transition scores
	if bo != nil {
		gb := wb.tg[md.bigOff-md.nState:]
		md.big.addEdges(gb, bs, wb.bb.edges, c)
		md.big.addPath(gb, bs, y, -c)
		delta = pathDelta(bo.TransDelta, y, md.m)
	}
	delta += o.goldTrigrams(wb, theta, y, c)
	if err := addNLL(wb, md, theta, emit, marg, y, c, logZ, delta, i); err != nil {
		return err
	}
	wb.pc.mark(phaseFB)
	if sets := o.fixedSets(i); sets != nil { // (marg is 0 outside them)
		addGradientSets(md.hy, &o.sc.v64, wb.g, wb.cw[min(1, len(wb.cw)):], 2, marg, o.sc, i, c, sets)
	} else {
		addGradientSeq(md.hy, &o.sc.v64, wb.g, wb.cw[min(1, len(wb.cw)):], 2, marg, o.sc, i, c)
	}
	if md.sub != nil {
		md.sub.AddGradient(wb.sg, o.d.Corpus.Seq(i), marg, c, wb.sbuf)
	}
	wb.pc.mark(phaseScatter)
	return nil
}

// addNLL adds sequence i's observed counts (−c at its gold transition,
// start and end entries of wb.tg, −1 at its gold emissions in marg, which
// then holds the emission gradient) and its weighted NLL, logZ − the gold
// path's score (delta: its observation-dependent part), to wb; for the
// float64 and the float32 evaluations alike.
func addNLL[E float32 | float64](wb *workerBuf, md *paramSpace, theta []float64, emit, marg []E, y []int32, c, logZ, delta float64, i int) error {
	m, T := md.m, len(y)
	nt, off := md.bigOff-md.nState, md.nState
	tg := wb.tg
	score := theta[md.startOff()+int(y[0])] + theta[md.endOff()+int(y[T-1])] + delta
	tg[nt-2*m+int(y[0])] -= c
	tg[nt-m+int(y[T-1])] -= c
	for t := range T {
		k := t*m + int(y[t])
		score += float64(emit[k])
		marg[k]--
		if t > 0 {
			ti := md.transIndex(y[t-1], y[t])
			score += theta[ti]
			if md.transD != nil {
				score += md.transD[int(y[t-1])*m+int(y[t])]
			}
			tg[ti-off] -= c
		}
	}
	nll := logZ - score
	if math.IsNaN(nll) || math.IsInf(nll, 0) {
		return fmt.Errorf("train: sequence %d: log-likelihood is %v (weights diverged)", i, -nll)
	}
	wb.loss += c * nll
	return nil
}
