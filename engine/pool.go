package engine

import (
	"runtime"
	"sync"
)

// Pool runs work over many chains on a fixed set of goroutines, each with its
// own Workspace. Work is split into contiguous blocks of indices, one per
// worker, so results that a worker accumulates (a gradient) are the same
// from run to run for a fixed number of threads.
type Pool struct {
	ws []*Workspace
}

// NewPool returns a pool of threads workers; threads ≤ 0 means GOMAXPROCS.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{ws: make([]*Workspace, threads)}
	for i := range p.ws {
		p.ws[i] = NewWorkspace()
	}
	return p
}

// Threads returns the number of workers.
func (p *Pool) Threads() int { return len(p.ws) }

// Run calls f(ws, worker, i) for every i in [0, n): worker w handles the
// indices [w·n/W, (w+1)·n/W) in order, with its own Workspace ws. Run
// returns when all calls have returned, with the error of the lowest index
// that failed, if any. A Pool runs one Run at a time.
func (p *Pool) Run(n int, f func(ws *Workspace, worker, i int) error) error {
	W := len(p.ws)
	if n < W {
		W = max(n, 1)
	}
	errs := make([]error, W) // blocks ascend, so the first error is the lowest index's
	var wg sync.WaitGroup
	for w := range W {
		lo, hi := w*n/W, (w+1)*n/W
		body := func() {
			for i := lo; i < hi; i++ {
				if err := f(p.ws[w], w, i); err != nil {
					errs[w] = err
					return
				}
			}
		}
		if w == W-1 {
			body() // the calling goroutine does the last block
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); body() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
