package learn

import (
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/format"
)

// TestPruneDefault: from PruneLabels labels on, lbfgs and l1 training of a
// simdcrf model prunes by default with a zeroth-order pruner (order 2,
// at any label count: with a first-order one after it), and says so,
// keeping a given prune.by; below it, with prune.max given, for sgd and ap, in float32, with
// observation-dependent transitions or without transitions it does not;
// and a model in CRFsuite's format stays exact and says why.
func TestPruneDefault(t *testing.T) {
	for _, c := range []struct {
		name      string
		job       Job
		m         int
		obs, want bool
		note      string
		by        string // the pruning's prune.by, if not zeroth
	}{
		{"large", Job{}, PruneLabels, false, true, "pruned training", ""},
		{"l1", Job{Algorithm: "l1"}, 1208, false, true, "pruned training", ""},
		{"small", Job{}, PruneLabels - 1, false, false, "", ""},
		{"given", Job{Params: []string{"prune.max=0"}}, 1208, false, false, "", ""},
		{"given-self", Job{Params: []string{"prune.max=4"}}, 1208, false, false, "", ""},
		{"sgd", Job{Algorithm: "sgd"}, 1208, false, false, "", ""},
		{"ap", Job{Algorithm: "ap"}, 1208, false, false, "", ""},
		{"float32", Job{Params: []string{"precision=float32"}}, 1208, false, false, "", ""},
		{"none", Job{Params: []string{"transitions=none"}}, 1208, false, false, "", ""},
		{"obs", Job{}, 1208, true, false, "", ""},
		{"crfsuite", Job{CRFsuite: true, Path: "x.crfsuite"}, 1208, false, false, "exact training, since x.crfsuite is written in CRFsuite's format", ""},
		{"first", Job{Params: []string{"prune.by=first"}}, 1208, false, true, "prune.by=first: a zeroth-order pruner first, its 8 best labels per position, then a first-order one", "first"},
		{"first-order2", Job{Params: []string{"prune.by=first", "order=2"}}, 50, false, true, "order=2: trained over a pruned lattice (prune.max=8, prune.by=first", "first"},
		{"self", Job{Params: []string{"prune.by=self"}}, 1208, false, true, "prune.by=zeroth", ""},
		{"order2", Job{Params: []string{"order=2"}}, 50, false, true, "order=2: trained over a pruned lattice (prune.max=8, prune.by=first", "first"},
		{"order2-zeroth", Job{Params: []string{"order=2", "prune.by=zeroth"}}, 50, false, true, "order=2: trained over a pruned lattice (prune.max=8, prune.by=zeroth", ""},
	} {
		var notes []string
		j := c.job
		j.Spec = format.Spec{Format: "conllu", Features: "pos"}
		j.Note = func(s string) { notes = append(notes, s) }
		cfg, err := j.Config()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		before, notes := cfg, notes[:0]
		got := j.Prune(&cfg, c.m, c.obs)
		by := c.by
		if by == "" {
			by = "zeroth"
		}
		if got != c.want || got != (cfg.PruneMax == AutoPruneMax && cfg.PruneBy == by) {
			t.Errorf("%s: Prune %v, prune.max %d, prune.by %q", c.name, got, cfg.PruneMax, cfg.PruneBy)
		}
		if !got && (cfg.PruneMax != before.PruneMax || cfg.PruneBy != before.PruneBy) {
			t.Errorf("%s: the configuration changed without pruning", c.name)
		}
		all := strings.Join(notes, "")
		if c.note == "" && all != "" || c.note != "" && !strings.Contains(all, c.note) {
			t.Errorf("%s: said %q, want %q", c.name, all, c.note)
		}
	}
}
