package engine

import (
	"runtime"
	"sync"
)

// Pool runs work over many chains on a fixed set of worker goroutines, each
// with its own Workspace. Work is split into contiguous blocks of indices,
// one per worker, so results that a worker accumulates (a gradient) are the
// same from run to run for a fixed number of threads. The workers live until
// Close; a Run allocates nothing.
type Pool struct {
	ws   []*Workspace
	jobs []chan job
	errs []error
	wg   sync.WaitGroup
	mu   sync.Mutex // one Run at a time
}

type job struct {
	lo, hi, w int
	f         func(ws *Workspace, worker, i int) error
}

// NewPool starts a pool of threads workers; threads ≤ 0 means GOMAXPROCS.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{ws: make([]*Workspace, threads), errs: make([]error, threads)}
	for i := range p.ws {
		p.ws[i] = NewWorkspace()
	}
	// Worker 0 is the goroutine that calls Run; the others wait on channels.
	p.jobs = make([]chan job, threads)
	for w := 1; w < threads; w++ {
		p.jobs[w] = make(chan job)
		go p.worker(p.jobs[w])
	}
	return p
}

func (p *Pool) worker(jobs chan job) {
	for j := range jobs {
		p.errs[j.w] = p.block(j)
		p.wg.Done()
	}
}

func (p *Pool) block(j job) error {
	for i := j.lo; i < j.hi; i++ {
		if err := j.f(p.ws[j.w], j.w, i); err != nil {
			return err
		}
	}
	return nil
}

// Threads returns the number of workers.
func (p *Pool) Threads() int { return len(p.ws) }

// Workspace returns worker w's Workspace (for sizing or inspection between
// runs).
func (p *Pool) Workspace(w int) *Workspace { return p.ws[w] }

// Run calls f(ws, worker, i) for every i in [0, n): worker w handles the
// indices [w·n/W, (w+1)·n/W) in order, with its own Workspace ws. Run
// returns when all calls have returned, with the error of the lowest index
// that failed, if any. Concurrent Runs on one Pool take turns.
func (p *Pool) Run(n int, f func(ws *Workspace, worker, i int) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	W := len(p.ws)
	for w := 1; w < W; w++ {
		p.wg.Add(1)
		p.jobs[w] <- job{w * n / W, (w + 1) * n / W, w, f}
	}
	p.errs[0] = p.block(job{0, n / W, 0, f})
	p.wg.Wait()
	for _, err := range p.errs { // blocks ascend: the first error is the lowest index's
		if err != nil {
			return err
		}
	}
	return nil
}

// Close stops the workers. The Pool must not be used afterwards.
func (p *Pool) Close() {
	for _, c := range p.jobs[1:] {
		close(c)
	}
}
