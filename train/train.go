// Package train fits the weights of a linear-chain CRF to labelled
// sequences of attribute ids: L-BFGS with L2 ("lbfgs"), OWL-QN for L1 and
// the elastic net ("l1"), SGD with a calibrated step ("sgd") and the
// averaged perceptron ("ap"), with CRFsuite's objective, parameter names,
// defaults and stopping rules. The gradient runs over sequences in parallel
// on an engine.Pool, deterministically for a fixed number of threads.
package train

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// Data is a labelled training (or holdout) set over attribute ids (see
// sparse.Dataset, where package corpus makes it).
type Data = sparse.Dataset

// checkBigram checks the bigram attributes against the sequences.
func checkBigram(d *Data, name string) error {
	if d.Bigram == nil {
		return nil
	}
	if d.Bigram.Len() != d.Corpus.Len() {
		return fmt.Errorf("train: %s data has bigram attributes for %d sequences of %d", name, d.Bigram.Len(), d.Corpus.Len())
	}
	for i := range d.Corpus.Len() {
		b := d.Bigram.Seq(i)
		if b.Len() != d.Corpus.Seq(i).Len() {
			return fmt.Errorf("train: %s sequence %d has %d positions and bigram attributes for %d", name, i, d.Corpus.Seq(i).Len(), b.Len())
		}
		b.Labels = nil
		if err := b.Validate(d.NumBigramAttrs, d.Labels); err != nil {
			return fmt.Errorf("train: %s sequence %d: bigram attributes: %w", name, i, err)
		}
	}
	return nil
}

// Result is a trained model: the parameters and the views on them.
type Result struct {
	Layout  sparse.Layout
	Pattern *sparse.Pattern
	State   sparse.Weights      // view on Params[:State.NumParams()]
	Trans   *engine.Transitions // built from the final transition parameters
	Params  []float64           // all parameters (state weights first)

	Iterations  int
	Loss        float64 // the final objective (sgd, ap: of the last epoch)
	Interrupted bool    // ctx was cancelled; Params are the last iteration's
	Reason      string  // why training stopped

	// Tied reports tied transitions; TransParams is the number of
	// transition parameters after the state weights (dense: M²+2M; tied:
	// exceptions + 1 + 2M, see Trans.Exceptions for their order).
	Tied        bool
	TransParams int

	// Lexicon holds the candidate labels training was restricted to
	// (Config.Candidates, Data.Lexicon), for tagging alike; nil without.
	Lexicon *sparse.Lexicon
	// Prune is the label pruning training used (Config.PruneMax), which
	// tagging must use too; nil without.
	Prune *prune.Rule
	// Pruner holds the state weights of the zeroth-order pruner
	// (Config.PruneBy "zeroth": over Pattern, in Layout, as State), whose
	// emission scores choose the pruned sets, in training and tagging
	// alike; nil without. Its training took PrunerIterations, ended at
	// PrunerLoss, for PrunerReason.
	Pruner           sparse.Weights
	PrunerSub        []float64 // its sub-label weights (as Sub.W), or nil
	PrunerIterations int
	PrunerLoss       float64
	PrunerReason     string
	// Pruner1 is the first-order pruner (Config.PruneBy "first"), which
	// narrows the zeroth-order pruner's sets before the model sees them,
	// in training and tagging alike; nil without.
	Pruner1 *FirstOrderPruner
	// Sub holds the trained sub-label weights (Config.SubLabels); nil
	// without.
	Sub *sparse.SubLabels
	// Trigrams holds the label-trigram weights of Config.Order 2 (with
	// Trans, an engine.SecondOrder); nil for order 1. Such a model is
	// tagged over the pruner's sets (Pruner, Prune).
	Trigrams *engine.Trigrams
	// Observation-dependent transitions (nil without bigram attributes):
	// bigram attribute a has the weights BigramWeights[BigramPtr[a]:
	// BigramPtr[a+1]], weight k for the label pair BigramPairs[k] = i·M+j
	// (the transition i → j), or, when BigramPairs is nil (full blocks),
	// weight BigramPtr[a] + i·M + j.
	BigramPtr     []int32
	BigramPairs   []int32
	BigramWeights []float64
}

