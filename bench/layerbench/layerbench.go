// Package layerbench measures the CRF layer (package layer) side by side
// with a standard batched CRF layer written in PyTorch (torch_crf.py: a
// Python loop over time steps with logsumexp and max, the gradient by
// autograd — pytorch-crf's algorithm), on the same seeded scores, for
// `simdcrf-bench layer` and the report.
//
// PyTorch is never a dependency of the module: Ensure finds Debian's
// python3-torch under /usr/bin/python3, or installs it with apt-get when it
// can (as root), as bench/crfsuite installs CRFsuite from npm.
package layerbench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/layer"
)

//go:embed torch_crf.py
var torchScript []byte

// The shape of the benchmark: B sequences of T positions, lengths uniform in
// MinLen..T (the first is T).
const (
	B, T, MinLen = 32, 50, 25
)

// Labels, Types, Threads and Ops are what the suite covers by default.
var (
	Labels  = []int{9, 45, 128}
	Types   = []string{"float32", "float64"}
	Threads = []int{1, 2}
	Ops     = []string{"nll_grad", "decode", "marginals"}
)

// Python is the interpreter that has Debian's python3-torch.
const Python = "/usr/bin/python3"

// ErrUnavailable wraps failures that mean "PyTorch cannot be had here".
var ErrUnavailable = errors.New("layerbench: PyTorch (python3-torch) unavailable")

// Options configure a run.
type Options struct {
	Labels  []int
	Types   []string
	Threads []int
	Warmup  int           // calls before timing (default 3)
	Reps    int           // timed calls at least (default 10)
	MinTime time.Duration // and at least this long (default 300ms)
	Rounds  int           // simdcrf and torch take turns this many times; medians (default 1)
	NoTorch bool          // measure simdcrf alone
	// Progress gets a line per measured case (may be nil).
	Progress func(string)
}

// Result is one case: an operation at one size, type and thread count.
type Result struct {
	Op      string `json:"op"` // nll_grad, decode or marginals
	Type    string `json:"type"`
	Labels  int    `json:"labels"`
	Threads int    `json:"threads"`
	Tokens  int    `json:"tokens"` // per batch
	Impl    string `json:"impl"`   // simdcrf's kernel tier

	SimdcrfMs      float64 `json:"simdcrf_ms"`
	SimdcrfTokensS float64 `json:"simdcrf_tokens_per_second"`
	TorchMs        float64 `json:"torch_ms,omitempty"`
	TorchTokensS   float64 `json:"torch_tokens_per_second,omitempty"`
	Speedup        float64 `json:"speedup,omitempty"` // torch ms / simdcrf ms
	Torch          string  `json:"torch_version,omitempty"`

	// Agreement with torch of the same type (threads = 1 only).
	// nll_grad: MaxRel is the largest relative difference of a sequence's
	// NLL, MaxAbs that of a gradient entry (relative to max(1, |entry|):
	// the transition gradient sums over the batch); decode: Mismatch counts labels
	// that differ, MaxRel the path scores; marginals: MaxAbs the marginals,
	// MaxRel log Z.
	MaxRel   float64 `json:"max_rel_diff,omitempty"`
	MaxAbs   float64 `json:"max_abs_diff,omitempty"`
	Mismatch int     `json:"label_mismatches"`
	Compared bool    `json:"compared"`
}

// Data is one seeded problem.
type Data struct {
	M                 int
	Em, Trans, St, En []float64
	Lengths           []int32
	Tags              []int32
}

// NewData makes the scores of the benchmark at M labels: emissions
// N(0, 2²), transitions, start and end N(0, 1), random gold tags.
func NewData(M int) *Data {
	r := rand.New(rand.NewPCG(uint64(M), 15))
	d := &Data{M: M, Em: make([]float64, B*T*M), Trans: make([]float64, M*M), St: make([]float64, M), En: make([]float64, M),
		Lengths: make([]int32, B), Tags: make([]int32, B*T)}
	for k := range d.Em {
		d.Em[k] = 2 * r.NormFloat64()
	}
	for k := range d.Trans {
		d.Trans[k] = r.NormFloat64()
	}
	for j := range M {
		d.St[j], d.En[j] = r.NormFloat64(), r.NormFloat64()
	}
	lr := rand.New(rand.NewPCG(1, 15)) // the same lengths for every M
	for b := range B {
		d.Lengths[b] = int32(MinLen + lr.IntN(T-MinLen+1))
	}
	d.Lengths[0] = T
	for k := range d.Tags {
		d.Tags[k] = int32(r.IntN(M))
	}
	return d
}

