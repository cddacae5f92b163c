package kernels_test

import (
	"fmt"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/kernels/kernelbench"
)

// Benchmarks are named Benchmark<Kernel>/M=<labels>/<impl> (N=<length> for
// the elementwise kernels) so that benchstat can compare tiers; they report
// ns/position and GFLOP/s. `simdcrf-bench kernels` runs the same cases.

func benchKernel(b *testing.B, kernel string) {
	labels := kernelbench.LabelsOf(kernel)
	key := "M"
	if kernelbench.Elementwise(kernel) {
		labels, key = []int{kernelbench.N}, "N"
	}
	for _, m := range labels {
		c, _ := kernelbench.New(kernel, m)
		var run func()
		b.Run(fmt.Sprintf("%s=%d", key, m), func(b *testing.B) {
			if run == nil {
				run = c.Setup()
			}
			for _, name := range kernels.Impls() {
				b.Run(name, func(b *testing.B) {
					restore, err := kernels.Use(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					c.Bench(b, run)
				})
			}
			if c.Loop != nil {
				b.Run(kernelbench.Loop, func(b *testing.B) { c.Bench(b, c.Loop()) })
			}
		})
	}
}

func BenchmarkForward(b *testing.B)         { benchKernel(b, "forward") }
func BenchmarkBackward(b *testing.B)        { benchKernel(b, "backward") }
func BenchmarkForwardLockstep(b *testing.B) { benchKernel(b, "forward_lockstep") }
func BenchmarkTransitions(b *testing.B)     { benchKernel(b, "transitions") }
func BenchmarkShiftRows(b *testing.B)       { benchKernel(b, "shiftrows") }
func BenchmarkViterbi(b *testing.B)         { benchKernel(b, "viterbi") }
func BenchmarkLogForward(b *testing.B)      { benchKernel(b, "logforward") }
func BenchmarkGather(b *testing.B)          { benchKernel(b, "gather") }
func BenchmarkScatter(b *testing.B)         { benchKernel(b, "scatter") }
func BenchmarkExp(b *testing.B)             { benchKernel(b, "exp") }
func BenchmarkLog(b *testing.B)             { benchKernel(b, "log") }
func BenchmarkDot(b *testing.B)             { benchKernel(b, "dot") }
func BenchmarkAxpy(b *testing.B)            { benchKernel(b, "axpy") }

// The float32 kernels, next to their float64 namesakes.
func BenchmarkForward32(b *testing.B)          { benchKernel(b, "forward32") }
func BenchmarkBackward32(b *testing.B)         { benchKernel(b, "backward32") }
func BenchmarkTransitions32(b *testing.B)      { benchKernel(b, "transitions32") }
func BenchmarkForwardLockstep32(b *testing.B)  { benchKernel(b, "forward_lockstep32") }
func BenchmarkBackwardLockstep(b *testing.B)   { benchKernel(b, "backward_lockstep") }
func BenchmarkBackwardLockstep32(b *testing.B) { benchKernel(b, "backward_lockstep32") }
func BenchmarkViterbi32(b *testing.B)          { benchKernel(b, "viterbi32") }
func BenchmarkExp32(b *testing.B)              { benchKernel(b, "exp32") }
func BenchmarkDot32(b *testing.B)              { benchKernel(b, "dot32") }
func BenchmarkMul32(b *testing.B)              { benchKernel(b, "mul32") }
func BenchmarkShiftRows32(b *testing.B)        { benchKernel(b, "shiftrows32") }
func BenchmarkAxpyWiden(b *testing.B)          { benchKernel(b, "axpywiden") }
func BenchmarkGather32(b *testing.B)           { benchKernel(b, "gather32") }
func BenchmarkScatter32(b *testing.B)          { benchKernel(b, "scatter32") }

// The selection kernels, each beside the scalar loop it replaces (impl
// "loop"; see kernelbench.KernelsSelect).
func BenchmarkSelectGE(b *testing.B)      { benchKernel(b, "selectge") }
func BenchmarkSelectSumGE(b *testing.B)   { benchKernel(b, "selectsumge") }
func BenchmarkMax(b *testing.B)           { benchKernel(b, "max") }
func BenchmarkPrune(b *testing.B)         { benchKernel(b, "prune") }
func BenchmarkSelectGE32(b *testing.B)    { benchKernel(b, "selectge32") }
func BenchmarkSelectSumGE32(b *testing.B) { benchKernel(b, "selectsumge32") }
func BenchmarkMax32(b *testing.B)         { benchKernel(b, "max32") }

// BenchmarkFMAPeak measures the core's vector FMA throughput per tier: the
// denominator of "fraction of peak".
func BenchmarkFMAPeak(b *testing.B) {
	for _, name := range kernels.Impls() {
		b.Run(name, func(b *testing.B) {
			restore, err := kernels.Use(name)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			var flops float64
			for range b.N {
				flops += kernels.FMAProbe(1 << 16)
			}
			if flops == 0 {
				b.Skip("no FMA probe for this tier")
			}
			b.ReportMetric(flops/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
	}
}
