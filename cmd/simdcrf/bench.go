package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simdcrf/simdcrf/bench/beambench"
	"github.com/simdcrf/simdcrf/bench/enginebench"
	"github.com/simdcrf/simdcrf/bench/kernelbench"
	"github.com/simdcrf/simdcrf/bench/layerbench"
	"github.com/simdcrf/simdcrf/bench/report"
	"github.com/simdcrf/simdcrf/bench/trainbench"
	"github.com/simdcrf/simdcrf/internal/machine"
	"github.com/simdcrf/simdcrf/kernels"
)

func cmdBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "usage: simdcrf bench kernels|engine|layer|beam|obs|phases|scaling|report [options]\n")
		return errUsage
	}
	switch args[0] {
	case "kernels":
		return benchKernels(args[1:], stdout, stderr)
	case "engine":
		return benchEngine(args[1:], stdout, stderr)
	case "beam":
		return benchBeam(args[1:], stdout, stderr)
	case "layer":
		return benchLayer(args[1:], stdout, stderr)
	case "obs":
		return benchObs(args[1:], stdout, stderr)
	case "phases":
		return benchPhases(args[1:], stdout, stderr)
	case "scaling":
		return benchScaling(args[1:], stdout, stderr)
	case "report":
		return benchReport(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "simdcrf bench: unknown suite %q (have kernels, engine, layer, beam, obs, phases, scaling, report)\n", args[0])
	return errUsage
}

func benchKernels(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench kernels", "bench kernels [options]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per line instead of a table")
	kernelList := fs.String("kernels", "", "comma-separated kernels (default all: "+strings.Join(kernelbench.Kernels, ",")+")")
	labelList := fs.String("labels", "", "comma-separated label counts M (default "+joinInts(kernelbench.Labels)+")")
	implList := fs.String("impl", "", "comma-separated implementations (default all this CPU has: "+strings.Join(kernels.Impls(), ",")+")")
	benchTime := fs.Duration("benchtime", 100*time.Millisecond, "time per measurement")
	count := fs.Int("count", 1, "measurements per case; the median is reported")
	if err := parse(fs, args); err != nil {
		return err
	}
	labels, err := parseInts(*labelList)
	if err != nil {
		return fmt.Errorf("--labels: %w", err)
	}
	opts := kernelbench.Options{
		Kernels:   splitList(*kernelList),
		Labels:    labels,
		Impls:     splitList(*implList),
		BenchTime: *benchTime,
		Count:     *count,
	}
	m := machine.Describe()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		opts.Each = func(r kernelbench.Result) { enc.Encode(r) }
		fmt.Fprintf(stderr, "machine: %s\n", m)
		_, err := kernelbench.Run(opts)
		return err
	}
	fmt.Fprintf(stdout, "machine: %s\n", m)
	fmt.Fprintf(stdout, "ns per position (per element for exp, log, dot, axpy); median of %d × %v; x = speed-up over generic\n\n", *count, *benchTime)
	const row = "%-17s %5v %-8s %12s %8s %10s %7v\n"
	fmt.Fprintf(stdout, row, "kernel", "M", "impl", "ns/position", "GFLOP/s", "x generic", "allocs")
	base := map[string]float64{}
	opts.Each = func(r kernelbench.Result) {
		key := fmt.Sprintf("%s/%d", r.Kernel, r.Labels)
		if r.Impl == "generic" {
			base[key] = r.NsPerPosition
		}
		speed := ""
		if b, ok := base[key]; ok && r.Impl != "generic" {
			speed = fmt.Sprintf("%.1f", b/r.NsPerPosition)
		}
		gf := ""
		if r.GFLOPs > 0 {
			gf = fmt.Sprintf("%.2f", r.GFLOPs)
		}
		fmt.Fprintf(stdout, row, r.Kernel, r.Labels, r.Impl, fmtNs(r.NsPerPosition), gf, speed, r.AllocsPerOp)
	}
	_, err = kernelbench.Run(opts)
	return err
}

