package train

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// pruning is the MarMoT-style pruning of training's forward–backward
// (Config.PruneMax, PruneThreshold; prune.Rule chooses the sets): at
// every evaluation, each position keeps the labels whose zeroth-order
// posterior (the softmax of its emission scores under the weights being
// evaluated) is at least PruneThreshold times the best one, at most
// PruneMax of them, always with the gold label (so the likelihood stays
// finite), within the position's candidate labels if it has any. The objective is the
// likelihood of the chain constrained to those sets, and its gradient is
// exact for the sets held fixed; the engine's restricted path runs it
// over the kept pairs alone (engine/restrict_fb.go), O(Σ_t |K_{t−1}|·|K_t|)
// per sequence instead of O(T·M²) or O(T·(M + bigrams)). Müller, Schmid
// and Schütze (EMNLP 2013) prune the same way from a zeroth-order lattice
// to a first-order one, with SGD, and tag with the same pruning.
//
// Labels of equal score are kept or dropped together: the cap never
// splits a tie. At θ = 0 every label ties, so the first evaluation is
// exact; keeping the lowest labels there instead gave the line search an
// objective that jumped at any step (UD Czech CLTT, M = 304, prune.max=8:
// "line search failed" before the first iteration).
//
// What was tried and dropped: sets held fixed during each line search and
// renewed at accepted points (every one, or at points 1, 2, 4, 8, …).
// With fixed sets, a label's weights rise at its gold positions and
// nothing pushes them down at the positions whose sets lack it, so the
// model drifts: on CLTT the renewed-every-point run never met the stopping
// rule and tagged 27.8 % of the test tokens right over all labels, the
// doubling one 6.8 %. Outer loops over fixed sets, restarts, smooth sets
// and more (issue 29), with their figures: docs/pruned-training.md.
type pruning struct {
	p prune.Rule
	// With a zeroth-order pruner (Config.PruneBy "zeroth", trainPruner):
	// its state weights (θ order, nState of them), and each training
	// sequence's sets under them, gold label included, fixed for the
	// whole training; nil with PruneBy "self".
	w0    []float64
	w0Sub []float64 // its sub-label weights (Config.SubLabels), or nil
	fixed [][][]int32
	// With a first-order pruner too (Config.PruneBy "first",
	// trainFirst): its rule, its parameters θ[:nParams] (state weights,
	// then transitions), sub-label weights and transitions; fixed then
	// holds the sets it narrowed.
	p1    prune.Rule
	w1    []float64
	w1Sub []float64
	tr1   *engine.Transitions
}

func newPruning(cfg *Config) *pruning {
	if cfg.PruneMax <= 0 {
		return nil
	}
	k1 := cfg.PruneFirstMax
	if k1 == 0 {
		k1 = (cfg.PruneMax + 1) / 2
	}
	return &pruning{
		p:  prune.Rule{Max: cfg.PruneMax, Threshold: cfg.PruneThreshold},
		p1: prune.Rule{Max: k1, Threshold: cfg.PruneFirstThreshold},
	}
}

// apply returns the chain options of a sequence with labels gold (nil when
// tagging: no gold label) and emissions emit (T×m): co (the caller's own)
// with the pruned sets as Allowed and opts' transition deltas, where opts
// (nil, or the sequence's candidate labels and deltas) stays unchanged.
// With a zeroth-order pruner, emit must be the pruner's emissions, or
// training sequence i's own when gold is not nil (its fixed sets are
// used then).
func (pr *pruning) apply(pb *prune.Buf, co *engine.ChainOptions, opts *engine.ChainOptions, emit []float64, gold []int32, m, i int) *engine.ChainOptions {
	var cands [][]int32
	var deltas [][]float64
	if opts != nil {
		cands, deltas = opts.Allowed, opts.TransDelta
	}
	if pr.fixed != nil && gold != nil {
		co.Allowed = pr.fixed[i]
	} else {
		co.Allowed = pr.p.Sets(pb, emit, m, cands, gold)
	}
	co.Forced, co.TransDelta = nil, deltas
	return co
}