// FirstOrderPruner is a first-order CRF over the model's state features
// (Config.PruneBy "first"): its posterior marginals over the zeroth-order
// pruner's sets keep, at each position, the labels Rule lets through
// (prune.Rule on their logarithms, within the zeroth-order set).
type FirstOrderPruner struct {
	Rule  prune.Rule
	State sparse.Weights      // over Result.Pattern, in Result.Layout, as Result.State
	Trans *engine.Transitions // the structure of Result.Trans
	Sub   []float64           // its sub-label weights (as Result.Sub.W), or nil
	// Its training took Iterations, ended at Loss, for Reason.
	Iterations int
	Loss       float64
	Reason     string
}

// checkHoldout checks holdout data, whose gold labels may be
// sparse.NoLabel: labels the training data never had, which no prediction
// matches (the token still counts against the accuracy).
func checkHoldout(d *Data) error {
	if d == nil || d.Corpus == nil || !d.Corpus.Labelled() {
		return fmt.Errorf("train: no labelled holdout data")
	}
	if d.Labels < 1 || d.NumAttrs < 0 {
		return fmt.Errorf("train: holdout data has %d labels and %d attributes", d.Labels, d.NumAttrs)
	}
	for i := range d.Corpus.Len() {
		s := d.Corpus.Seq(i)
		labels := s.Labels
		s.Labels = nil
		if err := s.Validate(d.NumAttrs, d.Labels); err != nil {
			return fmt.Errorf("train: holdout sequence %d: %w", i, err)
		}
		for t, y := range labels {
			if y != sparse.NoLabel && (y < 0 || int(y) >= d.Labels) {
				return fmt.Errorf("train: holdout sequence %d: label %d at position %d is out of range", i, y, t)
			}
		}
	}
	return checkBigram(d, "holdout")
}

func check(d *Data, name string) error {
	if d == nil || d.Corpus == nil {
		return fmt.Errorf("train: no %s data", name)
	}
	if d.Labels < 1 || d.Labels > sparse.MaxSparseLabels {
		return fmt.Errorf("train: %s data has %d labels (want 1 to %d)", name, d.Labels, sparse.MaxSparseLabels)
	}
	if d.NumAttrs < 0 {
		return fmt.Errorf("train: %s data has %d attributes", name, d.NumAttrs)
	}
	if !d.Corpus.Labelled() {
		return fmt.Errorf("train: %s data is not labelled", name)
	}
	if d.Weights != nil {
		if len(d.Weights) != d.Corpus.Len() {
			return fmt.Errorf("train: %s data has %d instance weights for %d sequences", name, len(d.Weights), d.Corpus.Len())
		}
		for i, w := range d.Weights {
			if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				return fmt.Errorf("train: %s sequence %d has instance weight %v", name, i, w)
			}
		}
	}
	if err := d.Corpus.Validate(d.NumAttrs, d.Labels); err != nil {
		return fmt.Errorf("train: %s data: %w", name, err)
	}
	return checkBigram(d, name)
}

