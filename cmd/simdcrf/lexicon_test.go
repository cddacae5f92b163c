package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/internal/learn"
	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/model"
)

// predictions tags testPath with modelPath (plus args) and returns, for
// each word of the test file, the labels predicted for it.
func predictions(t *testing.T, modelPath, testPath string, args ...string) map[string][]string {
	t.Helper()
	out, _, err := runCLI(t, append(append([]string{"tag", "-m", modelPath}, args...), testPath)...)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := os.ReadFile(testPath)
	rows, pred := strings.Split(strings.TrimSpace(string(in)), "\n"), strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != len(pred) {
		t.Fatalf("%d input lines, %d output lines", len(rows), len(pred))
	}
	got := map[string][]string{}
	for k, row := range rows {
		if f := strings.Fields(row); len(f) > 0 {
			got[f[0]] = append(got[f[0]], strings.TrimSpace(pred[k]))
		}
	}
	return got
}

// TestLexicon: a lexicon file's restriction is stored in the model and
// applied by tag with no flag (the model's candidate labels overrule what
// the features say: "the", always B-NP or I-NP in the data, listed as O);
// words outside the lexicon are free; -p feature.candidates stores the
// training data's labels of frequent words.
func TestLexicon(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 50)
	dir := filepath.Dir(modelPath)
	lexPath := filepath.Join(dir, "lex.txt")
	if err := os.WriteFile(lexPath, []byte("the\tO\nsees\tB-VP\nsees\tI-NP\nqqq\tNOSUCHLABEL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, "--lexicon", lexPath, "-p", "max_iterations=40", trainPath); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Lexicon == nil || m.Lexicon.Len() != 2 {
		t.Fatalf("model lexicon %+v, want the 2 words with known labels", m.Lexicon)
	}
	got := predictions(t, modelPath, testPath)
	if len(got["the"]) == 0 || len(got["eats"]) == 0 {
		t.Fatal("test data without 'the' or 'eats'")
	}
	for _, y := range got["the"] {
		if y != "O" {
			t.Errorf("'the' tagged %s, but the lexicon allows only O", y)
		}
	}
	for _, y := range got["sees"] {
		if y != "B-VP" && y != "I-NP" {
			t.Errorf("'sees' tagged %s, outside its candidates", y)
		}
	}
	for _, y := range got["eats"] { // free: the features make it B-VP
		if y != "B-VP" {
			t.Errorf("'eats' (not in the lexicon) tagged %s", y)
		}
	}
	// -i goes through the constrained chain too: 'the' is O with
	// marginal probability 1.
	in, _ := os.ReadFile(testPath)
	out, _, err := runCLI(t, "tag", "-m", modelPath, "-i", testPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, pred := strings.Split(strings.TrimSpace(string(in)), "\n"), strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != len(pred) {
		t.Fatalf("-i: %d input lines, %d output lines", len(rows), len(pred))
	}
	for k, row := range rows {
		if strings.HasPrefix(row, "the ") && pred[k] != "O:1.000000" {
			t.Errorf("-i: 'the' printed as %q, want O:1.000000", pred[k])
		}
	}

	// Learnt candidates: every word is frequent in the toy data, so each
	// is held to the labels it had there ('the' never O).
	cand := filepath.Join(dir, "cand.model")
	if _, _, err := runCLI(t, "learn", "-q", "-m", cand, "--template", tplPath, "-p", "feature.candidates=2", "-p", "max_iterations=40", trainPath); err != nil {
		t.Fatal(err)
	}
	mc, err := model.Load(cand)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := mc.Lexicon.Words.Lookup("the")
	if !ok {
		t.Fatal("'the' not in the learnt lexicon")
	}
	for _, y := range mc.Lexicon.Allowed(id) {
		if l := mc.Labels.String(y); l != "B-NP" && l != "I-NP" {
			t.Errorf("'the' allowed %s", l)
		}
	}
	for _, y := range predictions(t, cand, testPath)["the"] {
		if y != "B-NP" && y != "I-NP" {
			t.Errorf("'the' tagged %s", y)
		}
	}
}

func TestLexiconErrors(t *testing.T) {
	trainPath, _, tplPath, modelPath := toyFiles(t, 20, 1)
	dir := filepath.Dir(modelPath)
	for _, c := range []struct{ text, want string }{
		{"the\tB-NP\nno tab here\n", "lex.txt:2: no tab"},
		{"the\tB-NP\n\ndog\t \n", "lex.txt:3: no labels"},
		{"\tB-NP\n", "lex.txt:1: empty word"},
		{"the\tB-NP\n\xff\tO\n", "lex.txt:2: not UTF-8"},
		{"\n\n", "lex.txt: no entries"},
	} {
		lexPath := filepath.Join(dir, "lex.txt")
		if err := os.WriteFile(lexPath, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, "--lexicon", lexPath, trainPath)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("lexicon %q: error %v, want %q", c.text, err, c.want)
		}
	}
	_, _, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, "--lexicon", filepath.Join(dir, "missing.txt"), trainPath)
	if err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing lexicon: %v", err)
	}
	_, _, err = runCLI(t, "learn", "-q", "-m", filepath.Join(dir, "m.crfsuite"), "--template", tplPath, "-p", "feature.candidates=2", trainPath)
	if err == nil || !strings.Contains(err.Error(), "candidate labels") {
		t.Errorf("candidates into a CRFsuite model: %v", err)
	}
	if _, err := os.Stat(modelPath); err == nil {
		t.Errorf("a model was written despite the errors")
	}
}

