package engine

import (
	"fmt"
)

// batchTask is what a batch call asks of each chain. It lives in the Pool
// (one batch at a time, under Pool.mu), so a batch call builds no closure
// and allocates nothing.
type batchTask struct {
	op     int
	tr     *Transitions
	emits  [][]float64
	opts   []*ChainOptions
	out    []float64 // log Z or scores
	paths  [][]int32
	labels [][]int32
	dEmit  [][]float64
	nll    []nllAcc // per worker
}

const (
	opLogZ = iota
	opViterbi
	opNLL
)

// nllAcc is one worker's NLLBatch sum and gradient, on its own cache lines.
type nllAcc struct {
	nll                  float64
	dTrans, dStart, dEnd []float64
	g                    Gradient // the gradient the worker passes to NLL
	_                    [64]byte
}

func (t *batchTask) do(ws *Workspace, w, i int) error {
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
	}
	return chainErr(i, err)
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
// is free (Pool.RunBalanced): the results do not depend on it.
func (tr *Transitions) LogZBatch(pool *Pool, emits [][]float64, opts []*ChainOptions, out []float64) error {
	if len(out) != len(emits) || (opts != nil && len(opts) != len(emits)) {
		return fmt.Errorf("engine: LogZBatch: %d chains, %d outputs, %d options", len(emits), len(out), len(opts))
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.task = batchTask{op: opLogZ, tr: tr, emits: emits, opts: opts, out: out, nll: pool.task.nll}
	return pool.runTask(len(emits), true)
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
// accumulators live in the pool: steady-state calls allocate nothing.
func (tr *Transitions) NLLBatch(pool *Pool, emits [][]float64, labels [][]int32, opts []*ChainOptions, dEmit [][]float64, g *Gradient) (float64, error) {
	n := len(emits)
	if len(labels) != n || (dEmit != nil && len(dEmit) != n) || (opts != nil && len(opts) != n) {
		return 0, fmt.Errorf("engine: NLLBatch: %d chains, %d label sequences, %d gradients, %d options", n, len(labels), len(dEmit), len(opts))
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
	pool.task = batchTask{op: opNLL, tr: tr, emits: emits, labels: labels, opts: opts, dEmit: dEmit, nll: accs}
	if err := pool.runTask(n, false); err != nil {
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
