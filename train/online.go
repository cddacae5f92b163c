package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// The online algorithms update the weights one sequence at a time, on one
// goroutine (their updates are sequential by nature; CRFsuite's are too).
// They keep every state weight in sparse rows (the hybrid with no hot
// rows), so that an update touches only the pattern's pairs.

// onlineState holds what the epochs of sgd and ap share: the per-sequence
// buffers, and the one Transitions whose scores follow the weights
// (setTransitions refreshes it in place), so that a sequence allocates
// nothing.
type onlineState struct {
	sc     *splitCorpus
	fixed  []bool // fixedMask
	ws     *engine.Workspace
	tr     *engine.Transitions
	emit   []float64
	marg   []float64
	path   []int32
	tg     []float64
	scaled []float64 // sgd: the transition weights a·v
	ps     postScratch
	co     engine.ChainOptions
	bb     bigramBuf
	order  []int
	rng    *rand.Rand
}

func (t *trainer) newOnline() (*onlineState, error) {
	md := t.md
	n := t.d.Corpus.MaxLen()
	nt := md.bigOff - md.nState
	st := &onlineState{
		sc:     md.hy.split(t.d.Corpus),
		fixed:  md.fixedMask(),
		ws:     engine.NewWorkspace(),
		emit:   make([]float64, n*md.m),
		marg:   make([]float64, n*md.m),
		path:   make([]int32, n),
		tg:     make([]float64, nt),
		scaled: make([]float64, nt),
		ps:     md.newPostScratch(n),
		bb:     md.big.newBuf(n),
		order:  make([]int, t.d.Corpus.Len()),
		rng:    rand.New(rand.NewPCG(uint64(t.cfg.Seed), 0x5eed)),
	}
	for i := range st.order {
		st.order[i] = i
	}
	var err error
	st.tr, err = md.transitionsFrom(st.scaled, make([]engine.Exception, len(md.excs)))
	return st, err
}

// shuffle draws a new order of the sequences.
func (st *onlineState) shuffle() {
	st.rng.Shuffle(len(st.order), func(i, j int) { st.order[i], st.order[j] = st.order[j], st.order[i] })
}

// addTrans adds c at the transition parameters of labelling y (start,
// bigrams, end), skipping the fixed ones.
func (md *paramSpace) addTrans(theta []float64, y []int32, c float64, fixed []bool) {
	T := len(y)
	if T == 0 {
		return
	}
	for _, k := range [2]int{md.startOff() + int(y[0]), md.endOff() + int(y[T-1])} {
		if fixed == nil || !fixed[k-md.nState] {
			theta[k] += c
		}
	}
	for t := 1; t < T; t++ {
		k := md.transIndex(y[t-1], y[t])
		if fixed == nil || !fixed[k-md.nState] {
			theta[k] += c
		}
	}
}

func (md *paramSpace) fixedMask() []bool {
	f := make([]bool, md.nParams-md.nState)
	for _, k := range md.fixedTrans {
		f[int(k)-md.nState] = true
	}
	return f
}

// perceptron is the averaged perceptron (Collins 2002) as CRFsuite's ap:
// for each sequence in a shuffled order, the Viterbi labelling under the
// current weights; on a mistake w += φ(gold) − φ(predicted) (times the
// instance weight). The result is the average of the weights after every
// sequence (kept as w − ws/u, ws accumulating u·Δ). Training stops after
// MaxIterations epochs or when the share of mistaken positions falls to
// Epsilon.
func (t *trainer) perceptron(theta []float64) (qnResult, error) {
	md, d, cfg := t.md, t.d, t.cfg
	st, err := t.newOnline()
	if err != nil {
		return qnResult{}, err
	}
	ws := make([]float64, md.nParams)
	avg := make([]float64, md.nParams)
	u := 1.0
	res := qnResult{}
	maxIter := cfg.MaxIterations
	if maxIter == 0 {
		maxIter = 100
	}
	tokens := float64(max(d.Corpus.Tokens(), 1))
	for epoch := 1; epoch <= maxIter; epoch++ {
		start := time.Now()
		st.shuffle()
		var mistakes float64
		mistakes, u, err = t.apEpoch(theta, ws, u, st)
		if err == errInterrupted {
			copy(theta, avg)
			res.interrupted, res.reason = true, "interrupted"
			return res, nil
		}
		if err != nil {
			return res, err
		}
		for k := range avg {
			avg[k] = theta[k] - ws[k]/u
		}
		res.iters, res.fx = epoch, mistakes
		rate := mistakes / tokens
		if cfg.Progress != nil {
			p := Progress{Iteration: epoch, Loss: mistakes, Active: active(avg), Holdout: -1}
			if cfg.Holdout != nil && epoch%max(cfg.HoldoutEvery, 1) == 0 {
				if acc, err := t.holdout(avg); err == nil {
					p.Holdout = acc
				}
			}
			p.Seconds = time.Since(start).Seconds()
			cfg.Progress(p)
		}
		if rate <= cfg.Epsilon {
			res.reason = "share of mistaken positions ≤ epsilon"
			copy(theta, avg)
			return res, nil
		}
	}
	copy(theta, avg)
	res.reason = "maximum number of iterations"
	return res, nil
}

