package train

import (
	"cmp"
	"slices"

	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// Training keeps the state weights in a hybrid layout of its own, and
// converts them to one of package sparse's layouts at the end:
//
//   - hot attributes (sparse.HotRows, as the tagger's) get a dense row of M
//     weights (ld apart: padded to whole cache lines where that is cheap),
//     scored and scattered by sparse.GatherHot and ScatterHot, the weights
//     outside the pattern and the padding held at 0;
//   - the others (rare words: one or two labels each) keep sparse rows of
//     their pattern labels, scored by a scalar loop.
//
// Neither of package sparse's layouts suits training: dense rows for every
// attribute multiply the parameters 16-fold at M = 22 (7.4 M against 457 k),
// and L-BFGS reads and writes its ≈ 2m+4 vectors of parameters every
// iteration, which then costs more than the gradient; sparse rows score the
// hot attributes one label at a time.
type hybrid struct {
	m       int
	nHot    int
	ld      int // the hot rows' stride (sparse.HotRows.Stride)
	hot     *sparse.HotRows
	coldOff []int32 // attribute a's cold weights: coldLab[coldOff[a]:][:coldN[a]] (after the hot rows in θ)
	coldN   []int32
	coldLab []int32 // the labels of the cold weights
	// the last split (read-only once made): a zeroth-order pruner's
	// training, its sets and the model's training split one corpus
	splitOf *sparse.Corpus
	last    *splitCorpus
}

// coldStream is the occurrence count up to which a cold attribute's
// weights are laid out in the order of its first occurrence in the
// training data rather than by frequency: the rare attributes of a
// sequence then sit together, and an evaluation, which goes through the
// sequences in order, walks through their weights rather than jumping.
// (Its gain was below the noise of the shared machine when measured.)
const coldStream = 4

// newHybrid splits the attributes of pattern p (training data c). With
// allCold every attribute keeps sparse rows.
func newHybrid(p *sparse.Pattern, c *sparse.Corpus, numAttrs, m int, allCold bool) *hybrid {
	h := &hybrid{m: m, hot: sparse.NewHotRows(p, m, allCold), coldOff: make([]int32, numAttrs), coldN: make([]int32, numAttrs)}
	h.nHot, h.ld = h.hot.Len(), h.hot.Stride()
	counts := c.AttrCounts(numAttrs)
	var lab []int32
	place := func(a int32) {
		lab = p.AttrLabels(lab[:0], a)
		h.coldOff[a] = int32(len(h.coldLab))
		h.coldN[a] = int32(len(lab))
		h.coldLab = append(h.coldLab, lab...)
	}
	placed := make([]bool, numAttrs)
	for a := range int32(numAttrs) {
		k := p.RowStart(a+1) - p.RowStart(a)
		if h.hot.Row(a) >= 0 {
			placed[a] = true
		} else if counts[a] > coldStream || k == 0 {
			place(a)
			placed[a] = true
		}
	}
	for i := range c.Len() {
		for _, a := range c.Seq(i).IDs {
			if int(a) < numAttrs && !placed[a] {
				place(a)
				placed[a] = true
			}
		}
	}
	return h
}

// numParams returns the number of state parameters.
func (h *hybrid) numParams() int { return h.hotSize() + len(h.coldLab) }

// hotSize returns the number of hot weights, nHot rows of ld (the first
// in θ).
func (h *hybrid) hotSize() int { return h.nHot * h.ld }

// splitCorpus is a corpus with each position's features split into the hot
// ones (ids: hot rows), in global CSR arrays (sequence i has the positions
// [pos[i], pos[i+1]), position t the hot features hotPtr[t] ≤ f <
// hotPtr[t+1]), and the cold ones, grouped per sequence by their number of
// labels n and ordered by their weights' offset within a group.
//
// A cold feature f is stored as the offset of its attribute's weights
// (cOff[f]) and its n labels inline in cLab: the rare attributes' weights
// are scattered over memory, and fetching them is the one cache miss a
// cold feature costs (no lookup of row bounds or labels); grouping by n
// makes the loops' trip counts predictable. With the interleaving of
// objective.workerBuf.cw this took an evaluation on CoNLL-2000 from ≈ 130
// to ≈ 105 ms of CPU.
//
// The scalar loops are the cost once the weights are cached, so where
// every sequence's T·M is at most shortIdx (CoNLL-2000, EWT) a label is
// stored as its offset in the sequence's emissions, t·M + y, and cBase is
// nil; else (long sequences at large M) as y, with its feature's t·M in
// cBase. Storing t·M + y in 4 B for all was as fast but took UD Czech
// pooled's peak memory from 721 to 1,133 MiB.
type splitCorpus struct {
	pos    []int
	hotPtr []int32
	// hot holds the hot features' rows, checked once for the kernels
	// (sparse.HotRows.CSR), with offsets relative to each sequence's
	// first hot feature, so that the kernels can take a short slice of
	// ones (cached) instead of a stream of them.
	hot    *kernels.CSR
	hotIDs []int32          // the hot features' rows (hotPtr's CSR)
	v64    seqVals[float64] // the features' values

	cGrpPtr []int32 // sequence i's groups: cGrp[cGrpPtr[i]:cGrpPtr[i+1]]
	cGrp    []coldGroup
	cOff    []int32
	cLab    []uint16  // the cold features' labels: t·M + y, or y when cBase is set
	cBase   []int32   // the cold features' t·M, or nil
	labels  [][]int32 // views of the source corpus
}

// seqVals are a split corpus's feature values in precision E.
type seqVals[E float32 | float64] struct {
	hot  []E // the hot features' values (nil when all are 1)
	ones []E // as many ones as the most hot features of a sequence
	cold []E // the cold features' values (nil when all are 1)
}

func valsTo32(v *seqVals[float64]) seqVals[float32] {
	return seqVals[float32]{hot: to32(v.hot), ones: to32(v.ones), cold: to32(v.cold)}
}

// coldGroup is a run of cold features with n labels each: features
// [f0, f1), labels from cLab[l0].
type coldGroup struct{ n, f0, f1, l0 int32 }

// split returns the split corpus of c, made once for the last corpus
// asked for.
func (h *hybrid) split(c *sparse.Corpus) *splitCorpus {
	if c == h.splitOf {
		return h.last
	}
	sc := h.splitNew(c)
	h.splitOf, h.last = c, sc
	return sc
}

func (h *hybrid) splitNew(c *sparse.Corpus) *splitCorpus {
	sc := &splitCorpus{pos: make([]int, c.Len()+1), cGrpPtr: make([]int32, 1, c.Len()+1)}
	n := c.Tokens()
	sc.hotPtr = make([]int32, 1, n+1)
	sc.labels = make([][]int32, c.Len())
	vals := false
	for i := range c.Len() {
		if c.Seq(i).Vals != nil {
			vals = true
		}
	}
	type cf struct {
		n, base, off int32
		v            float64
	}
	short := true // every offset t·M + y fits cLab
	for i := range c.Len() {
		short = short && c.Seq(i).Len()*h.m <= shortIdx
	}
	var tmp, sorted []cf
	var hotIDs []int32
	var byN []int32
	for i := range c.Len() {
		s := c.Seq(i)
		sc.labels[i] = s.Labels
		tmp = tmp[:0]
		for t := range s.Len() {
			for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
				a := s.IDs[f]
				if r := h.hot.Row(a); r >= 0 {
					hotIDs = append(hotIDs, r)
					if vals {
						sc.v64.hot = append(sc.v64.hot, s.Value(int(f)))
					}
				} else if k := h.coldN[a]; k > 0 {
					tmp = append(tmp, cf{k, int32(t * h.m), h.coldOff[a], s.Value(int(f))})
				}
			}
			sc.hotPtr = append(sc.hotPtr, int32(len(hotIDs)))
		}
		sc.pos[i+1] = sc.pos[i] + s.Len()
		// Counting sort by n (stable: position order within a group).
		maxN := int32(0)
		for _, x := range tmp {
			maxN = max(maxN, x.n)
		}
		byN = append(byN[:0], make([]int32, maxN+2)...)
		for _, x := range tmp {
			byN[x.n+1]++
		}
		for k := 1; k < len(byN); k++ {
			byN[k] += byN[k-1]
		}
		sorted = append(sorted[:0], tmp...)
		next := append([]int32(nil), byN...)
		for _, x := range tmp {
			sorted[next[x.n]] = x
			next[x.n]++
		}
		// Within a group, in the order of the weights in memory: a
		// sequence then walks through its rare weights in one direction
		// (≈ 3 ms of an 80 ms evaluation on CoNLL-2000).
		slices.SortStableFunc(sorted, func(a, b cf) int { return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.off, b.off)) })
		for k, x := range sorted {
			if k == 0 || x.n != sorted[k-1].n {
				f := int32(len(sc.cOff))
				sc.cGrp = append(sc.cGrp, coldGroup{n: x.n, f0: f, f1: f, l0: int32(len(sc.cLab))})
			}
			g := &sc.cGrp[len(sc.cGrp)-1]
			g.f1++
			sc.cOff = append(sc.cOff, x.off)
			base := x.base
			if !short {
				sc.cBase = append(sc.cBase, x.base)
				base = 0
			}
			if vals {
				sc.v64.cold = append(sc.v64.cold, x.v)
			}
			for _, y := range h.coldLab[x.off : x.off+x.n] {
				sc.cLab = append(sc.cLab, uint16(base+y))
			}
		}
		sc.cGrpPtr = append(sc.cGrpPtr, int32(len(sc.cGrp)))
	}
	longest := 0
	for i := range c.Len() {
		longest = max(longest, int(sc.hotPtr[sc.pos[i+1]]-sc.hotPtr[sc.pos[i]]))
	}
	hot, err := h.hot.CSR(sc.pos, sc.hotPtr, hotIDs)
	if err != nil {
		panic("train: hot rows: " + err.Error()) // Row maps into [0, Len())
	}
	sc.hot, sc.hotIDs = hot, hotIDs
	sc.v64.ones = make([]float64, longest)
	for k := range sc.v64.ones {
		sc.v64.ones[k] = 1
	}
	return sc
}

