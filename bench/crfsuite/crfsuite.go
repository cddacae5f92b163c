// Package crfsuite runs CRFsuite, the reference peer for simdcrf's benchmarks, from
// the npm package "crfsuite" (an N-API binding that compiles CRFsuite 0.12.2 and
// libLBFGS from source). CRFsuite is never a dependency of the Go module: Ensure
// installs it on demand into a cache directory, and Train and Tag run it as a child
// process (node driver.js), so its memory and time are measured apart from ours.
//
// The binding passes attribute names only (every value is 1), has no instance
// weights and always trains with L-BFGS; the driver rejects data it cannot pass
// faithfully rather than train on something else.
package crfsuite

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Version is the npm package installed by Ensure; it bundles CRFsuite 0.12.2.
const Version = "1.0.1"

//go:embed driver.js
var driverJS []byte

// ErrUnavailable wraps failures that mean "CRFsuite cannot be had here": node or
// npm missing, or the npm registry unreachable. Tests skip on it outside CI.
var ErrUnavailable = errors.New("crfsuite: node/npm or the npm registry unavailable")

// Dir is where Ensure installs the package: $SIMDCRF_CRFSUITE_DIR if set, else
// <user cache dir>/simdcrf/crfsuite-<Version>. A cache outside the repository is
// shared by every clone and worktree (the build compiles C for a while), keeps
// node_modules out of the Go module's tree and out of git, and is safe to delete.
func Dir() (string, error) {
	if d := os.Getenv("SIMDCRF_CRFSUITE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("crfsuite: no cache directory (set SIMDCRF_CRFSUITE_DIR): %w", err)
	}
	return filepath.Join(c, "simdcrf", "crfsuite-"+Version), nil
}

// binding returns the compiled addon under dir, or "" when there is none.
func binding(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "node_modules", "crfsuite", "lib", "binding", "*", "crfsuite.node"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// Ensure installs crfsuite@Version into Dir if it is not there yet and returns the
// directory, which holds node_modules/crfsuite and driver.js. When installed it
// only checks a few files. An install runs in a fresh sibling directory renamed
// into place at the end, so an interrupted or concurrent install leaves no half
// state behind.
func Ensure(ctx context.Context) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if binding(dir) != "" {
		return dir, writeDriver(dir)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%w: %s not in PATH", ErrUnavailable, tool)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("crfsuite: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".install-")
	if err != nil {
		return "", fmt.Errorf("crfsuite: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("crfsuite: %w", err)
	}
	npm := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "npm", args...)
		cmd.Dir = tmp
		// node-pre-gyp would otherwise first try a prebuilt binary from
		// GitHub; compiling here gives a known build (its flags in DEVELOPERS.md).
		cmd.Env = append(os.Environ(), "npm_config_build_from_source=true")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("npm %s in %s: %v\n%s", strings.Join(args, " "), tmp, err, out)
		}
		return nil
	}
	if err := npm("install", "--ignore-scripts", "--no-audit", "--no-fund", "crfsuite@"+Version); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// The compile runs once, in the rebuild: install skipped the scripts. npm 11
	// wants install scripts approved (it warns now and will refuse later); older
	// npm lacks the subcommand, so its failure only matters when the rebuild
	// leaves no binding.
	approveErr := npm("install-scripts", "approve", "crfsuite")
	if err := npm("rebuild", "crfsuite"); err != nil {
		return "", fmt.Errorf("crfsuite: building the binding: %v", err)
	}
	if binding(tmp) == "" {
		return "", fmt.Errorf("crfsuite: npm rebuild left no lib/binding/*/crfsuite.node in %s (approve: %v)", tmp, approveErr)
	}
	if err := writeDriver(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if binding(dir) != "" { // another process finished first
			return dir, writeDriver(dir)
		}
		return "", fmt.Errorf("crfsuite: %w (if %s is a broken install, remove it)", err, dir)
	}
	return dir, nil
}

// writeDriver writes the embedded driver.js into dir unless it is there already,
// atomically, so an old copy from an earlier version of this package is replaced.
func writeDriver(dir string) error {
	p := filepath.Join(dir, "driver.js")
	if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, driverJS) {
		return nil
	}
	if err := writeAtomic(p, driverJS); err != nil {
		return fmt.Errorf("writing the driver: %w", err)
	}
	return nil
}

// TrainOptions says what to train. Params are CRFsuite's -p NAME=VALUE names for
// L-BFGS (c1, c2, max_iterations, num_memories, epsilon, period, delta, linesearch,
// max_linesearch, feature.minfreq, feature.possible_states,
// feature.possible_transitions); unset ones keep CRFsuite's defaults.
type TrainOptions struct {
	Data   string // CRFsuite attribute file, labelled
	Model  string // model file to write (CRFsuite's own format)
	Params map[string]string
	Log    string // if set, CRFsuite's training log is written here
}