// apEpoch runs one epoch of the perceptron over st.order, updating theta
// and ws (Σ u·Δ) in place; u counts the sequences seen, and is returned
// advanced past the epoch's. It returns the number of mistaken positions,
// or errInterrupted.
func (t *trainer) apEpoch(theta, ws []float64, u float64, st *onlineState) (float64, float64, error) {
	md, d, sc, fixed := t.md, t.d, st.sc, st.fixed
	if err := md.setTransitions(st.tr, md.transParams(theta)); err != nil {
		return 0, u, err
	}
	mistakes := 0.0
	for _, i := range st.order {
		if t.stopped() {
			return 0, u, errInterrupted
		}
		y, c := sc.labels[i], d.Weight(i)
		T := len(y)
		if T == 0 || c == 0 {
			u++
			continue
		}
		emit, path, delta := st.emit[:T*md.m], st.path[:T], st.marg[:T*md.m]
		md.hy.score(theta, emit, sc, i)
		var bs sparse.Seq
		var bo *engine.ChainOptions // observation-dependent transitions
		if md.big != nil {
			bs = d.Bigram.Seq(i)
			bo = st.bb.options(md.big, md.bigramParams(theta), 1, bs)
		}
		if _, err := st.tr.Viterbi(st.ws, emit, joinOpts(chainOpts(&st.co, md.allowed, i), bo), path); err != nil {
			return 0, u, err
		}
		diff := 0
		clear(delta)
		for k := range T {
			if path[k] != y[k] {
				diff++
				delta[k*md.m+int(y[k])] = 1
				delta[k*md.m+int(path[k])] = -1
			}
		}
		if diff > 0 {
			mistakes += float64(diff)
			md.hy.addGradient(theta, delta, sc, i, c)
			md.hy.addGradient(ws, delta, sc, i, c*u)
			md.addTrans(theta, y, c, fixed)
			md.addTrans(theta, path, -c, fixed)
			md.addTrans(ws, y, c*u, fixed)
			md.addTrans(ws, path, -c*u, fixed)
			if md.big != nil {
				bt, bw := md.bigramParams(theta), md.bigramParams(ws)
				md.big.addPath(bt, bs, y, c)
				md.big.addPath(bt, bs, path, -c)
				md.big.addPath(bw, bs, y, c*u)
				md.big.addPath(bw, bs, path, -c*u)
			}
			if err := md.setTransitions(st.tr, md.transParams(theta)); err != nil {
				return 0, u, err
			}
		}
		u++
	}
	return mistakes, u, nil
}

