package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestFirstOrderPruner: with prune.by=first the first-order pruner is the
// model prune.by=zeroth trains (the first-order CRF over the zeroth-order
// sets), every stage ends on the stopping rule, and the narrowed sets lie
// within the zeroth-order ones, hold the gold label and at most
// prune.first_max labels, the best under the first-order pruner's
// posterior marginals, here enumerated over all labellings within the
// zeroth-order sets; the model's objective is the chain's constrained to
// the narrowed sets (with finite differences); order 1 and 2, dense and
// tied, with sub-label weights.
func TestFirstOrderPruner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trans string
		order int
		sub   bool
	}{{"dense", "dense", 1, false}, {"tied", "tied", 1, false}, {"tied-sublabels", "tied", 1, true}, {"order2", "tied", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := engine.NewPool(2)
			defer pool.Close()
			const m = 30
			d := wordData(t, 31, 120, m, 40)
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2, cfg.Order, cfg.Threads = tc.trans, 0.2, tc.order, 2
			cfg.PruneMax, cfg.PruneThreshold, cfg.PruneBy, cfg.PruneFirstMax = 6, 0.05, "first", 3
			if tc.sub {
				withSubLabels(d, &cfg)
			}

			// Trained whole: the first-order pruner is prune.by=zeroth's
			// order-1 model. The holdout (the training data) is tagged over
			// the narrowed sets.
			whole := cfg
			whole.Holdout = d
			var holdout []float64
			whole.Progress = func(p Progress) {
				if !p.Pruner && p.Holdout >= 0 {
					holdout = append(holdout, p.Holdout)
				}
			}
			rf, err := Train(context.Background(), d, whole)
			if err != nil {
				t.Fatal(err)
			}
			if len(holdout) == 0 || holdout[len(holdout)-1] < 0.5 {
				t.Fatalf("holdout accuracies %v", holdout)
			}
			zeroth := cfg
			zeroth.PruneBy, zeroth.Order = "zeroth", 1
			rz, err := Train(context.Background(), d, zeroth)
			if err != nil {
				t.Fatal(err)
			}
			p1 := rf.Pruner1
			if p1 == nil || rf.Pruner == nil {
				t.Fatalf("pruners: zeroth-order %v, first-order %v", rf.Pruner != nil, p1 != nil)
			}
			// (Order 2's θ is longer, by trigram weights held at 0, and
			// L-BFGS's blocked sums see it: not bit for bit.)
			tol := 0.0
			if tc.order == 2 || tc.sub {
				tol = 1e-6
			}
			if !near(p1.State.Params()[:p1.State.NumParams()], rz.State.Params()[:rz.State.NumParams()], tol) || math.Abs(p1.Loss-rz.Loss) > tol*rz.Loss {
				t.Fatalf("the first-order pruner (loss %v) is not prune.by=zeroth's model (loss %v)", p1.Loss, rz.Loss)
			}
			for i := range m {
				for j := range m {
					if a, b := p1.Trans.Score(i, j), rz.Trans.Score(i, j); math.Abs(a-b) > tol*math.Max(1, math.Abs(b)) {
						t.Fatalf("transition %d→%d: first-order pruner %v, zeroth's model %v", i, j, a, b)
					}
				}
			}
			if tc.sub && !near(p1.Sub, rz.Sub.W, tol) {
				t.Fatal("the first-order pruner's sub-label weights are not zeroth's model's")
			}
			for _, r := range []string{rf.PrunerReason, p1.Reason, rf.Reason} {
				if !strings.HasPrefix(r, "stopping criterion") && !strings.HasPrefix(r, "converged") {
					t.Fatalf("a stage ended on %q (pruner %q, first-order %q, model %q)", r, rf.PrunerReason, p1.Reason, rf.Reason)
				}
			}
			if p1.Rule.Max != 3 || p1.Rule.Threshold != cfg.PruneFirstThreshold {
				t.Fatalf("first-order rule %+v", p1.Rule)
			}
			if (tc.order == 2) != (rf.Trigrams != nil) {
				t.Fatalf("order %d, trigrams %v", tc.order, rf.Trigrams != nil)
			}

			// The stages one by one, to see the sets.
			md := stagedParamSpace(t, d, &cfg)
			md.prune = newPruning(&cfg)
			tr := &trainer{ctx: context.Background(), d: d, cfg: &cfg, md: md, pool: pool, stop: new(atomic.Bool)}
			theta := sparse.MakeParams(md.nTotal())
			if _, err := tr.trainPruner(theta); err != nil {
				t.Fatal(err)
			}
			sets0 := md.prune.fixed
			if _, err := tr.trainFirst(theta); err != nil {
				t.Fatal(err)
			}
			sets1 := md.prune.fixed
			pr := md.prune
			sc := md.hy.split(d.Corpus)
			narrowed, kept, total := 0, 0, 0
			for i, y := range sc.labels {
				T := len(y)
				emit := make([]float64, T*m)
				md.hy.score(pr.w1, emit, sc, i)
				if ps := pr.firstSub(md); ps != nil {
					ps.AddScores(emit, d.Corpus.Seq(i), make([]float64, T*ps.NSub))
				}
				marg := enumMarginals(pr.tr1, emit, sets0[i], m)
				for p := range T {
					s0, s1 := sets0[i][p], sets1[i][p]
					if !slices.Contains(s1, y[p]) || len(s1) > 3 || !slices.IsSorted(s1) {
						t.Fatalf("sequence %d position %d: set %v (gold %d)", i, p, s1, y[p])
					}
					lowKept, highDropped := math.Inf(1), math.Inf(-1)
					for _, j := range s1 {
						if !slices.Contains(s0, j) {
							t.Fatalf("sequence %d position %d: %v not within %v", i, p, s1, s0)
						}
						if j != y[p] {
							lowKept = min(lowKept, marg[p*m+int(j)])
						}
					}
					for _, j := range s0 {
						if !slices.Contains(s1, j) {
							highDropped = max(highDropped, marg[p*m+int(j)])
						}
					}
					if highDropped > lowKept+1e-12 {
						t.Fatalf("sequence %d position %d: a label of marginal %v dropped, one of %v kept", i, p, highDropped, lowKept)
					}
					if len(s1) < len(s0) {
						narrowed++
					}
					kept += len(s1)
					total++
				}
			}
			if narrowed == 0 || kept <= total {
				t.Fatalf("%d of %d positions narrowed, %d labels kept: the test does not prune", narrowed, total, kept)
			}

			// The model's objective is the chain's constrained to the
			// narrowed sets, at any weights.
			r := rand.New(rand.NewPCG(9, 10))
			for k := range theta {
				theta[k] = 0
				if md.trainable(k) {
					theta[k] = r.NormFloat64() * 1.5
				}
			}
			pruned := newObjective(md, d, cfg.C2, pool)
			f1, g1 := evalAt(t, pruned, theta)
			md.prune, md.allowed = nil, sets1
			fixed := newObjective(md, d, cfg.C2, pool)
			f2, g2 := evalAt(t, fixed, theta)
			sameObjective(t, "pruned vs constrained", f1, f2, g1, g2, 1e-12)
			finiteDiff(t, pruned, md, r, theta, g1, 40)
		})
	}
}

