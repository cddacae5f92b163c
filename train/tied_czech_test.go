package train_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/train"
)

// headSentences writes the first n sentences of a CoNLL-U file to a file
// in dir and returns its path.
func headSentences(t testing.TB, src, dir string, n int) string {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	end := 0
	for range n {
		k := bytes.Index(b[end:], []byte("\n\n"))
		if k < 0 {
			end = len(b)
			break
		}
		end += k + 2
	}
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, b[:end], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTiedDenseCzech trains UD Czech CLTT (a subset of its training file,
// XPOS, the pos features, a capped number of iterations) with tied and with
// dense transitions and tags CLTT test with both: the two are one model, so
// the losses agree to rounding and the accuracies within 0.1 point. With
// the trained tied default of before, tied lost 3.3 points here.
func TestTiedDenseCzech(t *testing.T) {
	dir := testdata.Dir(t, "ud_czech")
	tmp := t.TempDir()
	trainPath := headSentences(t, filepath.Join(dir, "cltt", "cs_cltt-ud-train.conllu"), tmp, 120)
	spec := format.Spec{Format: "conllu", Features: "pos", Label: "xpos"}
	var l corpus.Loader
	tr, err := l.Load([]string{trainPath}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Labels.Len() < 150 {
		t.Fatalf("%d labels: the subset should have well over a hundred", tr.Labels.Len())
	}
	test, err := corpus.LoadHoldout(filepath.Join(dir, "cltt", "cs_cltt-ud-test.conllu"), spec, tr)
	if err != nil {
		t.Fatal(err)
	}
	run := func(trans string) (*train.Result, float64) {
		cfg, _ := train.Defaults("lbfgs")
		cfg.Transitions = trans
		cfg.MaxIterations = 30
		res, err := train.Train(context.Background(), &tr.Data, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ws := engine.NewWorkspace()
		m := tr.Labels.Len()
		correct, total := 0, 0
		for i := range test.Corpus.Len() {
			s := test.Corpus.Seq(i)
			gold := s.Labels
			emit := make([]float64, s.Len()*m)
			res.State.Score(emit, s)
			path := make([]int32, s.Len())
			if _, err := res.Trans.Viterbi(ws, emit, nil, path); err != nil {
				t.Fatal(err)
			}
			for k, y := range gold {
				if path[k] == y {
					correct++
				}
				total++
			}
		}
		return res, 100 * float64(correct) / float64(total)
	}
	dense, accDense := run("dense")
	tied, accTied := run("tied")
	t.Logf("M = %d: dense %.2f%% (loss %.4f, %d iterations), tied %.2f%% (loss %.4f, %d iterations)",
		tr.Labels.Len(), accDense, dense.Loss, dense.Iterations, accTied, tied.Loss, tied.Iterations)
	if !tied.Tied || dense.Tied {
		t.Fatalf("structures: dense run tied=%v, tied run tied=%v", dense.Tied, tied.Tied)
	}
	if math.Abs(accDense-accTied) > 0.1 {
		t.Errorf("accuracy: dense %.2f%%, tied %.2f%%: more than 0.1 point apart", accDense, accTied)
	}
	if math.Abs(dense.Loss-tied.Loss) > 1e-6*dense.Loss {
		t.Errorf("loss: dense %.6f, tied %.6f", dense.Loss, tied.Loss)
	}
}
