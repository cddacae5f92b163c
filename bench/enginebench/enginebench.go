// Package enginebench defines the inference-engine benchmarks once, for
// `go test -bench` (package engine) and `simdcrf-bench engine`.
package enginebench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/kernels/kernelbench"
)

// Ops, Structures and Labels are what the suite covers.
var (
	Ops        = []string{"forward_backward", "viterbi", "nbest"}
	Structures = []string{"dense", "tied", "forbidden", Dense32}
	Labels     = []int{9, 23, 45, 128, 512, 1024}
)

const (
	// T is the sentence length and Seqs the sentences per batch.
	T, Seqs = 24, 32
	// K is the number of labellings nbest finds.
	K = 5
)

// Dense32 is the dense matrix run in float32 (forward_backward alone):
// the lockstep groups of engine.Scaled[float32] (as the CRF layer and
// the float32 trainer run them), on the same emissions held in float32,
// the marginals α·β in float32. Issue 29 allows float32 for the dense
// forward–backward target at M = 1,024.
const Dense32 = "dense-f32"

// Result is one measurement.
type Result struct {
	Op                string  `json:"op"`
	Structure         string  `json:"structure"`
	Impl              string  `json:"impl"`
	Labels            int     `json:"labels"`
	Threads           int     `json:"threads"`
	TokensPerSecond   float64 `json:"tokens_per_second"`
	AllocsPerSequence float64 `json:"allocs_per_sequence"`
}

// Case is one benchmark.
type Case struct {
	Op, Structure string
	Labels        int
	Threads       int
}

// Name is the go test sub-benchmark path below the op: e.g. "dense/M=45".
func (c Case) String() string {
	return fmt.Sprintf("%s %s M=%d threads=%d", c.Op, c.Structure, c.Labels, c.Threads)
}

// Transitions makes the benchmark's transition matrix for a structure: tied
// has default 0 and about 2M exceptions; forbidden allows about 2M
// transitions (each label may follow itself); dense is the tied matrix run
// through the dense kernels.
func Transitions(structure string, m int) (*engine.Transitions, error) {
	r := rand.New(rand.NewPCG(uint64(m), 99))
	def := 0.0
	if structure == "forbidden" {
		def = math.Inf(-1)
	}
	seen := map[[2]int32]bool{}
	var exc []engine.Exception
	add := func(i, j int32) {
		if !seen[[2]int32{i, j}] {
			seen[[2]int32{i, j}] = true
			exc = append(exc, engine.Exception{From: i, To: j, Score: r.NormFloat64()})
		}
	}
	for j := range int32(m) {
		add(j, j)
	}
	for len(exc) < 2*m && len(exc) < m*m {
		add(int32(r.IntN(m)), int32(r.IntN(m)))
	}
	switch structure {
	case "dense":
		t, err := engine.NewTied(m, def, exc, nil, nil)
		if err != nil {
			return nil, err
		}
		score := make([]float64, m*m)
		for i := range m {
			for j := range m {
				score[i*m+j] = t.Score(i, j)
			}
		}
		return engine.NewTransitionsWith(m, score, nil, nil, engine.Options{Structure: engine.Dense})
	case "tied", "forbidden":
		return engine.NewTied(m, def, exc, nil, nil)
	}
	return nil, fmt.Errorf("unknown structure %q (have %v)", structure, Structures)
}

// Setup builds the inputs of c and returns the function that processes one
// batch of Seqs sentences on pool.
func Setup(c Case, pool *engine.Pool) (run func() error, err error) {
	if c.Structure == Dense32 {
		return setup32(c, pool)
	}
	tr, err := Transitions(c.Structure, c.Labels)
	if err != nil {
		return nil, err
	}
	m := c.Labels
	r := rand.New(rand.NewPCG(uint64(m), 7))
	emits := make([][]float64, Seqs)
	for i := range emits {
		emits[i] = make([]float64, T*m)
		for k := range emits[i] {
			emits[i][k] = 2 * r.NormFloat64()
		}
	}
	var f func(ws *engine.Workspace, w, i int) error
	switch c.Op {
	case "forward_backward":
		// The batch call: at M ≥ engine.LockstepLabels the dense chains
		// run in lockstep groups (engine.MarginalsBatch).
		marg := make([][]float64, Seqs)
		for i := range marg {
			marg[i] = make([]float64, T*m)
		}
		logZ := make([]float64, Seqs)
		return func() error { return tr.MarginalsBatch(pool, emits, nil, marg, logZ) }, nil
	case "viterbi":
		paths := make([][]int32, Seqs)
		for i := range paths {
			paths[i] = make([]int32, T)
		}
		f = func(ws *engine.Workspace, _, i int) error {
			_, err := tr.Viterbi(ws, emits[i], nil, paths[i])
			return err
		}
	case "nbest":
		paths := make([][][]int32, Seqs)
		scores := make([][]float64, Seqs)
		for i := range paths {
			for range K {
				paths[i] = append(paths[i], make([]int32, T))
			}
			scores[i] = make([]float64, K)
		}
		f = func(ws *engine.Workspace, _, i int) error {
			_, err := tr.NBest(ws, emits[i], nil, paths[i], scores[i])
			return err
		}
	default:
		return nil, fmt.Errorf("unknown op %q (have %v)", c.Op, Ops)
	}
	return func() error { return pool.RunBalanced(Seqs, f) }, nil
}

