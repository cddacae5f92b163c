// Package testdata finds the shared corpora that tests on real data read:
// the directory shared/data beside the repository (../shared/data from a
// clone or worktree), as CI provides it, or $SIMDCRF_DATA.
package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the environment variable that overrides the search.
const EnvVar = "SIMDCRF_DATA"

// Dir returns the shared data directory joined with elem, as an absolute
// path. Where it does not exist, the test is skipped with a message saying
// so, or fails when the environment variable CI is set, so that CI cannot
// pass by testing less than it should.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	p, err := lookup(elem)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("the shared data is missing (CI is set): %v", err)
	}
	t.Skipf("the shared data is missing (%v); skipping the test on real data", err)
	return ""
}

// Templates returns the shared CRF++ templates' directory (shared/templates,
// beside shared/data) joined with elem, as Dir does.
func Templates(t testing.TB, elem ...string) string {
	t.Helper()
	return Dir(t, append([]string{"..", "templates"}, elem...)...)
}

// find returns $SIMDCRF_DATA, or shared/data in the nearest directory
// above the working directory that has one.
func find() (string, error) {
	if d := os.Getenv(EnvVar); d != "" {
		return filepath.Abs(d)
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		d := filepath.Join(dir, "shared", "data")
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", &os.PathError{Op: "find", Path: "shared/data above " + filepath.Base(dir), Err: os.ErrNotExist}
		}
		dir = parent
	}
}

// Must is Dir for a test that was asked for explicitly (by an environment
// variable): without the data it fails, CI or not.
func Must(t testing.TB, elem ...string) string {
	t.Helper()
	p, err := lookup(elem)
	if err != nil {
		t.Fatalf("the shared data is missing: %v", err)
	}
	return p
}

// lookup returns the shared data directory joined with elem, if it exists.
func lookup(elem []string) (string, error) {
	root, err := find()
	if err != nil {
		return "", err
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	_, err = os.Stat(p)
	return p, err
}
