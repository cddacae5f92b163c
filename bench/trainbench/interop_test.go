package trainbench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/crfsuite"
	"github.com/simdcrf/simdcrf/internal/testdata"
)

// TestCRFsuiteInterop checks simdcrf against CRFsuite itself on every
// sequence of real test files (CoNLL-2000 and EWT XPOS, attribute files as
// the report writes them), with models trained on the first 1500 training
// sequences: CRFsuite's model tagged by simdcrf prints what CRFsuite's
// library prints (tagc: labels, scores, log Z, probabilities, every
// marginal) and the labels of CRFsuite's npm Tagger; a model simdcrf learns
// into CRFsuite's format gets simdcrf's labels from the npm Tagger and its
// probabilities and marginals from CRFsuite's library; converting
// CRFsuite's model to simdcrf's format and back gives the same file.
// It needs node, npm and a C compiler, and runs with SIMDCRF_CRFSUITE_REAL
// set (a few minutes).
func TestCRFsuiteInterop(t *testing.T) {
	if os.Getenv("SIMDCRF_CRFSUITE_REAL") == "" {
		t.Skip("set SIMDCRF_CRFSUITE_REAL=1 to compare with CRFsuite on real data (needs node, npm and a C compiler)")
	}
	data := testdata.Must(t)
	ctx := context.Background()
	dir := t.TempDir()
	exe, err := BuildSimdcrf(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	simdcrf := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(exe, args...).Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("simdcrf %v: %v\n%s", args, err, msg)
		}
		return out
	}
	o := Options{DataDir: data, TemplateDir: filepath.Join(data, "..", "templates")}
	for _, task := range Tasks {
		if task.Name != "chunking" && task.Name != "ewt-xpos" {
			continue
		}
		t.Run(task.Name, func(t *testing.T) {
			spec, err := task.spec(o)
			if err != nil {
				t.Fatal(err)
			}
			var trainPaths []string
			for _, p := range task.Train {
				trainPaths = append(trainPaths, filepath.Join(data, p))
			}
			all, train, test := filepath.Join(dir, task.Name+".all"), filepath.Join(dir, task.Name+".train"), filepath.Join(dir, task.Name+".test")
			if _, _, err := writeAttrs(trainPaths, spec, all); err != nil {
				t.Fatal(err)
			}
			gold, tokens, err := writeAttrs([]string{filepath.Join(data, task.Test)}, spec, test)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(all)
			if err != nil {
				t.Fatal(err)
			}
			seqs := strings.SplitAfter(string(b), "\n\n")
			if err := os.WriteFile(train, []byte(strings.Join(seqs[:1500], "")), 0o644); err != nil {
				t.Fatal(err)
			}

			// CRFsuite's model, tagged by simdcrf.
			cs := filepath.Join(dir, task.Name+".crfsuite")
			if _, err := crfsuite.Train(ctx, crfsuite.TrainOptions{Data: train, Model: cs, Params: map[string]string{"c2": "1"}}); err != nil {
				t.Fatal(err)
			}
			want, err := crfsuite.TagText(ctx, cs, test, "-r", "-p", "-i", "-l")
			if err != nil {
				t.Fatal(err)
			}
			if got := simdcrf("tag", "-m", cs, "-r", "-p", "-i", "-l", test); !bytes.Equal(got, want) {
				t.Errorf("CRFsuite's model: simdcrf tag -r -p -i -l differs from CRFsuite's library at line %d", firstDiff(got, want))
			}
			npmLabels := filepath.Join(dir, task.Name+".npm-labels")
			if _, err := crfsuite.Tag(ctx, crfsuite.TagOptions{Model: cs, Data: test, Output: npmLabels}); err != nil {
				t.Fatal(err)
			}
			if got, want := simdcrf("tag", "-m", cs, test), mustRead(t, npmLabels); !bytes.Equal(got, want) {
				t.Errorf("CRFsuite's model: simdcrf's labels differ from the npm Tagger's at line %d", firstDiff(got, want))
			}

			// simdcrf's model, in CRFsuite's format, tagged by CRFsuite.
			sm := filepath.Join(dir, task.Name+".simdcrf.crfsuite")
			simdcrf("learn", "-q", "-m", sm, "--format", "crfsuite", train)
			if _, err := crfsuite.Tag(ctx, crfsuite.TagOptions{Model: sm, Data: test, Output: npmLabels}); err != nil {
				t.Fatal(err)
			}
			if got, want := simdcrf("tag", "-m", sm, test), mustRead(t, npmLabels); !bytes.Equal(got, want) {
				t.Errorf("simdcrf's CRFsuite model: the npm Tagger's labels differ from simdcrf's at line %d", firstDiff(got, want))
			}
			wantPI, err := crfsuite.TagText(ctx, sm, test, "-p", "-i")
			if err != nil {
				t.Fatal(err)
			}
			if got := simdcrf("tag", "-m", sm, "-p", "-i", test); !bytes.Equal(got, wantPI) {
				t.Errorf("simdcrf's CRFsuite model: CRFsuite's -p -i output differs from simdcrf's at line %d", firstDiff(got, wantPI))
			}

			// crfsuite → simdcrf → crfsuite.
			own, back := filepath.Join(dir, task.Name+".model"), filepath.Join(dir, task.Name+".back.crfsuite")
			simdcrf("convert", "-m", cs, "-o", own)
			simdcrf("convert", "-m", own, "-o", back)
			if !bytes.Equal(mustRead(t, back), mustRead(t, cs)) {
				t.Error("crfsuite → simdcrf → crfsuite is not the same file")
			}
			if got := simdcrf("tag", "-m", own, "-r", "-p", "-i", "-l", test); !bytes.Equal(got, want) {
				t.Errorf("CRFsuite's model converted to simdcrf's format tags differently at line %d", firstDiff(got, want))
			}
			t.Logf("%s: %d test sequences, %d tokens: identical", task.Name, len(gold), tokens)
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func firstDiff(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