// setup32 is Setup for Dense32: the batch split into one lockstep group a
// worker (at most lockplan's 32 chains, as MarginalsBatch groups them).
func setup32(c Case, pool *engine.Pool) (func() error, error) {
	if c.Op != "forward_backward" {
		return nil, fmt.Errorf("%s: forward_backward only", Dense32)
	}
	tr, err := Transitions("dense", c.Labels)
	if err != nil {
		return nil, err
	}
	m := c.Labels
	sc := make([]float64, m*m+2*m) // scores, start, end (0)
	for i := range m {
		for j := range m {
			sc[i*m+j] = tr.Score(i, j)
		}
	}
	var p engine.Scaled[float32]
	p.Set(sc, m)
	r := rand.New(rand.NewPCG(uint64(m), 7))
	emits := make([][]float32, Seqs)
	marg := make([][]float32, Seqs)
	for i := range emits {
		emits[i] = make([]float32, T*m)
		for k := range emits[i] {
			emits[i][k] = float32(2 * r.NormFloat64())
		}
		marg[i] = make([]float32, T*m)
	}
	W := min(pool.Threads(), Seqs)
	works := make([]engine.ScaledWork[float32], W)
	per := (Seqs + W - 1) / W
	f := func(_ *engine.Workspace, w, g int) error {
		lo, hi := g*per, min((g+1)*per, Seqs)
		sw := &works[w]
		p.Lockstep(sw, emits[lo:hi], true, nil, nil)
		for k := range hi - lo {
			if _, ok := sw.GroupChain(k); !ok {
				return fmt.Errorf("%s: chain %d left the float32 range", Dense32, lo+k)
			}
			out := marg[lo+k]
			for t := range T {
				a, b := sw.GroupRow(k, t)
				o := out[t*m : (t+1)*m]
				for j := range o {
					o[j] = a[j] * b[j]
				}
			}
		}
		return nil
	}
	return func() error { return pool.Run(W, f) }, nil
}

