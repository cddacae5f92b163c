package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdcrf/simdcrf/internal/lockplan"
)

// Pool runs work over many chains on a fixed set of worker goroutines, each
// with its own Workspace. Run splits the work into contiguous blocks of
// indices, one per worker, so results that a worker accumulates (a
// gradient) are the same from run to run for a fixed number of threads;
// RunBalanced hands out indices one at a time to whichever worker is free,
// for work whose results do not depend on which worker did what. The
// workers live until Close; a Run allocates nothing.
//
// Between runs a worker spins for a short while (spinFor) before it parks,
// and the caller spins the same way for the others to finish: a batch
// that follows soon, or the last chain of a batch, does not pay for waking
// a parked thread (tens of microseconds on a virtual machine, as long as a
// whole small batch).
type Pool struct {
	ws      []*Workspace
	slots   []slot     // one per worker; slot 0 is the calling goroutine's
	mu      sync.Mutex // one Run at a time
	spin    bool       // spin while waiting (threads ≤ GOMAXPROCS)
	_       [64]byte
	next    atomic.Int64 // RunBalanced's next index
	_       [56]byte
	pending atomic.Int32 // workers 1.. still running the current job
	caller  atomic.Int32 // idle or parked (waiting on done)
	done    chan struct{}
	_       [48]byte
	task    batchTask
	nll     []nllAcc
	lp      lockplan.Plan // the batch calls' lockstep groups
}

// slot is one worker's mailbox and result, padded to its own cache lines.
type slot struct {
	state atomic.Int32
	wake  chan struct{}
	j     job
	idx   int   // index of the failure, if err != nil
	err   error // of this worker's lowest failing index
	_     [64]byte
}

// Worker states: idle (spinning or about to), a job is ready, parked on
// wake.
const (
	idle int32 = iota
	ready
	parked
)

// spinFor is how long an idle worker polls for the next job before it
// parks.
const spinFor = 100 * time.Microsecond

type job struct {
	lo, hi   int  // Run's block
	n        int  // RunBalanced's count
	balanced bool // take indices from Pool.next
	quit     bool
	f        func(ws *Workspace, worker, i int) error
	t        *batchTask // instead of f
}

// NewPool starts a pool of threads workers; threads ≤ 0 means GOMAXPROCS.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{ws: make([]*Workspace, threads), slots: make([]slot, threads), done: make(chan struct{}, 1)}
	p.spin = threads <= runtime.GOMAXPROCS(0)
	for i := range p.ws {
		p.ws[i] = NewWorkspace()
	}
	// Worker 0 is the goroutine that calls Run; the others wait for jobs.
	for w := 1; w < threads; w++ {
		p.slots[w].wake = make(chan struct{}, 1)
		go p.worker(w)
	}
	return p
}

func (p *Pool) worker(w int) {
	s := &p.slots[w]
	for {
		got := false
		if p.spin {
			start := time.Now()
			for k := 1; ; k++ {
				if s.state.Load() == ready {
					got = true
					break
				}
				if k%256 == 0 {
					if time.Since(start) > spinFor {
						break
					}
					runtime.Gosched()
				}
			}
		}
		if !got && s.state.CompareAndSwap(idle, parked) {
			<-s.wake
		}
		j := s.j
		s.j = job{}
		s.state.Store(idle)
		if j.quit {
			return
		}
		s.idx, s.err = p.block(w, j)
		if p.pending.Add(-1) == 0 {
			if h := testHookLastDone.Load(); h != nil {
				(*h)()
			}
			if p.caller.CompareAndSwap(parked, idle) {
				p.done <- struct{}{}
			}
		}
	}
}

// wait returns when every worker but the caller has finished its job.
func (p *Pool) wait() {
	if p.spin {
		start := time.Now()
		for k := 1; p.pending.Load() != 0; k++ {
			if k%256 == 0 {
				if time.Since(start) > spinFor {
					break
				}
				runtime.Gosched()
			}
		}
	}
	for p.pending.Load() != 0 {
		// Parked: the worker that finishes last flips the state back and
		// signals, unless it finished before the flip (then undo it
		// here). The signal may also come from the last worker of the
		// previous run, held up between its count and its flip until
		// this run parked: pending then says to wait on.
		p.caller.Store(parked)
		if p.pending.Load() == 0 && p.caller.CompareAndSwap(parked, idle) {
			return
		}
		<-p.done
	}
}

// testHookLastDone, when a test sets it, runs in the worker that finishes
// a run last, between its count and its signal.
var testHookLastDone atomic.Pointer[func()]

// post hands j to worker w.
func (p *Pool) post(w int, j job) {
	s := &p.slots[w]
	s.j = j
	if !s.state.CompareAndSwap(idle, ready) { // parked
		s.wake <- struct{}{}
	}
}

// block runs worker w's share of j and returns the lowest index that
// failed and its error, if any.
func (p *Pool) block(w int, j job) (int, error) {
	ws := p.ws[w]
	lo, hi := j.lo, j.hi
	for i := lo; ; i++ {
		if j.balanced {
			i = int(p.next.Add(1)) - 1
			if i >= j.n {
				return 0, nil
			}
		} else if i >= hi {
			return 0, nil
		}
		var err error
		if j.t != nil {
			err = j.t.do(ws, w, i)
		} else {
			err = j.f(ws, w, i)
		}
		if err != nil {
			return i, err
		}
	}
}

// Threads returns the number of workers.
func (p *Pool) Threads() int { return len(p.ws) }

// Workspace returns worker w's Workspace (for sizing or inspection between
// runs).
func (p *Pool) Workspace(w int) *Workspace { return p.ws[w] }

// Run calls f(ws, worker, i) for every i in [0, n): worker w handles the
// indices [w·n/W, (w+1)·n/W) in order, with its own Workspace ws. Run
// returns when all calls have returned, with the error of the lowest index
// that failed, if any (a worker stops at its first failure). Concurrent Runs
// on one Pool take turns.
func (p *Pool) Run(n int, f func(ws *Workspace, worker, i int) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run(n, false, f, nil)
}

// RunBalanced is Run with the indices handed out in increasing order, one
// at a time, to whichever worker is free: it keeps all workers busy when
// chains differ in length or cores in speed, but which worker (and
// Workspace) handles an index varies from run to run. It returns the error
// of the lowest index that failed, if any (indices handed out after a
// failure may still run).
func (p *Pool) RunBalanced(n int, f func(ws *Workspace, worker, i int) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run(n, true, f, nil)
}

// run is Run (balanced: RunBalanced) of f or of t; p.mu is held.
func (p *Pool) run(n int, balanced bool, f func(ws *Workspace, worker, i int) error, t *batchTask) error {
	W := len(p.ws)
	if n <= 0 {
		return nil
	}
	p.next.Store(0)
	p.pending.Store(int32(W - 1))
	for w := 1; w < W; w++ {
		p.post(w, job{lo: w * n / W, hi: (w + 1) * n / W, n: n, balanced: balanced, f: f, t: t})
	}
	p.slots[0].idx, p.slots[0].err = p.block(0, job{lo: 0, hi: n / W, n: n, balanced: balanced, f: f, t: t})
	p.wait()
	var err error
	idx := n
	for w := range p.slots {
		s := &p.slots[w]
		if s.err != nil && s.idx < idx {
			idx, err = s.idx, s.err
		}
		s.err = nil
	}
	return err
}

// Close stops the workers. The Pool must not be used afterwards.
func (p *Pool) Close() {
	for w := 1; w < len(p.slots); w++ {
		p.post(w, job{quit: true})
	}
}