// enumMarginals returns the label marginals (T×M) of a first-order chain
// with emissions emit and transitions tr, constrained to sets, by
// enumerating every labelling within them.
func enumMarginals(tr *engine.Transitions, emit []float64, sets [][]int32, m int) []float64 {
	T := len(sets)
	marg := make([]float64, T*m)
	path := make([]int32, T)
	var scores []float64
	var paths [][]int32
	var walk func(p int)
	walk = func(p int) {
		if p == T {
			s := tr.Start(int(path[0])) + tr.End(int(path[T-1]))
			for q, y := range path {
				s += emit[q*m+int(y)]
				if q > 0 {
					s += tr.Score(int(path[q-1]), int(y))
				}
			}
			scores = append(scores, s)
			paths = append(paths, slices.Clone(path))
			return
		}
		for _, y := range sets[p] {
			path[p] = y
			walk(p + 1)
		}
	}
	walk(0)
	hi := slices.Max(scores)
	z := 0.0
	for _, s := range scores {
		z += math.Exp(s - hi)
	}
	for k, s := range scores {
		w := math.Exp(s-hi) / z
		for q, y := range paths[k] {
			marg[q*m+int(y)] += w
		}
	}
	return marg
}

// TestFirstOrderConfig: prune.by=first, prune.first_max and
// prune.first_threshold, their checks and defaults.
func TestFirstOrderConfig(t *testing.T) {
	cfg, _ := Defaults("lbfgs")
	if cfg.PruneFirstMax != 0 || cfg.PruneFirstThreshold != 0.01 {
		t.Fatalf("defaults: prune.first_max %d, prune.first_threshold %v", cfg.PruneFirstMax, cfg.PruneFirstThreshold)
	}
	for _, kv := range [][2]string{{"prune.by", "first"}, {"prune.first_max", "5"}, {"prune.first_threshold", "0.2"}, {"prune.max", "9"}, {"order", "2"}} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.PruneBy != "first" || cfg.PruneFirstMax != 5 || cfg.PruneFirstThreshold != 0.2 {
		t.Fatalf("set: %+v", cfg)
	}
	if err := cfg.check(); err != nil {
		t.Fatalf("order 2 over a first-order pruner: %v", err)
	}
	for _, kv := range [][2]string{{"prune.by", "second"}, {"prune.first_max", "-1"}, {"prune.first_threshold", "1.5"}, {"prune.first_threshold", "x"}} {
		c, _ := Defaults("lbfgs")
		if err := c.Set(kv[0], kv[1]); err == nil {
			t.Errorf("%s=%s accepted", kv[0], kv[1])
		}
	}
	for _, tc := range []struct{ max, first, want int }{{8, 0, 4}, {7, 0, 4}, {1, 0, 1}, {8, 6, 6}} {
		c, _ := Defaults("lbfgs")
		c.PruneMax, c.PruneFirstMax = tc.max, tc.first
		if got := newPruning(&c).p1.Max; got != tc.want {
			t.Errorf("prune.max %d, prune.first_max %d: first-order cap %d, want %d", tc.max, tc.first, got, tc.want)
		}
	}
}
