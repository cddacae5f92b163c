package train

import (
	"cmp"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
)

// pruning is the MarMoT-style pruning of training's forward–backward
// (Config.PruneMax, PruneThreshold): at every evaluation, each position
// keeps the labels whose zeroth-order posterior (the softmax of its
// emission scores under the current weights) is at least PruneThreshold
// times the best one, at most PruneMax of them, always with the gold label
// (so the likelihood stays finite), within the position's candidate labels
// if it has any. The objective is then the likelihood of the chain
// constrained to those sets, and its gradient is exact for the sets held
// fixed; the engine's restricted path runs it over the kept pairs alone
// (engine/restrict.go), O(Σ_t |K_{t−1}|·|K_t|) per sequence instead of
// O(T·M²) or O(T·(M + bigrams)). Müller, Schmid and Schütze (EMNLP 2013)
// prune the same way from a zeroth-order lattice to a first-order one.
type pruning struct {
	logTau float64 // log PruneThreshold (−Inf for 0: the cap alone)
	max    int
}

func newPruning(cfg *Config) *pruning {
	if cfg.PruneMax <= 0 {
		return nil
	}
	return &pruning{logTau: math.Log(cfg.PruneThreshold), max: cfg.PruneMax}
}

// pruneBuf is a worker's scratch for the sets of one sequence.
type pruneBuf struct {
	sets [][]int32 // T: views into flat
	flat []int32
	cand []scored
}

type scored struct {
	v float64
	y int32
}

// best first; ties by label, so that the sets do not depend on the order
// of the scan.
func byScore(a, b scored) int {
	if c := cmp.Compare(b.v, a.v); c != 0 {
		return c
	}
	return cmp.Compare(a.y, b.y)
}

// apply returns the chain options of a sequence with labels gold and
// emissions emit (T×m) under pruning: co (the worker's own) with the
// pruned sets as Allowed and opts' transition deltas, where opts (nil, or
// the sequence's candidate labels and deltas) stays unchanged.
func (pr *pruning) apply(pb *pruneBuf, co *engine.ChainOptions, opts *engine.ChainOptions, emit []float64, gold []int32, m int) *engine.ChainOptions {
	T := len(gold)
	var cands [][]int32
	var deltas [][]float64
	if opts != nil {
		cands, deltas = opts.Allowed, opts.TransDelta
	}
	pb.sets = slices.Grow(pb.sets[:0], T)[:T]
	// Room for every set (at most min(max, m) labels each), so that the
	// views into flat stay put.
	pb.flat = slices.Grow(pb.flat[:0], T*min(pr.max, m))
	for t, y := range gold {
		row := emit[t*m : (t+1)*m]
		var cand []int32
		if cands != nil {
			cand = cands[t]
		}
		start := len(pb.flat)
		pb.flat = pr.set(pb, pb.flat, row, cand, y)
		pb.sets[t] = pb.flat[start:len(pb.flat):len(pb.flat)]
	}
	co.Allowed, co.Forced, co.TransDelta = pb.sets, nil, deltas
	return co
}

// set appends to dst, in increasing order, the labels one position keeps:
// those of cand (nil: all of row's) scoring at least the best + logTau,
// the max−1 best of them besides gold (ties: lower label), and gold.
func (pr *pruning) set(pb *pruneBuf, dst []int32, row []float64, cand []int32, gold int32) []int32 {
	best := math.Inf(-1)
	if cand == nil {
		for _, v := range row {
			best = max(best, v)
		}
	} else {
		for _, y := range cand {
			best = max(best, row[y])
		}
	}
	cut := best + pr.logTau
	c := pb.cand[:0]
	add := func(y int32) {
		if v := row[y]; v >= cut && y != gold {
			c = append(c, scored{v, y})
		}
	}
	if cand == nil {
		for y := range int32(len(row)) {
			add(y)
		}
	} else {
		for _, y := range cand {
			add(y)
		}
	}
	if keep := pr.max - 1; len(c) > keep {
		slices.SortFunc(c, byScore)
		c = c[:max(keep, 0)]
		slices.SortFunc(c, func(a, b scored) int { return cmp.Compare(a.y, b.y) })
	} else if cand != nil && !slices.IsSortedFunc(c, func(a, b scored) int { return cmp.Compare(a.y, b.y) }) {
		slices.SortFunc(c, func(a, b scored) int { return cmp.Compare(a.y, b.y) })
	}
	pb.cand = c
	placed := false
	for _, s := range c {
		if !placed && gold < s.y {
			dst = append(dst, gold)
			placed = true
		}
		dst = append(dst, s.y)
	}
	if !placed {
		dst = append(dst, gold)
	}
	return dst
}
