// Package kernelbench defines the kernel benchmarks once, for both
// `go test -bench` (package kernels) and `simdcrf-bench kernels`, so the two
// always measure the same thing.
package kernelbench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// Kernels lists the benchmarked kernels in report order.
var Kernels = []string{"forward", "backward", "forward_lockstep", "transitions", "backwardtransitions", "shiftrows", "viterbi",
	"logforward", "gather", "scatter", "exp", "log", "dot", "axpy"}

// Kernels32 lists the float32 kernels' benchmarks (the same cases as their
// float64 namesakes without the suffix, on the same values rounded to
// float32), for `go test -bench` in package kernels; `simdcrf-bench
// kernels` runs them when asked by name.
var Kernels32 = []string{"forward32", "backward32", "forward_lockstep32", "backward_lockstep32", "transitions32", "viterbi32", "exp32", "dot32", "mul32", "axpywiden", "shiftrows32", "gather32", "scatter32"}

// Labels are the label counts M of the per-sequence kernels.
var Labels = []int{3, 9, 23, 45, 64, 128, 256, 512, 1024}

const (
	// T is the sequence length of the per-sequence kernels (a typical
	// sentence is 20–30 tokens).
	T = 32
	// K is the number of sequences run in lockstep by forward_lockstep:
	// a training batch; four full blocks of the AVX-512 kernel's 6.
	K = 24
	// N is the vector length of the elementwise kernels (exp, log, dot,
	// axpy): large enough to amortise the call, small enough for L1/L2.
	N = 2048
	// F is the number of features per position of gather and scatter.
	F = 20
	// WElems bounds the weight matrix of gather and scatter (256 MiB):
	// rows = WElems/M, far beyond the caches, ids uniform (the worst case).
	WElems = 1 << 25
)

// Elementwise reports whether kernel runs on a flat vector of N elements
// rather than on a sequence of M labels.
func Elementwise(kernel string) bool {
	switch kernel {
	case "exp", "log", "dot", "axpy", "exp32", "dot32", "mul32", "axpywiden":
		return true
	}
	return false
}

// Case is one benchmark: Setup allocates the inputs (once; they are reused
// for every implementation) and returns the function that runs the kernel
// once.
type Case struct {
	Kernel    string
	Labels    int     // M, or N for elementwise kernels
	Positions float64 // positions (elements) per run, for ns per position
	Flops     float64 // floating-point operations per run (0: not reported)
	Setup     func() (run func())
	// Loop, if not nil, sets up the scalar loop a kernel replaces (the
	// same work without package kernels), measured as the impl Loop.
	Loop func() (run func())
}

