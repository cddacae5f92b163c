package train

import (
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
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
}

func newPruning(cfg *Config) *pruning {
	if cfg.PruneMax <= 0 {
		return nil
	}
	return &pruning{prune.Rule{Max: cfg.PruneMax, Threshold: cfg.PruneThreshold}}
}

// apply returns the chain options of a sequence with labels gold (nil when
// tagging: no gold label) and emissions emit (T×m): co (the caller's own)
// with the pruned sets as Allowed and opts' transition deltas, where opts
// (nil, or the sequence's candidate labels and deltas) stays unchanged.
func (pr *pruning) apply(pb *prune.Buf, co *engine.ChainOptions, opts *engine.ChainOptions, emit []float64, gold []int32, m int) *engine.ChainOptions {
	var cands [][]int32
	var deltas [][]float64
	if opts != nil {
		cands, deltas = opts.Allowed, opts.TransDelta
	}
	co.Allowed, co.Forced, co.TransDelta = pr.p.Sets(pb, emit, m, cands, gold), nil, deltas
	return co
}
