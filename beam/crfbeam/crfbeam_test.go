package crfbeam

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
)

// regionsSeen records the regions read, by file (testHookRegion).
var regionsSeen struct {
	sync.Mutex
	byFile map[string]int
}

func init() {
	testHookRegion = func(file string) {
		regionsSeen.Lock()
		if regionsSeen.byFile == nil {
			regionsSeen.byFile = map[string]int{}
		}
		regionsSeen.byFile[file]++
		regionsSeen.Unlock()
	}
}

// result is what a run of Build wrote.
type result struct {
	body    []byte   // the shards one after the other, without the "#" lines
	heads   []string // the "#" lines: "FILE<TAB>INDEX"
	errors  string   // the dead letters
	eval    []byte   // the evaluation, with Config.Evaluate
	runErr  error
	nShards int
}

// runBuild runs the pipeline of c on Prism and reads what it wrote.
func runBuild(t *testing.T, c Config) result {
	t.Helper()
	ctx := context.Background()
	m, err := LoadModel(ctx, c.Model)
	if err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, c, m); err != nil {
		t.Fatal(err)
	}
	var r result
	if r.runErr = ptest.Run(p); r.runErr != nil {
		return r
	}
	for i := range max(c.Shards, 1) {
		b, err := ReadFile(ctx, ShardName(c.Output, i, max(c.Shards, 1)))
		if err != nil {
			if c.Quiet {
				continue
			}
			t.Fatal(err)
		}
		r.nShards++
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if h, ok := bytes.CutPrefix(line, []byte("#\t")); ok {
				r.heads = append(r.heads, strings.TrimSuffix(string(h), "\n"))
			} else {
				r.body = append(r.body, line...)
			}
		}
	}
	e, err := ReadFile(ctx, c.ErrorsFile())
	if err != nil {
		t.Fatal(err)
	}
	r.errors = string(e)
	if c.Evaluate {
		if r.eval, err = ReadFile(ctx, c.EvaluationFile()); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// checkHeads checks that the "#" lines name the files in order, each with
// its indexes from 0 up, but for the skipped ones.
func checkHeads(t *testing.T, heads []string, counts map[string]int, skipped map[string][]int) {
	t.Helper()
	var want []string
	for _, f := range slices.Sorted(maps.Keys(counts)) {
		for i := range counts[f] {
			if !slices.Contains(skipped[f], i) {
				want = append(want, f+"\t"+strconv.Itoa(i))
			}
		}
	}
	if !slices.Equal(heads, want) {
		t.Fatalf("%d header lines, want %d; first difference at %s", len(heads), len(want), firstDiff(heads, want))
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %q, want %q", i, a[i], b[i])
		}
	}
	return "the end of the shorter"
}

// countSeqs counts the sequences of each file as simdcrf tag prints them
// (one blank line each).
func countSeqs(t *testing.T, fx *fixture, files []string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, f := range files {
		out := fx.run(t, "tag", "-m", fx.model, f)
		counts[f] = bytes.Count(out, []byte("\n\n"))
	}
	return counts
}

// sameBytes fails with the first differing line.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	t.Fatalf("%s: %d bytes (%d lines), want %d (%d lines); first difference at line %s", what, len(got), len(g), len(want), len(w), firstDiff(g, w))
}

