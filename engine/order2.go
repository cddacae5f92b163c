package engine

import (
	"fmt"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/kernels"
)

// Second-order chains (issue 30). A labelling's score is the first-order
// one (emissions, start, end and label bigrams: a Transitions) plus a
// trigram score B(y_{t−2}, y_{t−1}, y_t) at each position t ≥ 2. Inference
// runs over pairs of labels (y_{t−1}, y_t), at a cost of
// Σ_t |K_{t−2}|·|K_{t−1}|·|K_t| over the label sets K_t the positions allow:
// O(T·M³) for free positions, so it is affordable only over pruned lattices
// (MarMoT's scheme: a few labels per position). This file is the
// log-domain recursion (stable whatever the scores; the oracle) and the
// scaled one in the probability domain (one exp per pair state and listed
// triple instead of one per term, several times faster), which hands the
// chain to the log domain when its scores spread too wide for it, as the
// first-order engine does.

// Trigrams holds the second-order weights of a chain over M labels: a score
// for each listed triple (h, i, j) = (y_{t−2}, y_{t−1}, y_t). Triples not
// listed score 0 (CRFsuite-style sparsity: the triples seen in training).
// The k-th score and expected count belong to the k-th triple as given to
// NewTrigrams.
type Trigrams struct {
	m   int
	tri [][3]int32 // the k-th triple
	w   []float64  // its score
	// The pairs (i, j) that end a triple, in a pairIndex (a Go map cost
	// 70 ns a lookup, most of building a lattice): pair p's triples are
	// ord[ptr[p]:ptr[p+1]].
	pairs *pairIndex
	ptr   []int32
	ord   []int32 // triple indices, by pair, then by h
}

// NewTrigrams makes Trigrams over m labels from triples (h, i, j) and their
// scores (nil: zero). A triple may be listed once; scores must not be NaN
// or +Inf (−Inf forbids the triple).
func NewTrigrams(m int, triples [][3]int32, scores []float64) (*Trigrams, error) {
	if m <= 0 {
		return nil, fmt.Errorf("engine: trigrams over %d labels", m)
	}
	g := &Trigrams{m: m, tri: slices.Clone(triples), w: make([]float64, len(triples))}
	if err := g.SetScores(scores); scores != nil && err != nil {
		return nil, err
	}
	for k, x := range triples {
		for _, y := range x {
			if y < 0 || int(y) >= m {
				return nil, fmt.Errorf("engine: trigram %d (%d, %d, %d) has a label out of range [0,%d)", k, x[0], x[1], x[2], m)
			}
		}
	}
	g.ord = make([]int32, len(triples))
	for k := range g.ord {
		g.ord[k] = int32(k)
	}
	key := func(k int32) [3]int32 { x := triples[k]; return [3]int32{x[1], x[2], x[0]} }
	slices.SortFunc(g.ord, func(a, b int32) int {
		ka, kb := key(a), key(b)
		return slices.Compare(ka[:], kb[:])
	})
	var first []int32 // a triple of each pair, in ord's order
	for n, k := range g.ord {
		if n > 0 && key(g.ord[n-1]) == key(k) {
			x := triples[k]
			return nil, fmt.Errorf("engine: trigram (%d, %d, %d) is listed twice", x[0], x[1], x[2])
		}
		if x := triples[k]; n == 0 || x[1] != triples[g.ord[n-1]][1] || x[2] != triples[g.ord[n-1]][2] {
			first = append(first, k)
			g.ptr = append(g.ptr, int32(n))
		}
	}
	g.ptr = append(g.ptr, int32(len(g.ord)))
	g.pairs = newPairIndex(m, len(first), func(p int) (int32, int32) { x := triples[first[p]]; return x[1], x[2] })
	return g, nil
}

// find returns the index of pair (i, j) in ptr, or −1.
func (g *Trigrams) find(i, j int32) int32 { return g.pairs.find(i, j) }

// Labels returns M.
func (g *Trigrams) Labels() int { return g.m }

// Len returns the number of triples.
func (g *Trigrams) Len() int { return len(g.tri) }

// Triple returns the k-th triple (h, i, j).
func (g *Trigrams) Triple(k int) (h, i, j int32) {
	x := g.tri[k]
	return x[0], x[1], x[2]
}

// Score returns the k-th triple's score.
func (g *Trigrams) Score(k int) float64 { return g.w[k] }