// trainPruner trains the zeroth-order pruner of Config.PruneBy "zeroth"
// into theta's state weights, and fixes each training sequence's sets
// under it. The pruner is the CRF without transitions (transitions=none:
// each position a softmax over all M labels of its emission scores, O(M)
// per position and no M² at all), over the same state features, with the
// same regularisation and stopping rule; this is MarMoT's cascade
// (Müller, Schmid and Schütze, EMNLP 2013), which trains each lattice
// order on the sets the order below keeps. With the sets fixed, the
// pruned objective is the smooth likelihood of a constrained chain and
// L-BFGS ends on the stopping rule; the labels outside the sets need no
// negative evidence, since tagging prunes with the pruner too.
func (t *trainer) trainPruner(theta []float64) (qnResult, error) {
	md := t.md
	if md.big != nil || md.subTrans {
		return qnResult{}, fmt.Errorf("train: prune.by=zeroth does not support observation-dependent transitions or sub-label transitions (feature.sublabels with dense transitions); use prune.by=self")
	}
	if md.noTrans {
		return qnResult{}, fmt.Errorf("train: prune.by=zeroth needs transitions (the pruner is the model without them); use prune.by=self")
	}
	md0 := *md
	md0.prune, md0.noTrans, md0.fixedTrans = nil, true, nil
	for k := md.nState; k < md.nParams; k++ {
		md0.fixedTrans = append(md0.fixedTrans, int32(k))
	}
	res, err := t.trainStage(theta, &md0, t.cfg.PrunerIterations, false)
	if err != nil {
		return res, err
	}
	if t.stopped() {
		return res, nil
	}
	pr := md.prune
	pr.w0 = append([]float64(nil), theta[:md.nState]...)
	if md.sub != nil {
		pr.w0Sub = append([]float64(nil), theta[md.nParams:md.nParams+len(md.sub.IDs)]...)
	}
	pr.fixed, err = t.fixSets(pr.w0)
	return res, err
}

// prunerSub returns the pruner's sub-label weights as a SubLabels (nil
// without sub-labels).
func (pr *pruning) prunerSub(md *paramSpace) *sparse.SubLabels {
	if md.sub == nil || pr.w0Sub == nil {
		return nil
	}
	s := *md.sub
	s.W = pr.w0Sub
	return &s
}

// score sets emit to the pruner's emission scores of sequence i of sc
// (corpus c), sbuf its sub-label scratch.
func (pr *pruning) score(md *paramSpace, emit []float64, sc *splitCorpus, c *sparse.Corpus, i int, ps *sparse.SubLabels, sbuf *[]float64) {
	md.hy.score(pr.w0, emit, sc, i)
	if ps != nil {
		T := len(sc.labels[i])
		*sbuf = growF(*sbuf, T*ps.NSub)
		ps.AddScores(emit, c.Seq(i), *sbuf)
	}
}

// fixSets returns each training sequence's pruned sets under the state
// weights w0 (θ order), gold label included: copies, one block per
// sequence. They are the prune.max best labels under the pruner, without
// the threshold, which is for tagging: on the data it was trained on the
// pruner is surer of the gold label than on new text, and its threshold
// kept too few competitors there. Cap alone against threshold and cap,
// prune.max=8 (2026-11-28, shared AMD EPYC; FicTree test): UD Czech
// pooled 78.76 % against 77.84 %; CLTT 82.00 % against 79.81 %.
func (t *trainer) fixSets(w0 []float64) ([][][]int32, error) {
	md, d := t.md, t.d
	rule := md.prune.p
	rule.Threshold = 0
	sc := md.hy.split(d.Corpus)
	n := d.Corpus.Len()
	sets := make([][][]int32, n)
	type buf struct {
		pb   prune.Buf
		emit []float64
		sbuf []float64
	}
	ps := md.prune.prunerSub(md)
	bufs := make([]buf, t.pool.Threads())
	maxLen := d.Corpus.MaxLen()
	for w := range bufs {
		bufs[w].emit = make([]float64, maxLen*md.m)
	}
	err := t.pool.Run(n, func(_ *engine.Workspace, w, i int) error {
		y := sc.labels[i]
		T := len(y)
		if T == 0 {
			return nil
		}
		b := &bufs[w]
		emit := b.emit[:T*md.m]
		md.prune.score(md, emit, sc, d.Corpus, i, ps, &b.sbuf)
		var cands [][]int32
		if md.allowed != nil {
			cands = md.allowed[i]
		}
		sets[i] = copySets(rule.Sets(&b.pb, emit, md.m, cands, y))
		return nil
	})
	return sets, err
}

// trainFirst trains the first-order pruner of Config.PruneBy "first" into
// theta, after trainPruner: the model's first-order part (state,
// transition and sub-label weights, the trigrams held at 0) over the
// zeroth-order pruner's fixed sets, with the same regularisation and
// stopping rule. It then narrows each training sequence's sets to the
// labels its posterior marginals rank highest (forward–backward over the
// zeroth-order sets), gold label included, and fixes those for the
// model's training, which starts from theta as this leaves it. This is
// MarMoT's cascade one order further (Müller, Schmid and Schütze, EMNLP
// 2013): a first-order lattice prunes the second-order one with the
// context the zeroth-order pruner lacks.
func (t *trainer) trainFirst(theta []float64) (qnResult, error) {
	md := t.md
	md1 := *md
	md1.noTri = true
	res, err := t.trainStage(theta, &md1, 0, true)
	if err != nil || t.stopped() {
		return res, err
	}
	pr := md.prune
	pr.w1 = append([]float64(nil), theta[:md.nParams]...)
	if md.sub != nil {
		pr.w1Sub = append([]float64(nil), theta[md.nParams:md.nParams+len(md.sub.IDs)]...)
	}
	if pr.tr1, err = md.transitions(theta, make([]engine.Exception, len(md.excs))); err != nil {
		return res, fmt.Errorf("train: the first-order pruner's transitions: %w", err)
	}
	pr.fixed, err = t.firstSets()
	return res, err
}