// hotVals returns the values v of sequence i's hot features.
func hotVals[E float32 | float64](sc *splitCorpus, v *seqVals[E], i int) []E {
	if v.hot != nil {
		return v.hot[sc.hotPtr[sc.pos[i]]:]
	}
	return v.ones
}

// score sets emit (T×M) to the state scores of sequence i.
func (h *hybrid) score(theta, emit []float64, sc *splitCorpus, i int) {
	nh := h.hotSize()
	scoreSeq(h, &sc.v64, theta[:nh], theta[nh:], 1, emit, sc, i)
}

// addGradient adds c·vals[f]·p[t·M+j] to the gradient of every weight
// (attribute of f, j) of sequence i.
func (h *hybrid) addGradient(g, p []float64, sc *splitCorpus, i int, c float64) {
	nh := h.hotSize()
	addGradientSeq(h, &sc.v64, g[:nh], g[nh:], 1, p, sc, i, c)
}

// scoreSeq is score in precision E (values v) with the hot weights in hot
// and cold weight j at cold[j·stride] (stride 2: interleaved with its
// gradient, see objective.coldWork).
func scoreSeq[E float32 | float64](h *hybrid, v *seqVals[E], hot, cold []E, stride int32, emit []E, sc *splitCorpus, i int) {
	m := h.m
	p0, p1 := sc.pos[i], sc.pos[i+1]
	T := p1 - p0
	clear(emit[:T*m])
	if h.nHot > 0 {
		sparse.GatherHot(h.hot, emit, hot, sc.hot, hotVals(sc, v, i), i)
	}
	scoreCold(v, cold, stride, emit, sc, i)
}