// SetScores replaces the scores (Len of them, in the triples' order).
func (g *Trigrams) SetScores(scores []float64) error {
	if len(scores) != len(g.tri) {
		return fmt.Errorf("engine: %d trigram scores for %d triples", len(scores), len(g.tri))
	}
	for k, v := range scores {
		if v != v || v > math.MaxFloat64 {
			return fmt.Errorf("engine: trigram score %d is %v", k, v)
		}
	}
	copy(g.w, scores)
	return nil
}

// Index returns the index of the triple (h, i, j), or −1 if it is not
// listed.
func (g *Trigrams) Index(h, i, j int32) int {
	p := g.find(i, j)
	if p < 0 {
		return -1
	}
	for _, k := range g.ord[g.ptr[p]:g.ptr[p+1]] {
		if g.tri[k][0] == h {
			return int(k)
		}
	}
	return -1
}

// list returns the indices of the triples ending in (i, j), by h.
func (g *Trigrams) list(i, j int32) []int32 {
	p := g.find(i, j)
	if p < 0 {
		return nil
	}
	return g.ord[g.ptr[p]:g.ptr[p+1]]
}

// SecondOrder is a second-order chain model: first-order scores and
// trigram scores over the same M labels. Its methods take a Workspace and
// are safe for concurrent use with distinct Workspaces (while no one
// changes the scores).
type SecondOrder struct {
	tr *Transitions
	tg *Trigrams
}

// NewSecondOrder pairs first-order transitions with trigram scores.
func NewSecondOrder(tr *Transitions, tg *Trigrams) (*SecondOrder, error) {
	if tr.m != tg.m {
		return nil, fmt.Errorf("engine: transitions over %d labels, trigrams over %d", tr.m, tg.m)
	}
	return &SecondOrder{tr: tr, tg: tg}, nil
}

// Transitions returns the first-order part.
func (so *SecondOrder) Transitions() *Transitions { return so.tr }

// Trigrams returns the second-order part.
func (so *SecondOrder) Trigrams() *Trigrams { return so.tg }

// Posteriors2 selects what a second-order forward–backward computes besides
// log Z: the first-order quantities of Posteriors and the expected trigram
// counts.
type Posteriors2 struct {
	Posteriors
	// Trigrams, Trigrams.Len() entries, has the expected count of each
	// triple ADDED to it.
	Trigrams []float64
}

// Gradient2 is a second-order chain's NLL gradient: Gradient's parts and,
// in DTri, the expected minus the observed trigram counts (each added).
type Gradient2 struct {
	Gradient
	DTri []float64
}

// MaxLattice bounds a second-order chain's lattice: the label triples
// Σ_t |K_{t−2}|·|K_{t−1}|·|K_t| of its three buffers. Larger chains get an
// error: they need pruned label sets.
const MaxLattice = 1 << 25

// order2Buf is the second-order part of a Workspace. Pair state (a, b) at
// t ≥ 1 (labels lab[off[t−1]+a], lab[off[t]+b]) is entry poff[t]+a·n_t+b of
// loc, alpha and beta. The listed triples into t ≥ 2 are
// te[teoff[t]:teoff[t+1]]; the log domain, Viterbi and n-best also lay
// every triple (c, a, b) out densely, as entry toff[t]+(a·n_t+b)·n_{t−2}+c
// of g (its score, 0 unlisted) and gk (its index, −1: unlisted). The scaled
// path works from the list alone: an unlisted triple's factor is 1, so a
// pair state's sum over c is the column sum of α̂ plus the listed
// triples' corrections, O(K²) a position besides them instead of O(K³).
type order2Buf struct {
	sets       restrictBuf // its off, lab and mark: the sets
	poff, toff []int32
	te         []triEntry
	teoff      []int32
	tgx        []float64 // exp(g) − 1 of each listed triple (the scaled path)
	colsum     []float64 // scratch, max |K|
	pw         []float64 // scratch, a position's pair states
	loc, alpha []float64
	beta, g    []float64
	// The scaled path: psi = exp(loc − shift_t), z the normalisers Z_t
	// (α and β then hold the scaled α̂ and β̂).
	psi, z []float64
	scaled bool // alpha and beta hold the scaled path's
	gk     []int32
	idx    []int32   // M: a label's index in K_{t−2}, −1 outside
	vals   []float64 // scratch, max |K|
	nscore []float64 // n-best: pair states × k
	nprev  []int32
	nrank  []int32
	ncount []int32
	nb     nbestBuf // its heap
}

// triEntry is a listed triple of the lattice: pair state s = a·n_t+b of
// position t, c its label two back (an index into K_{t−2}), k the
// triple's index in Trigrams, g its score.
type triEntry struct {
	s, a, c, k int32
	g          float64
}