// TestTagAgreesWithCommand: over several files of each format, one of
// them split into many ranges and one gzip-compressed, the shards in order
// without their "#" lines are byte for byte what simdcrf tag prints for the
// files, and the "#" lines name each sequence's file and index.
func TestTagAgreesWithCommand(t *testing.T) {
	fxs := setup(t)
	for _, name := range []string{"conllu", "conll", "crfsuite", "conllu-pruned", "conllu-order2", "conllu-first"} {
		t.Run(name, func(t *testing.T) {
			fx := fxs[name]
			regionsSeen.Lock()
			regionsSeen.byFile = nil
			regionsSeen.Unlock()
			c := Config{Model: fx.model, Input: filepath.Join(fx.dir, "*"), Output: filepath.Join(t.TempDir(), "out"), Shards: 3, SplitSize: 48 << 10}
			r := runBuild(t, c)
			if r.runErr != nil {
				t.Fatal(r.runErr)
			}
			want := fx.run(t, append([]string{"tag", "-m", fx.model}, fx.files...)...)
			sameBytes(t, "the shards", r.body, want)
			checkHeads(t, r.heads, countSeqs(t, fx, fx.files), nil)
			if r.errors != "" || r.nShards != 3 {
				t.Fatalf("%d shards, dead letters %q", r.nShards, r.errors)
			}
			regionsSeen.Lock()
			defer regionsSeen.Unlock()
			st, err := os.Stat(fx.files[0])
			if err != nil {
				t.Fatal(err)
			}
			if n, want := regionsSeen.byFile[fx.files[0]], int(st.Size()/c.SplitSize); n < want {
				t.Fatalf("the large file (%d bytes) was read in %d regions, want at least %d (%v)", st.Size(), n, want, regionsSeen.byFile)
			}
			if n := regionsSeen.byFile[fx.files[2]]; n != 1 {
				t.Fatalf("the gzip file was read in %d regions, want 1", n)
			}
		})
	}
}

// TestProbabilities: with -p -i the shards hold what simdcrf tag -p -i
// prints; model and files are read through Beam's file systems (memfs,
// which cannot seek: ranges are reached by reading).
func TestProbabilities(t *testing.T) {
	fx := setup(t)["conllu"]
	b, err := os.ReadFile(fx.model)
	if err != nil {
		t.Fatal(err)
	}
	memfs.Write("memfs://probs/pos.model", b)
	for _, f := range fx.files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write("memfs://probs/in/"+filepath.Base(f), b)
	}
	c := Config{Model: "memfs://probs/pos.model", Input: "memfs://probs/in/*", Output: "memfs://probs/out/run", Shards: 2, SplitSize: 64 << 10,
		Text: model.TextOptions{Prob: true, Marginals: true}}
	r := runBuild(t, c)
	if r.runErr != nil {
		t.Fatal(r.runErr)
	}
	want := fx.run(t, append([]string{"tag", "-m", fx.model, "-p", "-i"}, fx.files...)...)
	sameBytes(t, "the shards with -p -i", r.body, want)
	if !bytes.Contains(want, []byte("@probability\t")) {
		t.Fatal("no probabilities printed")
	}
}

// TestModelLoadedOnce: however many DoFn instances tag (one per bundle a
// worker runs at a time), the worker process loads the model once.
func TestModelLoadedOnce(t *testing.T) {
	fx := setup(t)["conllu"]
	ctx := context.Background()
	m, err := LoadModel(ctx, fx.model)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Model: fx.model, Input: filepath.Join(fx.dir, "*"), Output: filepath.Join(t.TempDir(), "out"), Quiet: true, Evaluate: true, SplitSize: 4 << 20}
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, c, m); err != nil {
		t.Fatal(err)
	}
	// Here the launcher and the worker are one process: forget the
	// launcher's load, to count the workers'.
	forgetModels()
	loads.Store(0)
	setups.Store(0)
	// Prism runs a stage's elements in one bundle and splits off the rest
	// of a bundle into another, run at the same time, when the bundle
	// shows no progress for 100 ms: slow the first ranges down, as large
	// ones are, so that there are several bundles, each with its DoFn
	// instance.
	var slow atomic.Int64
	testHookRange = func(string, int64) {
		if slow.Add(1) <= 4 {
			time.Sleep(300 * time.Millisecond)
		}
	}
	defer func() { testHookRange = nil }()
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if n, k := loads.Load(), setups.Load(); n != 1 || k < 2 {
		t.Fatalf("%d loads for %d tagging DoFn instances, want 1 for several", n, k)
	}
	t.Logf("1 load for %d DoFn instances", setups.Load())
}

