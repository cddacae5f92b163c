// Command simdcrf trains and applies linear-chain conditional random fields
// with SIMD kernels. The benchmarks are the command simdcrf-bench.
//
//	simdcrf demo
//	simdcrf learn -m MODEL [--model-format simdcrf|crfsuite] [-a lbfgs|l1|sgd|ap] [-p NAME=VALUE]... [--threads N] [-e HOLDOUT] [--format F] [--template FILE] [--features pos] [--label upos|xpos] TRAIN...
//	simdcrf tag -m MODEL [--format F] [-t] [--json] [-r] [-p] [-i] [-l] [-n K] DATA...
//	simdcrf dump -m MODEL
//	simdcrf convert -m IN -o OUT [--to simdcrf|crfsuite]
//	simdcrf version
package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/simdcrf/simdcrf/internal/cli"
	"github.com/simdcrf/simdcrf/internal/machine"
)

const usage = `usage: simdcrf <command> [arguments]

commands:
  demo            train a part-of-speech tagger on a sample of UD English EWT and tag its test file
  learn           train a model:  learn -m MODEL [-a ALGO] [-p NAME=VALUE]... TRAIN...
  tag             tag data:       tag -m MODEL [-t] [--json] [-r] [-p] [-i] [-l] [-n K] [DATA...]
  dump            print a model as text
  convert         convert a model between simdcrf's and CRFsuite's formats: convert -m IN -o OUT
  version         print the version, the CPU's kernel tiers and the one in use

Run 'simdcrf <command> -h' for a command's options.
`

// benchMoved answers the old form "simdcrf bench …": the benchmarks install
// CRFsuite and PyTorch, which the user's command must not carry.
const benchMoved = `simdcrf: bench is a command of its own now, simdcrf-bench (in the repository: go run ./cmd/simdcrf-bench <suite>)
`

// errUsage means the arguments were wrong; the message has been printed.
var errUsage = cli.ErrUsage

func main() { cli.Main("simdcrf", run) }

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "learn":
		return cmdLearn(args[1:], stdout, stderr)
	case "tag":
		return cmdTag(args[1:], stdout, stderr)
	case "dump":
		return cmdDump(args[1:], stdout, stderr)
	case "convert":
		return cmdConvert(args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	case "bench":
		fmt.Fprint(stderr, benchMoved)
		return errUsage
	case "version":
		return cmdVersion(stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "simdcrf: unknown command %q\n\n%s", args[0], usage)
	return errUsage
}

// newFlags returns a flag set that reports errors to stderr and returns them
// instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlags("simdcrf", name, synopsis, stderr)
}

// parse parses args with fs and maps parse errors to errUsage (the flag
// package has already printed them).
func parse(fs *flag.FlagSet, args []string) error { return cli.Parse(fs, args) }

func cmdVersion(stdout io.Writer) error {
	fmt.Fprintf(stdout, "simdcrf (development)\nmachine: %s\n", machine.Describe())
	return nil
}