func (ws *Workspace) order2() *order2Buf {
	if ws.o2 == nil {
		ws.o2 = &order2Buf{}
	}
	return ws.o2
}

// noOptions stands for nil options.
var noOptions ChainOptions

// setsOf builds the sets of a chain of T positions under c (nil: free),
// and reports whether every position allows a label.
func (o *order2Buf) setsOf(c *ChainOptions, T, M int) bool {
	if c == nil {
		c = &noOptions
	}
	return o.sets.sets(c, T, M)
}

// n returns |K_t|.
func (o *order2Buf) n(t int) int { return int(o.sets.off[t+1] - o.sets.off[t]) }

// set returns K_t.
func (o *order2Buf) set(t int) []int32 { return o.sets.lab[o.sets.off[t]:o.sets.off[t+1]] }

// check validates a chain and returns T.
func (so *SecondOrder) check(emit []float64, c *ChainOptions) (int, error) {
	T, err := so.tr.chainLen(emit)
	if err != nil {
		return 0, err
	}
	M := so.tr.m
	if err := c.check(T, M); err != nil {
		return 0, err
	}
	if c.hasDelta() {
		return 0, fmt.Errorf("engine: second-order chains take no transition deltas")
	}
	for k, v := range emit {
		if v != v || v > math.MaxFloat64 {
			return 0, fmt.Errorf("engine: emission score [%d][%d] is %v", k/M, k%M, v)
		}
	}
	return T, nil
}

// lattice builds the sets, the pair states' local scores and the listed
// triples of a checked chain of T ≥ 2 positions (and the dense triple
// scores with dense). loc at t holds S[i][j] + emit[t][j], plus start[i] +
// emit[0][i] at t = 1 and end[j] at t = T−1, so that a labelling's score
// is the sum of its pair states' loc and its triples' g.
func (so *SecondOrder) lattice(o *order2Buf, emit []float64, T int, c *ChainOptions, dense bool) error {
	tr, M := so.tr, so.tr.m
	if !o.setsOf(c, T, M) {
		return ErrNoLabelling
	}
	o.poff = grow(o.poff, T+1)
	o.toff = grow(o.toff, T+1)
	np, nt, maxN := 0, 0, 0
	for t := range T {
		maxN = max(maxN, o.n(t))
		o.poff[t], o.toff[t] = int32(np), int32(nt)
		if t >= 1 {
			np += o.n(t-1) * o.n(t)
		}
		if t >= 2 {
			nt += o.n(t-2) * o.n(t-1) * o.n(t)
		}
		if nt > MaxLattice || np > MaxLattice {
			return fmt.Errorf("engine: second-order lattice of over %d label triples (%d positions); prune the label sets", MaxLattice, T)
		}
	}
	o.poff[T], o.toff[T] = int32(np), int32(nt)
	o.loc = grow(o.loc, np)
	o.alpha = grow(o.alpha, np)
	o.beta = grow(o.beta, np)
	o.vals = grow(o.vals, maxN)
	o.colsum = grow(o.colsum, maxN)
	o.teoff = grow(o.teoff, T+1)
	o.te = o.te[:0]
	if len(o.idx) < M {
		o.idx = make([]int32, M)
		fill(o.idx, -1)
	}
	for t := 1; t < T; t++ {
		pl, cl := o.set(t-1), o.set(t)
		loc := o.loc[o.poff[t]:o.poff[t+1]]
		e := emit[t*M : (t+1)*M]
		for a, i := range pl {
			row := tr.score[int(i)*M : (int(i)+1)*M]
			for b, j := range cl {
				v := row[j] + e[j]
				if t == 1 {
					v += tr.start[i] + emit[i]
				}
				if t == T-1 {
					v += tr.end[j]
				}
				loc[a*len(cl)+b] = v
			}
		}
		o.teoff[t] = int32(len(o.te))
		if t < 2 {
			continue
		}
		hl := o.set(t - 2)
		for c, h := range hl {
			o.idx[h] = int32(c)
		}
		for a, i := range pl {
			for b, j := range cl {
				s := int32(a*len(cl) + b)
				for _, k := range so.tg.list(i, j) {
					if c := o.idx[so.tg.tri[k][0]]; c >= 0 {
						o.te = append(o.te, triEntry{s: s, a: int32(a), c: c, k: k, g: so.tg.w[k]})
					}
				}
			}
		}
		for _, h := range hl {
			o.idx[h] = -1
		}
	}
	o.teoff[0] = 0
	o.teoff[T] = int32(len(o.te))
	if dense {
		o.denseTriples(T)
	}
	return nil
}

