package main

import (
	"strings"
	"testing"
)

// TestTagPrecision: tag --precision float32 prints the float64 labels and
// scores on the toy data (its labellings lead by far more than float32
// rounding), with -p too, and another precision is an error.
func TestTagPrecision(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 50, 20)
	if _, stderr, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, trainPath); err != nil {
		t.Fatalf("learn: %v\n%s", err, stderr)
	}
	for _, flags := range [][]string{nil, {"-p"}, {"-p", "-i", "-n", "2"}} {
		args := append(append([]string{"tag", "-m", modelPath}, flags...), testPath)
		want, _, err := runCLI(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := runCLI(t, append([]string{args[0], "--precision", "float32"}, args[1:]...)...)
		if err != nil || got != want || !strings.Contains(got, "B-NP") {
			t.Errorf("tag %v --precision float32: %v\n%s\nwant\n%s", flags, err, got, want)
		}
	}
	if _, _, err := runCLI(t, "tag", "-m", modelPath, "--precision", "float16", testPath); err == nil || !strings.Contains(err.Error(), `--precision "float16": want float64 or float32`) {
		t.Errorf("tag --precision float16: %v", err)
	}
}