// TestEvaluation: the evaluation equals simdcrf tag -t (text) and --json
// on the same files, with reference labels the model does not know, first
// seen in an order that is not their names' (reported in order of first
// occurrence, whichever worker saw them).
func TestEvaluation(t *testing.T) {
	fx := setup(t)["conll"]
	dir := filepath.Join(t.TempDir(), "in")
	os.MkdirAll(dir, 0o755)
	var files []string
	for i, f := range fx.files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0: // the large file: ZZ early, YY late
			b = relabel(b, 30, "ZZ")
			b = relabel(b, bytes.Count(b, []byte("\n"))-200, "YY")
		case 1:
			b = relabel(b, 10, "XX")
		}
		name := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	for _, asJSON := range []bool{true, false} {
		c := Config{Model: fx.model, Input: filepath.Join(dir, "*"), Output: filepath.Join(t.TempDir(), "out"), Quiet: true, Evaluate: true, JSON: asJSON, SplitSize: 32 << 10}
		r := runBuild(t, c)
		if r.runErr != nil {
			t.Fatal(r.runErr)
		}
		args := []string{"tag", "-m", fx.model, "-t", "-q"}
		if asJSON {
			args = []string{"tag", "-m", fx.model, "--json"}
		}
		want := fx.run(t, append(args, files...)...)
		sameBytes(t, strings.Join(args, " "), r.eval, want)
		if asJSON {
			zz, yy, xx := bytes.Index(want, []byte(`"ZZ"`)), bytes.Index(want, []byte(`"YY"`)), bytes.Index(want, []byte(`"XX"`))
			if zz < 0 || !(zz < yy && yy < xx) {
				t.Fatalf("unknown labels not in order of first occurrence (ZZ, YY, XX): %s", want)
			}
		}
	}
}

// relabel gives the item on line n (from 1) of column data the label l.
func relabel(b []byte, n int, l string) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	for n < len(lines) && strings.TrimSpace(lines[n-1]) == "" {
		n++
	}
	f := strings.Fields(lines[n-1])
	f[len(f)-1] = l
	lines[n-1] = strings.Join(f, " ") + "\n"
	return []byte(strings.Join(lines, ""))
}

// badInput writes the conllu fixture's files with malformed sentences in
// them (in several ranges of the large file), and the same files without
// them; it returns both directories and the dead letters expected.
func badInput(t *testing.T, fx *fixture) (bad, clean string, want []string, skipped map[string][]int) {
	bad, clean = filepath.Join(t.TempDir(), "bad"), filepath.Join(t.TempDir(), "clean")
	os.MkdirAll(bad, 0o755)
	os.MkdirAll(clean, 0o755)
	skipped = map[string][]int{}
	for i, f := range fx.files[:2] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seqs := blocksOf(b)
		var breaks map[int]string // sequence → how it breaks
		if i == 0 {
			breaks = map[int]string{3: "fields", len(seqs) / 2: "id", len(seqs) - 5: "fields"}
		} else {
			breaks = map[int]string{7: "id"}
		}
		name := filepath.Join(bad, filepath.Base(f))
		var dirty, good [][]byte
		line := 1
		for k, s := range seqs {
			how, ok := breaks[k]
			if !ok {
				dirty, good = append(dirty, s), append(good, s)
				line += bytes.Count(s, []byte("\n")) + 1
				continue
			}
			lines := strings.SplitAfter(string(s), "\n")
			at := 0 // a token line in the middle: the comments come first
			for strings.HasPrefix(lines[at], "#") {
				at++
			}
			at += (len(lines) - 1 - at) / 2
			var msg string
			if how == "fields" {
				lines[at] = "oops\n"
				msg = "expected 10 TAB-separated fields, found 1"
			} else {
				f := strings.SplitN(lines[at], "\t", 2)
				lines[at] = "x1\t" + f[1]
				msg = `bad ID "x1" (want an integer, a range n-m or an empty node n.k)`
			}
			want = append(want, fmt.Sprintf("%s\t%d\t%d\t%s", name, line+at, k, msg))
			skipped[name] = append(skipped[name], k)
			dirty = append(dirty, []byte(strings.Join(lines, "")))
			line += len(lines)
		}
		if err := os.WriteFile(name, join(dirty), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clean, filepath.Base(f)), join(good), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return bad, clean, want, skipped
}

