// Package report measures simdcrf on this machine and writes BENCHMARKS.md:
// every figure in it comes from the run that wrote it.
package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/simdcrf/simdcrf/bench/beambench"
	"github.com/simdcrf/simdcrf/bench/enginebench"
	"github.com/simdcrf/simdcrf/bench/layerbench"
	"github.com/simdcrf/simdcrf/bench/roofline"
	"github.com/simdcrf/simdcrf/bench/trainbench"
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/machine"
	"github.com/simdcrf/simdcrf/kernels/kernelbench"
)

// Config controls a report run.
type Config struct {
	BenchTime time.Duration // per measurement
	Count     int           // measurements per case (median reported)
	Command   string        // the command line that regenerates the report
	Labels    []int         // label counts to measure (default: each suite's own)
	Progress  func(string)  // progress lines (may be nil)
	// Training, if set, adds the accuracy and CRFsuite tables.
	Training *trainbench.Options
	// Beam, if set, adds simdcrf-beam against simdcrf tag.
	Beam *beambench.Options
	// Layer, if set, adds the CRF layer against PyTorch.
	Layer *layerbench.Options
	// Phases, if set, adds where an L-BFGS iteration's time goes.
	Phases *trainbench.PhaseOptions
	// Roofline, if set, adds how far each phase is from the machine's
	// limit.
	Roofline *roofline.Options
	// Scaling, if set, adds the plot of an iteration's cost against M
	// (ScalingSVG, written beside the report by Write).
	Scaling *trainbench.ScaleOptions
	// FrontDoor, if not nil, measures the Go API against the command
	// (FrontReps runs of each training).
	FrontDoor *trainbench.Options
	FrontReps int
}

// Write measures everything and writes the report to path atomically
// (a temporary file in the same directory, then a rename). The temporary
// file is created first, so an unwritable destination fails before the
// measurements, not after.
func Write(path string, cfg Config) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	files := map[string][]byte{}
	if err := render(&buf, cfg, files); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	// The report's images first, so that the report never names an image
	// not there.
	if err := writeBeside(path, files); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	return commit(f, path, buf.Bytes())
}

// writeBeside writes each file, named relative to the report at path, in
// the report's directory, atomically.
func writeBeside(path string, files map[string][]byte) error {
	for name, b := range files {
		if err := WriteFileAtomic(filepath.Join(filepath.Dir(path), name), b); err != nil {
			return err
		}
	}
	return nil
}

// WriteFileAtomic writes b to path through a temporary file in the same
// directory, renamed into place.
func WriteFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	return commit(f, path, b)
}

// Render measures everything and writes the report's Markdown to buf
// (the files it names, such as ScalingSVG, are not written: Write does).
func Render(buf *bytes.Buffer, cfg Config) error {
	return render(buf, cfg, nil)
}

