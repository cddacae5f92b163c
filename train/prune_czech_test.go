package train_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	iprune "github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/train"
)

// TestPrunedCzech trains a subset of UD Czech CLTT (XPOS, pos features,
// tied, a capped number of iterations) exactly and with prune.max=8, and
// tags CLTT test: the pruned model, tagged over its pruned sets as it was
// trained, is within 1.5 points of the exact one (on the whole training
// file it was 3.5 points better: 82.4 against 78.9 %).
func TestPrunedCzech(t *testing.T) {
	if testing.Short() {
		t.Skip("trains UD Czech CLTT twice (-short)")
	}
	dir := testdata.Dir(t, "ud_czech")
	tmp := t.TempDir()
	trainPath := headSentences(t, filepath.Join(dir, "cltt", "cs_cltt-ud-train.conllu"), tmp, 120)
	spec := format.Spec{Format: "conllu", Features: "pos", Label: "xpos"}
	var l corpus.Loader
	tr, err := l.Load([]string{trainPath}, spec)
	if err != nil {
		t.Fatal(err)
	}
	test, err := corpus.LoadHoldout(filepath.Join(dir, "cltt", "cs_cltt-ud-test.conllu"), spec, tr)
	if err != nil {
		t.Fatal(err)
	}
	m := tr.Labels.Len()
	run := func(prune int) (*train.Result, float64) {
		cfg, _ := train.Defaults("lbfgs")
		cfg.Transitions, cfg.MaxIterations, cfg.PruneMax = "tied", 30, prune
		res, err := train.Train(context.Background(), &tr.Data, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if (res.Prune != nil) != (prune > 0) {
			t.Fatalf("prune.max=%d: Result.Prune %+v", prune, res.Prune)
		}
		ws := engine.NewWorkspace()
		var buf iprune.Buf
		correct, total := 0, 0
		for i := range test.Corpus.Len() {
			s := test.Corpus.Seq(i)
			emit := make([]float64, s.Len()*m)
			res.State.Score(emit, s)
			var c *engine.ChainOptions
			if res.Prune != nil {
				c = &engine.ChainOptions{Allowed: res.Prune.Sets(&buf, emit, m, nil, nil)}
			}
			path := make([]int32, s.Len())
			if _, err := res.Trans.Viterbi(ws, emit, c, path); err != nil {
				t.Fatal(err)
			}
			for k, y := range s.Labels {
				if path[k] == y {
					correct++
				}
				total++
			}
		}
		return res, 100 * float64(correct) / float64(total)
	}
	exact, accExact := run(0)
	pruned, accPruned := run(8)
	t.Logf("M = %d: exact %.2f%% (%d iterations, %s), pruned %.2f%% (%d iterations, %s)",
		m, accExact, exact.Iterations, exact.Reason, accPruned, pruned.Iterations, pruned.Reason)
	if accPruned < accExact-1.5 {
		t.Errorf("pruned %.2f%% against exact %.2f%%: more than 1.5 points lower", accPruned, accExact)
	}
}
