package train

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestOrder2Objective: with order=2 the objective and gradient are the
// second-order chain's (engine.SecondOrder.NLL) constrained to the
// pruner's fixed sets, plus the L2 term, at any weights; the gradient
// matches finite differences, the trigram weights' included; dense and
// tied, with instance weights.
func TestOrder2Objective(t *testing.T) {
	for _, tc := range []struct {
		name     string
		trans    string
		weighted bool
	}{{"dense", "dense", false}, {"tied", "tied", false}, {"tied-weighted", "tied", true}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := engine.NewPool(2)
			defer pool.Close()
			const m = 12
			d := wordData(t, 41, 90, m, 30)
			if tc.weighted {
				d.Weights = make([]float64, d.Corpus.Len())
				for i := range d.Weights {
					d.Weights[i] = 0.5 + float64(i%3)
				}
			}
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2 = tc.trans, 0.2
			cfg.PruneMax, cfg.PruneBy, cfg.Order = 3, "zeroth", 2
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.tri == nil || md.tri.Len() < 10 {
				t.Fatalf("trigrams: %v", md.tri)
			}
			md.prune = newPruning(&cfg)
			tr := &trainer{ctx: context.Background(), d: d, cfg: &cfg, md: md, pool: pool, stop: new(atomic.Bool)}
			theta := sparse.MakeParams(md.nTotal())
			if _, err := tr.trainPruner(theta); err != nil {
				t.Fatal(err)
			}
			for k := md.triOff(); k < md.nTotal(); k++ {
				if theta[k] != 0 {
					t.Fatalf("the pruner's training moved trigram weight %d", k-md.triOff())
				}
			}
			sets := md.prune.fixed
			r := rand.New(rand.NewPCG(41, 2))
			for k := range theta {
				theta[k] = 0
				if md.trainable(k) {
					theta[k] = r.NormFloat64()
				}
			}
			o := newObjective(md, d, cfg.C2, pool)
			f, g := evalAt(t, o, theta)

			// The same by the engine, sequence by sequence.
			trans, err := md.transitions(theta, make([]engine.Exception, len(md.excs)))
			if err != nil {
				t.Fatal(err)
			}
			tri := make([][3]int32, md.tri.Len())
			for k := range tri {
				h, i, j := md.tri.Triple(k)
				tri[k] = [3]int32{h, i, j}
			}
			tg, err := engine.NewTrigrams(m, tri, theta[md.triOff():md.nTotal()])
			if err != nil {
				t.Fatal(err)
			}
			so, err := engine.NewSecondOrder(trans, tg)
			if err != nil {
				t.Fatal(err)
			}
			ws := engine.NewWorkspace()
			want := 0.0
			for _, v := range theta {
				want += cfg.C2 * v * v
			}
			sc := md.hy.split(d.Corpus)
			for i, y := range sc.labels {
				emit := make([]float64, len(y)*m)
				md.hy.score(theta, emit, sc, i)
				nll, err := so.NLL(ws, emit, y, &engine.ChainOptions{Allowed: sets[i]}, nil)
				if err != nil {
					t.Fatal(err)
				}
				want += d.Weight(i) * nll
			}
			if math.Abs(f-want) > 1e-10*math.Abs(want) {
				t.Fatalf("objective %.15g, the engine's %.15g", f, want)
			}
			finiteDiff(t, o, md, r, theta, g, 40)
			// Trigram weights, some of them, each.
			var ks []int
			nonzero := 0
			for _, k := range r.Perm(md.nTri())[:25] {
				at := md.triOff() + k
				ks = append(ks, at)
				if math.Abs(g[at]-2*cfg.C2*theta[at]) > 1e-9 {
					nonzero++
				}
			}
			finiteDiffAt(t, o, theta, g, ks)
			if nonzero == 0 {
				t.Fatal("no trigram weight's gradient has a likelihood part: the test checks nothing")
			}
		})
	}
}