// render is Render, adding the report's other files, by name relative to
// the report, to files (if not nil).
func render(buf *bytes.Buffer, cfg Config, files map[string][]byte) error {
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	m := machine.Describe()
	start := time.Now()

	progress("measuring FMA peak")
	peaks, err := kernelbench.Peaks(nil, 5)
	if err != nil {
		return err
	}
	progress("measuring kernels")
	res, err := kernelbench.Run(kernelbench.Options{
		Labels:    cfg.Labels,
		BenchTime: cfg.BenchTime,
		Count:     cfg.Count,
		Each: func(r kernelbench.Result) {
			progress(fmt.Sprintf("  %s M=%d %s: %.1f ns/position", r.Kernel, r.Labels, r.Impl, r.NsPerPosition))
		},
	})
	if err != nil {
		return err
	}

	fmt.Fprintf(buf, "# simdcrf benchmarks\n\n")
	fmt.Fprintf(buf, "Every figure below was measured by one run of\n\n    %s\n\n", cfg.Command)
	fmt.Fprintf(buf, "on %s (run took %s).\n\n", start.UTC().Format("2006-01-02 15:04 UTC"), tookPlaceholder)
	fmt.Fprintf(buf, "**Machine:** %s.\n\n", m)
	fmt.Fprintf(buf, "The machine is shared and noisy: each figure is the median of %d measurements of %v, "+
		"the implementations of one case measured round-robin; compare tiers as ratios within this file.\n\n", cfg.Count, cfg.BenchTime)

	writeKernels(buf, res, peaks)

	progress("measuring the engine")
	eng, err := enginebench.Run(enginebench.Options{
		Labels:    cfg.Labels,
		BenchTime: cfg.BenchTime,
		Count:     cfg.Count,
		Each: func(r enginebench.Result) {
			progress(fmt.Sprintf("  %s %s M=%d %s threads=%d: %.0f tokens/s", r.Op, r.Structure, r.Labels, r.Impl, r.Threads, r.TokensPerSecond))
		},
	})
	if err != nil {
		return err
	}
	progress("measuring the machine's own two-thread scaling (controls)")
	ctl, err := enginebench.RunControls(cfg.BenchTime, cfg.Count)
	if err != nil {
		return err
	}
	writeEngine(buf, eng, ctl)
	if cfg.Training != nil {
		runs, err := trainbench.Measure(context.Background(), *cfg.Training)
		if err != nil {
			return err
		}
		writeTraining(buf, runs, *cfg.Training)
		WriteObs(buf, runs)
	}
	if cfg.FrontDoor != nil {
		r, err := trainbench.MeasureFrontDoor(context.Background(), *cfg.FrontDoor, max(cfg.FrontReps, 1))
		if err != nil {
			return err
		}
		WriteFrontDoor(buf, r)
	}
	if cfg.Phases != nil {
		res, err := trainbench.Phases(context.Background(), *cfg.Phases)
		if err != nil {
			return err
		}
		WritePhases(buf, res, *cfg.Phases)
	}
	if cfg.Roofline != nil {
		r, err := roofline.Run(context.Background(), *cfg.Roofline)
		if err != nil {
			return err
		}
		WriteRoofline(buf, r)
	}
	if cfg.Scaling != nil {
		res, err := trainbench.Scaling(context.Background(), *cfg.Scaling)
		if err != nil {
			return err
		}
		if svg := WriteScaling(buf, res, ScalingSVG); svg != nil && files != nil {
			files[ScalingSVG] = svg
		}
	}
	if cfg.Beam != nil {
		r, err := beambench.Measure(context.Background(), *cfg.Beam)
		if err != nil {
			return err
		}
		WriteBeam(buf, r)
	}
	if cfg.Layer != nil {
		o := *cfg.Layer
		o.Progress = progress
		res, err := layerbench.Run(context.Background(), o)
		if errors.Is(err, layerbench.ErrUnavailable) {
			progress(fmt.Sprintf("%v: the layer section without torch", err))
			o.NoTorch = true
			res, err = layerbench.Run(context.Background(), o)
		}
		if err != nil {
			return err
		}
		WriteLayer(buf, res, o)
	}
	writeArm64(buf)
	took := []byte(time.Since(start).Round(time.Second).String())
	b := bytes.Replace(buf.Bytes(), []byte(tookPlaceholder), took, 1)
	buf.Reset()
	buf.Write(b)
	return nil
}

// tookPlaceholder stands for the run's duration in the header until the
// run is over.
const tookPlaceholder = "\x00took\x00"

