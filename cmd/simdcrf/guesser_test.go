package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/model"
)

// TestGuesser runs the unknown-word guesser end to end: learn with a
// feature set learns one by default and says so, the model holds it,
// tag applies it with no flag (its marginals are not those of the same
// model without it), dump shows it; -p feature.guesser=0 trains without,
// and a CRFsuite model cannot hold one.
func TestGuesser(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join("demodata", "en_ewt-sample-train.conllu.gz")
	test := filepath.Join("demodata", "en_ewt-sample-test.conllu.gz")
	learnArgs := func(mp string, extra ...string) []string {
		return append(append([]string{"learn", "-m", mp, "--features", "pos", "--label", "xpos", "-p", "max_iterations=15"}, extra...), train)
	}
	mp := filepath.Join(dir, "g.model")
	_, log, err := runCLI(t, learnArgs(mp)...)
	if err != nil {
		t.Fatalf("learn: %v\n%s", err, log)
	}
	if !strings.Contains(log, "unknown-word guesser: ") {
		t.Errorf("learn said nothing of the guesser:\n%s", log)
	}
	m, err := model.Load(mp)
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Spec.Guesser == nil || m.Meta.Params["feature.guesser"] != "1" {
		t.Fatalf("the model has no guesser (params %v)", m.Meta.Params)
	}
	if _, ok := m.Attrs.Lookup("gp=4"); !ok {
		t.Error("the model has no weights for the guesser's attributes (gp=4)")
	}
	with, _, err := runCLI(t, "tag", "-m", mp, "-i", test)
	if err != nil {
		t.Fatal(err)
	}
	m.Meta.Spec.Guesser = nil
	bare := filepath.Join(dir, "bare.model")
	if err := m.WriteFile(bare); err != nil {
		t.Fatal(err)
	}
	without, _, err := runCLI(t, "tag", "-m", bare, "-i", test)
	if err != nil {
		t.Fatal(err)
	}
	if with == without {
		t.Error("tag gave the same marginals with the model's guesser as without it: not applied")
	}
	if dump, _, err := runCLI(t, "dump", mp); err != nil || !strings.Contains(dump, "GUESSER = ") {
		t.Errorf("dump: %v", err)
	}

	none := filepath.Join(dir, "none.model")
	if _, log, err := runCLI(t, learnArgs(none, "-p", "feature.guesser=0")...); err != nil {
		t.Fatalf("learn: %v\n%s", err, log)
	}
	if m, err := model.Load(none); err != nil || m.Meta.Spec.Guesser != nil {
		t.Errorf("-p feature.guesser=0: a guesser in the model (%v)", err)
	}
	_, log, err = runCLI(t, learnArgs(filepath.Join(dir, "g.crfsuite"), "-p", "feature.guesser=1")...)
	if err == nil || !strings.Contains(err.Error(), "cannot hold an unknown-word guesser") {
		t.Errorf("a CRFsuite model with a guesser: %v\n%s", err, log)
	}
	tpl := filepath.Join(dir, "t.tpl")
	if err := os.WriteFile(tpl, []byte("U00:%x[0,0]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "learn", "-m", filepath.Join(dir, "t.model"), "--template", tpl, "-p", "feature.guesser=1", train)
	if err == nil || !strings.Contains(err.Error(), "built-in feature set") {
		t.Errorf("a guesser with a template: %v", err)
	}
}