// TrainResult holds the driver's figures and what the training log says.
type TrainResult struct {
	Sequences int `json:"sequences"`
	Tokens    int `json:"tokens"`
	// ReadSeconds is reading and appending the data (node parses the file and
	// the binding copies every sequence); TrainSeconds is crfsuite_train alone:
	// feature generation, L-BFGS and writing the model. Both are wall clock.
	ReadSeconds  float64 `json:"read_seconds"`
	TrainSeconds float64 `json:"train_seconds"`
	// ProcessSeconds is node's own clock at the end; WallSeconds is the child
	// process timed from Go, node's start-up included.
	ProcessSeconds float64 `json:"process_seconds"`
	WallSeconds    float64 `json:"-"`
	UserSeconds    float64 `json:"user_seconds"`
	SystemSeconds  float64 `json:"system_seconds"`
	// PeakRSS is the whole node process's peak RSS (VmHWM), which is the figure to
	// report; BaselineRSS is node's RSS before it read any data (the runtime's
	// own share, about 50 MB), for whoever wants to subtract it.
	PeakRSS     int64             `json:"peak_rss_bytes"`
	BaselineRSS int64             `json:"baseline_rss_bytes"`
	ReadRSS     int64             `json:"read_rss_bytes"` // RSS after reading the data, before training
	Params      map[string]string `json:"params"`         // all parameters as CRFsuite saw them

	// From CRFsuite's log.
	Iterations     int     // L-BFGS iterations ("***** Iteration #N *****")
	Loss           float64 // the last iteration's loss
	ActiveFeatures int
	Features       int // "Number of features" after feature generation
	// IterationCPUSeconds sums CRFsuite's "Seconds required for this iteration"
	// (clock(), process CPU time, as CRFsuite reports it).
	IterationCPUSeconds float64
	// IterationSeconds are those lines one by one.
	IterationSeconds []float64
	Stop             string // CRFsuite's termination line, e.g. "L-BFGS resulted in convergence"
}

// SecondsPerIteration is TrainSeconds over Iterations: what the CRFsuite
// figures (e.g. 90.9 s / 166 iterations) mean.
func (r *TrainResult) SecondsPerIteration() float64 {
	if r.Iterations == 0 {
		return 0
	}
	return r.TrainSeconds / float64(r.Iterations)
}

// TagOptions says what to tag.
type TagOptions struct {
	Model  string
	Data   string // CRFsuite attribute file; its first field is the gold label
	Output string // if set, predicted labels, one per line, blank line between sequences
}

// TagResult holds the driver's tagging figures.
type TagResult struct {
	Sequences        int     `json:"sequences"`
	Tokens           int     `json:"tokens"`
	Correct          int     `json:"correct"`
	ItemAccuracy     float64 `json:"item_accuracy"`
	InstanceAccuracy float64 `json:"instance_accuracy"`
	LoadSeconds      float64 `json:"load_seconds"`     // opening the model
	ReadTagSeconds   float64 `json:"read_tag_seconds"` // parsing and tagging the file
	TagSeconds       float64 `json:"tag_seconds"`      // inside Tagger.tag only
	// TokensPerSecond is Tokens/TagSeconds: the tagger alone, no parsing.
	TokensPerSecond float64 `json:"tokens_per_second"`
	ProcessSeconds  float64 `json:"process_seconds"`
	WallSeconds     float64 `json:"-"` // the child process timed from Go
	UserSeconds     float64 `json:"user_seconds"`
	SystemSeconds   float64 `json:"system_seconds"`
	PeakRSS         int64   `json:"peak_rss_bytes"`
	BaselineRSS     int64   `json:"baseline_rss_bytes"`
}

// WholeTokensPerSecond is Tokens over the whole child process's wall time (node's
// start-up, loading the model, parsing, tagging and writing): "from file to
// labels", the figure the issue's tagging target compares.
func (r *TagResult) WholeTokensPerSecond() float64 {
	if r.WallSeconds == 0 {
		return 0
	}
	return float64(r.Tokens) / r.WallSeconds
}