// sgd is CRFsuite's l2sgd: stochastic gradient descent on the L2
// objective f = Σ_i w_i·NLL_i + C2·‖θ‖², per sequence i on
// NLL_i + (λ/2)‖θ‖² with λ = 2·C2/N, step η_t = 1/(λ·(t0+t)) over the
// sequences t seen so far. t0 = 1/(λ·η₀) comes from calibration: initial
// rates η₀ from calibration.eta up (×rate) while the loss of one epoch on a
// sample improves on the initial loss, then down (÷rate), and the best is
// kept. The weights are stored scaled (θ = a·v) so that the decay is O(1)
// per sequence. Training stops after MaxIterations epochs or when the
// objective improved by less than Delta (relative) over Period epochs; the
// weights of the best epoch are returned.
func (t *trainer) sgd(theta []float64) (qnResult, error) {
	d, cfg := t.d, t.cfg
	st, err := t.newOnline()
	if err != nil {
		return qnResult{}, err
	}
	n := d.Corpus.Len()
	lambda := 2 * cfg.C2 / float64(max(n, 1))
	res := qnResult{}
	if n == 0 {
		res.reason = "no data"
		return res, nil
	}

	// Calibration on a sample (the first samples of a shuffled order).
	st.shuffle()
	ns := min(max(cfg.CalibrationSamples, 1), n)
	sample := append([]int(nil), st.order[:ns]...)
	// As CRFsuite, the sample's epochs use the λ of the whole data.
	work := make([]float64, len(theta))
	initLoss, err := t.sgdEpoch(work, sample, st, lambda, 0, 0, true)
	if err != nil {
		return res, err
	}
	eta := cfg.CalibrationEta
	if eta <= 0 {
		eta = 0.1
	}
	rate := cfg.CalibrationRate
	if rate <= 1 {
		rate = 2
	}
	cands := max(cfg.CalibrationCandidates, 1)
	maxTrials := max(cfg.CalibrationMaxTrials, 1)
	bestEta, bestLoss := eta, math.Inf(1)
	num, dec := cands, false
	eta0 := eta
	for trial := 1; trial <= maxTrials && (num > 0 || !dec); trial++ {
		if t.stopped() {
			res.interrupted, res.reason = true, "interrupted"
			return res, nil
		}
		clear(work)
		loss, err := t.sgdEpoch(work, sample, st, lambda, 1/(lambda*eta), 0, false)
		ok := err == nil && !math.IsNaN(loss) && !math.IsInf(loss, 0) && loss < initLoss
		if ok {
			num--
			if loss < bestLoss {
				bestLoss, bestEta = loss, eta
			}
		}
		if !dec {
			if ok && num > 0 {
				eta *= rate
			} else {
				dec, num, eta = true, cands, eta0/rate
			}
		} else {
			eta /= rate
		}
	}
	t0 := 1 / (lambda * bestEta)

	// Training.
	maxIter := cfg.MaxIterations
	if maxIter == 0 {
		maxIter = 1000
	}
	period := max(cfg.Period, 1)
	pf := make([]float64, period)
	step := 0.0
	// As CRFsuite, the weights of the epoch with the lowest objective are
	// the result.
	best, bestF := make([]float64, len(theta)), math.Inf(1)
	defer func() { copy(theta, best) }()
	for epoch := 1; epoch <= maxIter; epoch++ {
		start := time.Now()
		st.shuffle()
		loss, err := t.sgdEpoch(theta, st.order, st, lambda, t0, step, false)
		if err == errInterrupted {
			res.interrupted, res.reason = true, "interrupted (the best epoch's weights are kept)"
			return res, nil
		}
		if err != nil {
			return res, err
		}
		step += float64(n)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			res.reason = "the loss overflowed (the step size is too large; try a smaller calibration.eta)"
			return res, nil
		}
		res.iters = epoch
		if loss < bestF {
			bestF = loss
			res.fx = loss
			copy(best, theta)
		}
		if cfg.Progress != nil {
			p := Progress{Iteration: epoch, Loss: loss, Active: active(theta), Holdout: -1, Step: 1 / (lambda * (t0 + step))}
			if cfg.Holdout != nil && epoch%max(cfg.HoldoutEvery, 1) == 0 {
				if acc, err := t.holdout(theta); err == nil {
					p.Holdout = acc
				}
			}
			p.Seconds = time.Since(start).Seconds()
			cfg.Progress(p)
		}
		if epoch > period {
			if imp := (pf[epoch%period] - loss) / loss; imp < cfg.Delta {
				res.reason = fmt.Sprintf("stopping criterion (improvement over %d iterations below delta)", period)
				return res, nil
			}
		}
		pf[epoch%period] = loss
	}
	res.reason = "maximum number of iterations"
	return res, nil
}

