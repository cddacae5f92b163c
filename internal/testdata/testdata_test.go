package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirFromEnv(t *testing.T) {
	d := t.TempDir()
	if err := os.Mkdir(filepath.Join(d, "corpus"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, d)
	if got := Dir(t, "corpus"); got != filepath.Join(d, "corpus") {
		t.Errorf("Dir = %q, want %q", got, filepath.Join(d, "corpus"))
	}
	if got := Must(t); got != d {
		t.Errorf("Must = %q, want %q", got, d)
	}
}

// TestDirFound: from this package, ../shared/data beside the repository is
// found (or, without it, the test is skipped by Dir itself).
func TestDirFound(t *testing.T) {
	d := Dir(t)
	if !filepath.IsAbs(d) || filepath.Base(d) != "data" || filepath.Base(filepath.Dir(d)) != "shared" {
		t.Errorf("Dir = %q, want an absolute …/shared/data", d)
	}
}