// Train fits a model to d. Cancelling ctx stops training cleanly: the
// parameters of the last completed iteration are returned with
// Interrupted set, and no error.
func Train(ctx context.Context, d *Data, cfg Config) (*Result, error) {
	if cfg.Algorithm == "" {
		cfg.Algorithm = "lbfgs"
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := check(d, "training"); err != nil {
		return nil, err
	}
	if cfg.Holdout != nil {
		if err := checkHoldout(cfg.Holdout); err != nil {
			return nil, err
		}
		if cfg.Holdout.Labels != d.Labels || cfg.Holdout.NumAttrs > d.NumAttrs {
			return nil, fmt.Errorf("train: holdout data has %d labels and %d attributes; the training data %d and %d", cfg.Holdout.Labels, cfg.Holdout.NumAttrs, d.Labels, d.NumAttrs)
		}
		if h := cfg.Holdout; h.Bigram != nil && (d.Bigram == nil || h.NumBigramAttrs > d.NumBigramAttrs) {
			return nil, fmt.Errorf("train: holdout data has %d bigram attributes; the training data %d", h.NumBigramAttrs, d.NumBigramAttrs)
		}
	}
	md, err := newParamSpace(d, &cfg)
	if err != nil {
		return nil, err
	}
	if cfg.NoStartEnd {
		md.holdStartEnd()
	}
	if md.lex, md.allowed, err = candidates(d, cfg.Candidates); err != nil {
		return nil, err
	}
	if cfg.Holdout != nil {
		md.holdAllowed = holdoutAllowed(cfg.Holdout, md.lex)
	}
	md.prune = newPruning(&cfg)
	if cfg.SubLabels > 0 || len(cfg.SubLabelSpans) > 0 {
		if cfg.Algorithm == "sgd" || cfg.Algorithm == "ap" {
			return nil, fmt.Errorf("train: feature.sublabels is for lbfgs and l1, not %s", cfg.Algorithm)
		}
		if len(d.LabelNames) != d.Labels {
			return nil, fmt.Errorf("train: feature.sublabels needs the label names (%d for %d labels)", len(d.LabelNames), d.Labels)
		}
		if md.sub, err = sparse.NewSubLabels(d.LabelNames, cfg.subParts(), d.Corpus, d.NumAttrs); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		md.subTrans = !md.tied && !md.noTrans
	}
	pool := engine.NewPool(cfg.Threads)
	defer pool.Close()

	// Cancellation is polled per sequence through an atomic flag (ctx.Err
	// takes a lock).
	var stop atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-done:
		}
	}()

	t := &trainer{ctx: ctx, d: d, cfg: &cfg, md: md, pool: pool, stop: &stop}
	theta := sparse.MakeParams(md.nTotal())
	var pres, fres qnResult // the pruners' training (Config.PruneBy "zeroth", "first")
	if md.prune != nil && (cfg.PruneBy == "zeroth" || cfg.PruneBy == "first") {
		// (Cancelled there, the model's training stops at once, and the
		// result is the pruner's last weights, pruning itself.)
		if pres, err = t.trainPruner(theta); err != nil {
			return nil, err
		}
		if cfg.PruneBy == "first" && !t.stopped() {
			if fres, err = t.trainFirst(theta); err != nil {
				return nil, err
			}
		}
	}
	var res qnResult
	switch cfg.Algorithm {
	case "lbfgs", "l1":
		res, err = t.quasiNewton(theta)
	case "sgd":
		res, err = t.sgd(theta)
	case "ap":
		res, err = t.perceptron(theta)
	}
	if err != nil {
		return nil, err
	}
	tr, err := md.transitions(theta, make([]engine.Exception, len(md.excs)))
	if err != nil {
		return nil, fmt.Errorf("train: final transition weights: %w", err)
	}
	nOut := md.pattern.NumPairs()
	if md.layout == sparse.DenseRows {
		nOut = d.NumAttrs * d.Labels
	}
	params := sparse.MakeParams(nOut + md.nParams - md.nState)
	st, err := md.exportState(theta, params)
	if err != nil {
		return nil, err
	}
	copy(params[nOut:], theta[md.nState:md.nParams])
	var subW *sparse.SubLabels
	if md.sub != nil {
		s := *md.sub
		s.W = append([]float64(nil), theta[md.nParams:md.nParams+len(md.sub.IDs)]...)
		subW = &s
	}
	r := &Result{
		Layout: md.layout, Pattern: md.pattern, State: st, Trans: tr, Params: params,
		Iterations: res.iters, Loss: res.fx, Interrupted: res.interrupted, Reason: res.reason,
		Tied: md.tied, TransParams: md.bigOff - md.nState, Lexicon: md.lex, Sub: subW,
	}
	if md.tri != nil {
		tri := make([][3]int32, md.tri.Len())
		for k := range tri {
			h, i, j := md.tri.Triple(k)
			tri[k] = [3]int32{h, i, j}
		}
		if r.Trigrams, err = engine.NewTrigrams(d.Labels, tri, theta[md.triOff():md.nTotal()]); err != nil {
			return nil, fmt.Errorf("train: final trigram weights: %w", err)
		}
	}
	if md.prune != nil {
		p := md.prune.p
		r.Prune = &p
		if w0 := md.prune.w0; w0 != nil {
			if r.Pruner, err = md.exportState(w0, sparse.MakeParams(nOut)); err != nil {
				return nil, err
			}
			if sub := md.prune.prunerSub(md); sub != nil {
				r.PrunerSub = sub.W
			}
			r.PrunerIterations, r.PrunerLoss, r.PrunerReason = pres.iters, pres.fx, pres.reason
		}
		if pr := md.prune; pr.w1 != nil {
			ps, err := md.exportState(pr.w1, sparse.MakeParams(nOut))
			if err != nil {
				return nil, err
			}
			r.Pruner1 = &FirstOrderPruner{Rule: pr.p1, State: ps, Trans: pr.tr1,
				Iterations: fres.iters, Loss: fres.fx, Reason: fres.reason}
			if sub := pr.firstSub(md); sub != nil {
				r.Pruner1.Sub = sub.W
			}
		}
	}
	if b := md.big; b != nil {
		r.BigramPtr, r.BigramPairs = b.ptr, b.pairs
		r.BigramWeights = params[nOut+md.bigOff-md.nState:]
	}
	return r, nil
}

