package kernelbench

import (
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdcrf/simdcrf/kernels"
)

// Result is one measured (kernel, labels, implementation): medians over
// Options.Count runs.
type Result struct {
	Kernel        string  `json:"kernel"`
	Impl          string  `json:"impl"`
	Labels        int     `json:"labels"`
	NsPerPosition float64 `json:"ns_per_position"`
	GFLOPs        float64 `json:"gflops,omitempty"`
	AllocsPerOp   int64   `json:"allocs_per_op"`
}

// Options selects what Run measures; zero fields mean everything (Labels:
// LabelsOf each kernel). Impls may name Loop, the scalar baseline of the
// kernels that have one (measured by default).
type Options struct {
	Kernels   []string
	Labels    []int
	Impls     []string
	BenchTime time.Duration // per measurement; default 100ms
	Count     int           // measurements per case, median reported; default 1
	// Each is called with every result as soon as it is known.
	Each func(Result)
}

var initOnce sync.Once

// SetBenchTime makes testing.Benchmark run for d, outside `go test`.
func SetBenchTime(d time.Duration) error {
	initOnce.Do(testing.Init)
	return flag.CommandLine.Set("test.benchtime", d.String())
}

// Run measures the selected kernels with testing.Benchmark, the same cases as
// `go test -bench` in package kernels. The implementations of one case are
// measured round-robin, Count times, so drift on a busy machine hits them
// alike; the median of each is reported.
func Run(o Options) ([]Result, error) {
	if len(o.Kernels) == 0 {
		o.Kernels = Kernels
	}
	loop := len(o.Impls) == 0 || slices.Contains(o.Impls, Loop)
	if len(o.Impls) == 0 {
		o.Impls = kernels.Impls()
	}
	o.Impls = slices.DeleteFunc(slices.Clone(o.Impls), func(name string) bool { return name == Loop })
	if o.BenchTime == 0 {
		o.BenchTime = 100 * time.Millisecond
	}
	if o.Count < 1 {
		o.Count = 1
	}
	for _, name := range o.Impls {
		if !slices.Contains(kernels.Impls(), name) {
			return nil, fmt.Errorf("implementation %q is not available here (have %v)", name, kernels.Impls())
		}
	}
	if err := SetBenchTime(o.BenchTime); err != nil {
		return nil, err
	}
	var out []Result
	for _, k := range o.Kernels {
		labels := o.Labels
		switch {
		case Elementwise(k):
			labels = []int{N}
		case len(labels) == 0:
			labels = LabelsOf(k)
		}
		for _, m := range labels {
			c, ok := New(k, m)
			if !ok {
				return nil, fmt.Errorf("unknown kernel %q (have %v)", k, slices.Concat(Kernels, Kernels32, KernelsSelect))
			}
			run := c.Setup()
			impls := o.Impls
			var runLoop func()
			if loop && c.Loop != nil {
				impls = append(slices.Clip(impls), Loop)
				runLoop = c.Loop()
			}
			ns := make([][]float64, len(impls))
			allocs := make([]int64, len(impls))
			for range o.Count {
				for i, name := range impls {
					if name == Loop {
						r := testing.Benchmark(func(b *testing.B) { c.Bench(b, runLoop) })
						ns[i] = append(ns[i], float64(r.T.Nanoseconds())/float64(r.N))
						allocs[i] = max(allocs[i], r.AllocsPerOp())
						continue
					}
					restore, err := kernels.Use(name)
					if err != nil {
						return nil, err
					}
					r := testing.Benchmark(func(b *testing.B) { c.Bench(b, run) })
					restore()
					ns[i] = append(ns[i], float64(r.T.Nanoseconds())/float64(r.N))
					allocs[i] = max(allocs[i], r.AllocsPerOp())
				}
			}
			for i, name := range impls {
				op := Median(ns[i])
				res := Result{Kernel: k, Impl: name, Labels: c.Labels, NsPerPosition: op / c.Positions, AllocsPerOp: allocs[i]}
				if c.Flops > 0 {
					res.GFLOPs = c.Flops / op
				}
				out = append(out, res)
				if o.Each != nil {
					o.Each(res)
				}
			}
		}
	}
	return out, nil
}

// Peaks measures the FMA peak of each implementation that has a probe, in
// GFLOP/s (best of reps).
func Peaks(impls []string, reps int) (map[string]float64, error) {
	if len(impls) == 0 {
		impls = kernels.Impls()
	}
	if err := SetBenchTime(100 * time.Millisecond); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, name := range impls {
		restore, err := kernels.Use(name)
		if err != nil {
			return nil, err
		}
		if p := Peak(reps); p > 0 {
			out[name] = p
		}
		restore()
	}
	return out, nil
}
