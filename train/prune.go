package train

import (
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// pruning is the MarMoT-style pruning of training's forward–backward
// (Config.PruneMax, PruneThreshold): each position keeps the labels whose
// zeroth-order posterior (the softmax of its emission scores) is at least
// PruneThreshold times the best one, at most PruneMax of them, always with
// the gold label (so the likelihood stays finite), within the position's
// candidate labels if it has any. The objective is the likelihood of the
// chain constrained to those sets, and its gradient is exact for the sets
// held fixed; the engine's restricted path runs it over the kept pairs
// alone (engine/restrict.go), O(Σ_t |K_{t−1}|·|K_t|) per sequence instead
// of O(T·M²) or O(T·(M + bigrams)). Müller, Schmid and Schütze (EMNLP
// 2013) prune the same way from a zeroth-order lattice to a first-order
// one, with SGD.
//
// L-BFGS needs one function per line search: sets recomputed at every
// evaluation made the objective jump between the trials (on UD Czech CLTT,
// M = 304, prune.max=8: "line search failed" at the first iteration, where
// θ = 0 ties every label and any step reorders them). So the sets are
// those of an accepted point, held fixed while the line searches run from
// it, and renewed at the accepted points refreshAt names: the evaluations
// before such a point compute the sets of their own weights (O(M) per
// position, from the emissions they have anyway) into next, and when the
// point evaluated last is accepted (accepted, called by the optimiser's
// progress report) they become cur. The optimiser's f and g at the
// accepted point were computed with the sets before; when the sets
// changed there, the next evaluation the optimiser asks for ends its line
// search at once (errSetsChanged), and refine (the optimiser's hook) has
// the accepted point evaluated again with its own sets; so does the
// stopping rule.
type pruning struct {
	logTau float64 // log PruneThreshold (−Inf for 0: the cap alone)
	max    int
	width  int // min(max, M): the room of one position's set

	// Two buffers of sets, one slot of width labels per training
	// position (sequence i's positions from posOff[i]): views[b][p] is
	// position p's set in buffer b. cur is the buffer the evaluations
	// use, the other one (next) the buffer they fill.
	flat    [2][]int32
	views   [2][][]int32
	posOff  []int
	cur     int
	iter    int     // points accepted so far
	started bool    // the first evaluation ran (it uses the sets it computes)
	nextAt  float64 // a fingerprint of the weights next was computed at
	// consistent: the optimiser's value at the accepted point was
	// computed with the sets in use.
	consistent bool
}

func newPruning(cfg *Config, c *sparse.Corpus, m int) *pruning {
	if cfg.PruneMax <= 0 {
		return nil
	}
	pr := &pruning{logTau: math.Log(cfg.PruneThreshold), max: cfg.PruneMax, width: min(cfg.PruneMax, m)}
	pr.posOff = make([]int, c.Len()+1)
	for i := range c.Len() {
		pr.posOff[i+1] = pr.posOff[i] + c.Seq(i).Len()
	}
	n := pr.posOff[c.Len()]
	for b := range pr.flat {
		pr.flat[b] = make([]int32, n*pr.width)
		pr.views[b] = make([][]int32, n)
	}
	return pr
}

// pruneBuf is a worker's scratch for the sets of one position.
type pruneBuf struct {
	cand []scored
}

type scored struct {
	v float64
	y int32
}

// apply computes the sets of sequence i (labels gold, emissions emit,
// T×m, under the weights being evaluated) into the next buffer, and
// returns the chain options the evaluation uses: co (the worker's own)
// with the current sets as Allowed and opts' transition deltas, where opts
// (nil, or the sequence's candidate labels and deltas) stays unchanged.
func (pr *pruning) apply(pb *pruneBuf, co *engine.ChainOptions, opts *engine.ChainOptions, emit []float64, gold []int32, m, i int) *engine.ChainOptions {
	var cands [][]int32
	var deltas [][]float64
	if opts != nil {
		cands, deltas = opts.Allowed, opts.TransDelta
	}
	p0, p1 := pr.posOff[i], pr.posOff[i+1]
	nb := 1 - pr.cur
	next := pr.views[nb][p0:p1]
	if !pr.started || refreshAt(pr.iter+1) {
		for t, y := range gold {
			var cand []int32
			if cands != nil {
				cand = cands[t]
			}
			slot := pr.flat[nb][(p0+t)*pr.width : (p0+t+1)*pr.width]
			next[t] = pr.set(pb, slot[:0], emit[t*m:(t+1)*m], cand, y)
		}
	}
	use := next
	if pr.started {
		use = pr.views[pr.cur][p0:p1]
	}
	co.Allowed, co.Forced, co.TransDelta = use, nil, deltas
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
	keep := pr.max - 1
	// The keep best above the cut, best first (ties: lower label first,
	// the scan's order): an insertion into a short list, which most
	// labels skip after one compare once it is full.
	c := pb.cand[:0]
	consider := func(y int32) {
		v := row[y]
		if v < cut || y == gold {
			return
		}
		if len(c) == keep {
			if !(v > c[keep-1].v) {
				return
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
	}
	if keep > 0 {
		if cand == nil {
			for y := range int32(len(row)) {
				consider(y)
			}
		} else {
			for _, y := range cand {
				consider(y)
			}
		}
	}
	pb.cand = c
	n0 := len(dst)
	for _, s := range c {
		dst = append(dst, s.y)
	}
	dst = append(dst, gold)
	slices.Sort(dst[n0:])
	return dst
}

// refreshAt reports whether the sets are renewed at the k-th accepted
// point: at k = 1, 2, 4, 8, … Renewed at every point, they never settled
// (labels near the threshold come and go), the objective kept jumping by
// ≈ 1 %, and CRFsuite's stopping rule never fired: UD Czech CLTT with
// prune.max=8 ran to the 300-iteration cap, its loss bouncing between 3,770
// and 3,850 from iteration 70 on. Doubling intervals renew them a few
// times early, when the weights move most, and leave the later iterations
// one fixed objective, which the stopping rule can judge.
func refreshAt(k int) bool { return k > 0 && k&(k-1) == 0 }

// fingerprint identifies a weight vector (the optimiser's accepted point
// against the last one evaluated).
func fingerprint(x []float64) float64 { return kernels.Dot(x, x) }

// evaluated is called after each evaluation of the objective at x.
func (pr *pruning) evaluated(x []float64) {
	pr.nextAt = fingerprint(x)
	if !pr.started {
		// The first point's sets are its own: make them current.
		pr.started, pr.consistent = true, true
		pr.cur = 1 - pr.cur
	}
}

// accepted is called with each point the optimiser accepts: the sets
// computed there become current (when it was the point last evaluated, as
// the line searches leave it).
func (pr *pruning) accepted(x []float64) {
	pr.iter++
	if !pr.started || !refreshAt(pr.iter) || fingerprint(x) != pr.nextAt {
		return
	}
	nb := 1 - pr.cur
	same := true
	for p, s := range pr.views[nb] {
		if !slices.Equal(s, pr.views[pr.cur][p]) {
			same = false
			break
		}
	}
	pr.cur = nb
	pr.consistent = same
}

// errSetsChanged ends a line search that would start from a value
// computed with other sets than those in use (see stale): the optimiser
// then calls refine and evaluates its point again, without evaluating the
// trial. Waiting for the line search to fail on its own cost its 20 trials
// at nearly every iteration on UD Czech CLTT.
var errSetsChanged = lineSearchError{"the pruned label sets changed at the accepted point"}

// stale reports whether the sets in use changed since the optimiser's
// value at its accepted point was computed.
func (pr *pruning) stale() bool { return pr.started && !pr.consistent }

// refine is the optimiser's refine hook: when the sets changed at the
// accepted point, it asks for that point to be evaluated again with them
// (true), once.
func (pr *pruning) refine() bool {
	if pr.consistent {
		return false
	}
	pr.consistent = true
	return true
}
