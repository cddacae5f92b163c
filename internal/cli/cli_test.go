package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	var stderr bytes.Buffer
	fs := NewFlags("simdcrf-bench", "kernels", "kernels [options]", &stderr)
	n := fs.Int("count", 1, "measurements")
	if err := Parse(fs, []string{"--count", "3", "rest"}); err != nil || *n != 3 || fs.Arg(0) != "rest" {
		t.Errorf("Parse: err %v, count %d, args %q", err, *n, fs.Args())
	}
	if err := Parse(fs, []string{"--nope"}); !errors.Is(err, ErrUsage) {
		t.Errorf("unknown flag: error %v, want ErrUsage", err)
	}
	stderr.Reset()
	if err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: error %v, want flag.ErrHelp", err)
	}
	if !strings.HasPrefix(stderr.String(), "usage: simdcrf-bench kernels [options]\n\noptions:\n") || !strings.Contains(stderr.String(), "-count") {
		t.Errorf("-h printed %q", stderr.String())
	}
}
