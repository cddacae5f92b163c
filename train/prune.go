package train

import (
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
)

// pruning is the MarMoT-style pruning of training's forward–backward
// (Config.PruneMax, PruneThreshold): at every evaluation, each position
// keeps the labels whose zeroth-order posterior (the softmax of its
// emission scores under the weights being evaluated) is at least
// PruneThreshold times the best one, at most PruneMax of them, always
// with the gold label (so the likelihood stays finite), within the
// position's candidate labels if it has any. The objective is the
// likelihood of the chain constrained to those sets, and its gradient is
// exact for the sets held fixed; the engine's restricted path runs it
// over the kept pairs alone (engine/restrict.go), O(Σ_t |K_{t−1}|·|K_t|)
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
// doubling one 6.8 %.
type pruning struct {
	logTau float64 // log PruneThreshold (−Inf for 0: the cap alone)
	max    int
	all    []int32 // 0, 1, …, M−1: the labels of a position without candidates
}

func newPruning(cfg *Config, m int) *pruning {
	if cfg.PruneMax <= 0 {
		return nil
	}
	pr := &pruning{logTau: math.Log(cfg.PruneThreshold), max: cfg.PruneMax, all: make([]int32, m)}
	for y := range pr.all {
		pr.all[y] = int32(y)
	}
	return pr
}

// pruneBuf is a worker's scratch for the sets of one sequence.
type pruneBuf struct {
	sets [][]int32 // T: views into flat
	ends []int
	flat []int32
	cand []scored
}

type scored struct {
	v float64
	y int32
}

// apply returns the chain options of a sequence with labels gold (nil when
// tagging: no gold label) and emissions emit (T×m): co (the caller's own)
// with the pruned sets as Allowed and opts' transition deltas, where opts
// (nil, or the sequence's candidate labels and deltas) stays unchanged.
func (pr *pruning) apply(pb *pruneBuf, co *engine.ChainOptions, opts *engine.ChainOptions, emit []float64, gold []int32, m int) *engine.ChainOptions {
	T := len(emit) / m
	var cands [][]int32
	var deltas [][]float64
	if opts != nil {
		cands, deltas = opts.Allowed, opts.TransDelta
	}
	pb.sets = slices.Grow(pb.sets[:0], T)[:T]
	pb.ends = slices.Grow(pb.ends[:0], T)[:T]
	pb.flat = pb.flat[:0]
	for t := range T {
		var cand []int32
		if cands != nil {
			cand = cands[t]
		}
		y := int32(-1)
		if gold != nil {
			y = gold[t]
		}
		pb.flat = pr.set(pb, pb.flat, emit[t*m:(t+1)*m], cand, y)
		pb.ends[t] = len(pb.flat)
	}
	start := 0
	for t, end := range pb.ends {
		pb.sets[t] = pb.flat[start:end:end]
		start = end
	}
	co.Allowed, co.Forced, co.TransDelta = pb.sets, nil, deltas
	return co
}

// set appends to dst, in increasing order, the labels one position keeps:
// those of cand (nil: all of row's) scoring at least the best + logTau,
// the best of them (all of those tied with the last one kept), max in all
// with gold (gold < 0: none).
func (pr *pruning) set(pb *pruneBuf, dst []int32, row []float64, cand []int32, gold int32) []int32 {
	labs := cand
	if labs == nil {
		labs = pr.all[:len(row)]
	}
	keep := pr.max
	if gold >= 0 {
		keep--
	}
	// One pass: the best score, and the keep best labels above the cut
	// of the best so far, best first (ties: lower label first, the scan's
	// order), in a short insertion list that most labels skip after a
	// compare or two; dropped is the best score the full list turned
	// away or pushed out (a tie split by the cap, if it equals the last
	// entry's at the end).
	// floor is what a label must beat to be looked at: the cut of the
	// best so far, or, once the list is full, its last entry if higher
	// (then a label equal to it is a tie the cap splits: dropped). Most
	// labels cost one compare.
	logTau := pr.logTau
	best, dropped := math.Inf(-1), math.Inf(-1)
	floor := math.Inf(-1)
	c := pb.cand[:0]
	if keep == 0 {
		for _, y := range labs {
			if v := row[y]; v > best {
				best = v
			}
		}
		labs = labs[:0]
	}
	for _, y := range labs {
		v := row[y]
		if v < floor {
			continue
		}
		if v > best {
			best = v
			floor = max(floor, best+logTau)
			if v < floor {
				continue
			}
		}
		if y == gold {
			continue
		}
		if len(c) == keep {
			last := c[keep-1].v
			if !(v > last) {
				if v == last {
					dropped = last
				}
				continue
			}
			if last > dropped {
				dropped = last
			}
			c = c[:keep-1]
		}
		p := len(c)
		c = append(c, scored{v, y})
		for p > 0 && v > c[p-1].v {
			c[p] = c[p-1]
			p--
		}
		c[p] = scored{v, y}
		if len(c) == keep {
			floor = max(floor, c[keep-1].v)
		}
	}
	cut := best + logTau
	for len(c) > 0 && c[len(c)-1].v < cut {
		c = c[:len(c)-1]
	}
	pb.cand = c
	n0 := len(dst)
	if len(c) == keep && keep > 0 && dropped == c[keep-1].v {
		// The cap split a tie: take every label scoring what the last
		// one kept scores.
		last := c[keep-1].v
		for _, s := range c {
			if s.v > last {
				dst = append(dst, s.y)
			}
		}
		for _, y := range labs {
			if row[y] == last && y != gold {
				dst = append(dst, y)
			}
		}
		c = c[:0]
	}
	for _, s := range c {
		dst = append(dst, s.y)
	}
	if gold >= 0 {
		dst = append(dst, gold)
	}
	slices.Sort(dst[n0:])
	return dst
}
