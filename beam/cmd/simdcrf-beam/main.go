// Command simdcrf-beam tags and evaluates text with a simdcrf model on
// Apache Beam: on the local runner (Prism, the default: nothing else to
// install) or on Dataflow, Flink or Spark.
//
//	simdcrf-beam tag -m MODEL --input GLOB --output PREFIX [--format crfsuite|conll|conllu]
//	    [--template FILE | --features pos] [--label upos|xpos] [-p] [-i] [-r] [-l] [-n K]
//	    [-t] [--json] [-q] [--on-error skip|fail] [--shards N] [--runner RUNNER] [Beam's flags]
//
// It writes PREFIX-NNNNN-of-NNNNN, each sequence as "#<TAB>FILE<TAB>INDEX"
// and then what simdcrf tag prints for it, in order of file name and index;
// malformed sequences to PREFIX.errors (FILE<TAB>LINE<TAB>INDEX<TAB>ERROR);
// with -t the evaluation to PREFIX.eval and standard output. See
// docs/distributed.md for clusters.
//
// The same binary is the pipeline's worker: a runner that starts workers
// starts it with Beam's worker flags (and the command passes itself as
// --worker_binary unless told otherwise).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/simdcrf/simdcrf/beam/crfbeam"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/cli"
	"github.com/simdcrf/simdcrf/model"
)

const synopsis = "tag -m MODEL --input GLOB --output PREFIX [--format F] [--template FILE | --features pos] [--label upos|xpos] [-p] [-i] [-r] [-l] [-n K] [-t] [--json] [-q] [--on-error skip|fail] [--shards N] [--runner RUNNER] [Beam's flags]"