// Tokens is the number of positions within the lengths.
func (d *Data) Tokens() int {
	n := 0
	for _, l := range d.Lengths {
		n += int(l)
	}
	return n
}

// Ensure returns the Python interpreter with torch, installing
// python3-torch with apt-get when it is missing and this process may.
func Ensure(ctx context.Context) (string, error) {
	check := func() error {
		return exec.CommandContext(ctx, Python, "-c", "import torch, numpy").Run()
	}
	if _, err := os.Stat(Python); err != nil {
		return "", fmt.Errorf("%w: no %s", ErrUnavailable, Python)
	}
	if check() == nil {
		return Python, nil
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		return "", fmt.Errorf("%w: import torch failed; install it with apt-get install python3-torch", ErrUnavailable)
	}
	cmd := exec.CommandContext(ctx, apt, "install", "-y", "--no-install-recommends", "python3-torch")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: apt-get install python3-torch: %v\n%s", ErrUnavailable, err, out)
	}
	if err := check(); err != nil {
		return "", fmt.Errorf("%w: import torch fails after installing python3-torch", ErrUnavailable)
	}
	return Python, nil
}

func (o *Options) defaults() {
	if o.Labels == nil {
		o.Labels = Labels
	}
	if o.Types == nil {
		o.Types = Types
	}
	if o.Threads == nil {
		o.Threads = Threads
	}
	if o.Warmup <= 0 {
		o.Warmup = 3
	}
	if o.Reps <= 0 {
		o.Reps = 10
	}
	if o.MinTime <= 0 {
		o.MinTime = 300 * time.Millisecond
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
}

type key struct {
	op, typ    string
	m, threads int
}

// Run measures every case and returns the results in the order Ops ×
// Labels × Types × Threads.
func Run(ctx context.Context, o Options) ([]Result, error) {
	o.defaults()
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	for _, t := range o.Types {
		if t != "float32" && t != "float64" {
			return nil, fmt.Errorf("layerbench: unknown type %q (have float32, float64)", t)
		}
	}
	dir, err := os.MkdirTemp("", "simdcrf-layerbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	data := map[int]*Data{}
	for _, m := range o.Labels {
		d := NewData(m)
		data[m] = d
		if err := d.write(dir); err != nil {
			return nil, err
		}
	}
	python := ""
	if !o.NoTorch {
		if python, err = Ensure(ctx); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "torch_crf.py"), torchScript, 0o644); err != nil {
			return nil, err
		}
	}
	ours := map[key][]float64{}
	theirs := map[key][]float64{}
	version := ""
	outs := map[key]*goOut{}
	for round := range o.Rounds {
		if python != "" {
			progress(fmt.Sprintf("round %d: torch", round+1))
			err := runTorch(ctx, python, dir, o, round == 0, func(l torchLine) {
				version = l.Torch
				for _, op := range Ops {
					k := key{op, l.Dtype, l.M, l.Threads}
					theirs[k] = append(theirs[k], l.ms(op))
				}
				progress(fmt.Sprintf("  torch M=%d %s threads=%d: nll+grad %.2f ms, decode %.2f ms, marginals %.2f ms", l.M, l.Dtype, l.Threads, l.NLLMs, l.DecodeMs, l.MargMs))
			})
			if err != nil {
				return nil, err
			}
		}
		progress(fmt.Sprintf("round %d: simdcrf", round+1))
		for _, m := range o.Labels {
			for _, typ := range o.Types {
				for _, th := range o.Threads {
					var ms [3]float64
					var out *goOut
					if typ == "float32" {
						ms, out = measure[float32](data[m], th, o)
					} else {
						ms, out = measure[float64](data[m], th, o)
					}
					if out.err != nil {
						return nil, out.err
					}
					for i, op := range Ops {
						k := key{op, typ, m, th}
						ours[k] = append(ours[k], ms[i])
					}
					outs[key{"", typ, m, th}] = out
					progress(fmt.Sprintf("  simdcrf M=%d %s threads=%d: nll+grad %.3f ms, decode %.3f ms, marginals %.3f ms", m, typ, th, ms[0], ms[1], ms[2]))
				}
			}
		}
	}
	var res []Result
	for _, op := range Ops {
		for _, m := range o.Labels {
			for _, typ := range o.Types {
				for _, th := range o.Threads {
					k := key{op, typ, m, th}
					tok := data[m].Tokens()
					r := Result{Op: op, Type: typ, Labels: m, Threads: th, Tokens: tok, Impl: kernels.Impl()}
					r.SimdcrfMs = median(ours[k])
					r.SimdcrfTokensS = float64(tok) / r.SimdcrfMs * 1e3
					if ts := theirs[k]; len(ts) > 0 {
						r.TorchMs = median(ts)
						r.TorchTokensS = float64(tok) / r.TorchMs * 1e3
						r.Speedup = r.TorchMs / r.SimdcrfMs
						r.Torch = version
						if th == o.Threads[0] {
							if err := agree(&r, dir, data[m], outs[key{"", typ, m, th}]); err != nil {
								return nil, err
							}
						}
					}
					res = append(res, r)
				}
			}
		}
	}
	return res, nil
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func writeFile(path string, v any) error {
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func readFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return binary.Read(bytes.NewReader(b), binary.LittleEndian, v)
}

func (d *Data) write(dir string) error {
	M := d.M
	for _, f := range []struct {
		name string
		v    any
	}{
		{"lengths.i32", d.Lengths},
		{fmt.Sprintf("em%d.f64", M), d.Em},
		{fmt.Sprintf("trans%d.f64", M), d.Trans},
		{fmt.Sprintf("start%d.f64", M), d.St},
		{fmt.Sprintf("end%d.f64", M), d.En},
		{fmt.Sprintf("tags%d.i32", M), d.Tags},
	} {
		if err := writeFile(filepath.Join(dir, f.name), f.v); err != nil {
			return err
		}
	}
	return nil
}

// torchLine is what torch_crf.py prints per case.
type torchLine struct {
	M        int     `json:"M"`
	Dtype    string  `json:"dtype"`
	Threads  int     `json:"threads"`
	NLLMs    float64 `json:"nll_grad_ms"`
	DecodeMs float64 `json:"decode_ms"`
	MargMs   float64 `json:"marginals_ms"`
	Torch    string  `json:"torch"`
}

func (l torchLine) ms(op string) float64 {
	switch op {
	case "nll_grad":
		return l.NLLMs
	case "decode":
		return l.DecodeMs
	}
	return l.MargMs
}

func runTorch(ctx context.Context, python, dir string, o Options, write bool, each func(torchLine)) error {
	type tcase struct {
		M       int    `json:"M"`
		Dtype   string `json:"dtype"`
		Threads int    `json:"threads"`
		Write   bool   `json:"write"`
	}
	spec := struct {
		Dir     string  `json:"dir"`
		B       int     `json:"B"`
		T       int     `json:"T"`
		Warmup  int     `json:"warmup"`
		Reps    int     `json:"reps"`
		MinTime float64 `json:"min_time"`
		Cases   []tcase `json:"cases"`
	}{Dir: dir, B: B, T: T, Warmup: o.Warmup, Reps: o.Reps, MinTime: o.MinTime.Seconds()}
	for _, m := range o.Labels {
		for _, typ := range o.Types {
			for i, th := range o.Threads {
				spec.Cases = append(spec.Cases, tcase{m, typ, th, write && i == 0})
			}
		}
	}
	js, _ := json.Marshal(spec)
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, js, 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, python, filepath.Join(dir, "torch_crf.py"), specPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("layerbench: %s: %w", python, err)
	}
	// One line per case, read as they come (progress for long runs).
	var bad error
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var t torchLine
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			if bad == nil {
				bad = fmt.Errorf("layerbench: torch_crf.py printed %q: %v", sc.Text(), err)
			}
			continue
		}
		if each != nil {
			each(t)
		}
	}
	if err := sc.Err(); err != nil && bad == nil {
		bad = fmt.Errorf("layerbench: reading torch_crf.py's output: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("layerbench: %s torch_crf.py: %v\n%s", python, err, stderr.String())
	}
	return bad
}

