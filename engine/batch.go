package engine

import (
	"fmt"

	"github.com/simdcrf/simdcrf/internal/lockplan"
)

// batchTask is what a batch call asks of each chain. It lives in the Pool
// (one batch at a time, under Pool.mu), so a batch call builds no closure
// and allocates nothing.
type batchTask struct {
	op     int
	tr     *Transitions
	emits  [][]float64
	opts   []*ChainOptions
	out    []float64 // log Z, scores, or NLLBatchEach's per-chain values
	paths  [][]int32
	labels [][]int32
	dEmit  [][]float64
	marg   [][]float64
	nll    []nllAcc // per worker
	// plan, when not nil, is what the indices of a run stand for: its
	// units, lockstep groups and chains alone.
	plan *lockplan.Plan
}

const (
	opLogZ = iota
	opViterbi
	opNLL
	opMarg
)

// nllAcc is one worker's NLLBatch sum and gradient, on its own cache lines.
type nllAcc struct {
	nll                  float64
	dTrans, dStart, dEnd []float64
	g                    Gradient // the gradient the worker passes to NLL
	_                    [64]byte
}

func (t *batchTask) do(ws *Workspace, w, i int) error {
	if t.plan != nil {
		u := t.plan.Unit(i)
		if len(u) > 1 {
			return t.doGroup(ws, w, u)
		}
		i = int(u[0])
	}
	var err error
	switch t.op {
	case opLogZ:
		t.out[i], err = t.tr.LogZ(ws, t.emits[i], optAt(t.opts, i))
	case opViterbi:
		t.out[i], err = t.tr.Viterbi(ws, t.emits[i], optAt(t.opts, i), t.paths[i])
	case opNLL:
		a := &t.nll[w]
		a.g.DEmit = nil
		if t.dEmit != nil {
			a.g.DEmit = t.dEmit[i]
		}
		var v float64
		v, err = t.tr.NLL(ws, t.emits[i], t.labels[i], optAt(t.opts, i), &a.g)
		a.nll += v
		if t.out != nil && err == nil {
			t.out[i] = v
		}
	case opMarg:
		p := Posteriors{Marginals: t.marg[i]}
		t.out[i], err = t.tr.Posteriors(ws, t.emits[i], optAt(t.opts, i), &p)
	}
	return chainErr(i, err)
}

// doGroup runs a lockstep group of chains (no options, lengths ≥ 1).
func (t *batchTask) doGroup(ws *Workspace, w int, chains []int32) error {
	lb := &ws.lock
	K, M := len(chains), t.tr.m
	lb.emits = lb.emits[:0]
	for _, c := range chains {
		lb.emits = append(lb.emits, t.emits[c])
	}
	lb.z = grow(lb.z, K)
	o := lockOut{logZ: lb.z[:K]}
	switch t.op {
	case opMarg:
		lb.margs = lb.margs[:0]
		for _, c := range chains {
			lb.margs = append(lb.margs, t.marg[c])
			if len(t.marg[c]) != len(t.emits[c]) {
				return chainErr(int(c), fmt.Errorf("engine: Posteriors.Marginals has %d entries, want %d", len(t.marg[c]), len(t.emits[c])))
			}
		}
		o.marg = lb.margs
	case opNLL:
		a := &t.nll[w]
		o.trans, o.start, o.end = a.g.DTrans, a.g.DStart, a.g.DEnd
		wantEmit := false // some chain's emission gradient, so the backward pass
		for _, c := range chains {
			wantEmit = wantEmit || t.dEmit != nil && t.dEmit[c] != nil
		}
		if wantEmit {
			n := 0
			for _, c := range chains {
				n += len(t.emits[c])
			}
			lb.marg = grow(lb.marg, n)
			lb.margs, n = lb.margs[:0], 0
			for _, c := range chains {
				var mg []float64
				if t.dEmit[c] != nil {
					mg = lb.marg[n : n+len(t.emits[c])]
				}
				lb.margs = append(lb.margs, mg)
				n += len(t.emits[c])
			}
			o.marg = lb.margs
		}
		lb.score = lb.score[:0]
		for _, c := range chains { // NLL's checks, before anything is added
			score, err := t.tr.PathScore(t.emits[c], t.labels[c], nil)
			if err != nil {
				return chainErr(int(c), err)
			}
			lb.score = append(lb.score, score)
			if d := t.dEmit; d != nil && d[c] != nil && len(d[c]) != len(t.emits[c]) {
				return chainErr(int(c), fmt.Errorf("engine: Gradient.DEmit has %d entries, want %d", len(d[c]), len(t.emits[c])))
			}
		}
	}
	if k, err := t.tr.lockstep(ws, lb.emits, &o); err != nil {
		return chainErr(int(chains[k]), err)
	}
	switch t.op {
	case opLogZ, opMarg:
		for k, c := range chains {
			t.out[c] = o.logZ[k]
		}
	case opNLL:
		a := &t.nll[w]
		for k, c := range chains {
			v := o.logZ[k] - lb.score[k]
			a.nll += v
			if t.out != nil {
				t.out[c] = v
			}
			var d, mg []float64
			if o.marg != nil && o.marg[k] != nil {
				d, mg = t.dEmit[c], o.marg[k]
			}
			a.g.addNLL(d, mg, t.labels[c], M)
		}
	}
	return nil
}

