// Command simdcrf trains and applies linear-chain conditional random fields
// with SIMD kernels, and measures them.
//
//	simdcrf demo
//	simdcrf learn -m MODEL [--model-format simdcrf|crfsuite] [-a lbfgs|l1|sgd|ap] [-p NAME=VALUE]... [--threads N] [-e HOLDOUT] [--format F] [--template FILE] [--features pos] [--label upos|xpos] TRAIN...
//	simdcrf tag -m MODEL [--format F] [-t] [--json] [-r] [-p] [-i] [-l] [-n K] DATA...
//	simdcrf dump -m MODEL
//	simdcrf convert -m IN -o OUT [--to simdcrf|crfsuite]
//	simdcrf bench kernels [--json] [--kernels LIST] [--labels LIST] [--impl LIST]
//	simdcrf bench engine [--json] [--labels LIST] [--threads LIST]
//	simdcrf bench report [--out BENCHMARKS.md]
//	simdcrf version
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

const usage = `usage: simdcrf <command> [arguments]

commands:
  demo            train a part-of-speech tagger on a sample of UD English EWT and tag its test file
  learn           train a model:  learn -m MODEL [-a ALGO] [-p NAME=VALUE]... TRAIN...
  tag             tag data:       tag -m MODEL [-t] [--json] [-r] [-p] [-i] [-l] [-n K] [DATA...]
  dump            print a model as text
  convert         convert a model between simdcrf's and CRFsuite's formats: convert -m IN -o OUT
  bench kernels   measure the vector kernels on this machine (a table, or --json)
  bench engine    measure inference (forward-backward, Viterbi, n-best) per structure
  bench report    measure everything and rewrite BENCHMARKS.md
  version         print the version, the CPU's kernel tiers and the one in use

Run 'simdcrf <command> -h' for a command's options.
`

// errUsage means the arguments were wrong; the message has been printed.
var errUsage = errors.New("usage")

func main() {
	stop := startProfile()
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "simdcrf:", err)
		}
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(1)
	}
}

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
		return cmdBench(args[1:], stdout, stderr)
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
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: simdcrf %s\n\noptions:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args with fs and maps parse errors to errUsage (the flag
// package has already printed them).
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// startProfile writes a CPU profile of the whole command to the file named
// by SIMDCRF_CPUPROFILE, if set (for developers: see DEVELOPERS.md).
func startProfile() (stop func()) {
	path := os.Getenv("SIMDCRF_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "simdcrf: SIMDCRF_CPUPROFILE:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