// denseTriples lays every triple of the lattice out in g and gk.
func (o *order2Buf) denseTriples(T int) {
	nt := int(o.toff[T])
	o.g = grow(o.g, nt)
	o.gk = grow(o.gk, nt)
	clear(o.g[:nt])
	fill(o.gk[:nt], -1)
	for t := 2; t < T; t++ {
		n0, base := o.n(t-2), int(o.toff[t])
		for _, e := range o.te[o.teoff[t]:o.teoff[t+1]] {
			at := base + int(e.s)*n0 + int(e.c)
			o.g[at], o.gk[at] = e.g, e.k
		}
	}
}

// LogZ returns the log partition function of a chain with emission scores
// emit (T×M), restricted by c (Allowed and Forced) if it is not nil.
func (so *SecondOrder) LogZ(ws *Workspace, emit []float64, c *ChainOptions) (float64, error) {
	return so.Posteriors(ws, emit, c, nil)
}

// Posteriors runs one second-order forward–backward and fills what p asks
// for; it returns log Z (0 for an empty chain).
func (so *SecondOrder) Posteriors(ws *Workspace, emit []float64, c *ChainOptions, p *Posteriors2) (float64, error) {
	T, err := so.check(emit, c)
	if err != nil {
		return 0, err
	}
	M := so.tr.m
	if p != nil {
		if err := p.Posteriors.check(so.tr, T, M); err != nil {
			return 0, err
		}
		if p.Trigrams != nil && len(p.Trigrams) != so.tg.Len() {
			return 0, fmt.Errorf("engine: Posteriors2.Trigrams has %d entries, want %d", len(p.Trigrams), so.tg.Len())
		}
	}
	if T == 0 {
		return 0, nil
	}
	if p != nil {
		// Marginals and Edges are set, the counts added (as Posteriors).
		clear(p.Marginals)
		clear(p.Edges)
	}
	o := ws.order2()
	if T == 1 {
		return so.single(o, emit, c, p)
	}
	if err := so.lattice(o, emit, T, c, false); err != nil {
		return 0, err
	}
	logZ, ok := o.forwardScaled(T)
	if !ok {
		o.denseTriples(T)
		logZ = o.forward(T)
	}
	if math.IsInf(logZ, -1) {
		return 0, ErrNoLabelling
	}
	if p == nil || (p.Marginals == nil && p.Edges == nil && p.Transitions == nil && p.Start == nil && p.End == nil && p.Trigrams == nil && p.Tied == nil) {
		return logZ, nil
	}
	if o.scaled {
		o.backwardScaled(T)
	} else {
		o.backward(T)
	}
	var px *pairIndex
	if p.Tied != nil {
		px = so.tr.pairIndex()
	}
	o.posteriors(p, px, T, M, logZ)
	return logZ, nil
}

// single is Posteriors for a chain of one position.
func (so *SecondOrder) single(o *order2Buf, emit []float64, c *ChainOptions, p *Posteriors2) (float64, error) {
	tr, M := so.tr, so.tr.m
	if !o.setsOf(c, 1, M) {
		return 0, ErrNoLabelling
	}
	set := o.set(0)
	o.vals = grow(o.vals, len(set))
	for k, j := range set {
		o.vals[k] = tr.start[j] + emit[j] + tr.end[j]
	}
	logZ := logSumExp(o.vals[:len(set)])
	if math.IsInf(logZ, -1) {
		return 0, ErrNoLabelling
	}
	if p != nil {
		for k, j := range set {
			q := math.Exp(o.vals[k] - logZ)
			if p.Marginals != nil {
				p.Marginals[j] += q
			}
			if p.Start != nil {
				p.Start[j] += q
			}
			if p.End != nil {
				p.End[j] += q
			}
		}
	}
	return logZ, nil
}

// order2LogOnly makes every chain take the log domain (tests compare the
// two paths).
var order2LogOnly bool