// TestOrder2Train: order-2 training ends on the stopping rule, its trigram
// weights are those of the triples seen in training, its objective is at
// most order 1's over the same pruned sets (order 2 with zero trigram
// weights is order 1), and the holdout is tagged by second-order Viterbi.
func TestOrder2Train(t *testing.T) {
	d := wordData(t, 42, 120, 10, 30)
	cfg, _ := Defaults("lbfgs")
	cfg.Transitions, cfg.C2, cfg.Threads = "tied", 0.5, 2
	cfg.PruneMax, cfg.PruneBy = 3, "zeroth"
	first, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Order = 2
	var holdout []float64
	cfg.Holdout = d
	cfg.Progress = func(p Progress) {
		if !p.Pruner && p.Holdout >= 0 {
			holdout = append(holdout, p.Holdout)
		}
	}
	second, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if first.Trigrams != nil || second.Trigrams == nil {
		t.Fatalf("trigrams: order 1 %v, order 2 %v", first.Trigrams, second.Trigrams)
	}
	seen := map[[3]int32]bool{}
	for i := range d.Corpus.Len() {
		y := d.Corpus.Seq(i).Labels
		for p := 2; p < len(y); p++ {
			seen[[3]int32{y[p-2], y[p-1], y[p]}] = true
		}
	}
	if second.Trigrams.Len() != len(seen) {
		t.Fatalf("%d trigram weights, %d triples seen", second.Trigrams.Len(), len(seen))
	}
	moved := 0
	for k := range second.Trigrams.Len() {
		h, i, j := second.Trigrams.Triple(k)
		if !seen[[3]int32{h, i, j}] {
			t.Fatalf("trigram (%d, %d, %d) was not seen", h, i, j)
		}
		if second.Trigrams.Score(k) != 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no trigram weight trained")
	}
	if !strings.HasPrefix(second.Reason, "stopping criterion") {
		t.Fatalf("order 2 ended on %q", second.Reason)
	}
	if second.Loss > first.Loss*(1+1e-6) {
		t.Fatalf("order 2's objective %v above order 1's %v over the same sets", second.Loss, first.Loss)
	}
	if len(holdout) == 0 || holdout[len(holdout)-1] < 0.5 {
		t.Fatalf("holdout accuracies %v", holdout)
	}
	// OWL-QN (l1): the L1 term reaches the trigram weights too.
	l1, _ := Defaults("l1")
	l1.C1, l1.Threads, l1.Order, l1.PruneMax, l1.PruneBy = 2, 2, 2, 3, "zeroth"
	sparse1, err := Train(context.Background(), d, l1)
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for k := range sparse1.Trigrams.Len() {
		if sparse1.Trigrams.Score(k) == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == sparse1.Trigrams.Len() || sparse1.Interrupted {
		t.Fatalf("l1: %d of %d trigram weights zero", zeros, sparse1.Trigrams.Len())
	}
}

// TestOrder2Config: the order parameter and what order 2 needs.
func TestOrder2Config(t *testing.T) {
	cfg, _ := Defaults("lbfgs")
	for _, v := range []string{"1", "2"} {
		if err := cfg.Set("order", v); err != nil || cfg.Order != int(v[0]-'0') {
			t.Fatalf("order=%s: %v, %d", v, err, cfg.Order)
		}
	}
	for _, v := range []string{"0", "3", "x"} {
		if err := cfg.Set("order", v); err == nil {
			t.Errorf("order=%s accepted", v)
		}
	}
	d := wordData(t, 43, 30, 6, 10)
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want string
	}{
		{"unpruned", func(c *Config) { c.PruneMax = 0 }, "prune.max"},
		{"self-pruned", func(c *Config) { c.PruneBy = "self" }, "prune.by=zeroth"},
		{"sgd", func(c *Config) { c.Algorithm = "sgd" }, "lbfgs and l1"},
		{"float32", func(c *Config) { c.Precision = "float32" }, "float64"},
		{"no transitions", func(c *Config) { c.Transitions = "none" }, "transitions"},
	} {
		c, _ := Defaults("lbfgs")
		c.Order, c.PruneMax, c.PruneBy = 2, 3, "zeroth"
		tc.set(&c)
		if _, err := Train(context.Background(), d, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