func writeEngine(buf *bytes.Buffer, res []enginebench.Result, ctl []enginebench.ControlResult) {
	fmt.Fprintf(buf, "## Inference engine\n\n")
	fmt.Fprintf(buf, "`go run ./cmd/simdcrf-bench engine` prints the same cases for any machine (`--json` for JSON lines); "+
		"`go test -bench . ./engine` runs them on one thread. Each measurement processes batches of %d sentences of %d tokens "+
		"with random emission scores (feature scoring excluded) through an `engine.Pool`; tokens per second, median. "+
		"Structures, on matrices with about 2M non-default transitions: **dense** runs the O(M²) kernels; **tied** is a default "+
		"score of 0 plus the exceptions, O(M + exceptions) per step; **forbidden** allows only those transitions (default -Inf); **dense-f32** is the dense matrix in float32, "+
		"forward_backward alone, through `engine.Scaled[float32]`'s lockstep groups (one group a worker) on the emissions held in float32, as the CRF layer and the float32 trainer run it. "+
		"forward_backward computes log Z and all marginals (`MarginalsBatch`: from M = %d dense chains run in lockstep groups); nbest finds the %d best labellings. Allocations per sentence in steady state, the least over the measurements (a pool worker parking can make the runtime refill a cache once in a while), are in the last column.\n\n",
		enginebench.Seqs, enginebench.T, engine.LockstepLabels, enginebench.K)
	fmt.Fprintf(buf, "| op | structure | impl | threads |")
	labels := []int{}
	for _, r := range res {
		if !slices.Contains(labels, r.Labels) {
			labels = append(labels, r.Labels)
		}
	}
	for _, m := range labels {
		fmt.Fprintf(buf, " M=%d |", m)
	}
	fmt.Fprintf(buf, " allocs/sentence |\n|---|---|---|---|")
	for range labels {
		fmt.Fprint(buf, "---|")
	}
	fmt.Fprint(buf, "---|\n")
	type key struct {
		op, st, impl string
		th           int
	}
	var keys []key
	for _, r := range res {
		k := key{r.Op, r.Structure, r.Impl, r.Threads}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		fmt.Fprintf(buf, "| %s | %s | %s | %d |", k.op, k.st, k.impl, k.th)
		allocs := 0.0
		for _, m := range labels {
			cell := "–"
			for _, r := range res {
				if r.Op == k.op && r.Structure == k.st && r.Impl == k.impl && r.Threads == k.th && r.Labels == m {
					cell = FormatRate(r.TokensPerSecond)
					allocs = max(allocs, r.AllocsPerSequence)
				}
			}
			fmt.Fprintf(buf, " %s |", cell)
		}
		fmt.Fprintf(buf, " %.2f |\n", allocs)
	}
	fmt.Fprintln(buf)

	get := func(op, st, impl string, m, th int) float64 {
		for _, r := range res {
			if r.Op == op && r.Structure == st && r.Impl == impl && r.Labels == m && r.Threads == th {
				return r.TokensPerSecond
			}
		}
		return 0
	}
	best := kernelsBest(res)
	fmt.Fprintf(buf, "### Engine targets\n\n| goal | measured | met |\n|---|---|---|\n")
	row := func(goal, measured string, ok bool) {
		mark := "no"
		if ok {
			mark = "yes"
		}
		fmt.Fprintf(buf, "| %s | %s | %s |\n", goal, measured, mark)
	}
	if v := get("viterbi", "dense", best, 45, 1); v > 0 {
		row("Viterbi, M=45, dense, one core: ≥ 4M tokens/s", FormatRate(v)+" tokens/s", v >= 4e6)
	}
	if v := get("forward_backward", "dense", best, 45, 1); v > 0 {
		row("forward–backward with marginals, M=45, one core: ≥ 2M tokens/s", FormatRate(v)+" tokens/s", v >= 2e6)
	}
	if v := get("forward_backward", "dense", best, 1024, 1); v > 0 {
		// Issue 17 measured 1.4k tokens/s before lockstep.
		row("forward–backward with marginals, M=1024, dense, one core: ≥ 8× the 1.4k tokens/s before lockstep (issue 17)", FormatRate(v)+" tokens/s", v >= 8*1.4e3)
	}
	if v := get("forward_backward", enginebench.Dense32, best, 1024, 1); v > 0 {
		// Issue 29: 9.0k tokens/s on its Intel Xeon (AVX-512) in float64.
		d := get("forward_backward", "dense", best, 1024, 1)
		row(fmt.Sprintf("forward–backward with marginals, M=1024, dense, one core, float32 allowed: ≥ 11.2k tokens/s (issue 29; float64 here %s)", FormatRate(d)), FormatRate(v)+" tokens/s", v >= 11.2e3)
	}
	for _, op := range []string{"forward_backward", "viterbi"} {
		d, t := get(op, "dense", best, 1024, 1), get(op, "tied", best, 1024, 1)
		if d > 0 && t > 0 {
			row(fmt.Sprintf("%s, M=1024: tied ≥ 50× dense", op), fmt.Sprintf("×%.1f", t/d), t/d >= 50)
		}
	}
	for _, op := range []string{"forward_backward", "viterbi"} {
		one, two := get(op, "dense", best, 45, 1), get(op, "dense", best, 45, 2)
		if one > 0 && two > 0 {
			row(fmt.Sprintf("%s, M=45, dense: two cores ≥ 1.8× one", op), fmt.Sprintf("×%.2f", two/one), two/one >= 1.8)
		}
	}
	fmt.Fprintln(buf)
	if len(ctl) > 0 {
		fmt.Fprintf(buf, "What the machine itself allows: two dummy workloads run through the same `engine.Pool`, "+
			"measured in the same run (\"scalar\" is a dependent integer chain, latency-bound; \"fma\" is the FMA peak probe, "+
			"bound by the vector units, so it scales only if the two logical CPUs are separate physical cores):\n\n"+
			"| control | one thread (items/s) | two threads | two ÷ one |\n|---|---|---|---|\n")
		for _, c := range ctl {
			fmt.Fprintf(buf, "| %s | %s | %s | ×%.2f |\n", c.Name, FormatRate(c.One), FormatRate(c.Two), c.ScalingX)
		}
		fmt.Fprintln(buf)
	}
}

