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

// Options selects what Run measures; zero fields mean everything.
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
	if len(o.Labels) == 0 {
		o.Labels = Labels
	}
	if len(o.Impls) == 0 {
		o.Impls = kernels.Impls()
	}
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
		if Elementwise(k) {
			labels = []int{N}
		}
		for _, m := range labels {
			c, ok := New(k, m)
			if !ok {
				return nil, fmt.Errorf("unknown kernel %q (have %v)", k, Kernels)
			}
			run := c.Setup()
			ns := make([][]float64, len(o.Impls))
			allocs := make([]int64, len(o.Impls))
			for range o.Count {
				for i, name := range o.Impls {
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
			for i, name := range o.Impls {
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