// forwardScaled runs the scaled forward pass: α̂_t = α_t / (Z_1⋯Z_t) over
// psi, the exponentiated pair scores, and tgx, exp(g) − 1 of the listed
// triples; it returns log Z and true, or false when a position's pair
// scores spread wider than scaledRange, a listed triple's score lies
// outside ±scaledRange, or a normaliser is not a normal positive number
// (then the log domain must run).
func (o *order2Buf) forwardScaled(T int) (float64, bool) {
	o.scaled = false
	if order2LogOnly {
		return 0, false
	}
	np := int(o.poff[T])
	o.psi = grow(o.psi, np)
	o.tgx = grow(o.tgx, len(o.te))
	o.z = grow(o.z, T)
	logZ := 0.0
	for t := 1; t < T; t++ {
		loc := o.loc[o.poff[t]:o.poff[t+1]]
		hi, lo := math.Inf(-1), math.Inf(1)
		for _, v := range loc {
			if v > math.Inf(-1) {
				hi, lo = max(hi, v), min(lo, v)
			}
		}
		if hi-lo > scaledRange || math.IsInf(hi, -1) {
			return 0, false
		}
		psi := o.psi[o.poff[t]:o.poff[t+1]]
		for s, v := range loc {
			psi[s] = v - hi
		}
		kernels.Exp(psi, psi)
		cur := o.alpha[o.poff[t]:o.poff[t+1]]
		if t == 1 {
			copy(cur, psi)
		} else {
			// An unlisted triple's factor is 1: each pair state
			// (a, b) starts from the column sum Σ_c α̂(c, a), and a
			// listed triple adds α̂(c, a)·(exp(g) − 1). A −Inf triple
			// (a forbidden one: none in trained models) goes to the log
			// domain, whose zero is exact.
			n0, n1, n2 := o.n(t-2), o.n(t-1), o.n(t)
			prev := o.alpha[o.poff[t-1]:o.poff[t]]
			col := o.colsum[:n1]
			clear(col)
			for c := range n0 {
				for a, v := range prev[c*n1 : (c+1)*n1] {
					col[a] += v
				}
			}
			for a := range n1 {
				fill(cur[a*n2:(a+1)*n2], col[a])
			}
			lo, hi := o.teoff[t], o.teoff[t+1]
			for n, e := range o.te[lo:hi] {
				if e.g > scaledRange || e.g < -scaledRange {
					return 0, false
				}
				x := math.Expm1(e.g)
				o.tgx[int(lo)+n] = x
				cur[e.s] += prev[int(e.c)*n1+int(e.a)] * x
			}
			for s, w := range psi {
				cur[s] *= w
			}
		}
		z := 0.0
		for _, v := range cur {
			z += v
		}
		if !(z >= 0x1p-500 && z <= math.MaxFloat64) {
			return 0, false
		}
		for s := range cur {
			cur[s] /= z
		}
		o.z[t] = z
		logZ += hi + math.Log(z)
	}
	o.scaled = true
	return logZ, true
}

// backwardScaled fills beta with β̂_t = β_t / (Z_{t+1}⋯Z_{T−1}), so that
// α̂_t·β̂_t is the pair marginal.
func (o *order2Buf) backwardScaled(T int) {
	fill(o.beta[o.poff[T-1]:o.poff[T]], 1)
	for t := T - 1; t >= 2; t-- {
		// As forward: the row sum over b of w = ψ·β̂/Z for every c,
		// then the listed triples' corrections.
		n0, n1, n2 := o.n(t-2), o.n(t-1), o.n(t)
		next := o.beta[o.poff[t]:o.poff[t+1]]
		cur := o.beta[o.poff[t-1]:o.poff[t]]
		psi := o.psi[o.poff[t]:o.poff[t+1]]
		inv := 1 / o.z[t]
		o.pw = grow(o.pw, n1*n2)
		w := o.pw[:n1*n2]
		row := o.colsum[:n1]
		for a := range n1 {
			sum := 0.0
			for b := range n2 {
				s := a*n2 + b
				w[s] = psi[s] * next[s] * inv
				sum += w[s]
			}
			row[a] = sum
		}
		for c := range n0 {
			copy(cur[c*n1:(c+1)*n1], row)
		}
		lo := int(o.teoff[t])
		for n, e := range o.te[lo:o.teoff[t+1]] {
			cur[int(e.c)*n1+int(e.a)] += o.tgx[lo+n] * w[e.s]
		}
	}
}

// triple returns the marginal of the n-th listed triple e, into t ≥ 2.
func (o *order2Buf) triple(t, n int, e triEntry, logZ float64) float64 {
	pk, ps := int(o.poff[t-1])+int(e.c)*o.n(t-1)+int(e.a), int(o.poff[t])+int(e.s)
	if o.scaled {
		return o.alpha[pk] * (1 + o.tgx[n]) * o.psi[ps] * o.beta[ps] / o.z[t]
	}
	return math.Exp(o.alpha[pk] + e.g + o.loc[ps] + o.beta[ps] - logZ)
}

