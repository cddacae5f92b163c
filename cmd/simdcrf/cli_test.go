package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/model"
)

// toyChunks writes a column file (WORD POS CHUNK) whose chunk tags follow
// from the POS tags by a rule with context, so a CRF with the template below
// learns it: determiners and adjectives open or continue a noun phrase
// closed by a noun, verbs are VPs, the rest is O.
func toyChunks(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	words := map[string][]string{
		"DT": {"the", "a", "this"}, "JJ": {"big", "red", "old"}, "NN": {"dog", "cat", "house", "tree"},
		"VB": {"sees", "likes", "eats"}, "IN": {"in", "on"}, ".": {"."},
	}
	var b strings.Builder
	for range n {
		var rows [][3]string
		np := func() {
			tags := []string{"NN"}
			if r.IntN(2) == 0 {
				tags = append([]string{"JJ"}, tags...)
			}
			if r.IntN(3) != 0 {
				tags = append([]string{"DT"}, tags...)
			}
			for i, p := range tags {
				c := "I-NP"
				if i == 0 {
					c = "B-NP"
				}
				rows = append(rows, [3]string{words[p][r.IntN(len(words[p]))], p, c})
			}
		}
		np()
		rows = append(rows, [3]string{words["VB"][r.IntN(3)], "VB", "B-VP"})
		np()
		if r.IntN(2) == 0 {
			rows = append(rows, [3]string{words["IN"][r.IntN(2)], "IN", "B-PP"})
			np()
		}
		rows = append(rows, [3]string{".", ".", "O"})
		for _, row := range rows {
			fmt.Fprintf(&b, "%s %s %s\n", row[0], row[1], row[2])
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

const toyTemplate = `# toy chunking template
U00:%x[-1,0]
U01:%x[0,0]
U02:%x[1,0]
U10:%x[-1,1]
U11:%x[0,1]
U12:%x[1,1]
U13:%x[-1,1]/%x[0,1]
B
`

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(args, &out, &errb)
	return out.String(), errb.String(), err
}

// toyFiles writes toy training and test data (nTrain and nTest sentences)
// and the toy template into a temporary directory, and returns their paths
// and that of a model file there.
func toyFiles(t *testing.T, nTrain, nTest int) (trainPath, testPath, tplPath, modelPath string) {
	dir := t.TempDir()
	trainPath, testPath = filepath.Join(dir, "train.txt"), filepath.Join(dir, "test.txt")
	tplPath, modelPath = filepath.Join(dir, "toy.tpl"), filepath.Join(dir, "toy.model")
	toyChunks(t, trainPath, nTrain, 1)
	toyChunks(t, testPath, nTest, 2)
	if err := os.WriteFile(tplPath, []byte(toyTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	return trainPath, testPath, tplPath, modelPath
}

func TestLearnTagDump(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 300, 100)
	for _, algo := range []string{"lbfgs", "l1", "sgd", "ap"} {
		t.Run(algo, func(t *testing.T) {
			args := []string{"learn", "-m", modelPath, "-a", algo, "--template", tplPath, "--threads", "2", "-e", testPath}
			if algo == "l1" {
				args = append(args, "-p", "c1=0.1")
			}
			_, stderr, err := runCLI(t, append(args, trainPath)...)
			if err != nil {
				t.Fatalf("learn: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "iter") || !strings.Contains(stderr, "model written") {
				t.Errorf("learn printed no progress:\n%s", stderr)
			}
			out, stderr, err := runCLI(t, "tag", "-m", modelPath, "--json", testPath)
			if err != nil {
				t.Fatalf("tag: %v\n%s", err, stderr)
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("tag --json printed %q: %v", out, err)
			}
			for _, k := range []string{"item_accuracy", "instance_accuracy", "chunk_f1", "macro_f1", "labels"} {
				if _, ok := res[k]; !ok {
					t.Errorf("--json lacks %q: %s", k, out)
				}
			}
			if acc, _ := res["item_accuracy"].(float64); acc < 0.99 {
				t.Errorf("item accuracy %v on a rule the template can express", acc)
			}
			if f1, _ := res["chunk_f1"].(float64); f1 < 0.98 {
				t.Errorf("chunk F1 %v", f1)
			}
		})
	}

	// Labels, one per line and a blank line after each sequence, as many
	// as the input has items.
	out, _, err := runCLI(t, "tag", "-m", modelPath, testPath)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := os.ReadFile(testPath)
	if got, want := strings.Count(out, "\n"), strings.Count(string(in), "\n"); got != want {
		t.Errorf("tag printed %d lines for %d input lines", got, want)
	}
	// -p, -i and -n.
	out, _, err = runCLI(t, "tag", "-m", modelPath, "-p", "-i", testPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "@score\t") || !strings.Contains(out, "\n@probability\t") || !strings.Contains(out, "B-NP:") {
		t.Errorf("tag -p -i printed %.200q", out)
	}
	checkTagText(t, modelPath, testPath)
	out, _, err = runCLI(t, "tag", "-m", modelPath, "-n", "3", testPath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(out, "@nbest\t"), 3*100; got != want {
		t.Errorf("tag -n 3 printed %d labellings for 100 sequences", got)
	}
	// With -i, each labelling's labels carry their marginals, the first
	// labelling's those of -i alone.
	outNI, _, err := runCLI(t, "tag", "-m", modelPath, "-n", "3", "-i", testPath)
	if err != nil {
		t.Fatal(err)
	}
	outI, _, err := runCLI(t, "tag", "-m", modelPath, "-i", testPath)
	if err != nil {
		t.Fatal(err)
	}
	firstI := strings.SplitN(outI, "\n\n", 2)[0]
	firstNI := strings.SplitN(outNI, "\n\n", 2)[0]
	if _, lab, _ := strings.Cut(firstNI, "\n"); lab != firstI || !strings.Contains(lab, ":") {
		t.Errorf("tag -n 3 -i: first labelling\n%s\nwant as tag -i:\n%s", firstNI, firstI)
	}
	if strings.Count(outNI, ":") != 3*strings.Count(outI, ":") {
		t.Errorf("tag -n 3 -i printed %d marginals, tag -i %d (want 3 times as many)", strings.Count(outNI, ":"), strings.Count(outI, ":"))
	}
	// Text evaluation.
	out, _, err = runCLI(t, "tag", "-m", modelPath, "-t", "-q", testPath)
	if err != nil || !strings.Contains(out, "Item accuracy") || !strings.Contains(out, "FB1") {
		t.Errorf("tag -t -q: %v\n%s", err, out)
	}
	// Dump.
	out, _, err = runCLI(t, "dump", "-m", modelPath)
	if err != nil || !strings.Contains(out, "B-NP") {
		t.Errorf("dump: %v\n%.300s", err, out)
	}
}

// checkTagText checks -r, -p, -i and -l (crfsuite tag's options) line by
// line against the plain labels and the reference labels of testPath (a
// column file whose last column is the label), and that -p's numbers agree
// (P = exp(S − L)) and -l's marginals sum to 1 and hold -i's.
func checkTagText(t *testing.T, modelPath, testPath string) {
	t.Helper()
	plain, _, err := runCLI(t, "tag", "-m", modelPath, testPath)
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := runCLI(t, "tag", "-m", modelPath, "-r", "-p", "-i", "-l", testPath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	labels := m.LabelNames()
	in, _ := os.ReadFile(testPath)
	inSeqs := strings.Split(strings.TrimSuffix(string(in), "\n\n"), "\n\n")
	plainSeqs := strings.Split(strings.TrimSuffix(plain, "\n\n"), "\n\n")
	fullSeqs := strings.Split(strings.TrimSuffix(full, "\n\n"), "\n\n")
	if len(fullSeqs) != len(inSeqs) || len(plainSeqs) != len(inSeqs) {
		t.Fatalf("%d sequences in, %d printed plain and %d with -r -p -i -l", len(inSeqs), len(plainSeqs), len(fullSeqs))
	}
	for k, block := range fullSeqs {
		lines := strings.Split(block, "\n")
		var s, l, p float64
		if n, err := fmt.Sscanf(lines[0]+"\n"+lines[1], "@score\t%f\t%f\n@probability\t%f", &s, &l, &p); n != 3 || err != nil {
			t.Fatalf("sequence %d: -p lines %q: %v", k, lines[:2], err)
		}
		if math.Abs(p-math.Exp(s-l)) > 3e-6 || p <= 0 || p > 1 {
			t.Errorf("sequence %d: @probability %v, but exp(%v − %v) = %v", k, p, s, l, math.Exp(s-l))
		}
		items := lines[2:]
		rows := strings.Split(inSeqs[k], "\n")
		pred := strings.Split(plainSeqs[k], "\n")
		if len(items) != len(rows) || len(pred) != len(rows) {
			t.Fatalf("sequence %d: %d items in, %d lines printed", k, len(rows), len(items))
		}
		for i, line := range items {
			f := strings.Split(line, "\t")
			ref := strings.Fields(rows[i])
			if len(f) != 2+len(labels) || f[0] != ref[len(ref)-1] {
				t.Fatalf("sequence %d, item %d: %q, want the reference %s, the label and %d marginals", k, i, line, ref[len(ref)-1], len(labels))
			}
			lab, mi, ok := strings.Cut(f[1], ":")
			if !ok || lab != pred[i] {
				t.Fatalf("sequence %d, item %d: %q, want label %s as without options", k, i, f[1], pred[i])
			}
			sum := 0.0
			for j, lm := range f[2:] {
				name, v, _ := strings.Cut(lm, ":")
				if name != labels[j] {
					t.Fatalf("sequence %d, item %d: marginal %d is %q, want label %s", k, i, j, lm, labels[j])
				}
				x, _ := strconv.ParseFloat(v, 64)
				sum += x
				if name == lab && v != mi {
					t.Errorf("sequence %d, item %d: -l gives %s for %s, -i %s", k, i, v, lab, mi)
				}
			}
			if math.Abs(sum-1) > 1e-5*float64(len(labels)) {
				t.Errorf("sequence %d, item %d: marginals sum to %v", k, i, sum)
			}
		}
	}
	// The long forms are the same options.
	long, _, err := runCLI(t, "tag", "--model", modelPath, "--reference", "--probability", "--marginal", "--marginal-all", testPath)
	if err != nil || long != full {
		t.Errorf("tag with crfsuite's long options: %v, output differs from -r -p -i -l: %v", err, long != full)
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("the DT B-NP\ndog NN I-NP\nbarks\n\n"), 0o644)
	tpl := filepath.Join(dir, "toy.tpl")
	os.WriteFile(tpl, []byte(toyTemplate), 0o644)
	modelPath := filepath.Join(dir, "m.model")

	_, _, err := runCLI(t, "learn", "-m", modelPath, "--template", tpl, bad)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:3") {
		t.Errorf("learn on a short row: %v, want an error naming bad.txt:3", err)
	}
	if _, err := os.Stat(modelPath); !os.IsNotExist(err) {
		t.Errorf("a failed learn left a model behind")
	}
	_, _, err = runCLI(t, "learn", "-m", modelPath, "-p", "c2=abc", "--template", tpl, bad)
	if err == nil || !strings.Contains(err.Error(), "c2") {
		t.Errorf("bad parameter: %v", err)
	}
	_, _, err = runCLI(t, "learn", "-m", modelPath, "-p", "nonsense=1", "--template", tpl, bad)
	if err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("unknown parameter: %v", err)
	}
	badTpl := filepath.Join(dir, "bad.tpl")
	os.WriteFile(badTpl, []byte("U00:%x[0,0]\nU01:%x[0\nB\n"), 0o644)
	_, _, err = runCLI(t, "learn", "-m", modelPath, "--template", badTpl, bad)
	if err == nil || !strings.Contains(err.Error(), "bad.tpl:2") {
		t.Errorf("malformed template: %v, want an error naming bad.tpl:2", err)
	}
	_, _, err = runCLI(t, "learn", "-m", modelPath, "--template", tpl, filepath.Join(dir, "missing.txt"))
	if err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: %v", err)
	}
	// A damaged model.
	os.WriteFile(modelPath, []byte("\x89SIMDCRF garbage"), 0o644)
	_, _, err = runCLI(t, "tag", "-m", modelPath, bad)
	if err == nil || !strings.Contains(err.Error(), "m.model") {
		t.Errorf("damaged model: %v", err)
	}
}

// TestCRFsuiteFormat trains from CRFsuite's attribute format, with values
// and escapes, and tags it back.
func TestCRFsuiteFormat(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.txt")
	var b strings.Builder
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		for range 2 + r.IntN(6) {
			x := r.IntN(3)
			if i%3 == 0 { // no values in some sequences
				fmt.Fprintf(&b, "L%d\tw=%d\tbias\n", x, x)
				continue
			}
			fmt.Fprintf(&b, "L%d\tw=%d\tshape\\:x%d:%.1f\tbias\n", x, x, x, 0.5+r.Float64())
		}
		b.WriteString("\n")
	}
	os.WriteFile(data, []byte(b.String()), 0o644)
	modelPath := filepath.Join(dir, "m.model")
	if _, stderr, err := runCLI(t, "learn", "-m", modelPath, data); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	out, _, err := runCLI(t, "tag", "-m", modelPath, "--json", data)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Item  float64  `json:"item_accuracy"`
		Chunk *float64 `json:"chunk_f1"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Item != 1 || res.Chunk != nil {
		t.Errorf("item accuracy %v (want 1), chunk F1 %v (want null: L0.. are not chunk labels)", res.Item, res.Chunk)
	}
	// One worker (the reader encodes) and several (the workers encode
	// the names the reader copied) print the same.
	one, _, err := runCLI(t, "tag", "-m", modelPath, "-p", "-i", "--threads", "1", data)
	if err != nil {
		t.Fatal(err)
	}
	three, _, err := runCLI(t, "tag", "-m", modelPath, "-p", "-i", "--threads", "3", data)
	if err != nil {
		t.Fatal(err)
	}
	if one != three || !strings.Contains(one, "@probability") {
		t.Errorf("tag -p -i: --threads 1 and --threads 3 print differently (or no probabilities)")
	}
}

func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo trains for several seconds")
	}
	out, stderr, err := runCLI(t, "demo", "--json", "-q")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var res struct {
		Item float64 `json:"item_accuracy"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	// 4,000 training sentences give about 92% (the whole train file, 94%).
	if res.Item < 0.90 {
		t.Errorf("demo item accuracy %.4f", res.Item)
	}
}

// TestTemplateWithoutB checks that a CRF++ template without a B line
// trains no label-bigram, start or end weights, as in CRF++, and that
// asking for transitions anyway warns.
func TestTemplateWithoutB(t *testing.T) {
	dir := t.TempDir()
	trainPath, tplPath, modelPath := filepath.Join(dir, "train.txt"), filepath.Join(dir, "u.tpl"), filepath.Join(dir, "u.model")
	toyChunks(t, trainPath, 100, 1)
	if err := os.WriteFile(tplPath, []byte(strings.TrimSuffix(toyTemplate, "B\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, "learn", "-m", modelPath, "--template", tplPath, "-p", "max_iterations=20", trainPath)
	if err != nil {
		t.Fatalf("learn: %v\n%s", err, stderr)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	M := m.Labels.Len()
	for i := range M {
		if m.Trans.Start(i) != 0 || m.Trans.End(i) != 0 {
			t.Fatalf("label %d: start %v, end %v, want 0", i, m.Trans.Start(i), m.Trans.End(i))
		}
		for j := range M {
			if s := m.Trans.Score(i, j); s != 0 {
				t.Fatalf("transition %d→%d has weight %v, want 0", i, j, s)
			}
		}
	}
	_, stderr, err = runCLI(t, "learn", "-m", modelPath, "--template", tplPath, "-p", "max_iterations=3", "-p", "transitions=dense", trainPath)
	if err != nil || !strings.Contains(stderr, "has no B line") {
		t.Errorf("transitions=dense with a template without B: %v, stderr %q", err, stderr)
	}
	if m, err = model.Load(modelPath); err != nil {
		t.Fatal(err)
	}
	nonzero := false
	for i := range M {
		for j := range M {
			nonzero = nonzero || m.Trans.Score(i, j) != 0
		}
	}
	if !nonzero {
		t.Error("transitions=dense trained no transition weight")
	}
}

// TestTagFlagChecks: tag accepts learn's --template, --features and --label
// when they are the model's, and names the difference otherwise; bad -n and
// --threads are errors.
func TestTagFlagChecks(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 50, 5)
	if _, stderr, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, trainPath); err != nil {
		t.Fatalf("learn: %v\n%s", err, stderr)
	}
	plain, _, err := runCLI(t, "tag", "-m", modelPath, testPath)
	if err != nil {
		t.Fatal(err)
	}
	// The same template, with a comment and blank lines added, is the same.
	same := filepath.Join(filepath.Dir(tplPath), "same.tpl")
	os.WriteFile(same, []byte("# the same\n\n"+toyTemplate+"\n"), 0o644)
	other := filepath.Join(filepath.Dir(tplPath), "other.tpl")
	os.WriteFile(other, []byte("U00:%x[0,0]\nB\n"), 0o644)
	for _, tpl := range []string{tplPath, same} {
		if out, _, err := runCLI(t, "tag", "-m", modelPath, "--template", tpl, testPath); err != nil || out != plain {
			t.Errorf("tag --template %s (the model's): %v", tpl, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--template", other}, "other.tpl: not the template the model was trained with"},
		{[]string{"--features", "pos"}, "--features pos: the model was trained without a built-in feature set (it has a template)"},
		{[]string{"--label", "xpos"}, "--label xpos: the model reads conll input"},
		{[]string{"-n", "0"}, "-n 0: want K ≥ 1"},
		{[]string{"-n", "-2"}, "-n -2: want K ≥ 1"},
		{[]string{"--threads", "-3"}, "--threads -3: want N ≥ 1, or 0 for all cores"},
	} {
		_, _, err := runCLI(t, append(append([]string{"tag", "-m", modelPath}, c.args...), testPath)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tag %v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
	if _, _, err := runCLI(t, "tag", "-m", modelPath, "--threads", "0", "-n", "1", testPath); err != nil {
		t.Errorf("tag --threads 0 -n 1: %v", err)
	}
}

// TestTiedLearntDefaultModel: a model written when the trainer still
// trained the tied default (testdata/README.md says how it was made) loads
// with that default and tags exactly as it did then: the same labels,
// probabilities and marginals.
func TestTiedLearntDefaultModel(t *testing.T) {
	const base = "testdata/tied-learnt-default"
	m, err := model.Load(base + ".model")
	if err != nil {
		t.Fatal(err)
	}
	def, exc := m.Trans.Exceptions()
	if def > -1 || len(exc) == 0 {
		t.Fatalf("default %v with %d exceptions: not the learnt default of the file", def, len(exc))
	}
	want, err := os.ReadFile(base + ".expected")
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "tag", "-m", base+".model", "-p", "-i", "--threads", "1", base+".test.conllu")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("tag -p -i output differs from %s.expected:\n%s", base, out)
	}
}

// TestObsBigramTemplate: a template with plain and observation-dependent B
// lines trains, saves, tags (with -p, -i and -n), dumps; bad B lines get
// errors naming the template's file and line.
func TestObsBigramTemplate(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 60)
	dir := filepath.Dir(tplPath)
	obsTpl := filepath.Join(dir, "obs.tpl")
	if err := os.WriteFile(obsTpl, []byte(toyTemplate+"B01:%x[0,1]\nB02:%x[-1,1]/%x[0,1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{"lbfgs", "ap"} {
		if _, stderr, err := runCLI(t, "learn", "-q", "-m", modelPath, "-a", algo, "--template", obsTpl, "--threads", "2", "-e", testPath, trainPath); err != nil {
			t.Fatalf("%s: learn: %v\n%s", algo, err, stderr)
		}
		m, err := model.Load(modelPath)
		if err != nil {
			t.Fatal(err)
		}
		if m.Bigram == nil || m.Bigram.Attrs.Len() == 0 {
			t.Fatalf("%s: the model has no bigram weights", algo)
		}
		if _, ok := m.Bigram.Attrs.Lookup("B02:DT/NN"); !ok {
			t.Errorf("%s: no bigram attribute B02:DT/NN", algo)
		}
		out, _, err := runCLI(t, "tag", "-m", modelPath, "--json", testPath)
		if err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if acc, _ := res["item_accuracy"].(float64); acc < 0.99 {
			t.Errorf("%s: item accuracy %v", algo, acc)
		}
	}
	plain, _, err := runCLI(t, "tag", "-m", modelPath, testPath)
	if err != nil {
		t.Fatal(err)
	}
	rich, _, err := runCLI(t, "tag", "-m", modelPath, "-p", "-i", "-n", "2", testPath)
	if err != nil || !strings.Contains(rich, "@probability") {
		t.Fatalf("tag -p -i -n 2: %v\n%.300s", err, rich)
	}
	dump, _, err := runCLI(t, "dump", modelPath)
	if err != nil || !strings.Contains(dump, "OBSERVATION_TRANSITIONS") || !strings.Contains(dump, "B01:NN: ") {
		t.Errorf("dump: %v\n%.2000s", err, dump)
	}
	if len(plain) == 0 {
		t.Error("tag printed nothing")
	}
	// CRFsuite's format cannot hold them: refused before reading the data.
	if _, _, err := runCLI(t, "learn", "-q", "-m", filepath.Join(dir, "x.crfsuite"), "--template", obsTpl, trainPath); err == nil || !strings.Contains(err.Error(), "CRFsuite") {
		t.Errorf("learn to CRFsuite's format: %v", err)
	}
	for _, c := range []struct{ tpl, want string }{
		{"U00:%x[0,0]\nB01:%x[0,7]\n", "bad.tpl:2: %x[0,7] reads column 7"},
		{"U00:%x[0,0]\n\nB01:%x[0,1\n", "bad.tpl:3: malformed %x"},
	} {
		bad := filepath.Join(dir, "bad.tpl")
		if err := os.WriteFile(bad, []byte(c.tpl), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", bad, trainPath); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("template %q: %v, want %q", c.tpl, err, c.want)
		}
	}
}