// plan groups the chains of the task for the lockstep path when it pays
// (Dense, M ≥ lockstepMinLabels): chains without options, of length ≥ 1,
// in groups of at most lockplan.Chains and at most an equal share of each
// worker; then orders the units for a balanced run or, for Run's blocks,
// deals them (lockplan.Plan.Deal). Without lockstep t.plan stays nil.
func (p *Pool) plan(balanced bool) {
	t := &p.task
	n := len(t.emits)
	if !t.tr.lockstepPays() || n < 2 {
		return
	}
	M := t.tr.m
	length := func(i int) int {
		if optAt(t.opts, i) != nil {
			return -1
		}
		return len(t.emits[i]) / M
	}
	W := p.Threads()
	p.lp.Group(n, length, min(lockplan.Chains, (n+W-1)/W))
	if !balanced {
		p.lp.Deal(W, length)
	}
	t.plan = &p.lp
}

// runTask runs p.task over n chains (balanced: any worker, any order) and
// then drops its references to the caller's data; p.mu is held.
func (p *Pool) runTask(n int, balanced bool) error {
	err := p.run(n, balanced, nil, &p.task)
	p.task = batchTask{nll: p.task.nll}
	return err
}

// LogZBatch computes log Z of every chain on the pool's workers: out[i] for
// emits[i] (with opts[i] if opts is not nil). Chains go to whichever worker
// is free (Pool.RunBalanced): the results do not depend on it. With dense
// transitions at M ≥ LockstepLabels, chains without options run in
// lockstep groups of similar lengths (as MarginalsBatch).
func (tr *Transitions) LogZBatch(pool *Pool, emits [][]float64, opts []*ChainOptions, out []float64) error {
	if len(out) != len(emits) || (opts != nil && len(opts) != len(emits)) {
		return fmt.Errorf("engine: LogZBatch: %d chains, %d outputs, %d options", len(emits), len(out), len(opts))
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.task = batchTask{op: opLogZ, tr: tr, emits: emits, opts: opts, out: out, nll: pool.task.nll}
	pool.plan(true)
	return pool.runTask(pool.task.count(), true)
}

// MarginalsBatch computes the label marginals of every chain on the pool's
// workers: marg[i] (T_i×M) for emits[i] (with opts[i] if opts is not nil),
// and out[i] its log Z. Chains go to whichever worker is free. With dense
// transitions at M ≥ LockstepLabels, chains without options run in
// lockstep groups of similar lengths (posteriorsLockstep); the results
// equal Posteriors' up to rounding.
func (tr *Transitions) MarginalsBatch(pool *Pool, emits [][]float64, opts []*ChainOptions, marg [][]float64, out []float64) error {
	if len(out) != len(emits) || len(marg) != len(emits) || (opts != nil && len(opts) != len(emits)) {
		return fmt.Errorf("engine: MarginalsBatch: %d chains, %d marginals, %d outputs, %d options", len(emits), len(marg), len(out), len(opts))
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.task = batchTask{op: opMarg, tr: tr, emits: emits, opts: opts, marg: marg, out: out, nll: pool.task.nll}
	pool.plan(true)
	return pool.runTask(pool.task.count(), true)
}

// count returns the number of indices of the task's run: units or chains.
func (t *batchTask) count() int {
	if t.plan != nil {
		return t.plan.Len()
	}
	return len(t.emits)
}

// ViterbiBatch decodes every chain on the pool's workers into paths[i]
// (len T_i each) with scores[i]. Chains go to whichever worker is free.
func (tr *Transitions) ViterbiBatch(pool *Pool, emits [][]float64, opts []*ChainOptions, paths [][]int32, scores []float64) error {
	if len(paths) != len(emits) || len(scores) != len(emits) || (opts != nil && len(opts) != len(emits)) {
		return fmt.Errorf("engine: ViterbiBatch: %d chains, %d paths, %d scores, %d options", len(emits), len(paths), len(scores), len(opts))
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.task = batchTask{op: opViterbi, tr: tr, emits: emits, opts: opts, out: scores, paths: paths, nll: pool.task.nll}
	return pool.runTask(len(emits), true)
}

// NLLBatch returns the summed negative log-likelihood of labelled chains and
// adds its gradient: dEmit[i] (T_i×M, may be nil, or nil entries) gets chain
// i's emission gradient; g.DTrans, g.DStart and g.DEnd (each may be nil) get
// the sum over chains. g.DEmit is ignored. Each worker accumulates its block
// of chains (Pool.Run) and the blocks are added in order, so the result is
// the same on every run with the same number of threads. The per-worker
// accumulators live in the pool: steady-state calls allocate nothing. With
// dense transitions at M ≥ LockstepLabels, chains without options run in
// lockstep groups of similar lengths (as MarginalsBatch), dealt over the
// workers' blocks by cost.
func (tr *Transitions) NLLBatch(pool *Pool, emits [][]float64, labels [][]int32, opts []*ChainOptions, dEmit [][]float64, g *Gradient) (float64, error) {
	return tr.NLLBatchEach(pool, emits, labels, opts, dEmit, g, nil)
}

// NLLBatchEach is NLLBatch that also writes each chain's negative
// log-likelihood into each[i] (each may be nil; else len(emits) entries),
// for callers that report per-chain values (package layer).
func (tr *Transitions) NLLBatchEach(pool *Pool, emits [][]float64, labels [][]int32, opts []*ChainOptions, dEmit [][]float64, g *Gradient, each []float64) (float64, error) {
	n := len(emits)
	if len(labels) != n || (dEmit != nil && len(dEmit) != n) || (opts != nil && len(opts) != n) || (each != nil && len(each) != n) {
		return 0, fmt.Errorf("engine: NLLBatch: %d chains, %d label sequences, %d gradients, %d options, %d outputs", n, len(labels), len(dEmit), len(opts), len(each))
	}
	var none Gradient
	if g == nil {
		g = &none
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	M := tr.m
	accs := grow(pool.task.nll, pool.Threads())
	for w := range accs {
		a := &accs[w]
		a.nll = 0
		a.g = Gradient{}
		if g.DTrans != nil {
			a.dTrans = grow(a.dTrans, M*M)
			clear(a.dTrans)
			a.g.DTrans = a.dTrans
		}
		if g.DStart != nil {
			a.dStart = grow(a.dStart, M)
			clear(a.dStart)
			a.g.DStart = a.dStart
		}
		if g.DEnd != nil {
			a.dEnd = grow(a.dEnd, M)
			clear(a.dEnd)
			a.g.DEnd = a.dEnd
		}
	}
	pool.task = batchTask{op: opNLL, tr: tr, emits: emits, labels: labels, opts: opts, dEmit: dEmit, out: each, nll: accs}
	pool.plan(false)
	if err := pool.runTask(pool.task.count(), false); err != nil {
		return 0, err
	}
	total := 0.0
	for w := range accs {
		a := &accs[w]
		total += a.nll
		addTo(g.DTrans, a.g.DTrans)
		addTo(g.DStart, a.g.DStart)
		addTo(g.DEnd, a.g.DEnd)
		a.g = Gradient{}
	}
	return total, nil
}

func addTo(dst, src []float64) {
	for k, v := range src {
		dst[k] += v
	}
}

func optAt(opts []*ChainOptions, i int) *ChainOptions {
	if opts == nil {
		return nil
	}
	return opts[i]
}

// chainErr names the chain an error came from (ErrNoLabelling stays
// recognisable with errors.Is).
func chainErr(i int, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("chain %d: %w", i, err)
}