// shortIdx is the largest T·M whose emission offsets cLab holds (a
// variable for the tests of both forms).
var shortIdx = 1 << 16

// scoreCold adds sequence i's cold features' scores to emit (see
// scoreSeq). The slices are taken once a group, and n = 1, 2, 3 (on
// CoNLL-2000 four features in five) have loops of their own: that cut
// this loop's time by about a third once its weights were cached.
func scoreCold[E float32 | float64](v *seqVals[E], cold []E, stride int32, emit []E, sc *splitCorpus, i int) {
	for _, g := range sc.cGrp[sc.cGrpPtr[i]:sc.cGrpPtr[i+1]] {
		off := sc.cOff[g.f0:g.f1]
		n := int(g.n)
		idx := sc.cLab[g.l0:][:n*len(off)]
		switch {
		case v.cold != nil || sc.cBase != nil:
			var base []int32
			if sc.cBase != nil {
				base = sc.cBase[g.f0:g.f1]
			}
			for k, o := range off {
				o *= stride
				x, b := E(1), int32(0)
				if v.cold != nil {
					x = v.cold[int(g.f0)+k]
				}
				if base != nil {
					b = base[k]
				}
				for _, j := range idx[k*n : k*n+n] {
					emit[b+int32(j)] += x * cold[o]
					o += stride
				}
			}
		case n == 1:
			idx = idx[:len(off)]
			for k, o := range off {
				emit[idx[k]] += cold[o*stride]
			}
		case n == 2:
			for k, o := range off {
				o *= stride
				j := idx[2*k : 2*k+2]
				emit[j[0]] += cold[o]
				emit[j[1]] += cold[o+stride]
			}
		case n == 3:
			for k, o := range off {
				o *= stride
				j := idx[3*k : 3*k+3]
				emit[j[0]] += cold[o]
				emit[j[1]] += cold[o+stride]
				emit[j[2]] += cold[o+2*stride]
			}
		default:
			for k, o := range off {
				o *= stride
				for _, j := range idx[k*n : k*n+n] {
					emit[j] += cold[o]
					o += stride
				}
			}
		}
	}
}

