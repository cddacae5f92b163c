package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/simdcrf/simdcrf/bench/beambench"
	"github.com/simdcrf/simdcrf/bench/enginebench"
	"github.com/simdcrf/simdcrf/bench/layerbench"
	"github.com/simdcrf/simdcrf/bench/report"
	"github.com/simdcrf/simdcrf/bench/roofline"
	"github.com/simdcrf/simdcrf/bench/trainbench"
	"github.com/simdcrf/simdcrf/internal/cli"
	"github.com/simdcrf/simdcrf/internal/machine"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/kernels/kernelbench"
)

func benchKernels(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("kernels", "kernels [options]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per line instead of a table")
	kernelList := fs.String("kernels", "", "comma-separated kernels (default all: "+strings.Join(kernelbench.Kernels, ",")+")")
	labelList := fs.String("labels", "", "comma-separated label counts M (default "+joinInts(kernelbench.Labels)+"; the select kernels 64,304,1024,1341)")
	implList := fs.String("impl", "", "comma-separated implementations (default all this CPU has: "+strings.Join(kernels.Impls(), ",")+")")
	benchTime := fs.Duration("benchtime", 100*time.Millisecond, "time per measurement")
	count := fs.Int("count", 1, "measurements per case; the median is reported")
	if err := cli.Parse(fs, args); err != nil {
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
		return jsonLines(stdout, stderr, m, &opts.Each, func() error { _, err := kernelbench.Run(opts); return err })
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
		fmt.Fprintf(stdout, row, r.Kernel, r.Labels, r.Impl, report.FormatNs(r.NsPerPosition), gf, speed, r.AllocsPerOp)
	}
	_, err = kernelbench.Run(opts)
	return err
}

func benchEngine(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("engine", "engine [options]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per line instead of a table")
	labelList := fs.String("labels", "", "comma-separated label counts M (default "+joinInts(enginebench.Labels)+")")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts")
	benchTime := fs.Duration("benchtime", 200*time.Millisecond, "time per measurement")
	count := fs.Int("count", 1, "measurements per case; the median is reported")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	labels, threads, err := parseLabelsThreads(*labelList, *threadList)
	if err != nil {
		return err
	}
	opts := enginebench.Options{Labels: labels, Threads: threads, BenchTime: *benchTime, Count: *count}
	m := machine.Describe()
	if *asJSON {
		return jsonLines(stdout, stderr, m, &opts.Each, func() error { _, err := enginebench.Run(opts); return err })
	}
	fmt.Fprintf(stdout, "machine: %s\n", m)
	fmt.Fprintf(stdout, "batches of %d sentences × %d tokens; median of %d × %v\n\n", enginebench.Seqs, enginebench.T, *count, *benchTime)
	const row = "%-17s %-10s %-8s %5v %7v %14s %10s\n"
	fmt.Fprintf(stdout, row, "op", "structure", "impl", "M", "threads", "tokens/s", "allocs/seq")
	opts.Each = func(r enginebench.Result) {
		fmt.Fprintf(stdout, row, r.Op, r.Structure, r.Impl, r.Labels, r.Threads, report.FormatRate(r.TokensPerSecond), fmt.Sprintf("%.2f", r.AllocsPerSequence))
	}
	_, err = enginebench.Run(opts)
	return err
}

func taskNames() string {
	var names []string
	for _, t := range trainbench.Tasks {
		names = append(names, t.Name)
	}
	return strings.Join(names, ",")
}

func benchReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report [options]", stderr)
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
	withPhases := fs.Bool("phases", true, "measure where an L-BFGS iteration's time goes (simdcrf-bench phases), if the data is there")
	withRoofline := fs.Bool("roofline", true, "set each phase beside this machine's limit (simdcrf-bench roofline), if the data is there")
	withFront := fs.Bool("frontdoor", true, "measure the Go API (package simdcrf) against the command on CoNLL-2000 chunking (simdcrf-bench frontdoor), if the data is there")
	withScaling := fs.Bool("scaling", true, "plot an L-BFGS iteration's cost against M (simdcrf-bench scaling; "+report.ScalingSVG+" beside --out), if the data is there")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	labels, err := parseInts(*labelList)
	if err != nil {
		return fmt.Errorf("--labels: %w", err)
	}
	cfg := report.Config{
		Labels:    labels,
		BenchTime: *benchTime,
		Count:     *count,
		Command:   strings.TrimSpace("go run ./cmd/simdcrf-bench report " + strings.Join(args, " ")),
		Progress:  func(s string) { fmt.Fprintln(stderr, s) },
	}
	_, noData := os.Stat(*data)
	if noData != nil && *tasks != "none" {
		fmt.Fprintf(stderr, "simdcrf-bench report: no %s, so no training tables\n", *data)
	}
	if noData == nil && (*tasks != "none" || *withBeam) {
		work, err := os.MkdirTemp("", "simdcrf-report")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		exe, err := buildSimdcrf(work, cfg.Progress)
		if err != nil {
			return err
		}
		if *tasks != "none" {
			cfg.Training = &trainbench.Options{Exe: exe, DataDir: *data, TemplateDir: *templates, WorkDir: work,
				Tasks: splitList(*tasks), Peers: *peers, Progress: cfg.Progress}
			if *withPhases {
				cfg.Phases = &trainbench.PhaseOptions{DataDir: *data, TemplateDir: *templates, WorkDir: work, Progress: cfg.Progress}
			}
			if *withRoofline {
				cfg.Roofline = &roofline.Options{DataDir: *data, TemplateDir: *templates, WorkDir: work, Progress: cfg.Progress}
			}
			if *withFront {
				cfg.FrontDoor = &trainbench.Options{Exe: exe, DataDir: *data, TemplateDir: *templates, WorkDir: work, Progress: cfg.Progress}
				cfg.FrontReps = frontReps
			}
			if *withScaling {
				cfg.Scaling = &trainbench.ScaleOptions{DataDir: *data, WorkDir: work, Peers: *peers, Progress: cfg.Progress}
			}
		}
		if *withBeam {
			cfg.Beam, err = beamOptions(exe, *data, *templates, filepath.Join(work, "beam"), cfg.Progress)
			if err != nil {
				return err
			}
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

// buildSimdcrf builds the command the suites time as a child process,
// cmd/simdcrf (the user's command, not this one), into dir with this
// binary's build tags. The go tool runs in the working directory, which must
// be in the repository.
func buildSimdcrf(dir string, progress func(string)) (string, error) {
	progress("building cmd/simdcrf")
	var flags []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				flags = append(flags, "-tags", s.Value)
			}
		}
	}
	return trainbench.BuildSimdcrf(context.Background(), dir, flags...)
}

// beamOptions sets up beambench, with exe as simdcrf, for the beam module
// under the working directory (the repository, for go run ./cmd/simdcrf-bench).
func beamOptions(exe, data, templates, work string, progress func(string)) (*beambench.Options, error) {
	dir, err := filepath.Abs("beam")
	if err != nil {
		return nil, err
	}
	return &beambench.Options{Exe: exe, BeamDir: dir, DataDir: data, TemplateDir: templates, WorkDir: work, Progress: progress}, nil
}