func benchEngine(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench engine", "bench engine [options]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per line instead of a table")
	labelList := fs.String("labels", "", "comma-separated label counts M (default "+joinInts(enginebench.Labels)+")")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts")
	benchTime := fs.Duration("benchtime", 200*time.Millisecond, "time per measurement")
	count := fs.Int("count", 1, "measurements per case; the median is reported")
	if err := parse(fs, args); err != nil {
		return err
	}
	labels, err := parseInts(*labelList)
	if err != nil {
		return fmt.Errorf("--labels: %w", err)
	}
	threads, err := parseInts(*threadList)
	if err != nil {
		return fmt.Errorf("--threads: %w", err)
	}
	opts := enginebench.Options{Labels: labels, Threads: threads, BenchTime: *benchTime, Count: *count}
	m := machine.Describe()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		opts.Each = func(r enginebench.Result) { enc.Encode(r) }
		fmt.Fprintf(stderr, "machine: %s\n", m)
		_, err := enginebench.Run(opts)
		return err
	}
	fmt.Fprintf(stdout, "machine: %s\n", m)
	fmt.Fprintf(stdout, "batches of %d sentences × %d tokens; median of %d × %v\n\n", enginebench.Seqs, enginebench.T, *count, *benchTime)
	const row = "%-17s %-10s %-8s %5v %7v %14s %10s\n"
	fmt.Fprintf(stdout, row, "op", "structure", "impl", "M", "threads", "tokens/s", "allocs/seq")
	opts.Each = func(r enginebench.Result) {
		fmt.Fprintf(stdout, row, r.Op, r.Structure, r.Impl, r.Labels, r.Threads, fmtRate(r.TokensPerSecond), fmt.Sprintf("%.2f", r.AllocsPerSequence))
	}
	_, err = enginebench.Run(opts)
	return err
}

func fmtRate(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func taskNames() string {
	var names []string
	for _, t := range trainbench.Tasks {
		names = append(names, t.Name)
	}
	return strings.Join(names, ",")
}

func benchReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench report", "bench report [options]", stderr)
	out := fs.String("out", "BENCHMARKS.md", "file to write")
	benchTime := fs.Duration("benchtime", 200*time.Millisecond, "time per measurement")
	count := fs.Int("count", 5, "measurements per case; the median is reported")
	labelList := fs.String("labels", "", "comma-separated label counts (default: every suite's full list)")
	data := fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR` (training tables are left out if it is missing)")
	templates := fs.String("templates", filepath.Join("..", "shared", "templates"), "the feature templates `DIR`")
	peers := fs.Bool("peers", true, "run CRFsuite (installed from npm on first use) beside simdcrf")
	tasks := fs.String("tasks", "", "comma-separated training tasks (default all: "+taskNames()+"); \"none\" for no training tables")
	withBeam := fs.Bool("beam", true, "measure simdcrf-beam (built from ./beam) against simdcrf tag, if the data is there")
	withLayer := fs.Bool("layer", true, "measure the CRF layer against PyTorch (python3-torch, installed with apt-get on first use if possible)")
	withPhases := fs.Bool("phases", true, "measure where an L-BFGS iteration's time goes (bench phases), if the data is there")
	withScaling := fs.Bool("scaling", true, "plot an L-BFGS iteration's cost against M (bench scaling; "+report.ScalingSVG+" beside --out), if the data is there")
	if err := parse(fs, args); err != nil {
		return err
	}
	labels, err := parseInts(*labelList)
	if err != nil {
		return fmt.Errorf("--labels: %w", err)
	}
	var training *trainbench.Options
	if _, err := os.Stat(*data); err == nil && *tasks != "none" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		work, err := os.MkdirTemp("", "simdcrf-report")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		training = &trainbench.Options{Exe: exe, DataDir: *data, TemplateDir: *templates, WorkDir: work,
			Tasks: splitList(*tasks), Peers: *peers}
	} else if *tasks != "none" {
		fmt.Fprintf(stderr, "simdcrf bench report: no %s, so no training tables\n", *data)
	}
	cfg := report.Config{
		Training:  training,
		Labels:    labels,
		BenchTime: *benchTime,
		Count:     *count,
		Command:   strings.TrimSpace("go run ./cmd/simdcrf bench report " + strings.Join(args, " ")),
		Progress:  func(s string) { fmt.Fprintln(stderr, s) },
	}
	if training != nil {
		training.Progress = cfg.Progress
		if *withPhases {
			cfg.Phases = &trainbench.PhaseOptions{DataDir: *data, TemplateDir: *templates, WorkDir: training.WorkDir, Progress: cfg.Progress}
		}
		if *withScaling {
			cfg.Scaling = &trainbench.ScaleOptions{DataDir: *data, WorkDir: training.WorkDir, Peers: *peers, Progress: cfg.Progress}
		}
	}
	if *withBeam {
		if _, err := os.Stat(*data); err == nil {
			o, cleanup, err := beamOptions(*data, *templates, cfg.Progress)
			if err != nil {
				return err
			}
			defer cleanup()
			cfg.Beam = o
		}
	}
	if *withLayer {
		// One round: torch with two threads on a loaded machine takes seconds a call.
		cfg.Layer = &layerbench.Options{Rounds: 1, Labels: labels, Reps: *count, MinTime: *benchTime}
	}
	if err := report.Write(*out, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}

// beamOptions sets up beambench for the beam module under the working
// directory (the repository, for go run ./cmd/simdcrf).
func beamOptions(data, templates string, progress func(string)) (*beambench.Options, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	dir, err := filepath.Abs("beam")
	if err != nil {
		return nil, nil, err
	}
	work, err := os.MkdirTemp("", "simdcrf-beambench")
	if err != nil {
		return nil, nil, err
	}
	return &beambench.Options{Exe: exe, BeamDir: dir, DataDir: data, TemplateDir: templates, WorkDir: work, Progress: progress},
		func() { os.RemoveAll(work) }, nil
}

// benchBeam prints the report's section on simdcrf-beam.
func benchBeam(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench beam", "bench beam [options]", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR`")
	templates := fs.String("templates", filepath.Join("..", "shared", "templates"), "the feature templates `DIR`")
	copies := fs.Int("copies", 64, "copies of the CoNLL-2000 test file to tag")
	repeats := fs.Int("repeats", 5, "runs of each command; the median is reported")
	if err := parse(fs, args); err != nil {
		return err
	}
	o, cleanup, err := beamOptions(*data, *templates, func(s string) { fmt.Fprintln(stderr, s) })
	if err != nil {
		return err
	}
	defer cleanup()
	o.Copies, o.Repeats = *copies, *repeats
	r, err := beambench.Measure(context.Background(), *o)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	report.WriteBeam(&buf, r)
	_, err = stdout.Write(buf.Bytes())
	return err
}