// trainer holds what the algorithms share.
type trainer struct {
	ctx  context.Context
	d    *Data
	cfg  *Config
	md   *paramSpace
	pool *engine.Pool
	stop *atomic.Bool
	// holdout buffers, per worker
	hold   []holdBuf
	holdSC *splitCorpus
	holdPS *sparse.SubLabels // the pruner's sub-label weights (PruneBy "zeroth")
	holdP1 *sparse.SubLabels // the first-order pruner's (PruneBy "first")
	counts []int             // activePar's per block
}

type holdBuf struct {
	co      engine.ChainOptions
	sbuf    []float64 // sub-label scratch
	emit    []float64
	path    []int32
	bb      bigramBuf
	pb      prune.Buf
	pruned  [][]int32 // the pruner's sets (Config.PruneBy "zeroth")
	first   firstBuf  // the first-order pruner's (PruneBy "first")
	correct int64
	_       [64]byte
}

// quasiNewton runs L-BFGS or OWL-QN.
func (t *trainer) quasiNewton(theta []float64) (qnResult, error) {
	cfg := t.cfg
	obj := newObjective(t.md, t.d, cfg.C2, t.pool)
	obj.setLockstep(cfg.lockstep)
	if cfg.Precision == "float32" {
		s, err := newState32(obj)
		if err != nil {
			return qnResult{}, err
		}
		obj.f32 = s
	}
	st := cfg.Stats
	var cur *Stats // this training's figures, added to st at the end
	var start time.Time
	if st != nil {
		cur = &Stats{Shape: obj.shape(cfg.NumMemories)}
		obj.pt = newPhaseTimer(len(obj.workers))
		for w := range obj.workers {
			obj.workers[w].pc = obj.pt.clock(w)
		}
		start = time.Now()
		defer func() {
			cur.Total += time.Since(start)
			obj.pt.addTo(cur)
			st.add(cur)
		}()
	}
	eval := func(x, g []float64) (float64, error) {
		if t.stopped() {
			return 0, errInterrupted
		}
		if st == nil {
			return obj.eval(x, g, t.stop)
		}
		t0 := time.Now()
		f, err := obj.eval(x, g, t.stop)
		cur.Eval += time.Since(t0)
		cur.Evals++
		return f, err
	}
	o := qnOptions{
		m: cfg.NumMemories, epsilon: cfg.Epsilon, period: cfg.Period, delta: cfg.Delta,
		maxIter: cfg.MaxIterations, maxLS: cfg.MaxLineSearch, lineSearch: cfg.LineSearch,
		c1: cfg.C1, l1lo: 0, l1hi: t.md.nTotal(),
		run: func(n int, f func(b int)) {
			_ = t.pool.Run(n, func(_ *engine.Workspace, _, b int) error { f(b); return nil })
		},
	}
	if obj.f32 != nil {
		// float32 hands over to float64 for the last iterations (those
		// the stopping rule judges: its noise, ≈ 5e-7 of the objective
		// on CoNLL-2000, is then of the order of the improvements) and
		// when a line search fails on it.
		o.refine = func() bool {
			if obj.f32 == nil {
				return false
			}
			obj.f32 = nil
			if st != nil {
				cur.Refined = true
			}
			return true
		}
		o.refineRate = refineFactor * cfg.Delta
	}
	if o.m == 0 {
		o.m = 6
	}
	if o.maxLS == 0 {
		o.maxLS = 20
	}
	last := time.Now()
	progress := func(k int, x, g []float64, fx, xnorm, gnorm, step float64, evals int) bool {
		if st != nil {
			cur.Iterations++
			if k == 1 && st.SkipFirst {
				// Start the figures over once this report is done.
				defer func() {
					*cur = Stats{Refined: cur.Refined, Shape: cur.Shape}
					obj.pt.reset()
					start = time.Now()
				}()
			} else {
				t0 := time.Now()
				defer func() { cur.Progress += time.Since(t0) }()
			}
		}
		if cfg.Progress != nil {
			p := Progress{Iteration: k, Loss: fx, GradNorm: gnorm, Active: t.activePar(x), Holdout: -1, Step: step, Evals: evals}
			if cfg.Holdout != nil && k%max(cfg.HoldoutEvery, 1) == 0 {
				acc, err := t.holdout(x)
				if err == nil {
					p.Holdout = acc
				}
			}
			now := time.Now()
			p.Seconds = now.Sub(last).Seconds()
			last = now
			cfg.Progress(p)
		}
		return t.stopped()
	}
	res, err := minimize(theta, eval, o, progress)
	if t.md.prune != nil && strings.HasPrefix(res.reason, "line search failed") {
		// The pruned objective jumps where a set changes: near the
		// optimum a line search meets such a jump sooner or later, before
		// the stopping rule fires (UD Czech CLTT, prune.max=8: after 53
		// iterations, its pruned-set accuracy flat from iteration 40).
		res.reason += " (pruned training: the label sets change with the weights)"
	}
	return res, err
}

