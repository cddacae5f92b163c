package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/model"
)

// TestLexiconObsBigrams: candidate labels from a lexicon file and a
// template with observation-dependent B lines in one model: learn (lbfgs
// and ap) stores both, tag with no flag applies both (the lexicon's words
// held to their labels, also under -i, and the others free), dump lists
// both.
func TestLexiconObsBigrams(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 50)
	dir := filepath.Dir(tplPath)
	obsTpl := filepath.Join(dir, "obs.tpl")
	if err := os.WriteFile(obsTpl, []byte(toyTemplate+"B01:%x[0,1]\nB02:%x[-1,1]/%x[0,1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lexPath := filepath.Join(dir, "lex.txt")
	if err := os.WriteFile(lexPath, []byte("the\tO\nsees\tB-VP\nsees\tI-NP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{"lbfgs", "ap"} {
		if _, stderr, err := runCLI(t, "learn", "-q", "-m", modelPath, "-a", algo, "--template", obsTpl, "--lexicon", lexPath,
			"-p", "max_iterations=40", "--threads", "2", trainPath); err != nil {
			t.Fatalf("%s: learn: %v\n%s", algo, err, stderr)
		}
		m, err := model.Load(modelPath)
		if err != nil {
			t.Fatal(err)
		}
		if m.Lexicon == nil || m.Lexicon.Len() != 2 || m.Bigram == nil || m.Bigram.Attrs.Len() == 0 {
			t.Fatalf("%s: model lexicon %+v, bigrams %+v", algo, m.Lexicon, m.Bigram)
		}
		got := predictions(t, modelPath, testPath)
		if len(got["the"]) == 0 || len(got["eats"]) == 0 {
			t.Fatal("test data without 'the' or 'eats'")
		}
		for _, y := range got["the"] {
			if y != "O" {
				t.Errorf("%s: 'the' tagged %s, but the lexicon allows only O", algo, y)
			}
		}
		for _, y := range got["sees"] {
			if y != "B-VP" && y != "I-NP" {
				t.Errorf("%s: 'sees' tagged %s, outside its candidates", algo, y)
			}
		}
		for _, y := range got["eats"] {
			if y != "B-VP" {
				t.Errorf("%s: 'eats' (not in the lexicon) tagged %s", algo, y)
			}
		}
		in, _ := os.ReadFile(testPath)
		out, _, err := runCLI(t, "tag", "-m", modelPath, "-i", "-n", "2", testPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "O:1.000000") {
			t.Errorf("%s: tag -i -n 2 prints no certain O\n%.500s", algo, out)
		}
		out, _, err = runCLI(t, "tag", "-m", modelPath, "-i", testPath)
		if err != nil {
			t.Fatal(err)
		}
		rows, pred := strings.Split(strings.TrimSpace(string(in)), "\n"), strings.Split(strings.TrimSpace(out), "\n")
		if len(rows) != len(pred) {
			t.Fatalf("-i: %d input lines, %d output lines", len(rows), len(pred))
		}
		for k, row := range rows {
			if strings.HasPrefix(row, "the ") && pred[k] != "O:1.000000" {
				t.Errorf("%s: -i: 'the' printed as %q, want O:1.000000", algo, pred[k])
			}
		}
		dump, _, err := runCLI(t, "dump", modelPath)
		if err != nil || !strings.Contains(dump, "CANDIDATES = 2 words") || !strings.Contains(dump, "OBSERVATION_TRANSITIONS") {
			t.Errorf("%s: dump: %v\n%.2000s", algo, err, dump)
		}
	}
}
