package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/model"
)

// TestOrder2 runs -p order=2 end to end: learn turns on the pruner at a
// small label count and says so, the model holds trigram weights, tag
// prints every output option for it, dump lists the trigrams, and a
// CRFsuite model is refused before training.
func TestOrder2(t *testing.T) {
	dir := t.TempDir()
	trainPath := filepath.Join(dir, "train.txt")
	var b strings.Builder
	r := rand.New(rand.NewPCG(31, 31))
	for range 120 {
		y0 := r.IntN(3)
		for k := range 6 {
			y := (y0 + k*k) % 5 // a label depends on the one two back
			fmt.Fprintf(&b, "L%d\tw=%d\tn=%d\n", y, (y+r.IntN(2))%5, r.IntN(4))
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(trainPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "o2.model")
	_, log, err := runCLI(t, "learn", "-m", mp, "-p", "order=2", "-p", "max_iterations=20", trainPath)
	if err != nil {
		t.Fatalf("learn: %v\n%s", err, log)
	}
	if !strings.Contains(log, "order=2: trained over a pruned lattice (prune.max=8, prune.by=first") {
		t.Errorf("learn said\n%s", log)
	}
	m, err := model.Load(mp)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trigrams == nil || m.Trigrams.Len() == 0 || m.Pruner == nil || m.Meta.Params["order"] != "2" {
		t.Fatalf("model: trigrams %v, pruner %v, params %v", m.Trigrams, m.Pruner != nil, m.Meta.Params)
	}
	out, _, err := runCLI(t, "tag", "-m", mp, "-r", "-p", "-i", "-n", "2", trainPath)
	if err != nil || !strings.Contains(out, "@probability\t") || !strings.Contains(out, "@nbest\t2\t") {
		t.Fatalf("tag: %v\n%.300s", err, out)
	}
	dump, _, err := runCLI(t, "dump", mp)
	if err != nil || !strings.Contains(dump, "TRIGRAMS (second order, ") {
		t.Fatalf("dump: %v", err)
	}
	_, log, err = runCLI(t, "learn", "-m", filepath.Join(dir, "sub.model"), "-p", "order=2", "-p", "feature.sublabels=2", "-p", "transitions=dense", trainPath)
	if err == nil || !strings.Contains(log, "cannot serve the sub-label transitions") {
		t.Errorf("order 2 with sub-label transitions: %v\n%s", err, log)
	}
	_, log, err = runCLI(t, "learn", "-m", filepath.Join(dir, "o2.crfsuite"), "-p", "order=2", trainPath)
	if err == nil || !strings.Contains(log+err.Error(), "label trigrams (-p order=2)") {
		t.Fatalf("a CRFsuite model of order 2: %v\n%s", err, log)
	}
}