// benchObs prints the report's section on observation-dependent
// transitions (its three CoNLL-2000 trainings).
func benchObs(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench obs", "bench obs [options]", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR`")
	templates := fs.String("templates", filepath.Join("..", "shared", "templates"), "the feature templates `DIR`")
	tasks := fs.String("tasks", strings.Join([]string{trainbench.ObsPlain, trainbench.ObsSeen, trainbench.ObsAll}, ","), "comma-separated training tasks")
	repeats := fs.Int("repeats", 0, "tagging runs of each model; the median is reported (0: the report's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "simdcrf-obs")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	runs, err := trainbench.Measure(context.Background(), trainbench.Options{Exe: exe, DataDir: *data, TemplateDir: *templates, WorkDir: work,
		Tasks: splitList(*tasks), TagRepeats: *repeats, Progress: func(s string) { fmt.Fprintln(stderr, s) }})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	report.WriteObs(&buf, runs)
	_, err = stdout.Write(buf.Bytes())
	return err
}

// benchPhases prints the report's section on where an L-BFGS iteration's
// time goes.
func benchPhases(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench phases", "bench phases [options]", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR`")
	templates := fs.String("templates", filepath.Join("..", "shared", "templates"), "the feature templates `DIR`")
	tasks := fs.String("tasks", strings.Join(trainbench.PhaseTasks, ","), "comma-separated training tasks")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts")
	precisions := fs.String("precision", "float64,float32", "comma-separated precisions (-p precision=…)")
	iters := fs.Int("iterations", trainbench.DefaultPhaseIterations, "L-BFGS iterations measured per training (after a first one, left out)")
	rounds := fs.Int("rounds", trainbench.DefaultPhaseRounds, "trainings of each case, in turns; the median is reported")
	if err := parse(fs, args); err != nil {
		return err
	}
	threads, err := parseInts(*threadList)
	if err != nil {
		return fmt.Errorf("--threads: %w", err)
	}
	work, err := os.MkdirTemp("", "simdcrf-phases")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	o := trainbench.PhaseOptions{DataDir: *data, TemplateDir: *templates, WorkDir: work, Tasks: splitList(*tasks), Threads: threads,
		Precisions: splitList(*precisions), Iterations: *iters, Rounds: *rounds, Progress: func(s string) { fmt.Fprintln(stderr, s) }}
	res, err := trainbench.Phases(context.Background(), o)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	report.WritePhases(&buf, res, o)
	_, err = stdout.Write(buf.Bytes())
	return err
}

