package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/model"
)

var fixtureDir = filepath.Join("..", "..", "model", "testdata", "crfsuite")

func gunzipped(t *testing.T, path string) string {
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
	return string(b)
}

// TestTagCRFsuiteModel: simdcrf tag reads a model CRFsuite wrote and prints
// what CRFsuite's library prints for crfsuite tag -r -p -i -l, byte for
// byte, on one thread or three; dump reads it; convert turns it into a
// simdcrf model that tags alike and back into the same file.
func TestTagCRFsuiteModel(t *testing.T) {
	for _, name := range []string{"ewt-xpos", "ewt-upos"} {
		modelPath := filepath.Join(fixtureDir, name+".crfsuite")
		data := filepath.Join(fixtureDir, name+".test.gz")
		want := gunzipped(t, filepath.Join(fixtureDir, name+".test.crfsuite-tag-rpil.gz"))
		for _, threads := range []string{"1", "3"} {
			out, stderr, err := runCLI(t, "tag", "-m", modelPath, "-r", "-p", "-i", "-l", "--threads", threads, data)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if out != want {
				t.Errorf("%s, %s threads: tag -r -p -i -l differs from CRFsuite's output", name, threads)
			}
		}
		// Without DATA, standard input, as crfsuite tag reads it.
		in := filepath.Join(t.TempDir(), "in.txt")
		os.WriteFile(in, []byte(gunzipped(t, data)), 0o644)
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		stdin := os.Stdin
		os.Stdin = f
		out, _, err := runCLI(t, "tag", "-m", modelPath, "-r", "-p", "-i", "-l")
		os.Stdin = stdin
		f.Close()
		if err != nil || out != want {
			t.Errorf("%s: tag reading standard input: %v, output as CRFsuite's: %v", name, err, out == want)
		}
		out, _, err = runCLI(t, "dump", "-m", modelPath)
		if err != nil || !strings.Contains(out, "CRFsuite (lCRF FOMC 100)") || !strings.Contains(out, "STATE_FEATURES") {
			t.Errorf("dump: %v\n%.300s", err, out)
		}
		dir := t.TempDir()
		own, back := filepath.Join(dir, name+".model"), filepath.Join(dir, name+".crfsuite")
		if _, _, err := runCLI(t, "convert", "-m", modelPath, "-o", own); err != nil {
			t.Fatal(err)
		}
		if f, err := model.FileFormat(own); err != nil || f != model.FormatSimdcrf {
			t.Fatalf("convert wrote %q: %v", f, err)
		}
		if out, _, err := runCLI(t, "tag", "-m", own, "-r", "-p", "-i", "-l", data); err != nil || out != want {
			t.Errorf("%s converted to simdcrf's format: %v, tags differently: %v", name, err, out != want)
		}
		if _, _, err := runCLI(t, "convert", "-m", own, "-o", back); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(modelPath)
		b, _ := os.ReadFile(back)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: crfsuite → simdcrf → crfsuite is not the same file", name)
		}
	}
}

// writeAttrFile writes a CRFsuite attribute file of n sequences whose
// labels follow from their attributes; label "ZZZ" is never used unless
// unknown is set (then it is the reference of a few items).
func writeAttrFile(t *testing.T, path string, n int, seed uint64, unknown bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 5))
	var b strings.Builder
	for i := range n {
		for k := range 2 + r.IntN(5) {
			x := r.IntN(3)
			label := fmt.Sprintf("L%d", x)
			if unknown && i%7 == 0 && k == 0 {
				label = "ZZZ"
			}
			fmt.Fprintf(&b, "%s\tw=%d\tprev\\:%d:%.1f\tbias\n", label, x, r.IntN(3), 0.5+r.Float64())
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLearnCRFsuite: learn writes CRFsuite's format for a .crfsuite name
// or --model-format crfsuite, says what it trains without, and refuses tied
// transitions; convert refuses a model CRFsuite's format cannot hold,
// naming the part; tag -t counts a reference label unknown to the model as
// wrong.
func TestLearnCRFsuite(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.txt"), filepath.Join(dir, "test.txt")
	writeAttrFile(t, train, 150, 1, false)
	writeAttrFile(t, test, 40, 2, true)
	cm := filepath.Join(dir, "m.crfsuite")
	_, stderr, err := runCLI(t, "learn", "-m", cm, train)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "CRFsuite's format: trained without start and end weights") {
		t.Errorf("learn into .crfsuite does not say what it trains without:\n%s", stderr)
	}
	cm2 := filepath.Join(dir, "other.model")
	if _, _, err := runCLI(t, "learn", "-q", "-m", cm2, "--model-format", "crfsuite", train); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cm, cm2} {
		if f, err := model.FileFormat(p); err != nil || f != model.FormatCRFsuite {
			t.Errorf("%s: format %q, %v", p, f, err)
		}
	}
	m, err := model.Load(cm)
	if err != nil {
		t.Fatal(err)
	}
	for j := range m.Labels.Len() {
		if m.Trans.Start(j) != 0 || m.Trans.End(j) != 0 {
			t.Fatalf("label %d has start/end weights in a CRFsuite model", j)
		}
	}
	out, _, err := runCLI(t, "tag", "-m", cm, "--json", test)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tokens  int     `json:"tokens"`
		Correct int     `json:"correct_tokens"`
		Item    float64 `json:"item_accuracy"`
		Labels  map[string]struct {
			Support int `json:"support"`
		} `json:"labels"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if zzz := res.Labels["ZZZ"].Support; zzz == 0 || res.Tokens-res.Correct < zzz || res.Item == 1 {
		t.Errorf("-t with unknown reference labels: %d tokens, %d correct, ZZZ support %d", res.Tokens, res.Correct, zzz)
	}
	out, _, err = runCLI(t, "tag", "-m", cm, "-r", test)
	if err != nil || !strings.Contains(out, "ZZZ\tL") {
		t.Errorf("tag -r does not print the unknown reference label: %v", err)
	}

	if _, _, err := runCLI(t, "learn", "-q", "-m", filepath.Join(dir, "t.crfsuite"), "-p", "transitions=tied", train); err == nil || !strings.Contains(err.Error(), "tied") {
		t.Errorf("learn of tied transitions into CRFsuite's format: %v", err)
	}
	// A template: learn trains and says the model holds its attributes;
	// convert refuses a simdcrf model with one.
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 60, 5)
	_, stderr, err = runCLI(t, "learn", "-m", filepath.Join(dir, "tpl.crfsuite"), "--template", tplPath, trainPath)
	if err != nil || !strings.Contains(stderr, "attribute names the template makes") {
		t.Errorf("learn --template into .crfsuite: %v\n%s", err, stderr)
	}
	if _, _, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, trainPath); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "tpl2.crfsuite")
	_, _, err = runCLI(t, "convert", "-m", modelPath, "-o", out2)
	if err == nil || !strings.Contains(err.Error(), "CRF++ template") || !strings.Contains(err.Error(), "was not written") {
		t.Errorf("convert of a model with a template: %v", err)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Error("convert wrote a model it refused")
	}
	if _, _, err := runCLI(t, "convert", "-m", modelPath, "-o", out2, "--to", "xml"); err == nil || !strings.Contains(err.Error(), "--to xml") {
		t.Errorf("convert --to xml: %v", err)
	}
	if _, _, err := runCLI(t, "convert", "-m", testPath, "-o", out2); err == nil || !strings.Contains(err.Error(), "not a simdcrf or CRFsuite model") {
		t.Errorf("convert of a text file: %v", err)
	}
}
