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

// TestPruneLearn: learn -p prune.max stores the pruning in the model, dump
// shows it, tag (over the pruned sets) tags the separable toy data without
// a mistake, and CRFsuite's format refuses a pruned model.
func TestPruneLearn(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 50)
	if _, _, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, "-p", "prune.max=2", "-p", "prune.threshold=0.05", "-p", "max_iterations=40", trainPath); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Prune == nil || m.Prune.Max != 2 || m.Prune.Threshold != 0.05 {
		t.Fatalf("model pruning %+v, want max 2, threshold 0.05", m.Prune)
	}
	out, _, err := runCLI(t, "dump", modelPath)
	if err != nil || !strings.Contains(out, "PRUNING = at most 2 labels") {
		t.Fatalf("dump: %v\n%s", err, out)
	}
	eval, _, err := runCLI(t, "tag", "-m", modelPath, "-t", "-q", testPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(eval, "Item accuracy: 401 / 401") {
		t.Fatalf("tag -t of the pruned model (the toy data is separable: want all right):\n%s", eval)
	}
	if _, _, err := runCLI(t, "learn", "-q", "-m", modelPath+".crfsuite", "--template", tplPath, "-p", "prune.max=2", trainPath); err == nil || !strings.Contains(err.Error(), "prune.max") {
		t.Fatalf("a pruned model in CRFsuite's format: %v", err)
	}
}

// TestPrunerLearn: learn -p prune.by=zeroth stores the pruner with the
// rule, prints its iterations apart (marked p), dump says the sets are
// the pruner's, training ends on a stopping rule (CRFsuite's ε or δ), and tag tags the
// separable toy data without a mistake with no extra flag.
func TestPrunerLearn(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 50)
	_, log, err := runCLI(t, "learn", "-m", modelPath, "--template", tplPath, "-p", "prune.max=2", "-p", "prune.threshold=0.05", "-p", "prune.by=zeroth", trainPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "\n   p1 ") || !strings.Contains(log, "iterations (converged") && !strings.Contains(log, "iterations (stopping criterion") {
		t.Fatalf("learn's log: no pruner iterations, or not ended on a stopping rule:\n%s", log)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Prune == nil || m.Pruner == nil || m.Pruner.NumParams() != m.State.NumParams() {
		t.Fatalf("model pruning %+v, pruner %v", m.Prune, m.Pruner != nil)
	}
	out, _, err := runCLI(t, "dump", modelPath)
	if err != nil || !strings.Contains(out, "a zeroth-order pruner's") {
		t.Fatalf("dump: %v\n%s", err, out)
	}
	eval, _, err := runCLI(t, "tag", "-m", modelPath, "-t", "-q", testPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(eval, "Item accuracy: 401 / 401") {
		t.Fatalf("tag -t of the model (the toy data is separable: want all right):\n%s", eval)
	}
}

// TestPruneDefault: from 300 labels learn prunes by default with a
// zeroth-order pruner and says so, and the model tags with no flag;
// -p prune.max=0 trains exactly; a model in CRFsuite's format is trained
// exactly, and learn says why.
func TestPruneDefault(t *testing.T) {
	dir := t.TempDir()
	trainPath := filepath.Join(dir, "train.txt")
	var b strings.Builder
	r := rand.New(rand.NewPCG(30, 30))
	for i := range 200 {
		for k := range 6 {
			y := (i*6 + k) % 300 // every label four times
			fmt.Fprintf(&b, "L%03d\tw=%d\tn=%d\n", y, y, r.IntN(7))
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(trainPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, model string
		args        []string
		note        string
		pruned      bool
	}{
		{"default", "d.model", nil, "pruned training (prune.max=8, prune.by=zeroth", true},
		{"exact", "e.model", []string{"-p", "prune.max=0"}, "", false},
		{"crfsuite", "c.crfsuite", nil, "exact training, since", false},
	} {
		mp := filepath.Join(dir, c.model)
		args := append([]string{"learn", "-m", mp, "-p", "max_iterations=5"}, c.args...)
		_, log, err := runCLI(t, append(args, trainPath)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, log)
		}
		if c.note != "" && !strings.Contains(log, c.note) || c.note == "" && strings.Contains(log, "labels: ") {
			t.Errorf("%s: learn said\n%s\nwant %q", c.name, log, c.note)
		}
		m, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		if (m.Prune != nil) != c.pruned || (m.Pruner != nil) != c.pruned {
			t.Errorf("%s: pruning %v, pruner %v", c.name, m.Prune, m.Pruner != nil)
		}
		if _, _, err := runCLI(t, "tag", "-m", mp, "-q", "-t", trainPath); err != nil {
			t.Errorf("%s: tag: %v", c.name, err)
		}
	}
}

// TestFirstOrderPrunerLearn: learn -p prune.by=first stores both pruners,
// the first-order one with its rule, training ends on a stopping rule,
// dump shows the first-order pruner, and tag tags the separable toy data
// without a mistake with no extra flag; order=2 with prune.by=first alone
// (the default rule's prune.max=8, the first-order cap half of it): every
// output option.
func TestFirstOrderPrunerLearn(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 50)
	_, log, err := runCLI(t, "learn", "-m", modelPath, "--template", tplPath, "-p", "prune.max=4", "-p", "prune.threshold=0.05", "-p", "prune.by=first", "-p", "prune.first_max=2", trainPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "\n   p1 ") || !strings.Contains(log, "\n   f1 ") || !strings.Contains(log, "iterations (converged") && !strings.Contains(log, "iterations (stopping criterion") {
		t.Fatalf("learn's log: no pruners' iterations (p, f), or not ended on a stopping rule:\n%s", log)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	p1 := m.Pruner1
	if m.Pruner == nil || p1 == nil || p1.Rule.Max != 2 || p1.State.NumParams() != m.State.NumParams() {
		t.Fatalf("model: pruner %v, first-order pruner %+v", m.Pruner != nil, p1)
	}
	out, _, err := runCLI(t, "dump", modelPath)
	if err != nil || !strings.Contains(out, "first-order pruner") {
		t.Fatalf("dump: %v\n%s", err, out)
	}
	eval, _, err := runCLI(t, "tag", "-m", modelPath, "-t", "-q", testPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(eval, "Item accuracy: 401 / 401") {
		t.Fatalf("tag -t of the model (the toy data is separable: want all right):\n%s", eval)
	}
	// Order 2 over the narrowed sets: every output option.
	o2 := modelPath + ".o2"
	if _, log, err = runCLI(t, "learn", "-m", o2, "--template", tplPath, "-p", "order=2", "-p", "prune.by=first", "-p", "max_iterations=30", trainPath); err != nil {
		t.Fatalf("learn: %v\n%s", err, log)
	}
	if !strings.Contains(log, "order=2: trained over a pruned lattice (prune.max=8, prune.by=first") {
		t.Errorf("learn said\n%s", log)
	}
	if m, err = model.Load(o2); err != nil || m.Trigrams == nil || m.Pruner1 == nil || m.Pruner1.Rule.Max != 4 {
		t.Fatalf("order-2 model: %v", err)
	}
	out, _, err = runCLI(t, "tag", "-m", o2, "-r", "-p", "-i", "-n", "2", testPath)
	if err != nil || !strings.Contains(out, "@probability\t") || !strings.Contains(out, "@nbest\t2\t") {
		t.Fatalf("tag: %v\n%.300s", err, out)
	}
}
