package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf"
	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/kernels"
)

func TestBenchKernelsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	err := run([]string{"kernels", "--json", "--kernels", "forward,dot", "--labels", "3", "--benchtime", "1ms"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if want := 2 * len(kernels.Impls()); len(lines) != want {
		t.Fatalf("got %d JSON lines, want %d:\n%s", len(lines), want, out.String())
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"kernel", "impl", "labels", "ns_per_position", "gflops"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %q lacks key %q", l, k)
			}
		}
		if ns, _ := m["ns_per_position"].(float64); !(ns > 0) {
			t.Errorf("line %q: ns_per_position not positive", l)
		}
		seen[m["kernel"].(string)+"/"+m["impl"].(string)] = true
	}
	for _, impl := range kernels.Impls() {
		if !seen["forward/"+impl] || !seen["dot/"+impl] {
			t.Errorf("no result for %s", impl)
		}
	}
	if !strings.Contains(errb.String(), "kernel tiers") {
		t.Errorf("stderr lacks the machine description: %q", errb.String())
	}
}

func TestBenchKernelsTable(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"kernels", "--kernels", "viterbi", "--labels", "9", "--benchtime", "1ms"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	s := out.String()
	for _, want := range append([]string{"machine:", "using " + kernels.Impl(), "ns/position", "viterbi"}, kernels.Impls()...) {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nope"},
		{"kernels", "--labels", "x"},
		{"kernels", "--kernels", "nope", "--labels", "3"},
		{"kernels", "--impl", "nope"},
		{"kernels", "--no-such-flag"},
	} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestReportWritesAtomically(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark briefly")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "BENCHMARKS.md")
	var out, errb bytes.Buffer
	if err := run([]string{"report", "--out", path, "--benchtime", "1ms", "--count", "1", "--labels", "3,9", "--layer=false"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go run ./cmd/simdcrf-bench report", "**Machine:**", "### FMA peak", "**forward**", "**viterbi**", "### Targets", "## Inference engine", "### Engine targets", "## arm64"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("report left temporary files: %v", entries)
	}
	// A report into a directory that does not exist fails without a file.
	if err := run([]string{"report", "--out", filepath.Join(dir, "no", "such", "B.md"), "--benchtime", "1ms", "--count", "1"}, &out, &errb); err == nil {
		t.Error("report into a missing directory succeeded")
	}
}

func TestBenchLayer(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"layer", "--notorch", "--labels", "3", "--reps", "1", "--mintime", "1ms"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"nll_grad  float32    3       1", "decode    float64    3       2", "marginals"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench layer lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBenchEngineJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"engine", "--json", "--labels", "9", "--threads", "1,2", "--benchtime", "1ms", "--count", "3"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	ops := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"op", "structure", "impl", "labels", "threads", "tokens_per_second", "allocs_per_sequence"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %q lacks key %q", l, k)
			}
		}
		if tps, _ := m["tokens_per_second"].(float64); !(tps > 0) {
			t.Errorf("line %q: tokens_per_second not positive", l)
		}
		if a, _ := m["allocs_per_sequence"].(float64); a != 0 {
			t.Errorf("line %q: allocates in steady state", l)
		}
		ops[m["op"].(string)+"/"+m["structure"].(string)] = true
	}
	for _, want := range []string{"forward_backward/dense", "forward_backward/tied", "forward_backward/forbidden", "viterbi/dense", "viterbi/tied", "viterbi/forbidden", "nbest/dense"} {
		if !ops[want] {
			t.Errorf("no result for %s", want)
		}
	}
}

// TestBuildSimdcrf: the suites that run simdcrf as a child process time the
// user's command, built from ./cmd/simdcrf, not this one.
func TestBuildSimdcrf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	var progress []string
	exe, err := buildSimdcrf(t.TempDir(), func(s string) { progress = append(progress, s) })
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", exe, err)
	}
	if !strings.HasPrefix(string(out), "simdcrf (development)\nmachine: ") {
		t.Errorf("%s version printed %q", exe, out)
	}
	if len(progress) != 1 || progress[0] != "building cmd/simdcrf" {
		t.Errorf("progress %q", progress)
	}
}