// kernelsBest is the implementation the engine results were measured with
// when only one ran (the best one).
func kernelsBest(res []enginebench.Result) string {
	for _, r := range res {
		if r.Structure == "tied" {
			return r.Impl
		}
	}
	return "generic"
}

func writeArm64(buf *bytes.Buffer) {
	fmt.Fprintf(buf, "## arm64 (NEON)\n\n"+
		"Every kernel has a NEON implementation (`kernels/kernels_arm64.s`, generated by `gen/arm64`). "+
		"This machine has no arm64 core: CI tests the neon tier under `qemu-aarch64 -cpu neoverse-n1`, where timings mean nothing "+
		"(emulation runs the generic Go code about as fast as the NEON code), so no arm64 figures are quoted here. "+
		"The benchmarks build for arm64 (`GOARCH=arm64 go test -c ./kernels ./engine`); run "+
		"`go run ./cmd/simdcrf-bench report` on an arm64 machine for its table.\n")
}

// FormatRate formats a rate (tokens per second) as the tables do: 1.23M,
// 45.6k, 789.
func FormatRate(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func writeKernels(buf *bytes.Buffer, res []kernelbench.Result, peaks map[string]float64) {
	impls := implOrder(res)
	fmt.Fprintf(buf, "## Kernels (one core, float64)\n\n")
	fmt.Fprintf(buf, "`go run ./cmd/simdcrf-bench kernels` prints the same table for any machine, and "+
		"`go test -bench . ./kernels` runs the same cases as `Benchmark<Kernel>/M=<labels>/<impl>`. "+
		"Per-sequence kernels run on sequences of T=%d positions; `forward_lockstep` runs K=%d sequences in lockstep "+
		"(the step becomes a matrix–matrix product); `logforward` is one log-domain step (M² exps) per position; "+
		"gather and scatter use F=%d features per position with uniformly random rows of a %d MiB weight matrix "+
		"(memory-bound by design); exp, log, dot and axpy run on vectors of N=%d elements and report ns per element.\n\n",
		kernelbench.T, kernelbench.K, kernelbench.F, kernelbench.WElems*8>>20, kernelbench.N)

	fmt.Fprintf(buf, "### FMA peak\n\nMeasured with `kernels.FMAProbe` (12 independent ymm or 16 zmm FMA chains, best of 5): ")
	sep := ""
	for _, name := range impls {
		if p, ok := peaks[name]; ok {
			fmt.Fprint(buf, sep)
			sep = "; "
			fmt.Fprintf(buf, "%s %.1f GFLOP/s", name, p)
		}
	}
	fmt.Fprint(buf, ".\n\n")

	fmt.Fprintf(buf, "### ns per position (GFLOP/s) and speed-up over generic\n\n")
	for _, k := range kernelbench.Kernels {
		rows := filter(res, func(r kernelbench.Result) bool { return r.Kernel == k })
		if len(rows) == 0 {
			continue
		}
		unit := "M"
		if kernelbench.Elementwise(k) {
			unit = "N"
		}
		fmt.Fprintf(buf, "**%s**\n\n| %s |", k, unit)
		for _, name := range impls {
			fmt.Fprintf(buf, " %s |", name)
		}
		fmt.Fprint(buf, "\n|---|")
		for range impls {
			fmt.Fprint(buf, "---|")
		}
		fmt.Fprintln(buf)
		for _, m := range labelOrder(rows) {
			fmt.Fprintf(buf, "| %d |", m)
			base := find(rows, k, "generic", m)
			for _, name := range impls {
				r := find(rows, k, name, m)
				if r == nil {
					fmt.Fprint(buf, " – |")
					continue
				}
				cell := FormatNs(r.NsPerPosition)
				if r.GFLOPs > 0 {
					cell += fmt.Sprintf(" (%.1f)", r.GFLOPs)
				}
				if base != nil && name != "generic" {
					cell += fmt.Sprintf(" ×%.1f", base.NsPerPosition/r.NsPerPosition)
				}
				fmt.Fprintf(buf, " %s |", cell)
			}
			fmt.Fprintln(buf)
		}
		fmt.Fprintln(buf)
	}
	writeTargets(buf, res, peaks)
}

// writeTargets checks the kernel goals of the project against this run.
func writeTargets(buf *bytes.Buffer, res []kernelbench.Result, peaks map[string]float64) {
	fmt.Fprintf(buf, "### Targets\n\n")
	if _, ok := peaks["avx512"]; !ok {
		// Every kernel target is an AVX-512 one.
		fmt.Fprintf(buf, "The kernel targets concern the AVX-512 tier, which this machine does not have: not measured here.\n\n")
		return
	}
	fmt.Fprintf(buf, "| goal | measured | met |\n|---|---|---|\n")
	row := func(goal, measured string, ok bool) {
		mark := "no"
		if ok {
			mark = "yes"
		}
		fmt.Fprintf(buf, "| %s | %s | %s |\n", goal, measured, mark)
	}
	gen, a512 := find(res, "forward", "generic", 45), find(res, "forward", "avx512", 45)
	if gen != nil && a512 != nil {
		x := gen.NsPerPosition / a512.NsPerPosition
		row("AVX-512 forward, M=45: ≥10× generic per position", fmt.Sprintf("×%.1f (%s vs %s ns)", x, FormatNs(a512.NsPerPosition), FormatNs(gen.NsPerPosition)), x >= 10)
		row("AVX-512 forward, M=45: no slower than hand-written C (142 ns/position)", FormatNs(a512.NsPerPosition)+" ns", a512.NsPerPosition <= 142)
	}
	if p, ok := peaks["avx512"]; ok {
		for _, m := range []int{128, 256, 512, 1024} {
			if r := find(res, "forward_lockstep", "avx512", m); r != nil {
				row(fmt.Sprintf("AVX-512 forward in lockstep, M=%d: ≥ half the FMA peak (%.1f GFLOP/s)", m, p/2),
					fmt.Sprintf("%.1f GFLOP/s = %.0f%% of peak", r.GFLOPs, 100*r.GFLOPs/p), r.GFLOPs >= p/2)
			}
		}
	}
	gen, a512 = find(res, "viterbi", "generic", 45), find(res, "viterbi", "avx512", 45)
	if gen != nil && a512 != nil {
		x := gen.NsPerPosition / a512.NsPerPosition
		row("AVX-512 Viterbi, M=45: ≥6× generic per position", fmt.Sprintf("×%.1f (%s vs %s ns)", x, FormatNs(a512.NsPerPosition), FormatNs(gen.NsPerPosition)), x >= 6)
	}
	fmt.Fprintln(buf)
}

func filter(res []kernelbench.Result, keep func(kernelbench.Result) bool) []kernelbench.Result {
	var out []kernelbench.Result
	for _, r := range res {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func find(res []kernelbench.Result, kernel, impl string, labels int) *kernelbench.Result {
	for i := range res {
		if r := &res[i]; r.Kernel == kernel && r.Impl == impl && r.Labels == labels {
			return r
		}
	}
	return nil
}

func implOrder(res []kernelbench.Result) []string {
	var out []string
	for _, r := range res {
		if !slices.Contains(out, r.Impl) {
			out = append(out, r.Impl)
		}
	}
	return out
}

func labelOrder(res []kernelbench.Result) []int {
	var out []int
	for _, r := range res {
		if !slices.Contains(out, r.Labels) {
			out = append(out, r.Labels)
		}
	}
	return out
}

// FormatNs formats nanoseconds as the tables do: 123, 45.6, 7.89.
func FormatNs(ns float64) string {
	switch {
	case ns >= 100:
		return fmt.Sprintf("%.0f", ns)
	case ns >= 10:
		return fmt.Sprintf("%.1f", ns)
	}
	return fmt.Sprintf("%.2f", ns)
}

// commit writes data to the temporary file f and renames it over path, so a
// failed run never leaves a half-written file.
func commit(f *os.File, path string, data []byte) error {
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