// forward fills alpha in the log domain and returns log Z.
func (o *order2Buf) forward(T int) float64 {
	copy(o.alpha[o.poff[1]:o.poff[2]], o.loc[o.poff[1]:o.poff[2]])
	for t := 2; t < T; t++ {
		n0, n1, n2 := o.n(t-2), o.n(t-1), o.n(t)
		prev := o.alpha[o.poff[t-1]:o.poff[t]]
		cur := o.alpha[o.poff[t]:o.poff[t+1]]
		loc := o.loc[o.poff[t]:o.poff[t+1]]
		g := o.g[o.toff[t]:o.toff[t+1]]
		v := o.vals[:n0]
		for a := range n1 {
			for b := range n2 {
				s := a*n2 + b
				gs := g[s*n0 : (s+1)*n0]
				for c := range n0 {
					v[c] = prev[c*n1+a] + gs[c]
				}
				cur[s] = logSumExp(v) + loc[s]
			}
		}
	}
	return logSumExp(o.alpha[o.poff[T-1]:o.poff[T]])
}

// backward fills beta.
func (o *order2Buf) backward(T int) {
	clear(o.beta[o.poff[T-1]:o.poff[T]])
	for t := T - 1; t >= 2; t-- {
		n0, n1, n2 := o.n(t-2), o.n(t-1), o.n(t)
		next := o.beta[o.poff[t]:o.poff[t+1]]
		cur := o.beta[o.poff[t-1]:o.poff[t]]
		loc := o.loc[o.poff[t]:o.poff[t+1]]
		g := o.g[o.toff[t]:o.toff[t+1]]
		v := o.vals[:n2]
		for c := range n0 {
			for a := range n1 {
				for b := range n2 {
					s := a*n2 + b
					v[b] = g[s*n0+c] + loc[s] + next[s]
				}
				cur[c*n1+a] = logSumExp(v)
			}
		}
	}
}

// posteriors adds what p asks for from alpha and beta (px: the tied
// exceptions' index, for p.Tied).
func (o *order2Buf) posteriors(p *Posteriors2, px *pairIndex, T, M int, logZ float64) {
	for t := 1; t < T; t++ {
		pl, cl := o.set(t-1), o.set(t)
		n2 := len(cl)
		// The pair marginals of position t, in vals.
		lo, hi := o.poff[t], o.poff[t+1]
		o.vals = grow(o.vals, int(hi-lo))
		qs := o.vals[:hi-lo]
		al, be := o.alpha[lo:hi], o.beta[lo:hi]
		if o.scaled {
			for s := range qs {
				qs[s] = al[s] * be[s]
			}
		} else {
			for s := range qs {
				qs[s] = al[s] + be[s] - logZ
			}
			kernels.Exp(qs, qs)
		}
		for a, i := range pl {
			for b, j := range cl {
				s := a*n2 + b
				q := qs[s]
				if q == 0 {
					continue
				}
				if p.Marginals != nil {
					p.Marginals[t*M+int(j)] += q
					if t == 1 {
						p.Marginals[i] += q
					}
				}
				if p.Edges != nil {
					p.Edges[((t-1)*M+int(i))*M+int(j)] += q
				}
				if p.Transitions != nil {
					p.Transitions[int(i)*M+int(j)] += q
				}
				if p.Tied != nil {
					if e := px.find(i, j); e >= 0 {
						p.Tied[e] += q
					} else {
						p.Tied[len(p.Tied)-1] += q
					}
				}
				if p.Start != nil && t == 1 {
					p.Start[i] += q
				}
				if p.End != nil && t == T-1 {
					p.End[j] += q
				}
			}
		}
		if p.Trigrams == nil || t < 2 {
			continue
		}
		first := int(o.teoff[t])
		for n, e := range o.te[first:o.teoff[t+1]] {
			p.Trigrams[e.k] += o.triple(t, first+n, e, logZ)
		}
	}
}

// PathScore returns the unnormalised log score of a labelling (its
// first-order score plus the scores of its triples); it ignores c's label
// constraints.
func (so *SecondOrder) PathScore(emit []float64, labels []int32, c *ChainOptions) (float64, error) {
	if c.hasDelta() {
		return 0, fmt.Errorf("engine: second-order chains take no transition deltas")
	}
	s, err := so.tr.PathScore(emit, labels, nil)
	if err != nil {
		return 0, err
	}
	for t := 2; t < len(labels); t++ {
		if k := so.tg.Index(labels[t-2], labels[t-1], labels[t]); k >= 0 {
			s += so.tg.w[k]
		}
	}
	return s, nil
}

