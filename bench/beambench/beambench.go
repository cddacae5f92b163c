// Package beambench measures simdcrf-beam tag (the Apache Beam pipeline of
// the module in beam/, on its local runner) against simdcrf tag on the same
// file, both as whole processes, for BENCHMARKS.md. It builds the beam
// command with the go tool (the core module does not depend on Beam).
package beambench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/simdcrf/simdcrf/internal/machine"
)

// Options controls a run.
type Options struct {
	Exe         string // the simdcrf binary
	BeamDir     string // the beam module (the repository's beam/)
	DataDir     string // ../shared/data
	TemplateDir string // ../shared/templates
	WorkDir     string
	Copies      int // copies of the CoNLL-2000 test file in the measured file (default 64: 3.0M tokens)
	Repeats     int // runs of each case; the median is reported (default 5)
	Progress    func(string)
}

// Case is one command on one file, the medians of its runs.
type Case struct {
	Name    string
	Wall    float64 // seconds
	CPU     float64 // user + system seconds
	PeakMiB float64
}

// Result is what Measure found.
type Result struct {
	Tokens, Sequences int
	Bytes             int64
	Copies, Repeats   int
	Procs             int     // GOMAXPROCS of both commands (the cores used)
	BuildSec          float64 // building simdcrf-beam (go build, cache as found)
	BinaryMiB         float64
	// Tag and Beam tag the large file; TagStart and BeamStart a file of
	// one sentence (start-up: the process, the model, the runner).
	Tag, Beam, TagStart, BeamStart Case
}

// TokensPerSec is a case's throughput on the large file.
func (r Result) TokensPerSec(c Case) float64 { return float64(r.Tokens) / c.Wall }

// OverheadNs is the pipeline's extra wall time per token beyond simdcrf
// tag's, start-ups taken out, in nanoseconds.
func (r Result) OverheadNs() float64 {
	return ((r.Beam.Wall - r.BeamStart.Wall) - (r.Tag.Wall - r.TagStart.Wall)) / float64(r.Tokens) * 1e9
}

// CPUOverheadNs is the pipeline's extra CPU time per token, start-ups
// taken out, in nanoseconds.
func (r Result) CPUOverheadNs() float64 {
	return ((r.Beam.CPU - r.BeamStart.CPU) - (r.Tag.CPU - r.TagStart.CPU)) / float64(r.Tokens) * 1e9
}

// ErrNoBeam means the beam module is not there to build.
var ErrNoBeam = errors.New("beambench: no beam module")