// addGradientSeq is addGradient in precision E (values v) with the hot
// gradient in hot and that of cold weight j at cold[j·stride].
func addGradientSeq[E float32 | float64](h *hybrid, v *seqVals[E], hot, cold []E, stride int32, p []E, sc *splitCorpus, i int, c E) {
	if h.nHot > 0 {
		sparse.ScatterHot(h.hot, hot, p, sc.hot, hotVals(sc, v, i), c, i)
	}
	gradientCold(v, cold, stride, p, sc, i, c)
}

// gradientCold adds the gradient of sequence i's cold features' weights
// (see addGradientSeq), in scoreCold's loops.
func gradientCold[E float32 | float64](v *seqVals[E], cold []E, stride int32, p []E, sc *splitCorpus, i int, c E) {
	for _, g := range sc.cGrp[sc.cGrpPtr[i]:sc.cGrpPtr[i+1]] {
		off := sc.cOff[g.f0:g.f1]
		n := int(g.n)
		idx := sc.cLab[g.l0:][:n*len(off)]
		switch {
		case v.cold != nil || sc.cBase != nil:
			var base []int32
			if sc.cBase != nil {
				base = sc.cBase[g.f0:g.f1]
			}
			for k, o := range off {
				o *= stride
				cx, b := c, int32(0)
				if v.cold != nil {
					cx *= v.cold[int(g.f0)+k]
				}
				if base != nil {
					b = base[k]
				}
				for _, j := range idx[k*n : k*n+n] {
					cold[o] += cx * p[b+int32(j)]
					o += stride
				}
			}
		case n == 1:
			idx = idx[:len(off)]
			for k, o := range off {
				cold[o*stride] += c * p[idx[k]]
			}
		case n == 2:
			for k, o := range off {
				o *= stride
				j := idx[2*k : 2*k+2]
				cold[o] += c * p[j[0]]
				cold[o+stride] += c * p[j[1]]
			}
		case n == 3:
			for k, o := range off {
				o *= stride
				j := idx[3*k : 3*k+3]
				cold[o] += c * p[j[0]]
				cold[o+stride] += c * p[j[1]]
				cold[o+2*stride] += c * p[j[2]]
			}
		default:
			for k, o := range off {
				o *= stride
				for _, j := range idx[k*n : k*n+n] {
					cold[o] += c * p[j]
					o += stride
				}
			}
		}
	}
}

// export copies the state weights of theta (hybrid) into dst in the layout
// of w (a view over dst), for the pairs of pattern p.
func (h *hybrid) export(theta []float64, p *sparse.Pattern, w sparse.Weights) {
	dst := w.Params()
	var lab []int32
	for a := range int32(p.NumAttrs()) {
		lab = p.AttrLabels(lab[:0], a)
		for k, y := range lab {
			var v float64
			if r := h.hot.Row(a); r >= 0 {
				v = theta[int(r)*h.ld+int(y)]
			} else {
				v = theta[h.hotSize()+int(h.coldOff[a])+k]
			}
			if idx := w.Index(a, y); idx >= 0 {
				dst[idx] = v
			}
		}
	}
}