// sgdEpoch runs one pass of SGD over the sequences order and returns the
// objective Σ c_i·NLL_i + (λN/2)‖θ‖² accumulated along the way (with
// evalOnly, at theta unchanged). t0 and t give the step 1/(λ(t0+t)).
// theta is updated in place.
func (t *trainer) sgdEpoch(theta []float64, order []int, st *onlineState, lambda, t0, tt float64, evalOnly bool) (float64, error) {
	md, d, sc, fixed := t.md, t.d, st.sc, st.fixed
	m := md.m
	a := 1.0 // θ = a·v, v stored in theta
	loss := 0.0
	scaled := st.scaled
	for _, i := range order {
		if t.stopped() {
			kScale(theta, a)
			return 0, errInterrupted
		}
		y, c := sc.labels[i], d.Weight(i)
		T := len(y)
		if T == 0 || c == 0 {
			continue
		}
		eta := 0.0
		if !evalOnly {
			eta = 1 / (lambda * (t0 + tt))
			tt++
			a *= 1 - eta*lambda
			if a < 1e-9 || math.IsNaN(a) || a <= 0 {
				if !(a > 0) {
					return math.Inf(1), nil // the step diverged
				}
				kScale(theta, a)
				a = 1
			}
		}
		// Scores at θ = a·v.
		for k := range scaled {
			scaled[k] = a * theta[md.nState+k]
		}
		emit, marg := st.emit[:T*m], st.marg[:T*m]
		md.hy.score(theta, emit, sc, i)
		for k := range emit {
			emit[k] *= a
		}
		if !md.noTrans { // (else scaled is all zeros, and unused)
			if err := md.setTransitions(st.tr, scaled); err != nil {
				return 0, err
			}
		}
		clear(st.tg)
		var bs sparse.Seq
		var bo *engine.ChainOptions // observation-dependent transitions
		if md.big != nil {
			bs = d.Bigram.Seq(i)
			bo = st.bb.options(md.big, md.bigramParams(theta), a, bs)
		}
		opts := joinOpts(chainOpts(&st.co, md.allowed, i), bo)
		logZ, err := md.posteriors(st.tr, st.ws, emit, marg, st.tg, &st.ps, T, opts, st.bb.edges)
		if err != nil {
			return 0, err
		}
		score := scaled[len(scaled)-2*m+int(y[0])] + scaled[len(scaled)-m+int(y[T-1])]
		if bo != nil {
			score += pathDelta(bo.TransDelta, y, m)
		}
		st.tg[len(st.tg)-2*m+int(y[0])]--
		st.tg[len(st.tg)-m+int(y[T-1])]--
		for k := range T {
			j := k*m + int(y[k])
			score += emit[j]
			marg[j]--
			if k > 0 {
				ti := md.transIndex(y[k-1], y[k]) - md.nState
				score += scaled[ti]
				st.tg[ti]--
			}
		}
		nll := logZ - score
		if math.IsNaN(nll) || math.IsInf(nll, 0) {
			return math.Inf(1), nil
		}
		loss += c * nll
		if evalOnly {
			continue
		}
		// v −= (η·c/a)·∇NLL_i
		gain := -eta * c / a
		md.hy.addGradient(theta, marg, sc, i, gain)
		for k, v := range st.tg {
			if !fixed[k] {
				theta[md.nState+k] += gain * v
			}
		}
		if bo != nil {
			bt := md.bigramParams(theta)
			md.big.addEdges(bt, bs, st.bb.edges, gain)
			md.big.addPath(bt, bs, y, -gain)
		}
	}
	kScale(theta, a)
	norm := 0.0
	for _, v := range theta {
		norm += v * v
	}
	return loss + 0.5*lambda*float64(len(order))*norm, nil
}

func kScale(x []float64, a float64) {
	if a == 1 {
		return
	}
	for k := range x {
		x[k] *= a
	}
}

// setTransitions refreshes tr, made by transitionsFrom for md, to the
// transition parameters tp = θ[nState:bigOff] in place: tr is then bit for bit as
// transitionsFrom(tp) would make it, and nothing is allocated.
func (md *paramSpace) setTransitions(tr *engine.Transitions, tp []float64) error {
	tp = md.withSubTrans(tp)
	m := md.m
	nt := len(tp)
	start, end := tp[nt-2*m:nt-m], tp[nt-m:]
	if md.tied {
		ne := len(md.excs)
		return tr.SetTied(tp[ne], tp[:ne], start, end)
	}
	return tr.SetScores(tp[:m*m], start, end)
}

// transitionsFrom builds Transitions from the transition parameters alone
// (tp = θ[nState:bigOff]).
func (md *paramSpace) transitionsFrom(tp []float64, exc []engine.Exception) (*engine.Transitions, error) {
	tp = md.withSubTrans(tp)
	m := md.m
	nt := len(tp)
	start, end := tp[nt-2*m:nt-m], tp[nt-m:]
	if md.tied {
		exc = exc[:len(md.excs)]
		for k, e := range md.excs {
			exc[k] = engine.Exception{From: e.From, To: e.To, Score: tp[k]}
		}
		return engine.NewTied(m, tp[len(md.excs)], exc, start, end)
	}
	return engine.NewTransitionsWith(m, tp[:m*m], start, end, engine.Options{Structure: engine.Dense})
}