// TestDeadLetters: malformed sentences go to the dead letters with their
// file, line and index, in whichever range of a split file they are; the
// rest is tagged as simdcrf tag tags the files without them. With
// --on-error fail the run fails, naming a malformed sentence's place.
func TestDeadLetters(t *testing.T) {
	fx := setup(t)["conllu"]
	bad, clean, want, skipped := badInput(t, fx)
	c := Config{Model: fx.model, Input: filepath.Join(bad, "*"), Output: filepath.Join(t.TempDir(), "out"), Shards: 2, SplitSize: 48 << 10}
	r := runBuild(t, c)
	if r.runErr != nil {
		t.Fatal(r.runErr)
	}
	if got := strings.Split(strings.TrimSuffix(r.errors, "\n"), "\n"); !slices.Equal(got, want) {
		t.Fatalf("dead letters:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cleanFiles, _ := filepath.Glob(filepath.Join(clean, "*"))
	sameBytes(t, "the rest", r.body, fx.run(t, append([]string{"tag", "-m", fx.model}, cleanFiles...)...))
	badFiles, _ := filepath.Glob(filepath.Join(bad, "*"))
	counts := countSeqs(t, fx, cleanFiles)
	for _, f := range badFiles {
		counts[f] = counts[filepath.Join(clean, filepath.Base(f))] + len(skipped[f])
		delete(counts, filepath.Join(clean, filepath.Base(f)))
	}
	checkHeads(t, r.heads, counts, skipped)
	// The command fails on the first of them, and says where it is.
	if out := runFailing(t, fx, "tag", "-m", fx.model, badFiles[0]); !strings.Contains(out, strings.Join(strings.SplitN(want[0], "\t", 3)[:2], ":")) {
		t.Fatalf("simdcrf tag says %q, not the first dead letter's place %q", out, want[0])
	}

	c.FailOnError = true
	c.Output = filepath.Join(t.TempDir(), "out")
	r = runBuild(t, c)
	if r.runErr == nil {
		t.Fatal("--on-error fail: the pipeline did not fail")
	}
	found := false
	for _, w := range want {
		f := strings.SplitN(w, "\t", 4)
		found = found || strings.Contains(r.runErr.Error(), f[0]+":"+f[1]+": "+f[3])
	}
	if !found {
		t.Fatalf("--on-error fail: %v\nnames none of\n%s", r.runErr, strings.Join(want, "\n"))
	}
}

// runFailing runs simdcrf expecting it to fail, and returns what it said.
func runFailing(t *testing.T, fx *fixture, args ...string) string {
	t.Helper()
	out, err := newCmd(fx.simdcrf, args...).CombinedOutput()
	if err == nil {
		t.Fatalf("simdcrf %s did not fail", strings.Join(args, " "))
	}
	return string(out)
}

func init() { register.Function1x1(describe) }

// describe gives a tagged sequence's place and text, to compare.
func describe(t Tagged) string {
	return fmt.Sprintf("%s\t%d\t%d\n%s", t.File, t.Index, t.Line, t.Text)
}

// TestReadTagEvaluate: the transforms on their own (Read, Tag, Evaluate),
// as other pipelines use them: each sequence keyed by its file and index,
// with the line its text starts on, tagged as simdcrf tag tags it, and the
// evaluation simdcrf tag --json prints.
func TestReadTagEvaluate(t *testing.T) {
	fx := setup(t)["conllu"]
	ctx := context.Background()
	m, err := LoadModel(ctx, fx.model)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Spec(m, format.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, f := range fx.files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".gz") {
			if text, err = gunzip(f); err != nil {
				t.Fatal(err)
			}
		}
		out := bytes.SplitAfter(fx.run(t, "tag", "-m", fx.model, f), []byte("\n\n"))
		line := 1
		for i, b := range blocksOf(text) {
			want = append(want, fmt.Sprintf("%s\t%d\t%d\n%s", f, i, line, out[i]))
			line += bytes.Count(b, []byte("\n")) + 1
		}
	}
	evalPath := filepath.Join(t.TempDir(), "eval.json")
	p, s := beam.NewPipelineWithRoot()
	in := Read(s, filepath.Join(fx.dir, "*"), ReadOptions{Spec: spec, SplitSize: 48 << 10})
	tagged, dead := Tag(s, in.Sequences, TagOptions{Model: fx.model, Evaluate: true})
	passert.Equals(s, beam.ParDo(s, describe, tagged), want...)
	passert.Empty(s, in.Errors)
	passert.Empty(s, dead)
	WriteEvaluation(s, evalPath, Evaluate(s, tagged, m.LabelNames()), m.LabelNames(), true)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(evalPath)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "the evaluation", got, fx.run(t, append([]string{"tag", "-m", fx.model, "--json"}, fx.files...)...))
}

