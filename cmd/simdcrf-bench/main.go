// Command simdcrf-bench measures simdcrf (its kernels, inference engine,
// CRF layer and training) and writes BENCHMARKS.md. It is for developers, run
// from the repository: it builds cmd/simdcrf to time it as a child process,
// and installs its peers, CRFsuite from npm and PyTorch with apt-get, on
// first use. The command users install, simdcrf, imports none of it.
//
//	simdcrf-bench kernels [--json] [--kernels LIST] [--labels LIST] [--impl LIST]
//	simdcrf-bench engine [--json] [--labels LIST] [--threads LIST]
//	simdcrf-bench layer [--json] [--labels LIST] [--threads LIST] [--notorch]
//	simdcrf-bench beam|obs|phases|frontdoor|scaling [options]
//	simdcrf-bench roofline [--json] [-data DIR] [-templates DIR]
//	simdcrf-bench recall -m MODEL FILE...
//	simdcrf-bench report [--out BENCHMARKS.md]
package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/simdcrf/simdcrf/internal/cli"
)

const usage = `usage: simdcrf-bench <suite> [options]

suites:
  kernels   measure the vector kernels on this machine (a table, or --json)
  engine    measure inference (forward-backward, Viterbi, n-best) per structure
  layer     measure the CRF layer against PyTorch
  beam      measure simdcrf-beam against simdcrf tag (the report's section)
  obs       measure observation-dependent transitions (the report's section)
  phases    measure where an L-BFGS iteration's time goes (the report's section)
  frontdoor measure the Go API (package simdcrf) against the command (the report's section)
  scaling   measure an L-BFGS iteration's cost against M and plot it (the report's section)
  roofline  set each phase of an L-BFGS iteration beside this machine's limit (the report's section, or --json)
  recall    how often a pruned model's label sets hold the gold label of labelled files
  report    measure everything and rewrite BENCHMARKS.md

Run 'simdcrf-bench <suite> -h' for a suite's options.
`

var errUsage = cli.ErrUsage

func main() { cli.Main("simdcrf-bench", run) }

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
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
	case "frontdoor":
		return benchFrontDoor(args[1:], stdout, stderr)
	case "scaling":
		return benchScaling(args[1:], stdout, stderr)
	case "roofline":
		return benchRoofline(args[1:], stdout, stderr)
	case "report":
		return benchReport(args[1:], stdout, stderr)
	case "recall":
		return benchRecall(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "simdcrf-bench: unknown suite %q (have kernels, engine, layer, beam, obs, phases, frontdoor, scaling, roofline, recall, report)\n", args[0])
	return errUsage
}

// newFlags returns a suite's flag set: it reports errors to stderr and
// returns them instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlags("simdcrf-bench", name, synopsis, stderr)
}