// refineFactor: precision=float32 hands over to float64 when the relative
// improvement over the period falls below refineFactor·delta. On
// CoNLL-2000 (delta 1e-5) that was after 132 of 160 iterations, on EWT
// XPOS after ≈ 210 of 249. Trained so (2 threads), the objectives ended
// −3.0e-7 (CoNLL) and +2.4e-6 (EWT) relative of float64's, where float64
// itself on 1 and on 2 threads ended 1.7e-6 and 8.8e-7 apart (the
// stopping rule's own spread); test accuracy within 0.004 points.
const refineFactor = 10

// stopped reports whether ctx is done (directly, between iterations; the
// per-sequence checks read the flag a goroutine sets).
func (t *trainer) stopped() bool {
	if t.ctx.Err() != nil {
		t.stop.Store(true)
	}
	return t.stop.Load()
}

// activePar is active on the pool's workers (a pass over all parameters
// each iteration, ≈ 1 ms on CoNLL-2000).
func (t *trainer) activePar(x []float64) int {
	nb := (len(x) + qnBlock - 1) / qnBlock
	if cap(t.counts) < nb {
		t.counts = make([]int, nb)
	}
	counts := t.counts[:nb]
	_ = t.pool.Run(nb, func(_ *engine.Workspace, _, b int) error {
		counts[b] = active(x[b*qnBlock : min((b+1)*qnBlock, len(x))])
		return nil
	})
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func active(x []float64) int {
	n := 0
	for _, v := range x {
		if v != 0 {
			n++
		}
	}
	return n
}

// holdout returns the Viterbi token accuracy on cfg.Holdout under theta.
func (t *trainer) holdout(theta []float64) (float64, error) {
	h := t.cfg.Holdout
	md := t.md
	tr, err := md.transitions(theta, make([]engine.Exception, len(md.excs)))
	if err != nil {
		return 0, err
	}
	if t.hold == nil {
		t.holdSC = md.hy.split(h.Corpus)
		if md.prune != nil {
			t.holdPS = md.prune.prunerSub(md)
			t.holdP1 = md.prune.firstSub(md)
		}
		t.hold = make([]holdBuf, t.pool.Threads())
		n := h.Corpus.MaxLen()
		for w := range t.hold {
			t.hold[w].emit = make([]float64, n*md.m)
			t.hold[w].path = make([]int32, n)
			if h.Bigram != nil {
				t.hold[w].bb = md.big.newBuf(n)
			}
		}
	}
	for w := range t.hold {
		t.hold[w].correct = 0
	}
	if md.sub != nil {
		md.sub.W = theta[md.nParams : md.nParams+len(md.sub.IDs)]
	}
	var so *engine.SecondOrder
	if md.order2() {
		if err := md.tri.SetScores(theta[md.triOff():md.nTotal()]); err != nil {
			return 0, err
		}
		if so, err = engine.NewSecondOrder(tr, md.tri); err != nil {
			return 0, err
		}
	}
	err = t.pool.Run(h.Corpus.Len(), func(ws *engine.Workspace, w, i int) error {
		hb := &t.hold[w]
		labels := t.holdSC.labels[i]
		T := len(labels)
		if T == 0 {
			return nil
		}
		emit, path := hb.emit[:T*md.m], hb.path[:T]
		if md.prune != nil && md.prune.w0 != nil {
			// the pruner's sets first, from its own emissions
			md.prune.score(md, emit, t.holdSC, h.Corpus, i, t.holdPS, &hb.sbuf)
			var cands [][]int32
			if md.holdAllowed != nil && i < len(md.holdAllowed) {
				cands = md.holdAllowed[i]
			}
			hb.pruned = md.prune.p.Sets(&hb.pb, emit, md.m, cands, nil)
			if md.prune.w1 != nil { // narrowed by the first-order pruner
				var err error
				hb.pruned, err = md.prune.narrow(md, ws, &hb.first, md.prune.p1, t.holdSC, h.Corpus, i, t.holdP1, hb.pruned, nil)
				if err != nil {
					return err
				}
			}
		}
		md.hy.score(theta, emit, t.holdSC, i)
		if md.sub != nil {
			hb.sbuf = growF(hb.sbuf, T*md.sub.NSub)
			md.sub.AddScores(emit, h.Corpus.Seq(i), hb.sbuf)
		}
		var bo *engine.ChainOptions // observation-dependent transitions
		if md.big != nil && h.Bigram != nil {
			bo = hb.bb.options(md.big, md.bigramParams(theta), 1, h.Bigram.Seq(i))
		}
		opts := joinOpts(chainOpts(&hb.co, md.holdAllowed, i), bo)
		if md.prune != nil { // tagged as trained: over the pruned sets
			if md.prune.w0 != nil {
				hb.co.Allowed, hb.co.Forced, hb.co.TransDelta = hb.pruned, nil, nil // (no bigram attributes with a pruner)
				opts = &hb.co
			} else {
				opts = md.prune.apply(&hb.pb, &hb.co, opts, emit, nil, md.m, i)
			}
		}
		var err error
		if so != nil {
			_, err = so.Viterbi(ws, emit, opts, path)
		} else {
			_, err = tr.Viterbi(ws, emit, opts, path)
		}
		if err != nil {
			return err
		}
		for k, y := range labels {
			if path[k] == y {
				hb.correct++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var c int64
	for w := range t.hold {
		c += t.hold[w].correct
	}
	n := h.Corpus.Tokens()
	if n == 0 {
		return 1, nil
	}
	return float64(c) / float64(n), nil
}

// exportState returns the state weights w (θ order) as the Result's: in
// md's layout and pattern, held in params (the model's, or a pruner's).
func (md *paramSpace) exportState(w, params []float64) (sparse.Weights, error) {
	st, err := sparse.New(md.layout, md.pattern, params)
	if err != nil {
		return nil, err
	}
	md.hy.export(w, md.pattern, st)
	return st, nil
}

// holdStartEnd holds the start and end weights at 0 (Config.NoStartEnd).
func (md *paramSpace) holdStartEnd() {
	if md.noTrans { // (held already)
		return
	}
	for k := md.startOff(); k < md.bigOff; k++ {
		md.fixedTrans = append(md.fixedTrans, int32(k))
	}
}
