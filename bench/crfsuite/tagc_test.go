package crfsuite

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFixtures re-tags the CRFsuite model fixtures of package model
// (model/testdata/crfsuite) with CRFsuite's own library (tagc) and checks
// that the stored output, which model's tests compare simdcrf's with, is
// CRFsuite's.
func TestFixtures(t *testing.T) {
	ensure(t)
	dir := filepath.Join("..", "..", "model", "testdata", "crfsuite")
	for _, name := range []string{"ewt-xpos", "ewt-upos"} {
		data := filepath.Join(t.TempDir(), name+".test")
		if err := os.WriteFile(data, gunzip(t, filepath.Join(dir, name+".test.gz")), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := TagText(context.Background(), filepath.Join(dir, name+".crfsuite"), data, "-r", "-p", "-i", "-l")
		if err != nil {
			t.Fatal(err)
		}
		if want := gunzip(t, filepath.Join(dir, name+".test.crfsuite-tag-rpil.gz")); !bytes.Equal(got, want) {
			t.Errorf("%s: CRFsuite's output (%d bytes) is not the stored one (%d bytes)", name, len(got), len(want))
		}
	}
	if _, err := TagText(context.Background(), "m", "d", "-x"); err == nil {
		t.Error("TagText accepted -x")
	}
}