// LogProb returns log p(labels | emit), restricted by c if not nil (−Inf
// for a labelling c excludes).
func (so *SecondOrder) LogProb(ws *Workspace, emit []float64, labels []int32, c *ChainOptions) (float64, error) {
	s, err := so.PathScore(emit, labels, c)
	if err != nil {
		return 0, err
	}
	if !c.admits(labels) {
		return math.Inf(-1), nil
	}
	logZ, err := so.LogZ(ws, emit, c)
	if err != nil {
		return 0, err
	}
	return s - logZ, nil
}

// NLL returns −log p(labels | emit) of the chain (constrained by c if not
// nil) and adds its gradient to g (nil: the value alone).
func (so *SecondOrder) NLL(ws *Workspace, emit []float64, labels []int32, c *ChainOptions, g *Gradient2) (float64, error) {
	score, err := so.PathScore(emit, labels, c)
	if err != nil {
		return 0, err
	}
	T, M := len(labels), so.tr.m
	if g == nil {
		g = &Gradient2{}
	}
	if g.DEmit != nil && len(g.DEmit) != T*M {
		return 0, fmt.Errorf("engine: Gradient.DEmit has %d entries, want %d", len(g.DEmit), T*M)
	}
	if g.DTri != nil && len(g.DTri) != so.tg.Len() {
		return 0, fmt.Errorf("engine: Gradient2.DTri has %d entries, want %d", len(g.DTri), so.tg.Len())
	}
	if T == 0 {
		return 0, nil
	}
	ws.grow(T, M)
	p := Posteriors2{Posteriors: Posteriors{Transitions: g.DTrans, Start: g.DStart, End: g.DEnd}, Trigrams: g.DTri}
	if g.DEmit != nil {
		p.Marginals = ws.work2(T * M)
	}
	logZ, err := so.Posteriors(ws, emit, c, &p)
	if err != nil {
		return 0, err
	}
	g.addNLL(g.DEmit, p.Marginals, labels, M)
	if g.DTri != nil {
		for t := 2; t < T; t++ {
			if k := so.tg.Index(labels[t-2], labels[t-1], labels[t]); k >= 0 {
				g.DTri[k]--
			}
		}
	}
	return logZ - score, nil
}

// Viterbi writes the best labelling of a chain (restricted by c if not
// nil) to path and returns its score. Of exactly tied labellings it takes
// the one NBest puts first: the lowest last label, then the lowest label
// before it, and so on.
func (so *SecondOrder) Viterbi(ws *Workspace, emit []float64, c *ChainOptions, path []int32) (float64, error) {
	T, err := so.check(emit, c)
	if err != nil {
		return 0, err
	}
	if len(path) != T {
		return 0, fmt.Errorf("engine: path has room for %d labels, chain has %d positions", len(path), T)
	}
	paths := [][]int32{path}
	var score [1]float64
	if _, err := so.nbest(ws, emit, T, c, paths, score[:]); err != nil {
		return 0, err
	}
	return score[0], nil
}

// NBest finds the k = len(paths) best labellings of a chain (restricted by
// c if not nil), exactly and in order of decreasing score, exact ties by
// the last label, then the one before, and so on, lowest first. It writes
// them to paths (each of len T) and their scores to scores, and returns
// how many it found: fewer than k when fewer labellings are possible.
func (so *SecondOrder) NBest(ws *Workspace, emit []float64, c *ChainOptions, paths [][]int32, scores []float64) (int, error) {
	T, err := so.check(emit, c)
	if err != nil {
		return 0, err
	}
	if len(scores) < len(paths) {
		return 0, fmt.Errorf("engine: room for %d scores, %d paths", len(scores), len(paths))
	}
	for _, p := range paths {
		if len(p) != T {
			return 0, fmt.Errorf("engine: a path has room for %d labels, chain has %d positions", len(p), T)
		}
	}
	if len(paths) == 0 {
		return 0, nil
	}
	return so.nbest(ws, emit, T, c, paths, scores)
}