// Bench times run under testing.B, reporting tokens/s and allocs/sequence.
func Bench(b *testing.B, run func() error) {
	b.ReportAllocs()
	// Warm the workspaces until a batch allocates nothing (at most 10
	// batches): a balanced pool hands chains to whichever worker is free, so
	// one batch may leave a worker's workspace cold. A path that allocates
	// in every batch still shows in the measurement.
	var before, after runtime.MemStats
	for range 10 {
		runtime.ReadMemStats(&before)
		if err := run(); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if after.Mallocs == before.Mallocs {
			break
		}
	}
	b.ResetTimer()
	for range b.N {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(T*Seqs)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// Plan lists the cases `simdcrf-bench engine` runs: every op, structure
// and label count on the best tier, dense also on every other tier, one
// and (where the machine has them) two threads; nbest up to M=128.
func Plan(labels []int, threads []int) []Case {
	var out []Case
	for _, op := range Ops {
		for _, st := range Structures {
			if op == "nbest" && st != "dense" || op != "forward_backward" && st == Dense32 {
				continue
			}
			for _, m := range labels {
				if op == "nbest" && m > 128 {
					continue
				}
				for _, th := range threads {
					out = append(out, Case{Op: op, Structure: st, Labels: m, Threads: th})
				}
			}
		}
	}
	return out
}

// Options selects what Run measures.
type Options struct {
	Labels    []int
	Threads   []int
	BenchTime time.Duration
	Count     int
	Each      func(Result)
}

// Run measures the plan: dense cases on every tier, the others on the best
// (active) tier.
func Run(o Options) ([]Result, error) {
	if len(o.Labels) == 0 {
		o.Labels = Labels
	}
	if len(o.Threads) == 0 {
		o.Threads = []int{1, 2}
	}
	if o.BenchTime == 0 {
		o.BenchTime = 200 * time.Millisecond
	}
	if o.Count < 1 {
		o.Count = 1
	}
	if err := kernelbench.SetBenchTime(o.BenchTime); err != nil {
		return nil, err
	}
	best := kernels.Impl()
	pools := map[int]*engine.Pool{}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	var out []Result
	for _, c := range Plan(o.Labels, o.Threads) {
		impls := []string{best}
		if (c.Structure == "dense" || c.Structure == Dense32) && c.Threads == 1 && c.Op != "nbest" {
			impls = kernels.Impls()
		}
		if pools[c.Threads] == nil {
			pools[c.Threads] = engine.NewPool(c.Threads)
		}
		run, err := Setup(c, pools[c.Threads])
		if err != nil {
			return nil, err
		}
		for _, impl := range impls {
			restore, err := kernels.Use(impl)
			if err != nil {
				return nil, err
			}
			var tps []float64
			allocs := math.Inf(1)
			// The least over the measurements: a call that allocates does
			// so in every one, while a pool worker parking on a loaded
			// machine sometimes makes the runtime refill its sudog cache.
			for range o.Count {
				res := testing.Benchmark(func(b *testing.B) { Bench(b, run) })
				if res.N == 0 {
					restore()
					return nil, fmt.Errorf("%v: benchmark failed", c)
				}
				tps = append(tps, res.Extra["tokens/s"])
				allocs = min(allocs, float64(res.AllocsPerOp())/Seqs)
			}
			restore()
			slices.Sort(tps)
			r := Result{Op: c.Op, Structure: c.Structure, Impl: impl, Labels: c.Labels, Threads: c.Threads,
				TokensPerSecond: tps[len(tps)/2], AllocsPerSequence: allocs}
			out = append(out, r)
			if o.Each != nil {
				o.Each(r)
			}
		}
	}
	return out, nil
}

// Controls are CPU-bound dummy workloads run through the same Pool, to tell
// the machine's scaling from the engine's: "scalar" is a dependent integer
// chain (latency-bound: it scales with cores even when two vCPUs share one
// physical core's execution ports), "fma" is the active tier's FMA
// throughput probe (port-bound: it scales only with physical cores).
var Controls = []string{"scalar", "fma"}

// controlSink keeps the scalar control's result alive.
var controlSink [64]uint64

// SetupControl returns the function that runs one batch of Seqs items of the
// control workload on pool; each item is about as long as a Viterbi
// sentence at M=45.
func SetupControl(name string, pool *engine.Pool) (run func() error, err error) {
	var f func(ws *engine.Workspace, w, i int) error
	switch name {
	case "scalar":
		f = func(_ *engine.Workspace, w, i int) error {
			x := uint64(i) + 1
			for range 20000 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
			}
			controlSink[8*w] += x
			return nil
		}
	case "fma":
		f = func(_ *engine.Workspace, _, _ int) error {
			kernels.FMAProbe(5000)
			return nil
		}
	default:
		return nil, fmt.Errorf("unknown control %q (have %v)", name, Controls)
	}
	return func() error { return pool.RunBalanced(Seqs, f) }, nil
}

// ControlResult is a control's throughput (items per second, median) on
// one and on two threads.
type ControlResult struct {
	Name     string
	One, Two float64
	ScalingX float64 // Two / One
}

// RunControls measures the controls on one and two threads, so that a
// report can say how far the machine itself lets work scale.
func RunControls(benchTime time.Duration, count int) ([]ControlResult, error) {
	if err := kernelbench.SetBenchTime(benchTime); err != nil {
		return nil, err
	}
	var out []ControlResult
	for _, name := range Controls {
		r := ControlResult{Name: name}
		for _, th := range []int{1, 2} {
			pool := engine.NewPool(th)
			run, err := SetupControl(name, pool)
			if err != nil {
				pool.Close()
				return nil, err
			}
			var ips []float64
			for range max(count, 1) {
				res := testing.Benchmark(func(b *testing.B) {
					for range b.N {
						if err := run(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(Seqs)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
				})
				ips = append(ips, res.Extra["items/s"])
			}
			pool.Close()
			slices.Sort(ips)
			if th == 1 {
				r.One = ips[len(ips)/2]
			} else {
				r.Two = ips[len(ips)/2]
			}
		}
		if r.One > 0 {
			r.ScalingX = r.Two / r.One
		}
		out = append(out, r)
	}
	return out, nil
}