// TestMorphSubLabels: --features morph gives positional labels (all of one
// length) sub-label weights on their first characters, unless -p
// feature.sublabels says otherwise; other labels get none.
func TestMorphSubLabels(t *testing.T) {
	if learn.Positional([]string{"NNFS1", "AAFS1", "VB-S-", "Z:---"}) != 5 || learn.Positional([]string{"NOUN", "VERB", "ADJ", "DET"}) != 0 ||
		learn.Positional([]string{"NN", "VB", "JJ", "DT"}) != 0 || learn.Positional([]string{"AB C", "ABCD", "ABCE", "ABCF"}) != 0 {
		t.Error("positional")
	}
	dir := t.TempDir()
	train := filepath.Join(dir, "t.conllu")
	var b strings.Builder
	words := []struct{ w, tag string }{{"pes", "NNMS1-"}, {"psa", "NNMS4-"}, {"vidí", "VB-S-3"}, {"kočku", "NNFS4-"}, {"kočka", "NNFS1-"}, {"velký", "AAMS1-"}}
	for s := range 30 {
		for k := range 4 {
			x := words[(s+k*k)%len(words)]
			fmt.Fprintf(&b, "%d\t%s\t_\tX\t%s\t_\t_\t_\t_\t_\n", k+1, x.w, x.tag)
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(train, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 6},
		{[]string{"-p", "feature.sublabels=0"}, 0},
		{[]string{"-p", "feature.sublabels=2"}, 2},
	} {
		mp := filepath.Join(dir, "m.model")
		args := append([]string{"learn", "-m", mp, "--features", "morph", "--label", "xpos", "-p", "max_iterations=10", "-e", train}, c.args...)
		_, stderr, err := runCLI(t, append(args, train)...)
		if err != nil {
			t.Fatal(err)
		}
		// The holdout (the training data) is scored with the sub-label
		// weights: the last iterations' accuracy is 1.
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if f := strings.Fields(lines[len(lines)-2]); len(f) < 5 || f[4] != "1.0000" {
			t.Errorf("%v: last progress line %q, want holdout accuracy 1", c.args, lines[len(lines)-2])
		}
		m, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		if m.Sub != nil {
			got = m.Sub.N
		}
		if got != c.want {
			t.Errorf("%v: %d sub-label parts, want %d", c.args, got, c.want)
		}
		if _, _, err := runCLI(t, "tag", "-m", mp, "-q", "-t", train); err != nil {
			t.Error(err)
		}
	}
}

// TestCzechCLTT trains UD Czech CLTT's official training file with the
// default options and --features morph and tags its test file: issue 14's
// measurement (about 6 minutes on one loaded core, so only with
// SIMDCRF_CZECH=1). It fails below 84 %: the accuracy measured when the
// morph features and sub-label weights were made (84.49 %; UDPipe 1.2,
// the target, reaches 87.5 %).
func TestCzechCLTT(t *testing.T) {
	if os.Getenv("SIMDCRF_CZECH") == "" {
		t.Skip("SIMDCRF_CZECH not set (trains CLTT for minutes)")
	}
	dir := testdata.Must(t, "ud_czech", "cltt")
	mp := filepath.Join(t.TempDir(), "cltt.model")
	if _, _, err := runCLI(t, "learn", "-q", "-m", mp, "--features", "morph", "--label", "xpos", filepath.Join(dir, "cs_cltt-ud-train.conllu")); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "tag", "-m", mp, "--json", filepath.Join(dir, "cs_cltt-ud-test.conllu"))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Item float64 `json:"item_accuracy"`
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatal(err)
	}
	t.Logf("CLTT test XPOS accuracy %.2f %%", 100*ev.Item)
	if ev.Item < 0.84 {
		t.Errorf("accuracy %.2f %%, below 84 %%", 100*ev.Item)
	}
}
