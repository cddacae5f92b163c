package train

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// model is the parameterisation of a linear-chain CRF over a parameter
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
// θ[nParams:nTotal()] (W, then U with sub-label transitions).
type model struct {
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
}

// joinOpts returns the chain options of candidate labels c (the caller's
// own, from chainOpts: modified) and observation-dependent transitions d
// together; either may be nil.
func joinOpts(c, d *engine.ChainOptions) *engine.ChainOptions {
	if c == nil {
		return d
	}
	c.TransDelta = nil
	if d != nil {
		c.TransDelta = d.TransDelta
	}
	return c
}

// subTransOff returns the offset of U in θ.
func (md *model) subTransOff() int { return md.nParams + len(md.sub.IDs) }

// setSubTrans computes transD from θ's U.
func (md *model) setSubTrans(theta []float64) {
	if !md.subTrans {
		return
	}
	s, m := md.sub, md.m
	u := theta[md.subTransOff():md.nTotal()]
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
func (md *model) withSubTrans(tp []float64) []float64 {
	if !md.subTrans || len(tp) != md.bigOff-md.nState {
		return tp
	}
	md.transBuf = append(md.transBuf[:0], tp...)
	for k, d := range md.transD {
		md.transBuf[k] += d
	}
	return md.transBuf
}

// nTotal returns the length of θ: the parameters, then the sub-label
// weights.
func (md *model) nTotal() int {
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
func (md *model) transOff() int { return md.nState }

// startOff and endOff return the offsets of the start and end weights.
func (md *model) startOff() int { return md.bigOff - 2*md.m }
func (md *model) endOff() int   { return md.bigOff - md.m }

// transParams returns the transition, start and end parameters of θ.
func (md *model) transParams(theta []float64) []float64 { return theta[md.nState:md.bigOff] }

// bigramParams returns the bigram weights of θ (empty without).
func (md *model) bigramParams(theta []float64) []float64 { return theta[md.bigOff:md.nParams] }

// transScore returns the weight of the bigram i→j under θ.
func (md *model) transScore(theta []float64, i, j int32) float64 {
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
func (md *model) transIndex(i, j int32) int {
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
func (md *model) transitions(theta []float64, exc []engine.Exception) (*engine.Transitions, error) {
	md.setSubTrans(theta)
	return md.transitionsFrom(md.transParams(theta), exc)
}

// newModel decides the layout and the parameters for the training data.
func newModel(d *Data, cfg *Config) (*model, error) {
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
	md := &model{m: m, pattern: pat}
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
		nh := md.hy.nHot * m
		md.stateMask = make([]uint64, (nh+63)/64)
		var lab []int32
		for a := range int32(d.NumAttrs) {
			r := md.hy.hotRow[a]
			if r < 0 {
				continue
			}
			lab = pat.AttrLabels(lab[:0], a)
			for _, y := range lab {
				k := int(r)*m + int(y)
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
	switch cfg.Transitions {
	case "tied":
		md.tied = true
	case "dense", "none":
	default:
		md.tied = m >= TiedLabels
	}
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
	return md, nil
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

// objective evaluates f(θ) = Σ_i w_i·(−log p(y_i | x_i)) + C2·‖θ‖² and its
// gradient on a Pool. Each worker adds the sequences of its contiguous
// block into its own gradient buffers (for the hot rows, worker 0 straight
// into the output), and the buffers are added in worker order, so a fixed
// thread count gives bit-identical results.
type objective struct {
	md      *model
	d       *Data
	c2      float64
	pool    *engine.Pool
	workers []workerBuf
	excBuf  []engine.Exception
	tr      *engine.Transitions // of the last evaluation
	sc      *splitCorpus
	// weighted is true when some instance weight is not 1.
	weighted bool
	pt       *phaseTimer // Config.Stats: per-phase clocks (nil: none)
	f32      *state32    // Config.Precision float32 (nil: float64)
	lock     *lockstep   // dense transitions at large M in float64, else nil
	prefetch bool        // prefetch the next sequence's rows (M ≤ prefetchMaxM)
}

type workerBuf struct {
	g []float64 // hot state gradient (worker 0: the output's)
	// cw holds cold weight j at cw[2j] and its gradient at cw[2j+1]: a
	// rare attribute's weight and gradient then share a cache line, and a
	// cold feature costs one miss instead of two.
	cw   []float64
	tg   []float64 // transition gradient, in θ order from transOff
	tmp  []float64 // weighted: one sequence's expected transition counts
	emit []float64
	marg []float64
	ps   postScratch
	co   engine.ChainOptions
	sg   []float64 // sub-label gradient
	sbuf []float64 // sub-label scratch
	bb   bigramBuf
	pb   engine.PruneBuf // Config.PruneMax: the pruned sets
	pc   *phaseClock     // nil without Config.Stats
	loss float64
	_    [64]byte // keep workers' hot fields on separate lines
}

func newObjective(md *model, d *Data, c2 float64, pool *engine.Pool) *objective {
	o := &objective{md: md, d: d, c2: c2, pool: pool, sc: md.hy.split(d.Corpus), prefetch: md.m <= prefetchMaxM}
	for _, w := range d.Weights {
		if w != 1 {
			o.weighted = true
		}
	}
	nt := md.nParams - md.nState
	maxLen := d.Corpus.MaxLen()
	o.workers = make([]workerBuf, pool.Threads())
	for w := range o.workers {
		wb := &o.workers[w]
		if w > 0 {
			wb.g = sparse.MakeParams(md.hy.nHot * md.m)
		}
		wb.cw = sparse.MakeParams(2 * (md.nState - md.hy.nHot*md.m))
		wb.tg = make([]float64, nt)
		wb.tmp = make([]float64, nt)
		wb.emit = make([]float64, maxLen*md.m)
		wb.marg = make([]float64, maxLen*md.m)
		wb.ps = md.newPostScratch(maxLen)
		if md.sub != nil {
			wb.sg = make([]float64, len(md.sub.IDs))
			wb.sbuf = make([]float64, maxLen*md.sub.NSub)
		}
		wb.bb = md.big.newBuf(maxLen)
	}
	o.excBuf = make([]engine.Exception, len(md.excs))
	o.lock = o.newLockstep(md.m >= engine.LockstepLabels)
	return o
}

// postScratch is posteriors' scratch space for a model without transition
// weights (else empty): row maxima and minima, and M zeros.
type postScratch struct {
	mx, lo, zeros []float64
	mark          []int32
}

func (md *model) newPostScratch(maxLen int) postScratch {
	if !md.noTrans {
		return postScratch{}
	}
	return postScratch{mx: make([]float64, maxLen), lo: make([]float64, maxLen), zeros: make([]float64, md.m), mark: make([]int32, md.m)}
}

// posteriors sets marg (T×M) to a sequence's label marginals given its
// emissions and tr (under opts, if not nil: candidate labels, and
// observation-dependent transitions, whose edge marginals ((T−1)×M²) then
// go to edges), adds its expected transition, start and end counts to acc
// (θ order from transOff, up to bigOff), and returns log Z. Without
// transition weights the positions are independent
// (independentPosteriors): acc is left alone, and tr is not used.
func (md *model) posteriors(tr *engine.Transitions, ws *engine.Workspace, emit, marg, acc []float64, ps *postScratch, T int, opts *engine.ChainOptions, edges []float64) (float64, error) {
	m := md.m
	if md.noTrans { // (then there are no observation-dependent transitions)
		if opts != nil {
			maskAllowed(emit[:T*m], opts.Allowed, m, ps.mark)
		}
		return independentPosteriors(marg, emit, ps.mx[:T], ps.lo[:T], ps.zeros, T, m), nil
	}
	acc = acc[:md.bigOff-md.nState]
	nt := len(acc)
	p := engine.Posteriors{Marginals: marg, Start: acc[nt-2*m : nt-m], End: acc[nt-m:]}
	if opts != nil && opts.TransDelta != nil {
		p.Edges = edges[:(T-1)*m*m]
	}
	if md.tied {
		p.Tied = acc[:len(md.excs)+1]
	} else {
		p.Transitions = acc[:m*m]
	}
	return tr.Posteriors(ws, emit, opts, &p)
}

// independentPosteriors sets marg (T×M) to the label marginals of a CRF
// with no transition weights, whose positions are independent: the softmax
// of each row of emit. It returns log Z = Σ_t log Σ_j exp(emit[t][j]). This
// is O(T·M), where the forward–backward over zero transitions is O(T·M²).
// mx and lo are scratch of T entries, zeros M zeros.
func independentPosteriors(marg, emit, mx, lo, zeros []float64, T, m int) float64 {
	kernels.ShiftRows(marg, mx, lo, emit, zeros, T, m)
	kernels.Exp(marg[:T*m], marg[:T*m])
	logZ := 0.0
	for t := range T {
		row := marg[t*m : (t+1)*m]
		sum := 0.0
		for _, v := range row {
			sum += v
		}
		kernels.Scale(1/sum, row)
		logZ += mx[t] + math.Log(sum)
	}
	return logZ
}

// eval sets g to the gradient of f at theta and returns f. It returns
// errInterrupted soon after stop is set.
func (o *objective) eval(theta, g []float64, stop *atomic.Bool) (float64, error) {
	md := o.md
	// One Transitions, its scores refreshed in place after the first
	// evaluation (at M = 1,208 a new one allocated tens of MB each time).
	var err error
	if o.tr == nil {
		o.tr, err = md.transitions(theta, o.excBuf)
	} else {
		md.setSubTrans(theta)
		err = md.setTransitions(o.tr, md.transParams(theta))
	}
	if err != nil { // (SetScores and SetTied leave o.tr as it was)
		return 0, fmt.Errorf("train: transition weights: %w", err)
	}
	tr := o.tr
	if md.sub != nil {
		md.sub.W = theta[md.nParams : md.nParams+len(md.sub.IDs)]
	}
	nh := md.hy.nHot * md.m
	gs := g[:nh]
	clear(gs)
	coldTheta := theta[nh:md.nState]
	for w := range o.workers {
		wb := &o.workers[w]
		wb.loss = 0
		clear(wb.tg)
		if w == 0 {
			wb.g = gs
		}
	}
	if o.f32 != nil {
		o.f32.prepare(o, theta)
	} else {
		_ = o.pool.Run(len(o.workers), func(_ *engine.Workspace, _, w int) error {
			cw := o.workers[w].cw
			cw = cw[:2*len(coldTheta)]
			for j, v := range coldTheta {
				cw[2*j], cw[2*j+1] = v, 0
			}
			return nil
		})
	}
	var t0 time.Time
	if o.pt != nil {
		t0 = time.Now()
	}
	if o.f32 != nil {
		err = o.f32.run(o, tr, theta, stop)
	} else {
		n := len(o.sc.labels)
		if o.lock != nil { // dense at large M: lockstep groups (lockstep.go)
			n = len(o.lock.units)
		}
		err = o.pool.Run(n, func(ws *engine.Workspace, w, i int) error {
			if stop != nil && stop.Load() {
				return errInterrupted
			}
			if o.lock != nil {
				return o.unit(ws, w, tr, theta, i)
			}
			return o.seq(ws, &o.workers[w], tr, theta, i)
		})
	}
	if o.pt != nil {
		o.pt.seqRun += time.Since(t0)
	}
	if err != nil {
		return 0, err
	}
	// Reduce in worker order; add the L2 term; hold fixed parameters.
	f := 0.0
	for w := range o.workers {
		f += o.workers[w].loss
	}
	nt := md.nParams - md.nState
	gt := g[md.nState:]
	copy(gt, o.workers[0].tg)
	for w := 1; w < len(o.workers); w++ {
		tg := o.workers[w].tg
		for k := range nt {
			gt[k] += tg[k]
		}
	}
	if md.subTrans { // U's gradient: E−O of every bigram, by its parts
		s, m := md.sub, md.m
		gu := g[md.subTransOff():md.nTotal()]
		clear(gu)
		for i := range m {
			pi := s.Of[i*s.N : (i+1)*s.N]
			for j, v := range gt[i*m : (i+1)*m] {
				if v == 0 {
					continue
				}
				pj := s.Of[j*s.N : (j+1)*s.N]
				for k, a := range pi {
					if b := pj[k]; a >= 0 && b >= 0 {
						gu[int(a)*s.NSub+int(b)] += v
					}
				}
			}
		}
	}
	if o.f32 != nil {
		f += o.f32.reduceStates(o, theta, g)
	} else {
		f += o.reduceStates(theta, g)
	}
	c22 := 2 * o.c2
	for k := md.nState; k < md.nParams; k++ {
		if o.c2 > 0 {
			f += o.c2 * theta[k] * theta[k]
			g[k] += c22 * theta[k]
		}
	}
	for _, k := range md.fixedTrans {
		g[k] = 0
	}
	if md.sub != nil {
		nw := md.nParams + len(md.sub.IDs)
		gsub, tsub := g[md.nParams:nw], theta[md.nParams:nw]
		if md.subTrans {
			gu, tu := g[nw:md.nTotal()], theta[nw:md.nTotal()]
			if o.c2 > 0 {
				f += o.c2 * kernels.Dot(tu, tu)
				kernels.Axpy(c22, tu, gu)
			}
		}
		copy(gsub, o.workers[0].sg)
		clear(o.workers[0].sg)
		for w := 1; w < len(o.workers); w++ {
			for k, v := range o.workers[w].sg {
				gsub[k] += v
			}
			clear(o.workers[w].sg)
		}
		if o.c2 > 0 {
			f += o.c2 * kernels.Dot(tsub, tsub)
			kernels.Axpy(c22, tsub, gsub)
		}
	}
	return f, nil
}

// reduceStates adds the other workers' state gradients and the L2
// gradient to g[0:nState], zeroing the workers' buffers for the next
// evaluation, in parallel over blocks; it returns C2·‖θ_state‖². The
// blocks are fixed by the thread count, so the sum is deterministic.
func (o *objective) reduceStates(theta, g []float64) float64 {
	W := len(o.workers)
	return o.reduceBlocks(theta, g, func(lo, hi, nh int, gb []float64) {
		if lo < nh { // hot rows: worker 0's are g itself
			h := min(hi, nh)
			for w := 1; w < W; w++ {
				gw := o.workers[w].g[lo:h]
				for k, v := range gw {
					gb[k] += v
				}
				clear(gw)
			}
		}
		for k := max(lo, nh); k < hi; k++ { // cold weights
			j := 2*(k-nh) + 1
			v := o.workers[0].cw[j]
			for w := 1; w < W; w++ {
				v += o.workers[w].cw[j]
			}
			g[k] = v
		}
	})
}

// reduceBlocks runs sum over blocks of the state weights in parallel, sum
// setting g[lo:hi] (gb) to the workers' gradient (nh: the hot entries'
// end), then holds the untrainable entries at 0 and adds the L2 term; it
// returns C2·‖θ_state‖². Shared by the float64 and float32 evaluations.
func (o *objective) reduceBlocks(theta, g []float64, sum func(lo, hi, nh int, gb []float64)) float64 {
	md := o.md
	n := md.nState
	nh := md.hy.nHot * md.m
	const block = 1 << 14
	nb := (n + block - 1) / block
	parts := make([]float64, nb)
	c2, c22 := o.c2, 2*o.c2
	_ = o.pool.Run(nb, func(_ *engine.Workspace, _, b int) error {
		lo, hi := b*block, min((b+1)*block, n)
		gb := g[lo:hi]
		sum(lo, hi, nh, gb)
		if md.stateMask != nil {
			for k := lo; k < min(hi, nh); k++ {
				if md.stateMask[k/64]&(1<<(k%64)) == 0 {
					g[k] = 0
				}
			}
		}
		if c2 > 0 {
			x := theta[lo:hi]
			parts[b] = c2 * kernels.Dot(x, x)
			kernels.Axpy(c22, x, gb)
		}
		return nil
	})
	f := 0.0
	for _, p := range parts {
		f += p
	}
	return f
}

// prefetchLevel has a bit for each prefetch of prefetchAll (0: none); a
// variable for the A/B of TestPrefetchChunking and TestPrefetchEWT.
var prefetchLevel = 7

// prefetchMaxM is the largest M at which the evaluation prefetches
// (objective.prefetch). CPU per evaluation, levels 7 against 0, in turns:
// CoNLL-2000 (M = 22) ×0.79–0.90; EWT XPOS (M = 49) ×0.98–1.08, no gain.
// (A guess, not measured: at M = 49 forward–backward's own working set,
// the M×M factors alone 19 KB, fills most of L1, which the prefetched
// lines then compete for.)
const prefetchMaxM = 32

// seq adds one sequence's weighted NLL and gradient into wb.
func (o *objective) seq(ws *engine.Workspace, wb *workerBuf, tr *engine.Transitions, theta []float64, i int) error {
	md := o.md
	m := md.m
	y, c := o.sc.labels[i], o.d.weight(i)
	T := len(y)
	if T == 0 || c == 0 {
		return nil
	}
	emit := wb.emit[:T*m]
	marg := wb.marg[:T*m]
	wb.pc.start()
	o.scoreSeq(wb, theta, i, emit)
	// The rows the next sequence scores and the hot gradient rows this
	// one scatters into are fetched while forward–backward computes.
	if o.prefetch {
		prefetchAll(md.hy, theta[:md.hy.nHot*md.m], wb.cw, wb.g, o.sc, i)
	}
	wb.pc.mark(phaseScore)
	acc := wb.tg
	if o.weighted {
		acc = wb.tmp
		clear(acc)
	}
	var bs sparse.Seq
	var bo *engine.ChainOptions // observation-dependent transitions
	if md.big != nil {
		bs = o.d.Bigram.Seq(i)
		bo = wb.bb.options(md.big, md.bigramParams(theta), 1, bs)
	}
	opts := joinOpts(chainOpts(&wb.co, md.allowed, i), bo)
	if md.prune != nil {
		opts = md.prune.apply(&wb.pb, &wb.co, opts, emit, y, m)
	}
	nt := md.bigOff - md.nState
	logZ, err := md.posteriors(tr, ws, emit, marg, acc, &wb.ps, T, opts, wb.bb.edges)
	if err != nil {
		return fmt.Errorf("train: sequence %d: %w", i, err)
	}
	if o.weighted {
		for k, v := range acc[:nt] {
			wb.tg[k] += c * v
		}
	}
	return o.finishSeq(wb, theta, i, emit, marg, logZ, bs, bo)
}

// scoreSeq sets emit (T×M) to sequence i's emission scores under θ.
func (o *objective) scoreSeq(wb *workerBuf, theta []float64, i int, emit []float64) {
	md := o.md
	nh := md.hy.nHot * md.m
	md.hy.scoreWith(theta[:nh], wb.cw, 2, emit, o.sc, i)
	if md.sub != nil {
		md.sub.AddScores(emit, o.d.Corpus.Seq(i), wb.sbuf)
	}
}

// finishSeq adds what sequence i adds besides its expected transition
// counts, given its emissions, marginals (turned into the emission
// gradient here) and log Z: the observed counts, its NLL and the state
// gradient.
func (o *objective) finishSeq(wb *workerBuf, theta []float64, i int, emit, marg []float64, logZ float64, bs sparse.Seq, bo *engine.ChainOptions) error {
	md := o.md
	y, c := o.sc.labels[i], o.d.weight(i)
	var delta float64 // the path's observation-dependent transition scores
	if bo != nil {
		gb := wb.tg[md.bigOff-md.nState:]
		md.big.addEdges(gb, bs, wb.bb.edges, c)
		md.big.addPath(gb, bs, y, -c)
		delta = pathDelta(bo.TransDelta, y, md.m)
	}
	if err := addNLL(wb, md, theta, emit, marg, y, c, logZ, delta, i); err != nil {
		return err
	}
	wb.pc.mark(phaseFB)
	md.hy.addGradientWith(wb.g, wb.cw[min(1, len(wb.cw)):], 2, marg, o.sc, i, c)
	if md.sub != nil {
		md.sub.AddGradient(wb.sg, o.d.Corpus.Seq(i), marg, c, wb.sbuf)
	}
	wb.pc.mark(phaseScatter)
	return nil
}

// addNLL adds sequence i's observed counts (−c at its gold transition,
// start and end entries of wb.tg, −1 at its gold emissions in marg, which
// then holds the emission gradient) and its weighted NLL, logZ − the gold
// path's score (delta: its observation-dependent part), to wb; for the
// float64 and the float32 evaluations alike.
func addNLL[E float32 | float64](wb *workerBuf, md *model, theta []float64, emit, marg []E, y []int32, c, logZ, delta float64, i int) error {
	m, T := md.m, len(y)
	nt, off := md.bigOff-md.nState, md.nState
	tg := wb.tg
	score := theta[md.startOff()+int(y[0])] + theta[md.endOff()+int(y[T-1])] + delta
	tg[nt-2*m+int(y[0])] -= c
	tg[nt-m+int(y[T-1])] -= c
	for t := range T {
		k := t*m + int(y[t])
		score += float64(emit[k])
		marg[k]--
		if t > 0 {
			ti := md.transIndex(y[t-1], y[t])
			score += theta[ti]
			if md.transD != nil {
				score += md.transD[int(y[t-1])*m+int(y[t])]
			}
			tg[ti-off] -= c
		}
	}
	nll := logZ - score
	if math.IsNaN(nll) || math.IsInf(nll, 0) {
		return fmt.Errorf("train: sequence %d: log-likelihood is %v (weights diverged)", i, -nll)
	}
	wb.loss += c * nll
	return nil
}