// dataFlags adds --data and --templates: the shared corpora and templates.
func dataFlags(fs *flag.FlagSet) (data, templates *string) {
	return fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR`"),
		fs.String("templates", filepath.Join("..", "shared", "templates"), "the feature templates `DIR`")
}

// env is what a section suite measures with: a work directory (removed
// after), progress lines for stderr and, if the suite runs it, simdcrf.
type env struct {
	work, exe string
	progress  func(string)
}

// section runs a suite that prints one of the report's sections: measure
// writes the section into buf, which then goes to stdout at once. withExe
// builds simdcrf into the work directory first.
func section(stdout, stderr io.Writer, name string, withExe bool, measure func(e env, buf *bytes.Buffer) error) error {
	work, err := os.MkdirTemp("", name)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	e := env{work: work, progress: func(s string) { fmt.Fprintln(stderr, s) }}
	if withExe {
		if e.exe, err = buildSimdcrf(work, e.progress); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := measure(e, &buf); err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// benchBeam prints the report's section on simdcrf-beam.
func benchBeam(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("beam", "beam [options]", stderr)
	data, templates := dataFlags(fs)
	copies := fs.Int("copies", 64, "copies of the CoNLL-2000 test file to tag")
	repeats := fs.Int("repeats", 5, "runs of each command; the median is reported")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	return section(stdout, stderr, "simdcrf-beambench", true, func(e env, buf *bytes.Buffer) error {
		o, err := beamOptions(e.exe, *data, *templates, e.work, e.progress)
		if err != nil {
			return err
		}
		o.Copies, o.Repeats = *copies, *repeats
		r, err := beambench.Measure(context.Background(), *o)
		if err != nil {
			return err
		}
		report.WriteBeam(buf, r)
		return nil
	})
}

// benchObs prints the report's section on observation-dependent
// transitions (its three CoNLL-2000 trainings).
func benchObs(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("obs", "obs [options]", stderr)
	data, templates := dataFlags(fs)
	tasks := fs.String("tasks", strings.Join([]string{trainbench.ObsPlain, trainbench.ObsSeen, trainbench.ObsAll}, ","), "comma-separated training tasks")
	repeats := fs.Int("repeats", 0, "tagging runs of each model; the median is reported (0: the report's)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	return section(stdout, stderr, "simdcrf-obs", true, func(e env, buf *bytes.Buffer) error {
		runs, err := trainbench.Measure(context.Background(), trainbench.Options{Exe: e.exe, DataDir: *data, TemplateDir: *templates, WorkDir: e.work,
			Tasks: splitList(*tasks), TagRepeats: *repeats, Progress: e.progress})
		if err != nil {
			return err
		}
		report.WriteObs(buf, runs)
		return nil
	})
}

// frontReps is how many times the report and the frontdoor suite train
// each way (medians).
const frontReps = 3

// benchFrontDoor prints the report's section on the Go API against the
// command.
func benchFrontDoor(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("frontdoor", "frontdoor [options]", stderr)
	data, templates := dataFlags(fs)
	reps := fs.Int("reps", frontReps, "trainings each way, in turns; the median is reported")
	repeats := fs.Int("repeats", 0, "tagging runs each way; the median is reported (0: the report's)")
	maxIter := fs.Int("max-iterations", 0, "stop both trainings after N iterations (quick checks, not reports)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	return section(stdout, stderr, "simdcrf-frontdoor", true, func(e env, buf *bytes.Buffer) error {
		r, err := trainbench.MeasureFrontDoor(context.Background(), trainbench.Options{Exe: e.exe, DataDir: *data, TemplateDir: *templates,
			WorkDir: e.work, TagRepeats: *repeats, MaxIterCheck: *maxIter, Progress: e.progress}, *reps)
		if err != nil {
			return err
		}
		report.WriteFrontDoor(buf, r)
		return nil
	})
}

// benchPhases prints the report's section on where an L-BFGS iteration's
// time goes.
func benchPhases(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("phases", "phases [options]", stderr)
	data, templates := dataFlags(fs)
	tasks := fs.String("tasks", strings.Join(trainbench.PhaseTasks, ","), "comma-separated training tasks")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts")
	precisions := fs.String("precision", "float64,float32", "comma-separated precisions (-p precision=…)")
	iters := fs.Int("iterations", trainbench.DefaultPhaseIterations, "L-BFGS iterations measured per training (after a first one, left out)")
	rounds := fs.Int("rounds", trainbench.DefaultPhaseRounds, "trainings of each case, in turns; the median is reported")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	threads, err := parseInts(*threadList)
	if err != nil {
		return fmt.Errorf("--threads: %w", err)
	}
	return section(stdout, stderr, "simdcrf-phases", false, func(e env, buf *bytes.Buffer) error {
		o := trainbench.PhaseOptions{DataDir: *data, TemplateDir: *templates, WorkDir: e.work, Tasks: splitList(*tasks), Threads: threads,
			Precisions: splitList(*precisions), Iterations: *iters, Rounds: *rounds, Progress: e.progress}
		res, err := trainbench.Phases(context.Background(), o)
		if err != nil {
			return err
		}
		report.WritePhases(buf, res, o)
		return nil
	})
}

// benchRoofline prints the report's section on how far each phase of an
// L-BFGS iteration is from this machine's limit, or with --json a line
// per phase.
func benchRoofline(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("roofline", "roofline [--json] [options]", stderr)
	data, templates := dataFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per phase and task instead of the section")
	tasks := fs.String("tasks", strings.Join(trainbench.PhaseTasks, ","), "comma-separated training tasks")
	iters := fs.Int("iterations", trainbench.DefaultPhaseIterations, "L-BFGS iterations measured per training (after a first one, left out)")
	rounds := fs.Int("rounds", trainbench.DefaultPhaseRounds, "trainings of each task; the median is reported")
	reps := fs.Int("reps", 3, "measurements of each machine limit; the best is used")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	return section(stdout, stderr, "simdcrf-roofline", false, func(e env, buf *bytes.Buffer) error {
		r, err := roofline.Run(context.Background(), roofline.Options{DataDir: *data, TemplateDir: *templates, WorkDir: e.work,
			Tasks: splitList(*tasks), Iterations: *iters, Rounds: *rounds, Reps: *reps, Progress: e.progress})
		if err != nil {
			return err
		}
		if !*asJSON {
			report.WriteRoofline(buf, r)
			return nil
		}
		enc := json.NewEncoder(buf)
		for _, row := range r.Rows {
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// benchScaling prints the report's section on an iteration's cost against
// M and writes its plot.
func benchScaling(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("scaling", "scaling [options]", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "data"), "the corpora `DIR`")
	svg := fs.String("svg", report.ScalingSVG, "the plot's `FILE` (the section embeds it by this path)")
	ks := fs.String("k", joinInts(trainbench.DefaultScaleKs), "comma-separated XPOS characters kept, one label set each")
	structures := fs.String("structures", strings.Join(trainbench.ScaleStructures, ","), "comma-separated structures")
	iters := fs.Int("iterations", trainbench.DefaultScaleIterations, "L-BFGS iterations per training (the median is plotted)")
	rounds := fs.Int("rounds", 1, "trainings of each point, in turns; the median is reported")
	peers := fs.Bool("peers", true, "run CRFsuite (installed from npm on first use) where its iteration is expected under --peer-cap")
	peerCap := fs.Float64("peer-cap", trainbench.DefaultScalePeerCap, "CRFsuite's expected seconds per iteration above which a point is skipped")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	k, err := parseInts(*ks)
	if err != nil {
		return fmt.Errorf("--k: %w", err)
	}
	return section(stdout, stderr, "simdcrf-scaling", false, func(e env, buf *bytes.Buffer) error {
		start := time.Now()
		res, err := trainbench.Scaling(context.Background(), trainbench.ScaleOptions{DataDir: *data, WorkDir: e.work, Ks: k,
			Structures: splitList(*structures), Iterations: *iters, Rounds: *rounds, Peers: *peers, PeerCap: *peerCap,
			Progress: e.progress})
		if err != nil {
			return err
		}
		if b := report.WriteScaling(buf, res, *svg); b != nil {
			if err := report.WriteFileAtomic(*svg, b); err != nil {
				return err
			}
		}
		e.progress(fmt.Sprintf("scaling took %s; wrote %s", time.Since(start).Round(time.Second), *svg))
		return nil
	})
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

// jsonLines runs a suite with each result printed to stdout as a line of
// JSON (through *each, the suite's callback), the machine to stderr.
func jsonLines[R any](stdout, stderr io.Writer, machine fmt.Stringer, each *func(R), run func() error) error {
	enc := json.NewEncoder(stdout)
	*each = func(r R) { enc.Encode(r) }
	fmt.Fprintf(stderr, "machine: %s\n", machine)
	return run()
}

// parseLabelsThreads parses --labels and --threads.
func parseLabelsThreads(labelList, threadList string) (labels, threads []int, err error) {
	if labels, err = parseInts(labelList); err != nil {
		return nil, nil, fmt.Errorf("--labels: %w", err)
	}
	if threads, err = parseInts(threadList); err != nil {
		return nil, nil, fmt.Errorf("--threads: %w", err)
	}
	return labels, threads, nil
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
	fs := newFlags("layer", "layer [options]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per line instead of a table")
	labelList := fs.String("labels", "", "comma-separated label counts M (default "+joinInts(layerbench.Labels)+")")
	threadList := fs.String("threads", "1,2", "comma-separated thread counts")
	types := fs.String("types", "float32,float64", "comma-separated element types")
	rounds := fs.Int("rounds", 1, "simdcrf and torch take turns this many times; the median is reported")
	reps := fs.Int("reps", 10, "timed calls per case at least")
	minTime := fs.Duration("mintime", 300*time.Millisecond, "time per case at least")
	noTorch := fs.Bool("notorch", false, "measure simdcrf alone")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	labels, threads, err := parseLabelsThreads(*labelList, *threadList)
	if err != nil {
		return err
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
			tms, trate, x = fmt.Sprintf("%.2f", r.TorchMs), report.FormatRate(r.TorchTokensS), fmt.Sprintf("%.1f", r.Speedup)
		}
		fmt.Fprintf(stdout, row, r.Op, r.Type, r.Labels, r.Threads, fmt.Sprintf("%.3f", r.SimdcrfMs), report.FormatRate(r.SimdcrfTokensS), tms, trate, x, report.Agreement(r))
	}
	return nil
}