// prefetchSeq asks the memory system for sequence i's weights ahead of their
// use (kernels.PrefetchLines/PrefetchRows; no effect on any result): with
// cold non-nil the first cache line of each cold feature's weights (cold
// weight j at cold[j·stride]), with hot non-nil every line of each hot row.
func prefetchSeq[E float32 | float64](h *hybrid, hot, cold []E, stride int, sc *splitCorpus, i int) {
	if i >= len(sc.labels) {
		return
	}
	if gs := sc.cGrp[sc.cGrpPtr[i]:sc.cGrpPtr[i+1]]; len(gs) > 0 && cold != nil {
		kernels.PrefetchLines(cold, sc.cOff[gs[0].f0:gs[len(gs)-1].f1], stride)
	}
	if h.nHot > 0 && hot != nil {
		kernels.PrefetchCSR(hot, h.ld, sc.hot, i, h.m)
	}
}

// prefetchAll is prefetchSeq's work after sequence i is scored, before its
// forward–backward: by prefetchLevel's bits, the next sequence's cold
// weights (1) and hot weight rows (2), and this sequence's hot gradient
// rows, which scattering writes (4).
func prefetchAll[E float32 | float64](h *hybrid, hot, cold, hotGrad []E, sc *splitCorpus, i int) {
	l := prefetchLevel
	if l&3 != 0 {
		var ho, co []E
		if l&1 != 0 {
			co = cold
		}
		if l&2 != 0 {
			ho = hot
		}
		prefetchSeq(h, ho, co, 2, sc, i+1)
	}
	if l&4 != 0 {
		prefetchSeq(h, hotGrad, nil, 2, sc, i)
	}
}

// scoreSets is scoreSeq (float64, cold weight j at cold[j·stride]) with
// the hot rows scored at the labels of each position's set alone
// (pruning's fixed sets): a hot feature then costs |K_t| loads instead of
// an M-wide row. The entries outside the sets are left unspecified
// (the restricted forward–backward does not read them; its full path
// masks them). The cold rows are scored whole, as in scoreSeq: matching
// their few labels against the sets cost more than it saved (UD Czech
// CLTT, M = 304).
func scoreSets(h *hybrid, v *seqVals[float64], hot, cold []float64, stride int32, emit []float64, sc *splitCorpus, i int, sets [][]int32) {
	m := h.m
	p0 := sc.pos[i]
	hv := hotVals(sc, v, i)
	f0 := sc.hotPtr[p0]
	clear(emit[:len(sets)*m])
	for t, set := range sets {
		row := emit[t*m : (t+1)*m]
		for f := sc.hotPtr[p0+t]; f < sc.hotPtr[p0+t+1]; f++ {
			w := hot[int(sc.hotIDs[f])*h.ld:][:m]
			x := hv[f-f0]
			for _, y := range set {
				row[y] += x * w[y]
			}
		}
	}
	scoreCold(v, cold, stride, emit, sc, i)
}

// addGradientSets is addGradientSeq (float64) for marginals p that are 0
// outside the sets, with the hot rows at the sets' labels alone (see
// scoreSets).
func addGradientSets(h *hybrid, v *seqVals[float64], hot, cold []float64, stride int32, p []float64, sc *splitCorpus, i int, c float64, sets [][]int32) {
	m := h.m
	p0 := sc.pos[i]
	hv := hotVals(sc, v, i)
	f0 := sc.hotPtr[p0]
	for t, set := range sets {
		row := p[t*m : (t+1)*m]
		for f := sc.hotPtr[p0+t]; f < sc.hotPtr[p0+t+1]; f++ {
			g := hot[int(sc.hotIDs[f])*h.ld:][:m]
			x := c * hv[f-f0]
			for _, y := range set {
				g[y] += x * row[y]
			}
		}
	}
	gradientCold(v, cold, stride, p, sc, i, c)
}
