// Package cli is what the commands simdcrf and simdcrf-bench (and, for the
// CPU profile, simdcrf-beam) share: flag sets that return their errors, and
// main's exit status and CPU profile.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// ErrUsage means the arguments were wrong; the message has been printed.
var ErrUsage = errors.New("usage")

// Main runs run on the process's arguments and exits: status 0 after
// success or -h, 1 after an error, which it prints prefixed by prog unless
// it is ErrUsage (already explained).
func Main(prog string, run func(args []string, stdout, stderr io.Writer) error) {
	stop := StartProfile(prog)
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, ErrUsage) && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, prog+":", err)
		}
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(1)
	}
}

// NewFlags returns a flag set that reports errors to stderr and returns them
// instead of exiting; its usage starts "usage: prog synopsis".
func NewFlags(prog, name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s %s\n\noptions:\n", prog, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args with fs and maps parse errors to ErrUsage (the flag
// package has already printed them).
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	return nil
}

// StartProfile writes a CPU profile of the whole command to the file named
// by SIMDCRF_CPUPROFILE, if set (for developers: see DEVELOPERS.md); errors
// are printed prefixed by prog. Main calls it; simdcrf-beam too.
func StartProfile(prog string) (stop func()) {
	path := os.Getenv("SIMDCRF_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, prog+": SIMDCRF_CPUPROFILE:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