// goOut holds simdcrf's results of one case, widened to float64.
type goOut struct {
	nll, gEm, gTrans, gStart, gEnd []float64
	paths                          []int32
	scores, marg, logZ             []float64
	err                            error
}

// measure times the three operations of one case and keeps the results.
func measure[F float32 | float64](d *Data, threads int, o Options) ([3]float64, *goOut) {
	M := d.M
	c := layer.New[F](M)
	c.Threads = threads
	for k, v := range d.Trans {
		c.Trans[k] = F(v)
	}
	for j := range M {
		c.Start[j], c.End[j] = F(d.St[j]), F(d.En[j])
	}
	bt := layer.Batch[F]{B: B, T: T, Emissions: make([]F, len(d.Em)), Lengths: d.Lengths}
	for k, v := range d.Em {
		bt.Emissions[k] = F(v)
	}
	g := &layer.Grad[F]{Emissions: make([]F, B*T*M), Trans: make([]F, M*M), Start: make([]F, M), End: make([]F, M)}
	per := make([]float64, B)
	paths := make([]int32, B*T)
	scores := make([]F, B)
	marg := make([]F, B*T*M)
	logZ := make([]float64, B)
	out := &goOut{}
	var ms [3]float64
	for i, f := range []func() error{
		func() error { _, err := c.NLL(bt, d.Tags, layer.ReduceSum, per, g); return err },
		func() error { return c.Decode(bt, paths, scores) },
		func() error { return c.Marginals(bt, marg, logZ) },
	} {
		ms[i], out.err = timeit(f, o)
		if out.err != nil {
			return ms, out
		}
	}
	wide := func(x []F) []float64 {
		y := make([]float64, len(x))
		for k, v := range x {
			y[k] = float64(v)
		}
		return y
	}
	out.nll, out.gEm, out.gTrans, out.gStart, out.gEnd = per, wide(g.Emissions), wide(g.Trans), wide(g.Start), wide(g.End)
	out.paths, out.scores, out.marg, out.logZ = paths, wide(scores), wide(marg), logZ
	return ms, out
}