// TestBuildErrors: what cannot run is an error where the pipeline is built,
// not a panic or a failed job.
func TestBuildErrors(t *testing.T) {
	fx := setup(t)["conllu"]
	m, err := LoadModel(context.Background(), fx.model)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Model: fx.model, Input: filepath.Join(fx.dir, "*"), Output: "nosuch://bucket/out"}, `scheme "nosuch" not registered`},
		{Config{Model: fx.model, Input: filepath.Join(fx.dir, "*.none"), Output: filepath.Join(t.TempDir(), "out")}, "no files match"},
		{Config{Model: fx.model, Input: filepath.Join(fx.dir, "*"), Output: filepath.Join(t.TempDir(), "out"), Format: "crfsuite"}, "cannot be used with it"},
	} {
		_, s := beam.NewPipelineWithRoot()
		if err := Build(s, c.cfg, m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.cfg, err, c.want)
		}
	}
	if _, err := LoadModel(context.Background(), filepath.Join(fx.dir, "b-small.conllu")); err == nil || !strings.Contains(err.Error(), "b-small.conllu") {
		t.Errorf("loading a data file as a model: %v, want an error naming it", err)
	}
}

// TestCRFsuiteModel: a model file written by CRFsuite itself, read by
// model.Load through LoadModel: the shards with -r -p -i -l are what
// simdcrf tag prints, which for these files is also what CRFsuite's own
// library prints (model/testdata/crfsuite).
func TestCRFsuiteModel(t *testing.T) {
	fx := setup(t)["crfsuite"] // for the simdcrf binary
	const data = "../../model/testdata/crfsuite/"
	dir := t.TempDir()
	test, err := os.ReadFile(data + "ewt-xpos.test.gz")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "ewt-xpos.test.gz")
	if err := os.WriteFile(in, test, 0o644); err != nil {
		t.Fatal(err)
	}
	mdl := data + "ewt-xpos.crfsuite"
	c := Config{Model: mdl, Input: in, Output: filepath.Join(t.TempDir(), "out"),
		Text: model.TextOptions{Reference: true, Prob: true, Marginals: true, AllMarginals: true}}
	r := runBuild(t, c)
	if r.runErr != nil {
		t.Fatal(r.runErr)
	}
	want := fx.run(t, "tag", "-m", mdl, "-r", "-p", "-i", "-l", in)
	sameBytes(t, "the shards, CRFsuite model", r.body, want)
	ref, err := gunzip(data + "ewt-xpos.test.crfsuite-tag-rpil.gz")
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "CRFsuite's own output", r.body, ref)
}
