package engine_test

import (
	"fmt"
	"testing"

	"github.com/simdcrf/simdcrf/bench/enginebench"
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// Benchmarks: Benchmark<Op><Structure>/M=<labels>/<impl>, one thread, a
// batch of enginebench.Seqs sentences of enginebench.T tokens per op;
// tokens/s is reported. `simdcrf bench engine` runs the same cases, and
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

func BenchmarkForwardBackwardDense(b *testing.B)     { benchEngine(b, "forward_backward", "dense") }
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
