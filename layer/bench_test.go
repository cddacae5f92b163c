package layer

import (
	"fmt"
	"testing"
)

// Benchmarks of one batch B=32, T=50 (lengths 25–50) on one thread, as in
// `simdcrf bench layer`: Benchmark<Op>/M=<labels>/<type>.
func benchLayer(b *testing.B, op string) {
	for _, M := range []int{9, 45, 128} {
		p := newProblem(uint64(M), M, 32, 50, 2)
		for k := range p.lengths {
			p.lengths[k] = int32(25 + (k*26)/32)
		}
		p.lengths[0] = 50
		b.Run(fmt.Sprintf("M=%d/float32", M), func(b *testing.B) { runOp(b, crfOf[float32](p), batchOf[float32](p), p, op) })
		b.Run(fmt.Sprintf("M=%d/float64", M), func(b *testing.B) { runOp(b, crfOf[float64](p), batchOf[float64](p), p, op) })
	}
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
	for b.Loop() {
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
}

func BenchmarkNLL(b *testing.B)       { benchLayer(b, "nll") }
func BenchmarkDecode(b *testing.B)    { benchLayer(b, "decode") }
func BenchmarkMarginals(b *testing.B) { benchLayer(b, "marginals") }
