package train

import (
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// Training keeps the state weights in a hybrid layout of its own, and
// converts them to one of package sparse's layouts at the end:
//
//   - hot attributes, those seen with at least ⌈M/4⌉ labels (in CoNLL-2000
//     chunking the part-of-speech n-grams: 2% of the attributes, 58% of the
//     features), get a dense row of M weights, scored and scattered by the
//     SIMD kernels of package kernels (kernels.Gather, kernels.Scatter), the
//     weights outside the pattern held at 0;
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
	hotRow  []int32 // attribute → hot row, or −1
	coldOff []int32 // attribute a's cold weights: coldLab[coldOff[a]:][:coldN[a]] (after nHot·M in θ)
	coldN   []int32
	coldLab []int32 // the labels of the cold weights
}

// coldStream is the occurrence count up to which a cold attribute's
// weights are laid out in the order of its first occurrence in the
// training data rather than by frequency: the rare attributes of a
// sequence then sit together, and an evaluation, which goes through the
// sequences in order, streams through their weights instead of missing the
// cache on each (≈ 30 ns for an L3 hit on this machine's large shared L3).
const coldStream = 4

// newHybrid splits the attributes of pattern p (training data c). With
// allCold every attribute keeps sparse rows.
func newHybrid(p *sparse.Pattern, c *sparse.Corpus, numAttrs, m int, allCold bool) *hybrid {
	h := &hybrid{m: m, hotRow: make([]int32, numAttrs), coldOff: make([]int32, numAttrs), coldN: make([]int32, numAttrs)}
	minHot := max((m+3)/4, 2)
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
		h.hotRow[a] = -1
		k := p.RowStart(a+1) - p.RowStart(a)
		if k >= minHot && !allCold {
			h.hotRow[a] = int32(h.nHot)
			h.nHot++
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
func (h *hybrid) numParams() int { return h.nHot*h.m + len(h.coldLab) }

// splitCorpus is a corpus with each position's features split into the hot
// ones (ids: hot rows) and the cold ones (ids: attributes), in global CSR
// arrays: sequence i has the positions [pos[i], pos[i+1]), position t the
// hot features hotPtr[t] ≤ f < hotPtr[t+1].
//
// A cold feature f is stored as the offset of its attribute's weights
// (coldOff[f]) and their count (coldN[f]), its labels inline in coldLab
// from coldLabPos[t] on for position t: the rare attributes' weights are
// scattered over memory, and fetching them is the one cache miss a cold
// feature costs (no lookup of the row bounds or labels).
type splitCorpus struct {
	pos              []int
	hotPtr, coldPtr  []int32
	hotIDs           []int32
	coldOff          []int32
	coldN            []uint16
	coldLab          []uint16
	coldLabPos       []int32
	hotVals, coldVal []float64 // coldVal nil when all values are 1
	labels           [][]int32 // views of the source corpus
}

func (h *hybrid) split(c *sparse.Corpus) *splitCorpus {
	sc := &splitCorpus{pos: make([]int, c.Len()+1)}
	n := c.Tokens()
	sc.hotPtr = make([]int32, 1, n+1)
	sc.coldPtr = make([]int32, 1, n+1)
	sc.coldLabPos = make([]int32, 1, n+1)
	sc.labels = make([][]int32, c.Len())
	vals := false
	for i := range c.Len() {
		if c.Seq(i).Vals != nil {
			vals = true
		}
	}
	for i := range c.Len() {
		s := c.Seq(i)
		sc.labels[i] = s.Labels
		for t := range s.Len() {
			for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
				a := s.IDs[f]
				if r := h.hotRow[a]; r >= 0 {
					sc.hotIDs = append(sc.hotIDs, r)
					if vals {
						sc.hotVals = append(sc.hotVals, s.Value(int(f)))
					}
				} else if lo, n := h.coldOff[a], h.coldN[a]; n > 0 {
					sc.coldOff = append(sc.coldOff, lo)
					sc.coldN = append(sc.coldN, uint16(n))
					for _, y := range h.coldLab[lo : lo+n] {
						sc.coldLab = append(sc.coldLab, uint16(y))
					}
					if vals {
						sc.coldVal = append(sc.coldVal, s.Value(int(f)))
					}
				}
			}
			sc.hotPtr = append(sc.hotPtr, int32(len(sc.hotIDs)))
			sc.coldPtr = append(sc.coldPtr, int32(len(sc.coldOff)))
			sc.coldLabPos = append(sc.coldLabPos, int32(len(sc.coldLab)))
		}
		sc.pos[i+1] = sc.pos[i] + s.Len()
	}
	if sc.hotVals == nil {
		// The kernels take values; all ones here.
		sc.hotVals = make([]float64, len(sc.hotIDs))
		for k := range sc.hotVals {
			sc.hotVals[k] = 1
		}
	}
	return sc
}

// score sets emit (T×M) to the state scores of sequence i.
func (h *hybrid) score(theta, emit []float64, sc *splitCorpus, i int) {
	m := h.m
	p0, p1 := sc.pos[i], sc.pos[i+1]
	T := p1 - p0
	clear(emit[:T*m])
	if h.nHot > 0 {
		kernels.Gather(emit, theta[:h.nHot*m], m, sc.hotPtr[p0:p1+1], sc.hotIDs, sc.hotVals, T, m)
	}
	cold := theta[h.nHot*m:]
	for t := range T {
		row := emit[t*m : (t+1)*m]
		cur := sc.coldLabPos[p0+t]
		for f := sc.coldPtr[p0+t]; f < sc.coldPtr[p0+t+1]; f++ {
			off, n := sc.coldOff[f], int32(sc.coldN[f])
			if n == 1 && sc.coldVal == nil { // most cold features: one label
				row[sc.coldLab[cur]] += cold[off]
				cur++
				continue
			}
			lab, w := sc.coldLab[cur:cur+n], cold[off:off+n]
			cur += n
			w = w[:len(lab)]
			if sc.coldVal == nil {
				for k, y := range lab {
					row[y] += w[k]
				}
			} else {
				v := sc.coldVal[f]
				for k, y := range lab {
					row[y] += v * w[k]
				}
			}
		}
	}
}

// addGradient adds c·vals[f]·p[t·M+j] to the gradient of every weight
// (attribute of f, j) of sequence i.
func (h *hybrid) addGradient(g, p []float64, sc *splitCorpus, i int, c float64) {
	m := h.m
	p0, p1 := sc.pos[i], sc.pos[i+1]
	T := p1 - p0
	if h.nHot > 0 {
		kernels.Scatter(g[:h.nHot*m], m, p, sc.hotPtr[p0:p1+1], sc.hotIDs, sc.hotVals, c, T, m)
	}
	cold := g[h.nHot*m:]
	for t := range T {
		row := p[t*m : (t+1)*m]
		cur := sc.coldLabPos[p0+t]
		for f := sc.coldPtr[p0+t]; f < sc.coldPtr[p0+t+1]; f++ {
			off, n := sc.coldOff[f], int32(sc.coldN[f])
			if n == 1 && sc.coldVal == nil {
				cold[off] += c * row[sc.coldLab[cur]]
				cur++
				continue
			}
			lab, gr := sc.coldLab[cur:cur+n], cold[off:off+n]
			cur += n
			gr = gr[:len(lab)]
			v := c
			if sc.coldVal != nil {
				v *= sc.coldVal[f]
			}
			for k, y := range lab {
				gr[k] += v * row[y]
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
			if r := h.hotRow[a]; r >= 0 {
				v = theta[int(r)*h.m+int(y)]
			} else {
				v = theta[h.nHot*h.m+int(h.coldOff[a])+k]
			}
			if idx := w.Index(a, y); idx >= 0 {
				dst[idx] = v
			}
		}
	}
}