// Measure builds simdcrf-beam, trains a CoNLL-2000 chunking model, makes a
// file of Copies copies of the test file, checks that the pipeline's output
// is simdcrf tag's, and times both commands on it (and on one sentence),
// in turns.
func Measure(ctx context.Context, o Options) (Result, error) {
	if o.Copies <= 0 {
		o.Copies = 64
	}
	if o.Repeats <= 0 {
		o.Repeats = 5
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	r := Result{Copies: o.Copies, Repeats: o.Repeats, Procs: runtime.GOMAXPROCS(0)}
	if _, err := os.Stat(filepath.Join(o.BeamDir, "go.mod")); err != nil {
		return r, fmt.Errorf("%w: %v", ErrNoBeam, err)
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return r, err
	}
	beam := filepath.Join(o.WorkDir, "simdcrf-beam")
	o.Progress("beam: building simdcrf-beam")
	start := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-o", beam, "./cmd/simdcrf-beam")
	build.Dir = o.BeamDir
	if out, err := build.CombinedOutput(); err != nil {
		return r, fmt.Errorf("building simdcrf-beam: %v\n%s", err, out)
	}
	r.BuildSec = time.Since(start).Seconds()
	if st, err := os.Stat(beam); err == nil {
		r.BinaryMiB = float64(st.Size()) / (1 << 20)
	}

	o.Progress("beam: training the CoNLL-2000 chunking model")
	mdl := filepath.Join(o.WorkDir, "chunk.model")
	if _, err := run(ctx, o.Exe, nil, "learn", "-m", mdl, "--threads", fmt.Sprint(r.Procs),
		"--template", filepath.Join(o.TemplateDir, "chunking.tpl"), filepath.Join(o.DataDir, "conll2000", "train.txt")); err != nil {
		return r, err
	}
	test, err := os.ReadFile(filepath.Join(o.DataDir, "conll2000", "test.txt"))
	if err != nil {
		return r, err
	}
	test = append(bytes.TrimRight(test, "\n"), "\n\n"...) // copies stay apart
	big := filepath.Join(o.WorkDir, "big.txt")
	if err := os.WriteFile(big, bytes.Repeat(test, o.Copies), 0o644); err != nil {
		return r, err
	}
	r.Bytes = int64(len(test) * o.Copies)
	first, _, _ := bytes.Cut(test, []byte("\n\n"))
	tiny := filepath.Join(o.WorkDir, "tiny.txt")
	if err := os.WriteFile(tiny, append(first, "\n\n"...), 0o644); err != nil {
		return r, err
	}
	for _, line := range bytes.Split(test, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			r.Tokens++
		}
	}
	r.Tokens *= o.Copies
	r.Sequences = bytes.Count(test, []byte("\n\n")) * o.Copies

	tagOut := filepath.Join(o.WorkDir, "tag.out")
	prefix := filepath.Join(o.WorkDir, "beam", "out")
	cases := []struct {
		name string
		exe  string
		args []string
		out  string
	}{
		{"simdcrf tag", o.Exe, []string{"tag", "-m", mdl, "--threads", fmt.Sprint(r.Procs), big}, tagOut},
		{"simdcrf-beam tag", beam, []string{"tag", "-m", mdl, "--input", big, "--output", prefix}, ""},
		{"simdcrf tag, one sentence", o.Exe, []string{"tag", "-m", mdl, "--threads", fmt.Sprint(r.Procs), tiny}, os.DevNull},
		{"simdcrf-beam tag, one sentence", beam, []string{"tag", "-m", mdl, "--input", tiny, "--output", filepath.Join(o.WorkDir, "tiny", "out")}, ""},
	}
	samples := make([][]sample, len(cases))
	for round := range o.Repeats {
		for k := range cases {
			c := cases[(round+k)%len(cases)] // each round starts with the next case
			i := (round + k) % len(cases)
			o.Progress(fmt.Sprintf("beam: round %d/%d, %s", round+1, o.Repeats, c.name))
			s, err := run(ctx, c.exe, openOut(c.out), c.args...)
			if err != nil {
				return r, err
			}
			samples[i] = append(samples[i], s)
		}
		if round == 0 {
			if err := same(tagOut, prefix); err != nil {
				return r, err
			}
		}
	}
	r.Tag, r.Beam = median(cases[0].name, samples[0]), median(cases[1].name, samples[1])
	r.TagStart, r.BeamStart = median(cases[2].name, samples[2]), median(cases[3].name, samples[3])
	return r, nil
}

type sample struct{ wall, cpu, peak float64 }

// openOut is where a case's standard output goes ("" discards it).
func openOut(path string) func() (*os.File, error) {
	if path == "" {
		return nil
	}
	return func() (*os.File, error) { return os.Create(path) }
}

// run runs exe as a child process and measures it.
func run(ctx context.Context, exe string, out func() (*os.File, error), args ...string) (sample, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	if out != nil {
		f, err := out()
		if err != nil {
			return sample{}, err
		}
		defer f.Close()
		cmd.Stdout = f
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	stop := machine.PeakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	peak := stop()
	wall := time.Since(start).Seconds()
	if err != nil {
		return sample{}, fmt.Errorf("%s %v: %v\n%s", filepath.Base(exe), args, err, stderr.String())
	}
	ps := cmd.ProcessState
	return sample{wall: wall, cpu: (ps.UserTime() + ps.SystemTime()).Seconds(), peak: float64(peak) / (1 << 20)}, nil
}

// same checks that the pipeline's shards, without their "#" lines, are what
// simdcrf tag printed: what is timed is the same work.
func same(tagOut, prefix string) error {
	want, err := os.ReadFile(tagOut)
	if err != nil {
		return err
	}
	shards, err := filepath.Glob(prefix + "-*-of-*")
	if err != nil || len(shards) == 0 {
		return fmt.Errorf("beambench: no shards %s-*: %v", prefix, err)
	}
	slices.Sort(shards)
	var got []byte
	for _, s := range shards {
		b, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if !bytes.HasPrefix(line, []byte("#\t")) {
				got = append(got, line...)
			}
		}
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("beambench: simdcrf-beam's output (%d bytes) is not simdcrf tag's (%d bytes)", len(got), len(want))
	}
	return nil
}

func median(name string, ss []sample) Case {
	med := func(f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Case{Name: name, Wall: med(func(s sample) float64 { return s.wall }),
		CPU: med(func(s sample) float64 { return s.cpu }), PeakMiB: med(func(s sample) float64 { return s.peak })}
}