func timeit(f func() error, o Options) (float64, error) {
	for range o.Warmup {
		if err := f(); err != nil {
			return 0, err
		}
	}
	var ts []float64
	start := time.Now()
	for len(ts) < o.Reps || time.Since(start) < o.MinTime && len(ts) < 100000 {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ts = append(ts, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	return median(ts), nil
}

// agree compares simdcrf's results of a case with torch's.
func agree(r *Result, dir string, d *Data, g *goOut) error {
	if g == nil {
		return nil
	}
	M := d.M
	p := filepath.Join(dir, fmt.Sprintf("torch_%d_%s_", M, r.Type))
	rd := func(name string, n int) ([]float64, error) {
		x := make([]float64, n)
		return x, readFile(p+name, x)
	}
	maxAbs := func(a, b []float64) float64 {
		m := 0.0
		for k := range a {
			m = math.Max(m, math.Abs(a[k]-b[k]))
		}
		return m
	}
	maxRel := func(a, b []float64) float64 {
		m := 0.0
		for k := range a {
			m = math.Max(m, math.Abs(a[k]-b[k])/math.Max(1, math.Abs(b[k])))
		}
		return m
	}
	switch r.Op {
	case "nll_grad":
		nll, err := rd("nll.f64", B)
		if err != nil {
			return err
		}
		r.MaxRel = maxRel(g.nll, nll)
		for _, x := range []struct {
			name string
			ours []float64
		}{{"gem.f64", g.gEm}, {"gtrans.f64", g.gTrans}, {"gstart.f64", g.gStart}, {"gend.f64", g.gEnd}} {
			v, err := rd(x.name, len(x.ours))
			if err != nil {
				return err
			}
			r.MaxAbs = math.Max(r.MaxAbs, maxRel(x.ours, v))
		}
	case "decode":
		paths := make([]int32, B*T)
		if err := readFile(p+"paths.i32", paths); err != nil {
			return err
		}
		for k := range paths {
			if paths[k] != g.paths[k] {
				r.Mismatch++
			}
		}
		sc, err := rd("scores.f64", B)
		if err != nil {
			return err
		}
		r.MaxRel = maxRel(g.scores, sc)
	case "marginals":
		marg, err := rd("marg.f64", B*T*M)
		if err != nil {
			return err
		}
		r.MaxAbs = maxAbs(g.marg, marg)
		z, err := rd("logz.f64", B)
		if err != nil {
			return err
		}
		r.MaxRel = maxRel(g.logZ, z)
	}
	r.Compared = true
	return nil
}
