package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
	} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestBenchMoved: the old form "simdcrf bench …" fails as an unknown
// command does, naming the command the benchmarks are now.
func TestBenchMoved(t *testing.T) {
	for _, args := range [][]string{{"bench"}, {"bench", "kernels", "--json"}, {"bench", "report"}} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); !errors.Is(err, errUsage) {
			t.Errorf("%q: error %v, want errUsage", args, err)
		}
		if out.Len() != 0 {
			t.Errorf("%q: wrote %q to stdout", args, out.String())
		}
		if !strings.Contains(errb.String(), "go run ./cmd/simdcrf-bench") {
			t.Errorf("%q: stderr %q does not name simdcrf-bench", args, errb.String())
		}
	}
	if strings.Contains(usage, "bench") {
		t.Errorf("the usage still lists bench:\n%s", usage)
	}
}
