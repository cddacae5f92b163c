package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunBalanced checks that every index runs exactly once, on any number
// of threads, that the lowest failing index's error comes back, and that
// workers that parked (idle longer than spinFor) wake for the next run.
func TestRunBalanced(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8, 50} {
		pool := NewPool(threads)
		for rep := range 4 {
			n := 1 + rep*37
			count := make([]int32, n)
			workers := make([]int, n)
			err := pool.RunBalanced(n, func(ws *Workspace, w, i int) error {
				if ws != pool.Workspace(w) {
					return fmt.Errorf("worker %d got another worker's workspace", w)
				}
				count[i]++
				workers[i] = w
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range count {
				if c != 1 {
					t.Fatalf("threads=%d: index %d ran %d times", threads, i, c)
				}
			}
			if rep == 2 {
				time.Sleep(3 * spinFor) // let the workers park
			}
		}
		for _, fail := range [][]int{{5, 30}, {0}, {36}, {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}} {
			err := pool.RunBalanced(37, func(_ *Workspace, _, i int) error {
				if slices.Contains(fail, i) {
					return fmt.Errorf("fail %d", i)
				}
				return nil
			})
			if want := fmt.Sprintf("fail %d", fail[0]); err == nil || err.Error() != want {
				t.Fatalf("threads=%d: error %v, want %s", threads, err, want)
			}
		}
		// Workers slower than spinFor: the caller parks and is woken.
		for range 3 {
			var ran [8]int32
			err := pool.Run(8, func(_ *Workspace, w, i int) error {
				if w != 0 {
					time.Sleep(2 * spinFor)
				}
				ran[i]++
				return nil
			})
			if err != nil || ran != [8]int32{1, 1, 1, 1, 1, 1, 1, 1} {
				t.Fatalf("threads=%d: slow workers: %v %v", threads, err, ran)
			}
		}
		if err := pool.RunBalanced(0, nil); err != nil {
			t.Fatal(err)
		}
		f := func(*Workspace, int, int) error { return nil }
		if a := testing.AllocsPerRun(10, func() { pool.RunBalanced(40, f) }); a != 0 {
			t.Errorf("threads=%d: RunBalanced allocates %v times", threads, a)
		}
		pool.Close()
	}
}

// TestBatchNoAllocations: LogZBatch, ViterbiBatch and NLLBatch allocate
// nothing in steady state, on one and two threads.
func TestBatchNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 41))
	M, n := 23, 9
	tr, _ := randomChain(r, 1, M, 1, 0)
	emits, labels, paths := make([][]float64, n), make([][]int32, n), make([][]int32, n)
	dEmit := make([][]float64, n)
	for i := range n {
		_, emits[i] = randomChain(r, 1+r.IntN(20), M, 1, 0)
		T := len(emits[i]) / M
		labels[i], paths[i], dEmit[i] = make([]int32, T), make([]int32, T), make([]float64, T*M)
		tr.Viterbi(NewWorkspace(), emits[i], nil, labels[i])
	}
	out := make([]float64, n)
	// The same chains through a tied structure (its Viterbi has its own
	// buffers) and, for M ≥ maxOnlyLabels, the max-only dense Viterbi.
	tied, err := NewTied(M, 0, randomTied(r, M, 2*M, 0), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wide, _ := randomChain(r, 1, maxOnlyLabels+3, 1, 0)
	wideEmits, widePaths := make([][]float64, n), make([][]int32, n)
	for i := range n {
		_, wideEmits[i] = randomChain(r, 1+r.IntN(20), maxOnlyLabels+3, 1, 0)
		widePaths[i] = make([]int32, len(wideEmits[i])/(maxOnlyLabels+3))
	}
	g := Gradient{DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
	for _, threads := range []int{1, 2} {
		pool := NewPool(threads)
		for name, f := range map[string]func() error{
			"LogZBatch":    func() error { return tr.LogZBatch(pool, emits, nil, out) },
			"ViterbiBatch": func() error { return tr.ViterbiBatch(pool, emits, nil, paths, out) },
			"ViterbiBatch tied": func() error {
				return tied.ViterbiBatch(pool, emits, nil, paths, out)
			},
			"ViterbiBatch max-only": func() error {
				return wide.ViterbiBatch(pool, wideEmits, nil, widePaths, out)
			},
			"NLLBatch": func() error {
				_, err := tr.NLLBatch(pool, emits, labels, nil, dEmit, &g)
				return err
			},
		} {
			if err := f(); err != nil {
				t.Fatal(err)
			}
			if a := steadyAllocs(func() { f() }); a != 0 {
				t.Errorf("threads=%d: %s allocates %v times per call", threads, name, a)
			}
		}
		pool.Close()
	}
}

// steadyAllocs is testing.AllocsPerRun(10, f), the least of three
// measurements: a call that blocks (a worker or the caller parks on a
// channel) can make the runtime allocate a sudog when its per-P cache is
// empty — after a GC, or when sudogs migrated between Ps on a loaded
// machine (seen under qemu-aarch64: "allocates 1 times per call" once).
// That is the runtime refilling a cache, not the call; an allocation the
// call makes shows in every measurement.
func steadyAllocs(f func()) float64 {
	least := testing.AllocsPerRun(10, f)
	for range 2 {
		if least == 0 {
			break
		}
		least = min(least, testing.AllocsPerRun(10, f))
	}
	return least
}

// TestPoolLateSignal holds up the worker that finishes a run last between
// its count and its signal, until the next run has parked its caller: that
// run must still wait for its own work, not return on the late signal.
func TestPoolLateSignal(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var hold atomic.Bool
	hold.Store(true)
	hook := func() {
		if hold.CompareAndSwap(true, false) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	testHookLastDone.Store(&hook)
	defer testHookLastDone.Store(nil)
	noop := func(ws *Workspace, w, i int) error { return nil }
	if err := p.Run(2, noop); err != nil {
		t.Fatal(err)
	}
	var done [2]atomic.Bool
	if err := p.Run(2, func(ws *Workspace, w, i int) error {
		if w == 1 {
			time.Sleep(5 * time.Millisecond) // longer than a woken caller takes to look
		}
		done[i].Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := range done {
		if !done[i].Load() {
			t.Fatalf("Run returned before index %d ran", i)
		}
	}
}