// nbest is NBest (and, with k = 1, Viterbi) for a checked chain: each pair
// state keeps its k best partial labellings, ranked by score, then by the
// label two back (lowest first), then by that state's rank, which orders
// exact ties from the end backwards.
func (so *SecondOrder) nbest(ws *Workspace, emit []float64, T int, c *ChainOptions, paths [][]int32, scores []float64) (int, error) {
	if T == 0 {
		if len(paths) > 0 {
			scores[0] = 0
			return 1, nil
		}
		return 0, nil
	}
	k := len(paths)
	o := ws.order2()
	if T == 1 {
		return so.nbestSingle(o, emit, c, paths, scores)
	}
	if err := so.lattice(o, emit, T, c, true); err != nil {
		return 0, err
	}
	np := int(o.poff[T])
	o.nscore = grow(o.nscore, np*k)
	o.nprev = grow(o.nprev, np*k)
	o.nrank = grow(o.nrank, np*k)
	o.ncount = grow(o.ncount, np)
	ninf := math.Inf(-1)
	for s := o.poff[1]; s < o.poff[2]; s++ {
		o.nscore[int(s)*k] = o.loc[s]
		o.ncount[s] = 0
		if o.loc[s] > ninf {
			o.ncount[s] = 1
		}
	}
	for t := 2; t < T; t++ {
		n0, n1, n2 := o.n(t-2), o.n(t-1), o.n(t)
		pb, cb := int(o.poff[t-1]), int(o.poff[t])
		g := o.g[o.toff[t]:o.toff[t+1]]
		for a := range n1 {
			for b := range n2 {
				s := a*n2 + b
				gs := g[s*n0 : (s+1)*n0]
				loc := o.loc[cb+s]
				out := (cb + s) * k
				o.nb.heap = o.nb.heap[:0]
				if loc > ninf {
					for c := range n0 {
						ps := pb + c*n1 + a
						if o.ncount[ps] > 0 && gs[c] > ninf {
							o.nb.push(cand{o.nscore[ps*k] + gs[c], int32(c), 0})
						}
					}
				}
				r := 0
				for ; r < k && len(o.nb.heap) > 0; r++ {
					top := o.nb.pop()
					o.nscore[out+r] = top.score + loc
					o.nprev[out+r] = top.i
					o.nrank[out+r] = top.r
					ps := pb + int(top.i)*n1 + a
					if next := top.r + 1; next < o.ncount[ps] {
						o.nb.push(cand{o.nscore[ps*k+int(next)] + gs[top.i], top.i, next})
					}
				}
				o.ncount[cb+s] = int32(r)
			}
		}
	}
	// The last position's states, ordered by last label, then the one
	// before: index b·n_{T−2} + a.
	nA, nB := o.n(T-2), o.n(T-1)
	lb := int(o.poff[T-1])
	o.nb.heap = o.nb.heap[:0]
	for b := range nB {
		for a := range nA {
			s := lb + a*nB + b
			if o.ncount[s] > 0 {
				o.nb.push(cand{o.nscore[s*k], int32(b*nA + a), 0})
			}
		}
	}
	found := 0
	for ; found < k && len(o.nb.heap) > 0; found++ {
		top := o.nb.pop()
		b, a := int(top.i)/nA, int(top.i)%nA
		s := lb + a*nB + b
		if next := top.r + 1; next < o.ncount[s] {
			o.nb.push(cand{o.nscore[s*k+int(next)], top.i, next})
		}
		scores[found] = top.score
		path := paths[found]
		r := int(top.r)
		for t := T - 1; t >= 2; t-- {
			at := (int(o.poff[t])+a*o.n(t)+b)*k + r
			path[t] = o.set(t)[b]
			c, r2 := int(o.nprev[at]), int(o.nrank[at])
			b, a, r = a, c, r2
		}
		path[1] = o.set(1)[b]
		path[0] = o.set(0)[a]
	}
	if found == 0 {
		return 0, ErrNoLabelling
	}
	return found, nil
}

// nbestSingle is nbest for a chain of one position.
func (so *SecondOrder) nbestSingle(o *order2Buf, emit []float64, c *ChainOptions, paths [][]int32, scores []float64) (int, error) {
	tr, M := so.tr, so.tr.m
	if !o.setsOf(c, 1, M) {
		return 0, ErrNoLabelling
	}
	o.nb.heap = o.nb.heap[:0]
	for _, j := range o.set(0) {
		if v := tr.start[j] + emit[j] + tr.end[j]; v > math.Inf(-1) {
			o.nb.push(cand{v, j, 0})
		}
	}
	found := 0
	for ; found < len(paths) && len(o.nb.heap) > 0; found++ {
		top := o.nb.pop()
		paths[found][0], scores[found] = top.i, top.score
	}
	if found == 0 {
		return 0, ErrNoLabelling
	}
	return found, nil
}
