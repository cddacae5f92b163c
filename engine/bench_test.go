package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/simdcrf/simdcrf/bench/enginebench"
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/kernels"
)

// Benchmarks: Benchmark<Op><Structure>/M=<labels>/<impl>, one thread, a
// batch of enginebench.Seqs sentences of enginebench.T tokens per op;
// tokens/s is reported. `simdcrf-bench engine` runs the same cases, and
// also on two threads.

func benchEngine(b *testing.B, op, structure string) {
	pool := engine.NewPool(1)
	defer pool.Close()
	for _, m := range enginebench.Labels {
		if op == "nbest" && m > 128 {
			continue
		}
		run, err := enginebench.Setup(enginebench.Case{Op: op, Structure: structure, Labels: m, Threads: 1}, pool)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			for _, name := range kernels.Impls() {
				b.Run(name, func(b *testing.B) {
					restore, err := kernels.Use(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					enginebench.Bench(b, run)
				})
			}
		})
	}
}

func BenchmarkForwardBackwardDense(b *testing.B) { benchEngine(b, "forward_backward", "dense") }
func BenchmarkForwardBackwardDense32(b *testing.B) {
	benchEngine(b, "forward_backward", enginebench.Dense32)
}
func BenchmarkForwardBackwardTied(b *testing.B)      { benchEngine(b, "forward_backward", "tied") }
func BenchmarkForwardBackwardForbidden(b *testing.B) { benchEngine(b, "forward_backward", "forbidden") }
func BenchmarkViterbiDense(b *testing.B)             { benchEngine(b, "viterbi", "dense") }
func BenchmarkViterbiTied(b *testing.B)              { benchEngine(b, "viterbi", "tied") }
func BenchmarkViterbiForbidden(b *testing.B)         { benchEngine(b, "viterbi", "forbidden") }
func BenchmarkNBestDense(b *testing.B)               { benchEngine(b, "nbest", "dense") }

// BenchmarkPoolControl runs the CPU-bound control workloads on 1 and 2
// threads: their ratio is what the machine gives, to compare with the
// engine's batch scaling.
func BenchmarkPoolControl(b *testing.B) {
	for _, name := range enginebench.Controls {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", name, th), func(b *testing.B) {
				pool := engine.NewPool(th)
				defer pool.Close()
				run, err := enginebench.SetupControl(name, pool)
				if err != nil {
					b.Fatal(err)
				}
				enginebench.Bench(b, run)
			})
		}
	}
}

// BenchmarkViterbiDenseThreads is Viterbi, dense, M=45 on 1 and 2 threads.
func BenchmarkViterbiDenseThreads(b *testing.B) {
	for _, m := range []int{9, 45, 128} {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("M=%d/threads=%d", m, th), func(b *testing.B) {
				pool := engine.NewPool(th)
				defer pool.Close()
				run, err := enginebench.Setup(enginebench.Case{Op: "viterbi", Structure: "dense", Labels: m, Threads: th}, pool)
				if err != nil {
					b.Fatal(err)
				}
				enginebench.Bench(b, run)
			})
		}
	}
}

// benchPosteriors times full forward–backward (log Z, marginals, summed
// transition, start and end counts: what training needs) over a batch of
// enginebench.Seqs sentences of enginebench.T tokens on one thread, chain
// by chain (Posteriors) or in lockstep groups of k (posteriorsLockstep).
// tokens/s is reported. BenchmarkPosteriorsSingle against
// BenchmarkPosteriorsLockstep is what LockstepLabels rests on.
func benchPosteriors(b *testing.B, m, k int, lockstep bool) {
	tr, err := enginebench.Transitions("dense", m)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(m), 7))
	n, T := enginebench.Seqs, enginebench.T
	emits, marg := make([][]float64, n), make([][]float64, n)
	for i := range emits {
		emits[i], marg[i] = make([]float64, T*m), make([]float64, T*m)
		for j := range emits[i] {
			emits[i][j] = 2 * r.NormFloat64()
		}
	}
	logZ := make([]float64, n)
	trans, start, end := make([]float64, m*m), make([]float64, m), make([]float64, m)
	ws := engine.NewWorkspace()
	run := func() {
		if !lockstep {
			for i, e := range emits {
				p := engine.Posteriors{Marginals: marg[i], Transitions: trans, Start: start, End: end}
				if _, err := tr.Posteriors(ws, e, nil, &p); err != nil {
					b.Fatal(err)
				}
			}
			return
		}
		for lo := 0; lo < n; lo += k {
			hi := min(lo+k, n)
			if _, err := lockplan.Posteriors(tr, ws, emits[lo:hi], marg[lo:hi], logZ[lo:hi], trans, start, end); err != nil {
				b.Fatal(err)
			}
		}
	}
	run()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.ReportMetric(float64(T*n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

var lockLabels = []int{9, 23, 45, 64, 128, 256, 512, 1024}

func benchPosteriorsTiers(b *testing.B, lockstep bool) {
	for _, m := range lockLabels {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			for _, name := range kernels.Impls() {
				b.Run(name, func(b *testing.B) {
					restore, err := kernels.Use(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					benchPosteriors(b, m, enginebench.Seqs, lockstep)
				})
			}
		})
	}
}

func BenchmarkPosteriorsSingle(b *testing.B)   { benchPosteriorsTiers(b, false) }
func BenchmarkPosteriorsLockstep(b *testing.B) { benchPosteriorsTiers(b, true) }

// BenchmarkLockstepChains times the lockstep groups of k chains on the
// active tier: what lockplan.Chains rests on.
func BenchmarkLockstepChains(b *testing.B) {
	for _, m := range []int{256, 1024} {
		for _, k := range []int{2, 4, 8, 16, 32} {
			b.Run(fmt.Sprintf("M=%d/K=%d", m, k), func(b *testing.B) { benchPosteriors(b, m, k, true) })
		}
	}
}