// Train trains a CRFsuite model with L-BFGS on one thread.
func Train(ctx context.Context, o TrainOptions) (TrainResult, error) {
	var r TrainResult
	if o.Data == "" || o.Model == "" {
		return r, errors.New("crfsuite: Train needs Data and Model")
	}
	args := []string{"train", "--data", o.Data, "--model", o.Model}
	names := make([]string, 0, len(o.Params))
	for k := range o.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.ContainsRune(k, '=') || strings.HasPrefix(k, "--") {
			return r, fmt.Errorf("crfsuite: bad parameter name %q", k)
		}
		args = append(args, k+"="+o.Params[k])
	}
	log, wall, err := run(ctx, args, &r)
	if err != nil {
		return r, err
	}
	r.WallSeconds = wall
	if o.Log != "" {
		if err := writeAtomic(o.Log, log); err != nil {
			return r, err
		}
	}
	if err := parseLog(log, &r); err != nil {
		return r, fmt.Errorf("crfsuite: training log: %w", err)
	}
	return r, nil
}

// Tag tags Data with Model on one thread and scores it against Data's labels.
func Tag(ctx context.Context, o TagOptions) (TagResult, error) {
	var r TagResult
	if o.Data == "" || o.Model == "" {
		return r, errors.New("crfsuite: Tag needs Data and Model")
	}
	args := []string{"tag", "--data", o.Data, "--model", o.Model}
	if o.Output != "" {
		args = append(args, "--output", o.Output)
	}
	_, wall, err := run(ctx, args, &r)
	r.WallSeconds = wall
	return r, err
}

// run runs the driver with args, decodes its JSON result into v and returns its
// stdout (CRFsuite's log) and the child's wall time in seconds.
func run(ctx context.Context, args []string, v any) ([]byte, float64, error) {
	dir, err := Ensure(ctx)
	if err != nil {
		return nil, 0, err
	}
	jf, err := os.CreateTemp("", "crfsuite-result-*.json")
	if err != nil {
		return nil, 0, fmt.Errorf("crfsuite: %w", err)
	}
	jf.Close()
	defer os.Remove(jf.Name())
	// One thread: CRFsuite itself is single-threaded; V8's worker pool and
	// libuv's thread pool are cut to one so node's helpers stay quiet.
	flags := []string{"--v8-pool-size=1", "--single-threaded-gc"}
	if args[0] == "train" {
		// A 1 MB young generation: the garbage of parsing (every sequence's
		// strings, dead once appended) is then collected soon, which cut
		// node's share of the peak RSS on CoNLL-2000 from about 220 to 181 MiB
		// after reading (CRFsuite's copy of the data is most of it).
		flags = append(flags, "--max-semi-space-size=1")
	}
	full := append(append(flags, filepath.Join(dir, "driver.js")), args...)
	full = append(full, "--json", jf.Name())
	cmd := exec.CommandContext(ctx, "node", full...)
	cmd.Env = append(os.Environ(), "UV_THREADPOOL_SIZE=1", "OMP_NUM_THREADS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		if ctx.Err() != nil {
			return nil, wall, ctx.Err()
		}
		return nil, wall, fmt.Errorf("crfsuite: node driver.js %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	b, err := os.ReadFile(jf.Name())
	if err != nil {
		return nil, wall, fmt.Errorf("crfsuite: driver wrote no result: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, wall, fmt.Errorf("crfsuite: driver result %q: %w", b, err)
	}
	return stdout.Bytes(), wall, nil
}

// parseLog reads CRFsuite's training log (train_lbfgs.c and crf1d_encode.c).
func parseLog(log []byte, r *TrainResult) error {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	num := func(s, prefix string) (float64, error) {
		return strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(s, prefix)), 64)
	}
	for sc.Scan() {
		line := sc.Text()
		var err error
		switch {
		case strings.HasPrefix(line, "***** Iteration #"):
			s := strings.TrimSuffix(strings.TrimPrefix(line, "***** Iteration #"), " *****")
			r.Iterations, err = strconv.Atoi(s)
		case strings.HasPrefix(line, "Loss: "):
			r.Loss, err = num(line, "Loss: ")
		case strings.HasPrefix(line, "Active features: "):
			var f float64
			f, err = num(line, "Active features: ")
			r.ActiveFeatures = int(f)
		case strings.HasPrefix(line, "Number of features: "):
			var f float64
			f, err = num(line, "Number of features: ")
			r.Features = int(f)
		case strings.HasPrefix(line, "Seconds required for this iteration: "):
			var f float64
			f, err = num(line, "Seconds required for this iteration: ")
			r.IterationCPUSeconds += f
			r.IterationSeconds = append(r.IterationSeconds, f)
		case strings.HasPrefix(line, "L-BFGS "):
			r.Stop = line
		}
		if err != nil {
			return fmt.Errorf("line %q: %w", line, err)
		}
	}
	if r.Iterations == 0 {
		return errors.New("no iterations logged")
	}
	return sc.Err()
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp")
	if err != nil {
		return fmt.Errorf("crfsuite: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("crfsuite: %w", err)
	}
	return nil
}
