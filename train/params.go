package train

import (
	"fmt"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// paramSpace is the parameterisation of a linear-chain CRF over a parameter
// vector θ: the state weights θ[0:nState] (a sparse.Weights view), then
//
//	dense: M×M transition weights, M start, M end;
//	tied:  one weight per label bigram seen in training (the engine's
//	       exceptions, in excs order), one default weight shared by all
//	       other bigrams (held at 0, in fixedTrans, unless
//	       PossibleTransitions), M start, M end.
//
// The tied order (exceptions, then the default) is that of
// engine.Posteriors.Tied, so expected counts add in place. Then come the
// weights of observation-dependent transitions, θ[bigOff:nParams] (none
// without: bigOff = nParams), and last the sub-label weights,
// θ[nParams:subEnd()] (W, then U with sub-label transitions), and with
// Config.Order 2 the trigram weights, θ[triOff():nTotal()], in tri's
// order. Its variables and fields are named md (it was the type model).
type paramSpace struct {
	m        int
	layout   sparse.Layout // of the Result
	pattern  *sparse.Pattern
	hy       *hybrid // the state weights during training
	nState   int
	nParams  int
	bigOff   int      // offset of the bigram weights (nParams without them)
	big      *bigrams // observation-dependent transitions, or nil
	tied     bool
	excs     []engine.Exception // tied: From, To of each exception
	excIndex []int32            // tied: M×M → exception k, or −1 (default)
	// fixed lists parameters held at 0 (never trained): without
	// PossibleTransitions, the dense bigrams not seen in training or the
	// tied default that stands for them; and dense-layout state pairs
	// outside the pattern of hot rows.
	fixedTrans []int32  // indices into θ
	stateMask  []uint64 // hot rows: bit set = trainable (nil: all)
	// noTrans: no transition, start or end weights (transitions=none, all
	// in fixedTrans, held at 0): the positions are independent.
	noTrans bool
	// Candidate labels (see candidates): the lexicon, and the allowed
	// labels of each training and holdout position (nil: none).
	lex                  *sparse.Lexicon
	allowed, holdAllowed [][][]int32
	prune                *pruning // Config.PruneMax (prune.go), or nil
	// sub, if not nil, has sub-label weights: θ[nParams:nTotal()], its W
	// a view of them during an evaluation.
	sub *sparse.SubLabels
	// subTrans: sub-label transition weights U (dense transitions only),
	// NSub×NSub after the sub-label state weights in θ: the bigram i→j
	// scores, besides its own weight, Σ_k U[part k of i][part k of j].
	// transD holds those sums (M×M) for the θ of the last transitions
	// built, transBuf the transition parameters with them added.
	subTrans         bool
	transD, transBuf []float64
	// tri: the label trigrams of Config.Order 2 (those seen in
	// training), their scores those of the last evaluation; nil for
	// order 1.
	tri *engine.Trigrams
	// noTri holds the trigram weights at 0: the first-order pruner's
	// training (Config.PruneBy "first") before an order-2 model's.
	noTri bool
}

// triOff returns the offset of the trigram weights in θ.
func (md *paramSpace) triOff() int { return md.subEnd() }

// nTri returns the number of trigram weights.
func (md *paramSpace) nTri() int {
	if md.tri == nil {
		return 0
	}
	return md.tri.Len()
}

// order2 reports whether evaluations run second-order chains (not in the
// pruners' training: the zeroth-order one has no transitions, the
// first-order one holds the trigrams at 0).
func (md *paramSpace) order2() bool { return md.tri != nil && !md.noTrans && !md.noTri }

// subTransOff returns the offset of U in θ.
func (md *paramSpace) subTransOff() int { return md.nParams + len(md.sub.IDs) }

// setSubTrans computes transD from θ's U.
func (md *paramSpace) setSubTrans(theta []float64) {
	if !md.subTrans {
		return
	}
	s, m := md.sub, md.m
	u := theta[md.subTransOff():md.subEnd()]
	md.transD = growF(md.transD, m*m)
	for i := range m {
		pi := s.Of[i*s.N : (i+1)*s.N]
		row := md.transD[i*m : (i+1)*m]
		for j := range row {
			pj := s.Of[j*s.N : (j+1)*s.N]
			v := 0.0
			for k, a := range pi {
				if b := pj[k]; a >= 0 && b >= 0 {
					v += u[int(a)*s.NSub+int(b)]
				}
			}
			row[j] = v
		}
	}
}

// withSubTrans returns the transition parameters tp with transD added to
// the bigram weights (tp itself without sub-label transitions).
func (md *paramSpace) withSubTrans(tp []float64) []float64 {
	if !md.subTrans || len(tp) != md.bigOff-md.nState {
		return tp
	}
	md.transBuf = append(md.transBuf[:0], tp...)
	for k, d := range md.transD {
		md.transBuf[k] += d
	}
	return md.transBuf
}

// nTotal returns the length of θ: the parameters, the sub-label weights,
// the trigram weights.
func (md *paramSpace) nTotal() int { return md.subEnd() + md.nTri() }

// subEnd returns the end of the sub-label weights in θ.
func (md *paramSpace) subEnd() int {
	if md.sub == nil {
		return md.nParams
	}
	n := md.nParams + len(md.sub.IDs)
	if md.subTrans {
		n += md.sub.NSub * md.sub.NSub
	}
	return n
}

func growF(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

// transOff returns the offset of the transition parameters.
func (md *paramSpace) transOff() int { return md.nState }

// startOff and endOff return the offsets of the start and end weights.
func (md *paramSpace) startOff() int { return md.bigOff - 2*md.m }
func (md *paramSpace) endOff() int   { return md.bigOff - md.m }

// transParams returns the transition, start and end parameters of θ.
func (md *paramSpace) transParams(theta []float64) []float64 { return theta[md.nState:md.bigOff] }

// bigramParams returns the bigram weights of θ (empty without).
func (md *paramSpace) bigramParams(theta []float64) []float64 { return theta[md.bigOff:md.nParams] }

// transScore returns the weight of the bigram i→j under θ.
func (md *paramSpace) transScore(theta []float64, i, j int32) float64 {
	if md.tied {
		k := md.excIndex[int(i)*md.m+int(j)]
		if k < 0 {
			return theta[md.nState+len(md.excs)]
		}
		return theta[md.nState+int(k)]
	}
	return theta[md.nState+int(i)*md.m+int(j)]
}

// transIndex returns the parameter index of the bigram i→j.
func (md *paramSpace) transIndex(i, j int32) int {
	if md.tied {
		k := md.excIndex[int(i)*md.m+int(j)]
		if k < 0 {
			return md.nState + len(md.excs)
		}
		return md.nState + int(k)
	}
	return md.nState + int(i)*md.m + int(j)
}

// transitions builds the engine's Transitions for θ (exc: a buffer of
// len(md.excs) exceptions).
func (md *paramSpace) transitions(theta []float64, exc []engine.Exception) (*engine.Transitions, error) {
	md.setSubTrans(theta)
	return md.transitionsFrom(md.transParams(theta), exc)
}

// newParamSpace decides the layout and the parameters for the training data.
func newParamSpace(d *Data, cfg *Config) (*paramSpace, error) {
	m := d.Labels
	c := d.Corpus
	pat, err := sparse.BuildPattern(c, d.NumAttrs, m, cfg.PossibleStates)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if cfg.MinFreq > 0 && !cfg.PossibleStates {
		if pat, err = prunePattern(c, d, pat, cfg.MinFreq); err != nil {
			return nil, err
		}
	}
	counts := c.AttrCounts(d.NumAttrs)
	md := &paramSpace{m: m, pattern: pat}
	md.layout = sparse.ChooseLayout(pat, counts, sparse.DefaultDenseBudget)
	if md.layout == sparse.DenseRows && !cfg.PossibleStates && 4*int64(pat.NumPairs()) < int64(d.NumAttrs)*int64(m) {
		// Mostly zeros as dense rows (CoNLL-2000: 7.4 M entries for 457 k
		// weights, 59 MB to allocate, fill and compact again on saving);
		// a model.Tagger scores the wide sparse rows densely anyway.
		md.layout = sparse.SparseRows
	}
	// The online algorithms update sparse rows only (see online.go).
	md.hy = newHybrid(pat, c, d.NumAttrs, m, cfg.Algorithm == "sgd" || cfg.Algorithm == "ap")
	md.nState = md.hy.numParams()
	if !cfg.PossibleStates && md.hy.nHot > 0 {
		nh := md.hy.hotSize()
		md.stateMask = make([]uint64, (nh+63)/64)
		var lab []int32
		for a := range int32(d.NumAttrs) {
			r := md.hy.hot.Row(a)
			if r < 0 {
				continue
			}
			lab = pat.AttrLabels(lab[:0], a)
			for _, y := range lab {
				k := int(r)*md.hy.ld + int(y)
				md.stateMask[k/64] |= 1 << (k % 64)
			}
		}
	}

	// Label bigrams seen in training (with their frequencies).
	freq := make([]float64, m*m)
	for i := range c.Len() {
		s := c.Seq(i)
		for t := 1; t < len(s.Labels); t++ {
			freq[int(s.Labels[t-1])*m+int(s.Labels[t])]++
		}
	}
	minf := max(cfg.MinFreq, 1)
	noTrans := cfg.Transitions == "none"
	md.tied = TiedTransitions(cfg.Transitions, m)
	if d.Bigram != nil && d.NumBigramAttrs > 0 {
		// The engine adds per-position deltas to a dense matrix.
		if cfg.Transitions == "tied" {
			return nil, fmt.Errorf("train: observation-dependent transitions (B template lines with %%x) need dense transitions, not tied")
		}
		md.tied = false
		if md.big, err = newBigrams(d, m, cfg.BigramPairs == BigramPairsAll, cfg.MinFreq); err != nil {
			return nil, err
		}
	}
	if md.tied {
		md.excIndex = make([]int32, m*m)
		for k, f := range freq {
			md.excIndex[k] = -1
			if f >= minf {
				md.excIndex[k] = int32(len(md.excs))
				md.excs = append(md.excs, engine.Exception{From: int32(k / m), To: int32(k % m)})
			}
		}
		md.nParams = md.nState + len(md.excs) + 1 + 2*m
		if !cfg.PossibleTransitions {
			// CRFsuite's sparse transitions: a bigram never seen in
			// training has no feature, so its score is 0. A trained
			// default is one parameter standing for every unseen bigram
			// under one parameter's L2 penalty; training drives it far
			// negative (the training data never has those bigrams), and
			// the model then all but forbids on test data what it never
			// saw: UD Czech CLTT lost 3.3 points of accuracy to the
			// dense model that way.
			md.fixedTrans = append(md.fixedTrans, int32(md.nState+len(md.excs)))
		}
	} else {
		md.nParams = md.nState + m*m + 2*m
		if noTrans {
			// Without observation-dependent transitions the positions
			// are independent; with them, the shared matrix is held at 0
			// (a template with B lines with %x only).
			md.noTrans = md.big == nil
			for k := md.nState; k < md.nParams; k++ {
				md.fixedTrans = append(md.fixedTrans, int32(k))
			}
		} else if !cfg.PossibleTransitions {
			for k, f := range freq {
				if f < minf {
					md.fixedTrans = append(md.fixedTrans, int32(md.nState+k))
				}
			}
		}
	}
	md.bigOff = md.nParams
	if md.big != nil {
		md.big.off = md.bigOff
		md.nParams += md.big.n
	}
	if cfg.Order == 2 {
		if md.big != nil {
			return nil, fmt.Errorf("train: order=2 does not support observation-dependent transitions (B template lines with %%x)")
		}
		if md.tri, err = seenTrigrams(c, m, minf); err != nil {
			return nil, err
		}
	}
	return md, nil
}

// seenTrigrams returns the label triples seen at least minf times in c, in
// increasing order of (h, i, j), with zero scores.
func seenTrigrams(c *sparse.Corpus, m int, minf float64) (*engine.Trigrams, error) {
	count := map[[3]int32]float64{}
	for i := range c.Len() {
		y := c.Seq(i).Labels
		for t := 2; t < len(y); t++ {
			count[[3]int32{y[t-2], y[t-1], y[t]}]++
		}
	}
	var tri [][3]int32
	for x, n := range count {
		if n >= minf {
			tri = append(tri, x)
		}
	}
	slices.SortFunc(tri, func(a, b [3]int32) int { return slices.Compare(a[:], b[:]) })
	g, err := engine.NewTrigrams(m, tri, nil)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return g, nil
}

// prunePattern drops the pairs seen fewer than minFreq times (summing
// feature values, as CRFsuite counts feature frequencies).
func prunePattern(c *sparse.Corpus, d *Data, pat *sparse.Pattern, minFreq float64) (*sparse.Pattern, error) {
	freq := make([]float64, pat.NumPairs())
	for i := range c.Len() {
		s := c.Seq(i)
		for t, y := range s.Labels {
			for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
				if k := pat.Index(s.IDs[f], y); k >= 0 {
					freq[k] += s.Value(int(f))
				}
			}
		}
	}
	b, err := sparse.NewPatternBuilder(d.NumAttrs, d.Labels)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	var lab []int32
	for a := range int32(pat.NumAttrs()) {
		lab = pat.AttrLabels(lab[:0], a)
		for _, y := range lab {
			if freq[pat.Index(a, y)] >= minFreq {
				if err := b.Add(a, y); err != nil {
					return nil, fmt.Errorf("train: %w", err)
				}
			}
		}
	}
	p, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return p, nil
}
