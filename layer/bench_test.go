package layer

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
)

// benchLabels are the label counts of the layer benchmarks; the layer
// tests' -layer.labels flag replaces them (M = 256 and 1,024 for choosing
// lockstep.go's thresholds).
var benchLabels = []int{9, 45, 128, 512}

func init() {
	flag.Func("layer.labels", "comma-separated label counts of the layer benchmarks", func(v string) error {
		benchLabels = benchLabels[:0]
		for _, f := range strings.Split(v, ",") {
			m, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || m < 1 {
				return fmt.Errorf("bad label count %q", f)
			}
			benchLabels = append(benchLabels, m)
		}
		return nil
	})
}

// setVar sets *p to v and returns what restores it.
func setVar[V any](p *V, v V) func() {
	old := *p
	*p = v
	return func() { *p = old }
}

// Benchmarks of one batch B=32, T=50 (lengths 25–50) on one thread, as in
// `simdcrf-bench layer`: Benchmark<Op>/M=<labels>/<type>. From
// engine.LockstepLabels on, <type>-single runs every sequence alone (the
// lockstep path off) and <type>-lockstep forces the lockstep path on, for
// the choices lockstep.go makes.
func benchLayer(b *testing.B, op string) {
	for _, M := range benchLabels {
		p := benchProblem(M)
		b.Run(fmt.Sprintf("M=%d/float32", M), func(b *testing.B) { runOp(b, crfOf[float32](p), batchOf[float32](p), p, op) })
		b.Run(fmt.Sprintf("M=%d/float64", M), func(b *testing.B) { runOp(b, crfOf[float64](p), batchOf[float64](p), p, op) })
		if M < engine.LockstepLabels {
			continue
		}
		b.Run(fmt.Sprintf("M=%d/float32-single", M), func(b *testing.B) {
			defer setVar(&useLockstep, false)()
			runOp(b, crfOf[float32](p), batchOf[float32](p), p, op)
		})
		b.Run(fmt.Sprintf("M=%d/float64-single", M), func(b *testing.B) {
			defer setVar(&useLockstep, false)()
			runOp(b, crfOf[float64](p), batchOf[float64](p), p, op)
		})
		b.Run(fmt.Sprintf("M=%d/float32-lockstep", M), func(b *testing.B) {
			defer setVar(&lockstepMin32, 0)()
			runOp(b, crfOf[float32](p), batchOf[float32](p), p, op)
		})
		b.Run(fmt.Sprintf("M=%d/float64-lockstep", M), func(b *testing.B) {
			defer setVar(&lockstepMin64, 0)()
			runOp(b, crfOf[float64](p), batchOf[float64](p), p, op)
		})
	}
}

// benchProblem is the benchmarks' batch at M labels: B = 32, T = 50,
// lengths 25–50 (as simdcrf-bench layer's).
func benchProblem(M int) *problem {
	p := newProblem(uint64(M), M, 32, 50, 2)
	for k := range p.lengths {
		p.lengths[k] = int32(25 + (k*26)/32)
	}
	p.lengths[0] = 50
	return p
}

func runOp[F float32 | float64](b *testing.B, c *CRF[F], bt Batch[F], p *problem, op string) {
	c.Threads = 1
	M, B, T := p.M, p.B, p.T
	g := &Grad[F]{Emissions: make([]F, B*T*M), Trans: make([]F, M*M), Start: make([]F, M), End: make([]F, M)}
	marg := make([]F, B*T*M)
	paths := make([]int32, B*T)
	tokens := 0
	for _, l := range p.lengths {
		tokens += int(l)
	}
	cpu0 := int64(-1)
	for b.Loop() {
		if cpu0 < 0 { // after b.Loop's first call: the setup is not counted
			cpu0 = cpuNanos()
		}
		var err error
		switch op {
		case "nll":
			_, err = c.NLL(bt, p.tags, ReduceSum, nil, g)
		case "decode":
			err = c.Decode(bt, paths, nil)
		case "marginals":
			err = c.Marginals(bt, marg, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkNLL(b *testing.B)       { benchLayer(b, "nll") }
func BenchmarkDecode(b *testing.B)    { benchLayer(b, "decode") }
func BenchmarkMarginals(b *testing.B) { benchLayer(b, "marginals") }
