package engine

import (
	"fmt"
)

// LogZBatch computes log Z of every chain on the pool's workers: out[i] for
// emits[i] (with opts[i] if opts is not nil).
func (tr *Transitions) LogZBatch(pool *Pool, emits [][]float64, opts []*ChainOptions, out []float64) error {
	if len(out) != len(emits) || (opts != nil && len(opts) != len(emits)) {
		return fmt.Errorf("engine: LogZBatch: %d chains, %d outputs, %d options", len(emits), len(out), len(opts))
	}
	return pool.Run(len(emits), func(ws *Workspace, _, i int) error {
		var err error
		out[i], err = tr.LogZ(ws, emits[i], optAt(opts, i))
		return chainErr(i, err)
	})
}

// ViterbiBatch decodes every chain on the pool's workers into paths[i]
// (len T_i each) with scores[i].
func (tr *Transitions) ViterbiBatch(pool *Pool, emits [][]float64, opts []*ChainOptions, paths [][]int32, scores []float64) error {
	if len(paths) != len(emits) || len(scores) != len(emits) || (opts != nil && len(opts) != len(emits)) {
		return fmt.Errorf("engine: ViterbiBatch: %d chains, %d paths, %d scores, %d options", len(emits), len(paths), len(scores), len(opts))
	}
	return pool.Run(len(emits), func(ws *Workspace, _, i int) error {
		var err error
		scores[i], err = tr.Viterbi(ws, emits[i], optAt(opts, i), paths[i])
		return chainErr(i, err)
	})
}

// NLLBatch returns the summed negative log-likelihood of labelled chains and
// adds its gradient: dEmit[i] (T_i×M, may be nil, or nil entries) gets chain
// i's emission gradient; g.DTrans, g.DStart and g.DEnd (each may be nil) get
// the sum over chains. g.DEmit is ignored. Each worker accumulates its block
// of chains and the blocks are added in order, so the result is the same on
// every run with the same number of threads.
func (tr *Transitions) NLLBatch(pool *Pool, emits [][]float64, labels [][]int32, opts []*ChainOptions, dEmit [][]float64, g *Gradient) (float64, error) {
	n := len(emits)
	if len(labels) != n || (dEmit != nil && len(dEmit) != n) || (opts != nil && len(opts) != n) {
		return 0, fmt.Errorf("engine: NLLBatch: %d chains, %d label sequences, %d gradients, %d options", n, len(labels), len(dEmit), len(opts))
	}
	if g == nil {
		g = &Gradient{}
	}
	W := pool.Threads()
	type acc struct {
		nll float64
		g   Gradient
	}
	accs := make([]acc, W)
	M := tr.m
	for w := range accs {
		if g.DTrans != nil {
			accs[w].g.DTrans = make([]float64, M*M)
		}
		if g.DStart != nil {
			accs[w].g.DStart = make([]float64, M)
		}
		if g.DEnd != nil {
			accs[w].g.DEnd = make([]float64, M)
		}
	}
	err := pool.Run(n, func(ws *Workspace, w, i int) error {
		a := &accs[w]
		gi := a.g
		gi.DEmit = nil
		if dEmit != nil {
			gi.DEmit = dEmit[i]
		}
		v, err := tr.NLL(ws, emits[i], labels[i], optAt(opts, i), &gi)
		a.nll += v
		return chainErr(i, err)
	})
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, a := range accs {
		total += a.nll
		addTo(g.DTrans, a.g.DTrans)
		addTo(g.DStart, a.g.DStart)
		addTo(g.DEnd, a.g.DEnd)
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
