// Package prune is the MarMoT-style pruning rule that training (package
// train, prune.max) and the tagger of a model so trained (package model,
// which stores the rule in the model file) share. It is their policy, not
// inference: the engine takes the sets it chooses as ChainOptions.Allowed.
package prune

import (
	"fmt"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/kernels"
)

// Rule chooses a few labels per position from its emission scores
// alone, MarMoT-style (Müller, Schmid and Schütze, EMNLP 2013: a
// zeroth-order lattice prunes a first-order one): a position keeps the
// labels whose zeroth-order posterior (the softmax of its emission scores)
// is at least Threshold times the best one, at most Max of them, within
// its candidate labels if it has any (a label scoring NaN only as gold).
// Labels of equal score are kept or dropped together: the cap never splits
// a tie, so a position whose scores all tie keeps all its labels. Training
// (package train, prune.max) adds the gold label; a tagger of a model so
// trained prunes the same way. The
// sets go to the engine as ChainOptions.Allowed, whose restricted path
// (engine/restrict_fb.go) then costs O(Σ_t |K_{t−1}|·|K_t|) per chain.
type Rule struct {
	Max       int     // most labels per position (≥ 1), the gold label included
	Threshold float64 // in [0, 1]; 0: the cap alone
}

// Check validates p.
func (p Rule) Check() error {
	if p.Max < 1 {
		return fmt.Errorf("prune: pruning keeps at most %d labels; want at least 1", p.Max)
	}
	if !(p.Threshold >= 0 && p.Threshold <= 1) {
		return fmt.Errorf("prune: pruning threshold %v; want a number in [0, 1]", p.Threshold)
	}
	return nil
}

// Buf is the scratch of Rule.Sets, reused across calls (one per
// goroutine): steady-state calls do not allocate.
type Buf struct {
	sets [][]int32 // T: views into flat
	ends []int
	flat []int32
	cand []scored
	all  []int32 // 0, 1, …, M−1
	sel  []int32 // M: the labels SelectGE lets through
}

type scored struct {
	v float64
	y int32
}

// Sets returns each position's kept labels, in increasing order, for a
// chain with emission scores emit (T×M): within cands[t] if cands is not
// nil and cands[t] is not nil, and with gold[t] (kept whatever its score)
// if gold is not nil. The sets are views into buf, valid until its next
// use. p must pass Check.
func (p Rule) Sets(buf *Buf, emit []float64, M int, cands [][]int32, gold []int32) [][]int32 {
	T := len(emit) / M
	if len(buf.all) < M {
		buf.all = make([]int32, M)
		for y := range buf.all {
			buf.all[y] = int32(y)
		}
		buf.sel = make([]int32, M)
	}
	logTau := math.Log(p.Threshold)
	buf.sets = slices.Grow(buf.sets[:0], T)[:T]
	buf.ends = slices.Grow(buf.ends[:0], T)[:T]
	buf.flat = buf.flat[:0]
	for t := range T {
		row := emit[t*M : (t+1)*M]
		labs := buf.all[:M]
		if cands != nil && cands[t] != nil {
			labs = cands[t]
		} else if p.Threshold > 0 {
			// Only labels within log τ of the best can be kept: two vector
			// passes find them (a NaN score is never kept), and set's
			// scalar pass looks at those few alone, in the same order.
			if n, ok := kernels.SelectGE(buf.sel[:M], row, kernels.Max(row)+logTau); ok {
				labs = buf.sel[:n]
			}
		}
		y := int32(-1)
		if gold != nil {
			y = gold[t]
		}
		buf.flat = p.set(buf, buf.flat, row, labs, y, logTau)
		buf.ends[t] = len(buf.flat)
	}
	start := 0
	for t, end := range buf.ends {
		buf.sets[t] = buf.flat[start:end:end]
		start = end
	}
	return buf.sets
}

// set appends to dst, in increasing order, the labels one position keeps:
// those of labs scoring at least the best + logTau,
// the best of them (all of those tied with the last one kept), max in all
// with gold (gold < 0: none).
func (p Rule) set(pb *Buf, dst []int32, row []float64, labs []int32, gold int32, logTau float64) []int32 {
	keep := p.Max
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
		if v < floor || v != v { // below the cut, or NaN: never kept
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