// TestRecall: recall measures a pruned model on a labelled file: on toy
// data whose word gives the label, two labels kept out of 40 hold the
// gold label almost always, accuracy there is no lower than overall; -max
// replaces the model's rule; -known refuses attribute files (no words); a
// model without pruning is refused.
func TestRecall(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "train.txt")
	var b strings.Builder
	var xs [][]simdcrf.Item
	var ys [][]string
	for i := range 300 {
		var x []simdcrf.Item
		var y []string
		for k := range 5 {
			l := (i*5 + k*7) % 40
			fmt.Fprintf(&b, "L%02d\tw=%d\tn=%d\n", l, l, (i+k)%3)
			x = append(x, simdcrf.Binary(fmt.Sprintf("w=%d", l), fmt.Sprintf("n=%d", (i+k)%3)))
			y = append(y, fmt.Sprintf("L%02d", l))
		}
		b.WriteString("\n")
		xs, ys = append(xs, x), append(ys, y)
	}
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		params map[string]string
		ok     bool
	}{
		{map[string]string{"prune.max": "2", "prune.by": "zeroth", "max_iterations": "30"}, true},
		{map[string]string{"max_iterations": "5"}, false},
	} {
		tr, err := simdcrf.NewTrainer(simdcrf.Options{Params: c.params})
		if err != nil {
			t.Fatal(err)
		}
		for i := range xs {
			if err := tr.Append(xs[i], ys[i]); err != nil {
				t.Fatal(err)
			}
		}
		mp := trainAndSave(t, tr, dir)
		var out, errb bytes.Buffer
		err = run([]string{"recall", "-m", mp, data}, &out, &errb)
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "does not prune") {
				t.Fatalf("recall of an unpruned model: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		var tokens int
		var in, size, acc, accIn float64
		if _, err := fmt.Sscanf(out.String(), "tokens %d, gold label in the pruned set %f %%, %f labels a set, accuracy %f %% (%f %%", &tokens, &in, &size, &acc, &accIn); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		if tokens != 1500 || in < 99 || size < 1 || size > 2 || accIn < acc {
			t.Fatalf("recall printed %q", out.String())
		}
		// -known on attribute files (no words): refused, with file and line.
		if err := run([]string{"recall", "-known", data, "-m", mp, data}, &out, &errb); err == nil || !strings.Contains(err.Error(), "train.txt:1: no words") {
			t.Fatalf("recall -known of attribute files: %v", err)
		}
		// -max 1 -threshold 0: one label a position.
		out.Reset()
		if err := run([]string{"recall", "-max", "1", "-threshold", "0", "-m", mp, data}, &out, &errb); err != nil || !strings.Contains(out.String(), ", 1.00 labels a set") {
			t.Fatalf("recall -max 1: %v, %q", err, out.String())
		}
	}
}

// TestRecallKnown: with -known, recall measures the tokens of the words the
// training file holds apart from the others (column input), and the two
// classes add up to all tokens.
func TestRecallKnown(t *testing.T) {
	dir := t.TempDir()
	trainPath, testPath := filepath.Join(dir, "train.txt"), filepath.Join(dir, "test.txt")
	tr, err := simdcrf.NewTrainer(simdcrf.Options{Features: "pos", Params: map[string]string{"prune.max": "2", "prune.by": "zeroth", "max_iterations": "20"}})
	if err != nil {
		t.Fatal(err)
	}
	var train, test strings.Builder
	unknown := 0
	for i := range 200 {
		var toks [][]string
		var labels []string
		for k := range 4 {
			w := (i*4 + k*3) % 30
			toks, labels = append(toks, []string{fmt.Sprintf("w%d", w)}), append(labels, fmt.Sprintf("L%d", w%12))
			fmt.Fprintf(&train, "w%d\tL%d\n", w, w%12)
			if i < 50 { // the test: every fifth word unseen
				v := w
				if k == 0 {
					v, unknown = 30+w%10, unknown+1
				}
				fmt.Fprintf(&test, "w%d\tL%d\n", v, v%12)
			}
		}
		train.WriteString("\n")
		if i < 50 {
			test.WriteString("\n")
		}
		if err := tr.AppendTokens(toks, labels); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{trainPath: train.String(), testPath: test.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mp := trainAndSave(t, tr, dir)
	var out, errb bytes.Buffer
	if err := run([]string{"recall", "-known", trainPath, "-m", mp, testPath}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var all, kn, un int
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3 {
		t.Fatalf("recall -known printed %q", out.String())
	}
	_, e1 := fmt.Sscanf(lines[0], "tokens %d,", &all)
	_, e2 := fmt.Sscanf(lines[1], "known words: tokens %d,", &kn)
	_, e3 := fmt.Sscanf(lines[2], "unknown words: tokens %d,", &un)
	if e1 != nil || e2 != nil || e3 != nil || all != 200 || un != unknown || kn+un != all {
		t.Fatalf("recall -known printed %q (want %d unknown of 200)", out.String(), unknown)
	}
}

// trainAndSave trains tr and saves the model in dir, returning its path.
func trainAndSave(t *testing.T, tr *simdcrf.Trainer, dir string) string {
	t.Helper()
	m, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "m.model")
	if err := m.Save(mp); err != nil {
		t.Fatal(err)
	}
	return mp
}

// TestRooflineJSON runs the roofline briefly on CoNLL-2000 chunking: one
// JSON object per phase, in order, with exactly the keys, times
// and limits positive, and a bound of the three kinds (the limits
// themselves are checked by hand in package roofline).
func TestRooflineJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("trains CoNLL-2000 for a few iterations")
	}
	data, templates := testdata.Dir(t), testdata.Templates(t)
	var out, errb bytes.Buffer
	err := run([]string{"roofline", "--json", "-data", data, "-templates", templates, "-tasks", "chunking", "-iterations", "2", "-rounds", "1", "-reps", "1"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"scoring", "forward-backward", "scattering", "optimiser", "setup"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		keys := []string{"task", "phase", "threads", "ms", "limit_ms", "bound"}
		if len(m) != len(keys) {
			t.Errorf("line %q: %d keys, want %v", l, len(m), keys)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("line %q lacks key %q", l, k)
			}
		}
		if m["task"] != "chunking" || m["phase"] != want[i] || m["threads"] != 1.0 {
			t.Errorf("line %q: want task chunking, phase %s, threads 1", l, want[i])
		}
		if ms, _ := m["ms"].(float64); !(ms > 0) {
			t.Errorf("line %q: ms not positive", l)
		}
		if lim, _ := m["limit_ms"].(float64); !(lim > 0) {
			t.Errorf("line %q: limit_ms not positive", l)
		}
		if b := m["bound"]; b != "flops" && b != "bandwidth" && b != "latency" {
			t.Errorf("line %q: bound %v", l, b)
		}
	}
}