const help = `
Outputs: PREFIX-NNNNN-of-NNNNN hold each sequence as a line "#<TAB>FILE<TAB>INDEX"
(INDEX from 0 in FILE) and then what simdcrf tag prints for it with the same
options, in order of file name and index; PREFIX.errors holds the malformed
sequences, FILE<TAB>LINE<TAB>INDEX<TAB>ERROR; with -t, PREFIX.eval holds the
evaluation, also printed (text, or with --json the JSON object of simdcrf
tag --json). Paths and the glob may be local or gs://, s3://.

The runner is Beam's --runner flag: prism (the default, local, in this
process), dataflow, flink, spark; with it Beam's own flags (--project,
--region, --temp_location, --endpoint, --environment_type, --worker_binary,
...). See docs/distributed.md.
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "tag" {
		os.Exit(tag(os.Args[2:]))
	}
	// A runner starts workers with Beam's flags only: beam.Init runs the
	// worker and exits.
	flag.Parse()
	beam.Init()
	fmt.Fprintf(os.Stderr, "usage: simdcrf-beam %s\n(simdcrf-beam tag -h for the options)\n", synopsis)
	os.Exit(2)
}

func tag(args []string) int {
	// Our flags join Beam's on the global flag set, so that Beam's may be
	// given after "tag" too.
	fs := flag.CommandLine
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: simdcrf-beam %s\n\noptions (Beam's not listed):\n", synopsis)
		ours := flag.NewFlagSet("tag", flag.ContinueOnError)
		ours.SetOutput(os.Stderr)
		fs.VisitAll(func(f *flag.Flag) {
			if !beamFlags[f.Name] {
				ours.Var(f.Value, f.Name, f.Usage)
			}
		})
		ours.PrintDefaults()
		io.WriteString(os.Stderr, help)
	}
	for _, name := range beamFlagNames() {
		beamFlags[name] = true
	}
	var c crfbeam.Config
	fs.StringVar(&c.Model, "m", "", "the model `FILE` (required; local, gs:// or s3://)")
	fs.StringVar(&c.Input, "input", "", "the input files, a `GLOB` (required)")
	fs.StringVar(&c.Output, "output", "", "the `PREFIX` of the output files (required)")
	fs.StringVar(&c.Format, "format", "", "input format (default: the model's)")
	template := fs.String("template", "", "the CRF++ template `FILE` the model was trained with (checked, not needed)")
	features := fs.String("features", "", "the built-in feature `SET` the model was trained with (checked, not needed)")
	label := fs.String("label", "", "the conllu label column the model was trained on (checked, not needed)")
	fs.BoolVar(&c.Text.Prob, "p", false, "print each labelling's score and probability, as simdcrf tag -p")
	fs.BoolVar(&c.Text.Marginals, "i", false, "print the marginal probability of each chosen label, as simdcrf tag -i")
	fs.BoolVar(&c.Text.Reference, "r", false, "print the reference label before each label, as simdcrf tag -r")
	fs.BoolVar(&c.Text.AllMarginals, "l", false, "print every label's marginal probability, as simdcrf tag -l")
	fs.IntVar(&c.Text.NBest, "n", 0, "print the `K` best labellings of each sequence, as simdcrf tag -n")
	fs.BoolVar(&c.Evaluate, "t", false, "evaluate against the labels in the input (to PREFIX.eval and standard output)")
	fs.BoolVar(&c.JSON, "json", false, "the evaluation as simdcrf tag --json prints it (implies -t)")
	fs.BoolVar(&c.Quiet, "q", false, "write no tagged output (with -t: only the evaluation)")
	onError := fs.String("on-error", "skip", "what a malformed sequence does: skip (to PREFIX.errors) or fail (the pipeline)")
	fs.IntVar(&c.Shards, "shards", 0, "number of output files (0: one per 256 MiB of input)")
	verbose := fs.Bool("v", false, "let the runner log what it does")
	fs.Int64Var(&c.SplitSize, "split-size", 64<<20, "input files are first split into pieces of this many `BYTES` (the runner may split further)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.Model == "" || c.Input == "" || c.Output == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	switch *onError {
	case "skip":
	case "fail":
		c.FailOnError = true
	default:
		fmt.Fprintf(os.Stderr, "simdcrf-beam: --on-error %s: want skip or fail\n", *onError)
		return 2
	}
	if c.JSON {
		c.Evaluate = true
	}
	if c.Text.NBest < 0 || c.Shards < 0 || c.SplitSize <= 0 {
		fmt.Fprintln(os.Stderr, "simdcrf-beam: -n, --shards and --split-size cannot be negative (--split-size not 0)")
		return 2
	}
	beam.Init()
	// SIMDCRF_CPUPROFILE, as for simdcrf (DEVELOPERS.md): on Prism the
	// pipeline runs in this process, so its profile is the run's.
	defer cli.StartProfile("simdcrf-beam")()
	if !*verbose {
		// The runner logs each job's start and end, and a failure many
		// times over with the worker's plan; run returns the failure.
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1})))
	}
	if err := run(context.Background(), c, specFlags{*template, *features, *label}, *verbose); err != nil {
		fmt.Fprintf(os.Stderr, "simdcrf-beam: %v\n", err)
		return 1
	}
	return 0
}

// beamFlags are the flags Beam put on the global flag set, left out of -h.
var beamFlags = map[string]bool{}

func beamFlagNames() []string {
	var names []string
	flag.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

type specFlags struct{ template, features, label string }

func run(ctx context.Context, c crfbeam.Config, sf specFlags, verbose bool) error {
	m, err := crfbeam.LoadModel(ctx, c.Model)
	if err != nil {
		return err
	}
	if err := checkSpecFlags(ctx, m, sf); err != nil {
		return fmt.Errorf("%s: %w", c.Model, err)
	}
	size, err := inputSize(ctx, c.Input)
	if err != nil {
		return err
	}
	if c.Shards == 0 {
		c.Shards = int(max(1, (size+256<<20-1)/(256<<20)))
	}
	if r := *runners.Runner; r != "" && r != "prism" && r != "direct" && *jobopts.WorkerBinary == "" {
		// Beam would compile this program from source for the workers;
		// the binary itself is the worker.
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		if runtime.GOOS != "linux" {
			fmt.Fprintf(os.Stderr, "simdcrf-beam: this binary is for %s/%s; workers run Linux: give --worker_binary a Linux build (CGO_ENABLED=0 GOOS=linux go build ./cmd/simdcrf-beam)\n", runtime.GOOS, runtime.GOARCH)
		}
		*jobopts.WorkerBinary = exe
	}

	p, s := beam.NewPipelineWithRoot()
	if err := crfbeam.Build(s, c, m); err != nil {
		return err
	}
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		// The runner's report holds the worker's plan; say only what failed.
		if i := strings.LastIndex(err.Error(), crfbeam.FailMark); i >= 0 && !verbose {
			return errors.New(strings.TrimSpace(err.Error()[i:]))
		}
		return err
	}
	if res != nil {
		var seqs, tokens int64
		for _, r := range res.Metrics().AllMetrics().Counters() {
			switch r.Name() {
			case "sequences":
				seqs += r.Result()
			case "tokens":
				tokens += r.Result()
			}
		}
		fmt.Fprintf(os.Stderr, "simdcrf-beam: %d sequences, %d tokens tagged\n", seqs, tokens)
	}
	// The dead letters, counted where the run wrote them (whatever the
	// runner's metrics).
	errs, err := crfbeam.ReadFile(ctx, c.ErrorsFile())
	if err != nil {
		return err
	}
	if n := bytes.Count(errs, []byte{'\n'}); n > 0 {
		fmt.Fprintf(os.Stderr, "simdcrf-beam: %d malformed sequences skipped: see %s\n", n, c.ErrorsFile())
	}
	if c.Evaluate {
		b, err := crfbeam.ReadFile(ctx, c.EvaluationFile())
		if err != nil {
			return err
		}
		if _, err := os.Stdout.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// inputSize is the size of the files glob matches, which must be some.
func inputSize(ctx context.Context, glob string) (int64, error) {
	files, err := crfbeam.Match(ctx, glob)
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("no files match %s", glob)
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	return total, nil
}

// checkSpecFlags accepts --label, --template and --features when they say
// what the model was trained with, as simdcrf tag does (crfbeam.Spec).
func checkSpecFlags(ctx context.Context, m *model.Model, sf specFlags) error {
	given := format.Spec{Label: sf.label, Features: sf.features}
	if path := sf.template; path != "" {
		b, err := crfbeam.ReadFile(ctx, path)
		if err != nil {
			return err
		}
		given.Template, given.TemplateName = string(b), path
	}
	_, err := crfbeam.Spec(m, given)
	return err
}