// New returns the case for kernel at m labels (m is ignored by elementwise
// kernels, which use N). ok is false for an unknown kernel.
func New(kernel string, m int) (c Case, ok bool) {
	r := rand.New(rand.NewPCG(uint64(m), 7))
	M := float64(m)
	c = Case{Kernel: kernel, Labels: m, Positions: T}
	dense := 2*M*M + 3*M
	switch kernel {
	case "forward", "backward":
		c.Flops = T * dense
		c.Setup = func() func() {
			psi, e := probs(r, T*m), probs(r, m*m)
			alpha, beta, scale := make([]float64, T*m), make([]float64, T*m), make([]float64, T)
			kernels.Forward(alpha, scale, psi, e, T, m)
			if kernel == "forward" {
				return func() { kernels.Forward(alpha, scale, psi, e, T, m) }
			}
			return func() { kernels.Backward(beta, scale, psi, e, T, m) }
		}
	case "forward_lockstep":
		c.Positions, c.Flops = T*K, T*K*dense
		c.Setup = func() func() {
			psi, e := probs(r, T*K*m), probs(r, m*m)
			alpha, scale := make([]float64, T*K*m), make([]float64, T*K)
			return func() { kernels.ForwardBatch(alpha, scale, psi, e, nil, T, K, m) }
		}
	case "transitions":
		c.Flops = (T-1)*(2*M*M+3*M) + 2*M*M
		c.Setup = func() func() {
			psi, e := probs(r, T*m), probs(r, m*m)
			alpha, beta, scale := make([]float64, T*m), make([]float64, T*m), make([]float64, T)
			kernels.Forward(alpha, scale, psi, e, T, m)
			kernels.Backward(beta, scale, psi, e, T, m)
			g, work := make([]float64, m*m), make([]float64, T*m)
			return func() { kernels.Transitions(g, e, alpha, beta, psi, scale, work, T, m) }
		}
	case "backwardtransitions":
		// Backward and the transition counts in one call (fused at small M).
		c.Flops = T*dense + (T-1)*(2*M*M+3*M) + 2*M*M
		c.Setup = func() func() {
			psi, e := probs(r, T*m), probs(r, m*m)
			alpha, beta, scale := make([]float64, T*m), make([]float64, T*m), make([]float64, T)
			kernels.Forward(alpha, scale, psi, e, T, m)
			g, work := make([]float64, m*m), make([]float64, T*m)
			return func() { kernels.BackwardTransitions(g, e, alpha, beta, psi, scale, e, work, T, m) }
		}
	case "shiftrows", "shiftrows32":
		// The scaled pass's row shifts: T rows of scores plus an offset
		// row, each less its maximum (and its minimum found).
		c.Setup = func() func() {
			in, a := scores(r, T*m), scores(r, m)
			out, mx, lo := make([]float64, T*m), make([]float64, T), make([]float64, T)
			if kernel == "shiftrows" {
				return func() { kernels.ShiftRows(out, mx, lo, in, a, T, m) }
			}
			in32, a32 := to32(in), to32(a)
			out32, mx32, lo32 := make([]float32, T*m), make([]float32, T), make([]float32, T)
			return func() { kernels.ShiftRows32(out32, mx32, lo32, in32, a32, T, m) }
		}
	case "viterbi":
		c.Flops = (T - 1) * 2 * M * M
		c.Setup = func() func() {
			s, tr := scores(r, T*m), scores(r, m*m)
			delta, bp, path := make([]float64, T*m), make([]int32, T*m), make([]int32, T)
			return func() { kernels.Viterbi(path, delta, bp, s, tr, T, m) }
		}
	case "logforward":
		// One log-domain step per position: M² exps, M logs.
		c.Positions = 1
		c.Setup = func() func() {
			a, tr, out := scores(r, m), scores(r, m*m), make([]float64, m)
			return func() { kernels.LogMatVec(out, a, tr, m) }
		}
	case "gather", "scatter":
		c.Flops = T * F * 2 * M
		c.Setup = func() func() {
			w, ptr, ids, vals := sparseRows[float64](r, T, F, m)
			p := probs(r, T*m)
			if kernel == "gather" {
				return func() { kernels.Gather(p, w, m, ptr, ids, vals, T, m) }
			}
			return func() { kernels.Scatter(w, m, p, ptr, ids, vals, -1, T, m) }
		}
	case "exp", "log", "dot", "axpy":
		c.Labels, c.Positions = N, N
		c.Setup = func() func() {
			x, y := make([]float64, N), make([]float64, N)
			for i := range x {
				x[i] = -20 * r.Float64()
				y[i] = r.Float64()
			}
			switch kernel {
			case "exp":
				return func() { kernels.Exp(y, x) }
			case "log":
				return func() { kernels.Log(x, y) }
			case "dot":
				c.Flops = 2 * N
				return func() { sink = kernels.Dot(x, y) }
			default:
				return func() { kernels.Axpy(1e-9, x, y) }
			}
		}
		if kernel == "dot" || kernel == "axpy" {
			c.Flops = 2 * N
		}
	default:
		return new32(c, kernel, m, r)
	}
	return c, true
}