// benchScaling prints the report's section on an iteration's cost against
// M and writes its plot.
func benchScaling(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench scaling", "bench scaling [options]", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR`")
	svg := fs.String("svg", report.ScalingSVG, "the plot's `FILE` (the section embeds it by this path)")
	ks := fs.String("k", joinInts(trainbench.DefaultScaleKs), "comma-separated XPOS characters kept, one label set each")
	structures := fs.String("structures", strings.Join(trainbench.ScaleStructures, ","), "comma-separated structures")
	iters := fs.Int("iterations", trainbench.DefaultScaleIterations, "L-BFGS iterations per training (the median is plotted)")
	rounds := fs.Int("rounds", 1, "trainings of each point, in turns; the median is reported")
	peers := fs.Bool("peers", true, "run CRFsuite (installed from npm on first use) where its iteration is expected under --peer-cap")
	peerCap := fs.Float64("peer-cap", trainbench.DefaultScalePeerCap, "CRFsuite's expected seconds per iteration above which a point is skipped")
	if err := parse(fs, args); err != nil {
		return err
	}
	k, err := parseInts(*ks)
	if err != nil {
		return fmt.Errorf("--k: %w", err)
	}
	work, err := os.MkdirTemp("", "simdcrf-scaling")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	start := time.Now()
	res, err := trainbench.Scaling(context.Background(), trainbench.ScaleOptions{DataDir: *data, WorkDir: work, Ks: k,
		Structures: splitList(*structures), Iterations: *iters, Rounds: *rounds, Peers: *peers, PeerCap: *peerCap,
		Progress: func(s string) { fmt.Fprintln(stderr, s) }})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	b := report.WriteScaling(&buf, res, *svg)
	if b != nil {
		if err := report.WriteFileAtomic(*svg, b); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "scaling took %s; wrote %s\n", time.Since(start).Round(time.Second), *svg)
	_, err = stdout.Write(buf.Bytes())
	return err
}

func cmdVersion(stdout io.Writer) error {
	fmt.Fprintf(stdout, "simdcrf (development)\nmachine: %s\n", machine.Describe())
	return nil
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 100:
		return strconv.FormatFloat(ns, 'f', 0, 64)
	case ns >= 10:
		return strconv.FormatFloat(ns, 'f', 1, 64)
	}
	return strconv.FormatFloat(ns, 'f', 2, 64)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// benchLayer prints the CRF layer against PyTorch.
func benchLayer(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench layer", "bench layer [options]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per line instead of a table")
	labelList := fs.String("labels", "", "comma-separated label counts M (default "+joinInts(layerbench.Labels)+")")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts")
	types := fs.String("types", "float32,float64", "comma-separated element types")
	rounds := fs.Int("rounds", 1, "simdcrf and torch take turns this many times; the median is reported")
	reps := fs.Int("reps", 10, "timed calls per case at least")
	minTime := fs.Duration("mintime", 300*time.Millisecond, "time per case at least")
	noTorch := fs.Bool("notorch", false, "measure simdcrf alone")
	if err := parse(fs, args); err != nil {
		return err
	}
	labels, err := parseInts(*labelList)
	if err != nil {
		return fmt.Errorf("--labels: %w", err)
	}
	threads, err := parseInts(*threadList)
	if err != nil {
		return fmt.Errorf("--threads: %w", err)
	}
	o := layerbench.Options{Labels: labels, Threads: threads, Types: splitList(*types), Rounds: *rounds, Reps: *reps, MinTime: *minTime,
		NoTorch: *noTorch, Progress: func(s string) { fmt.Fprintln(stderr, s) }}
	m := machine.Describe()
	res, err := layerbench.Run(context.Background(), o)
	if err != nil {
		return err
	}
	if *asJSON {
		fmt.Fprintf(stderr, "machine: %s\n", m)
		enc := json.NewEncoder(stdout)
		for _, r := range res {
			enc.Encode(r)
		}
		return nil
	}
	fmt.Fprintf(stdout, "machine: %s\n", m)
	fmt.Fprintf(stdout, "B=%d, T=%d (lengths %d-%d); median ms per batch; x = torch ms / simdcrf ms\n\n", layerbench.B, layerbench.T, layerbench.MinLen, layerbench.T)
	const row = "%-9s %-7s %4v %7v %11s %12s %9s %12s %7s  %s\n"
	fmt.Fprintf(stdout, row, "op", "type", "M", "threads", "simdcrf ms", "tokens/s", "torch ms", "tokens/s", "x", "agreement")
	for _, r := range res {
		tms, trate, x := "-", "-", "-"
		if r.TorchMs > 0 {
			tms, trate, x = fmt.Sprintf("%.2f", r.TorchMs), fmtRate(r.TorchTokensS), fmt.Sprintf("%.1f", r.Speedup)
		}
		fmt.Fprintf(stdout, row, r.Op, r.Type, r.Labels, r.Threads, fmt.Sprintf("%.3f", r.SimdcrfMs), fmtRate(r.SimdcrfTokensS), tms, trate, x, report.Agreement(r))
	}
	return nil
}
