package model

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

var faultSink float64

// TestMapTruncated truncates a mapped model's file and reads its weights
// with faults turned into panics: FaultError names the file, and says
// nothing of other panics.
func TestMapTruncated(t *testing.T) {
	m := randomModel(t, rand.New(rand.NewPCG(5, 5)), specs[3])
	path := filepath.Join(t.TempDir(), "m.crf")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	mp, unmap, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var fault any
	func() {
		defer func() { fault = recover() }()
		w := mp.State.Params()
		faultSink = w[len(w)-1]
	}()
	got := mp.FaultError(fault)
	if got == nil || !strings.Contains(got.Error(), path) || !strings.Contains(got.Error(), "truncated or rewritten") {
		t.Fatalf("reading a truncated mapping: %v", got)
	}
	if err := mp.FaultError(errors.New("not a fault")); err != nil {
		t.Errorf("FaultError of another panic: %v", err)
	}
	if err := m.FaultError(fault); err != nil {
		t.Errorf("FaultError of a model that is not mapped: %v", err)
	}
}