// firstBuf is the scratch of the first-order pruner's sets (one per
// worker).
type firstBuf struct {
	pb   prune.Buf
	emit []float64
	marg []float64
	sbuf []float64
}

// firstSub returns the first-order pruner's sub-label weights as a
// SubLabels (nil without sub-labels).
func (pr *pruning) firstSub(md *paramSpace) *sparse.SubLabels {
	if md.sub == nil || pr.w1Sub == nil {
		return nil
	}
	s := *md.sub
	s.W = pr.w1Sub
	return &s
}

// narrow returns the labels of sets0 (a chain's zeroth-order sets) that
// the first-order pruner keeps under rule, with gold (nil: none): its
// emission scores of sequence i of sc (corpus c), at the labels of sets0,
// its posterior marginals over sets0, and rule on their logarithms. The
// sets are views into b.pb, valid until its next use.
func (pr *pruning) narrow(md *paramSpace, ws *engine.Workspace, b *firstBuf, rule prune.Rule, sc *splitCorpus, c *sparse.Corpus, i int, ps *sparse.SubLabels, sets0 [][]int32, gold []int32) ([][]int32, error) {
	T, m := len(sets0), md.m
	b.emit, b.marg = growF(b.emit, T*m), growF(b.marg, T*m)
	emit, marg := b.emit[:T*m], b.marg[:T*m]
	md.hy.score(pr.w1, emit, sc, i)
	if ps != nil {
		b.sbuf = growF(b.sbuf, T*ps.NSub)
		ps.AddScores(emit, c.Seq(i), b.sbuf)
	}
	co := engine.ChainOptions{Allowed: sets0}
	if _, err := pr.tr1.Posteriors(ws, emit, &co, &engine.Posteriors{Marginals: marg}); err != nil {
		return nil, err
	}
	for t, set := range sets0 {
		row := marg[t*m : (t+1)*m]
		for _, y := range set {
			row[y] = math.Log(row[y])
		}
	}
	return rule.Sets(&b.pb, marg, m, sets0, gold), nil
}

// firstSets returns each training sequence's sets narrowed by the
// first-order pruner from the zeroth-order ones (pr.fixed), gold label
// included: copies, one block per sequence. As fixSets, by the cap alone.
func (t *trainer) firstSets() ([][][]int32, error) {
	md, d := t.md, t.d
	pr := md.prune
	rule := pr.p1
	rule.Threshold = 0
	sc := md.hy.split(d.Corpus)
	n := d.Corpus.Len()
	sets := make([][][]int32, n)
	ps := pr.firstSub(md)
	bufs := make([]firstBuf, t.pool.Threads())
	err := t.pool.Run(n, func(ws *engine.Workspace, w, i int) error {
		y := sc.labels[i]
		if len(y) == 0 {
			return nil
		}
		s, err := pr.narrow(md, ws, &bufs[w], rule, sc, d.Corpus, i, ps, pr.fixed[i], y)
		if err != nil {
			return err
		}
		sets[i] = copySets(s)
		return nil
	})
	return sets, err
}

// copySets returns a copy of sets in one block.
func copySets(s [][]int32) [][]int32 {
	k := 0
	for _, st := range s {
		k += len(st)
	}
	flat := make([]int32, 0, k)
	out := make([][]int32, len(s))
	for p, st := range s {
		flat = append(flat, st...)
		out[p] = flat[len(flat)-len(st) : len(flat) : len(flat)]
	}
	return out
}

// trainStage trains a pruner of the cascade into theta with quasiNewton:
// over ms (a copy of t.md that the caller changed), with its own
// sub-label weights (whose W the evaluations set), without the holdout,
// at most maxIter iterations if > 0 (and below Config.MaxIterations),
// its iterations reported as the pruner's (and as the first-order
// pruner's if first).
func (t *trainer) trainStage(theta []float64, ms *paramSpace, maxIter int, first bool) (qnResult, error) {
	if ms.sub != nil {
		s := *ms.sub
		ms.sub = &s
	}
	cfg := *t.cfg
	cfg.Holdout = nil
	if maxIter > 0 && (maxIter < cfg.MaxIterations || cfg.MaxIterations <= 0) {
		cfg.MaxIterations = maxIter
	}
	if p := t.cfg.Progress; p != nil {
		cfg.Progress = func(pr Progress) {
			pr.Pruner, pr.FirstOrder = true, first
			p(pr)
		}
	}
	ts := *t
	ts.md, ts.cfg, ts.hold = ms, &cfg, nil
	return ts.quasiNewton(theta)
}