// new32 is New for the float32 kernels.
func new32(c Case, kernel string, m int, r *rand.Rand) (Case, bool) {
	M := float64(m)
	dense := 2*M*M + 3*M
	switch kernel {
	case "forward32", "backward32":
		c.Flops = T * dense
		c.Setup = func() func() {
			psi, e := to32(probs(r, T*m)), to32(probs(r, m*m))
			alpha, beta, scale := make([]float32, T*m), make([]float32, T*m), make([]float32, T)
			kernels.Forward32(alpha, scale, psi, e, T, m)
			if kernel == "forward32" {
				return func() { kernels.Forward32(alpha, scale, psi, e, T, m) }
			}
			return func() { kernels.Backward32(beta, scale, psi, e, T, m) }
		}
	case "backward_lockstep", "backward_lockstep32":
		// Not in Kernels (the report's list): run by name, and by
		// go test -bench BackwardLockstep in package kernels.
		c.Positions, c.Flops = T*K, T*K*dense
		c.Setup = func() func() {
			psi, e := probs(r, T*K*m), probs(r, m*m)
			alpha, scale := make([]float64, T*K*m), make([]float64, T*K)
			kernels.ForwardBatch(alpha, scale, psi, e, nil, T, K, m)
			if kernel == "backward_lockstep" {
				beta, work := make([]float64, T*K*m), make([]float64, K*m)
				return func() { kernels.BackwardBatch(beta, scale, psi, e, work, nil, T, K, m) }
			}
			psi32, e32, scale32 := to32(psi), to32(e), to32(scale)
			beta, work := make([]float32, T*K*m), make([]float32, K*m)
			return func() { kernels.BackwardBatch32(beta, scale32, psi32, e32, work, nil, T, K, m) }
		}
	case "forward_lockstep32":
		c.Positions, c.Flops = T*K, T*K*dense
		c.Setup = func() func() {
			psi, e := to32(probs(r, T*K*m)), to32(probs(r, m*m))
			alpha, scale := make([]float32, T*K*m), make([]float32, T*K)
			return func() { kernels.ForwardBatch32(alpha, scale, psi, e, nil, T, K, m) }
		}
	case "transitions32":
		c.Flops = (T-1)*(2*M*M+3*M) + 2*M*M
		c.Setup = func() func() {
			psi, e := to32(probs(r, T*m)), to32(probs(r, m*m))
			alpha, beta, scale := make([]float32, T*m), make([]float32, T*m), make([]float32, T)
			kernels.Forward32(alpha, scale, psi, e, T, m)
			kernels.Backward32(beta, scale, psi, e, T, m)
			g, work := make([]float32, m*m), make([]float32, T*m)
			return func() { kernels.Transitions32(g, e, alpha, beta, psi, scale, work, T, m) }
		}
	case "viterbi32":
		c.Flops = (T - 1) * 2 * M * M
		c.Setup = func() func() {
			s, tr := to32(scores(r, T*m)), to32(scores(r, m*m))
			delta, bp, path := make([]float32, T*m), make([]int32, T*m), make([]int32, T)
			return func() { kernels.Viterbi32(path, delta, bp, s, tr, T, m) }
		}
	case "gather32", "scatter32":
		c.Flops = T * F * 2 * M
		c.Setup = func() func() {
			w, ptr, ids, vals := sparseRows[float32](r, T, F, m)
			p := to32(probs(r, T*m))
			if kernel == "gather32" {
				return func() { kernels.Gather32(p, w, m, ptr, ids, vals, T, m) }
			}
			return func() { kernels.Scatter32(w, m, p, ptr, ids, vals, -1, T, m) }
		}
	case "exp32", "dot32", "mul32", "axpywiden":
		c.Labels, c.Positions = N, N
		c.Setup = func() func() {
			x, y := make([]float32, N), make([]float32, N)
			for i := range x {
				x[i] = float32(-20 * r.Float64())
				y[i] = float32(r.Float64())
			}
			switch kernel {
			case "exp32":
				return func() { kernels.Exp32(y, x) }
			case "mul32": // the marginals α∘β·s of the CRF layer
				d := make([]float32, N)
				return func() { kernels.Mul32(d, x, y, 0.5) }
			case "axpywiden": // float32 counts into float64 totals
				d := make([]float64, N)
				return func() { kernels.AxpyWiden(1e-9, x, d) }
			}
			return func() { sink = kernels.Dot32(x, y) }
		}
		switch kernel {
		case "dot32", "mul32", "axpywiden":
			c.Flops = 2 * N
		}
	default:
		return newSelect(c, kernel, m, r)
	}
	return c, true
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

var sink float64

// probs returns n positive values like normalised probabilities and
// exponentiated scores (never subnormal products).
func probs(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.Exp(-4 * r.Float64())
	}
	return s
}

// scores returns n log-domain scores.
func scores(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.NormFloat64()
	}
	return s
}

// Bench times run (from c.Setup) under testing.B and reports ns/position
// and GFLOP/s as metrics.
func (c Case) Bench(b *testing.B, run func()) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/c.Positions, "ns/position")
	if c.Flops > 0 {
		b.ReportMetric(c.Flops/ns, "GFLOP/s")
	}
}

// Peak measures the active tier's FMA throughput in GFLOP/s with
// kernels.FMAProbe (independent vector FMAs, one core), as the best of
// reps runs; 0 if the tier has no probe.
func Peak(reps int) float64 {
	best := 0.0
	for range reps {
		res := testing.Benchmark(func(b *testing.B) {
			var flops float64
			for range b.N {
				flops += kernels.FMAProbe(1 << 16)
			}
			b.ReportMetric(flops/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
		best = max(best, res.Extra["GFLOP/s"])
	}
	return best
}

// Median returns the median of xs (which it sorts).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// sparseRows returns the weight rows (WElems/m of m labels) and T positions
// of F random attributes over them (ids and values) that the gather and
// scatter cases share.
func sparseRows[E float32 | float64](r *rand.Rand, T, F, m int) (w []E, ptr, ids []int32, vals []E) {
	rows := WElems / m
	w = make([]E, rows*m)
	for i := range w {
		w[i] = E(float64(i&1023) * 0x1p-10)
	}
	ptr, ids, vals = make([]int32, T+1), make([]int32, T*F), make([]E, T*F)
	for t := 0; t <= T; t++ {
		ptr[t] = int32(t * F)
	}
	for f := range ids {
		ids[f] = int32(r.IntN(rows))
		vals[f] = E(1 + r.Float64())
	}
	return w, ptr, ids, vals
}
