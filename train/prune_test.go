package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
)

// prunedSets returns, deep-copied, the sets pruning gives every training
// sequence of o under theta (o.eval(theta) must have run: the worker's
// cold weights are theta's).
func prunedSets(t *testing.T, o *objective, theta []float64) [][][]int32 {
	t.Helper()
	md := o.md
	wb := &o.workers[0]
	var pb prune.Buf
	var co engine.ChainOptions
	sets := make([][][]int32, len(o.sc.labels))
	for i, y := range o.sc.labels {
		T := len(y)
		if T == 0 {
			continue
		}
		emit := make([]float64, T*md.m)
		o.scoreSeq(wb, theta, i, emit)
		var cand engine.ChainOptions
		opts := chainOpts(&cand, md.allowed, i)
		c := md.prune.apply(&pb, &co, opts, emit, y, md.m, i)
		sets[i] = make([][]int32, T)
		for k, s := range c.Allowed {
			sets[i][k] = slices.Clone(s)
		}
	}
	return sets
}

func evalAt(t *testing.T, o *objective, theta []float64) (float64, []float64) {
	t.Helper()
	g := make([]float64, len(theta))
	f, err := o.eval(theta, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, g
}

// finiteDiff checks gradient g of o at theta against central differences
// of o along n trainable parameters chosen by r.
func finiteDiff(t *testing.T, o *objective, md *paramSpace, r *rand.Rand, theta, g []float64, n int) {
	t.Helper()
	var ks []int
	for _, k := range r.Perm(len(theta)) {
		if md.trainable(k) && len(ks) < n {
			ks = append(ks, k)
		}
	}
	finiteDiffAt(t, o, theta, g, ks)
}

// finiteDiffAt checks gradient g of o at theta against central
// differences of o along the parameters ks.
func finiteDiffAt(t *testing.T, o *objective, theta, g []float64, ks []int) {
	t.Helper()
	tmp := make([]float64, len(theta))
	for _, k := range ks {
		const h = 1e-5
		x := theta[k]
		theta[k] = x + h
		fp, _ := o.eval(theta, tmp, nil)
		theta[k] = x - h
		fm, _ := o.eval(theta, tmp, nil)
		theta[k] = x
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Fatalf("parameter %d: gradient %.8g, finite difference %.8g", k, g[k], fd)
		}
	}
}

func sameObjective(t *testing.T, what string, f1, f2 float64, g1, g2 []float64, tol float64) {
	t.Helper()
	if math.Abs(f1-f2) > tol*math.Abs(f2) {
		t.Fatalf("%s: objective %.15g, want %.15g", what, f1, f2)
	}
	gmax := 0.0
	for _, v := range g2 {
		gmax = max(gmax, math.Abs(v))
	}
	for k := range g2 {
		if math.Abs(g1[k]-g2[k]) > tol*gmax {
			t.Fatalf("%s: gradient[%d] = %.15g, want %.15g", what, k, g1[k], g2[k])
		}
	}
}

// TestPrunedObjective: the pruned objective and gradient are those of the
// chain constrained to the pruned sets (the same sets given as candidate
// labels), dense and tied, with and without candidate labels; the sets
// keep the gold label, stay within the candidates, hold at most prune.max
// labels and pass the threshold; they are recomputed from the weights at
// every evaluation; and the gradient matches finite differences of the
// objective with the sets held fixed.
func TestPrunedObjective(t *testing.T) {
	pool := engine.NewPool(2)
	defer pool.Close()
	for _, tc := range []struct {
		name  string
		trans string
		cand  bool
	}{{"dense", "dense", false}, {"tied", "tied", false}, {"dense-candidates", "dense", true}, {"tied-candidates", "tied", true}, {"none", "none", false}} {
		t.Run(tc.name, func(t *testing.T) {
			const m = 30
			d := wordData(t, 21, 120, m, 40)
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2 = tc.trans, 0.2
			cfg.PruneMax, cfg.PruneThreshold = 4, 0.05
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cand {
				if md.lex, md.allowed, err = candidates(d, 2); err != nil {
					t.Fatal(err)
				}
			}
			cands := md.allowed
			md.prune = newPruning(&cfg)
			r := rand.New(rand.NewPCG(5, 6))
			theta := make([]float64, md.nTotal())
			for k := range theta {
				if md.trainable(k) {
					theta[k] = r.NormFloat64() * 1.5
				}
			}
			pruned := newObjective(md, d, cfg.C2, pool)
			f1, g1 := evalAt(t, pruned, theta)
			sets := prunedSets(t, pruned, theta)

			// What the sets promise.
			kept, total, small := 0, 0, 0
			for i, y := range pruned.sc.labels {
				emit := make([]float64, len(y)*m)
				pruned.scoreSeq(&pruned.workers[0], theta, i, emit)
				for p, s := range sets[i] {
					row := emit[p*m : (p+1)*m]
					if !slices.Contains(s, y[p]) || len(s) > cfg.PruneMax || !slices.IsSorted(s) {
						t.Fatalf("sequence %d position %d: set %v (gold %d)", i, p, s, y[p])
					}
					best := math.Inf(-1)
					var cset []int32
					if cands != nil {
						cset = cands[i][p]
					}
					for j, v := range row {
						if cset == nil || slices.Contains(cset, int32(j)) {
							best = max(best, v)
						}
					}
					for _, j := range s {
						if cset != nil && !slices.Contains(cset, j) {
							t.Fatalf("sequence %d position %d: label %d outside the candidates %v", i, p, j, cset)
						}
						if j != y[p] && math.Exp(row[j]-best) < cfg.PruneThreshold {
							t.Fatalf("sequence %d position %d: label %d below the threshold", i, p, j)
						}
					}
					kept += len(s)
					total++
					if len(s) < cfg.PruneMax {
						small++
					}
				}
			}
			if kept >= total*cfg.PruneMax || small == 0 || kept <= total {
				t.Fatalf("%d labels kept over %d positions (%d below the cap): the test does not prune", kept, total, small)
			}

			// The constrained objective with the same sets, fixed.
			md.prune, md.allowed = nil, sets
			fixed := newObjective(md, d, cfg.C2, pool)
			f2, g2 := evalAt(t, fixed, theta)
			sameObjective(t, "pruned vs constrained", f1, f2, g1, g2, 1e-12)

			// Finite differences of the fixed-set objective.
			finiteDiff(t, fixed, md, r, theta, g1, 80)

			// Other weights, other sets: recomputed at every evaluation.
			md.prune, md.allowed = newPruning(&cfg), cands
			theta2 := slices.Clone(theta)
			for k := range theta2 {
				if md.trainable(k) {
					theta2[k] += r.NormFloat64()
				}
			}
			f3, g3 := evalAt(t, pruned, theta2)
			sets2 := prunedSets(t, pruned, theta2)
			differ := false
			for i := range sets {
				for p := range sets[i] {
					differ = differ || !slices.Equal(sets[i][p], sets2[i][p])
				}
			}
			if !differ {
				t.Fatal("the sets did not change with the weights")
			}
			md.prune, md.allowed = nil, sets2
			f4, g4 := evalAt(t, newObjective(md, d, cfg.C2, pool), theta2)
			sameObjective(t, "pruned vs constrained, second weights", f3, f4, g3, g4, 1e-12)
		})
	}
}

// TestPruneExact: with threshold 0 and prune.max ≥ M every label is kept,
// and the objective and gradient are exact training's.
func TestPruneExact(t *testing.T) {
	pool := engine.NewPool(1)
	defer pool.Close()
	for _, trans := range []string{"dense", "tied", "none"} {
		const m = 12
		d := wordData(t, 23, 60, m, 30)
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions, cfg.C2 = trans, 0.3
		cfg.PruneMax, cfg.PruneThreshold = m+3, 0
		md, err := newParamSpace(d, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, 8))
		theta := make([]float64, md.nTotal())
		for k := range theta {
			if md.trainable(k) {
				theta[k] = r.NormFloat64()
			}
		}
		f2, g2 := evalAt(t, newObjective(md, d, cfg.C2, pool), theta)
		md.prune = newPruning(&cfg)
		f1, g1 := evalAt(t, newObjective(md, d, cfg.C2, pool), theta)
		sameObjective(t, trans, f1, f2, g1, g2, 1e-12)
	}
}

// TestPruneConfig: the parameters' names, their checks, and the models
// pruning does not take.
func TestPruneConfig(t *testing.T) {
	cfg, _ := Defaults("lbfgs")
	if cfg.PruneMax != 0 || cfg.PruneThreshold != 0.01 {
		t.Fatalf("defaults: prune.max %d, prune.threshold %v", cfg.PruneMax, cfg.PruneThreshold)
	}
	if err := cfg.Set("prune.max", "6"); err != nil || cfg.PruneMax != 6 {
		t.Fatalf("prune.max: %v, %d", err, cfg.PruneMax)
	}
	if err := cfg.Set("prune.threshold", "0.001"); err != nil || cfg.PruneThreshold != 0.001 {
		t.Fatalf("prune.threshold: %v, %v", err, cfg.PruneThreshold)
	}
	for _, bad := range [][2]string{{"prune.max", "-1"}, {"prune.max", "x"}, {"prune.threshold", "2"}, {"prune.threshold", "-0.1"}, {"prune.threshold", "nan"}} {
		if err := cfg.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s accepted", bad[0], bad[1])
		}
	}
	sgd, _ := Defaults("sgd")
	sgd.PruneMax = 4
	if err := sgd.check(); err == nil {
		t.Error("prune.max accepted with sgd")
	}
	d := wordData(t, 24, 30, 6, 10)
	f32, _ := Defaults("lbfgs")
	f32.Transitions, f32.Precision, f32.PruneMax, f32.MaxIterations = "dense", "float32", 4, 2
	if _, err := Train(context.Background(), d, f32); err == nil {
		t.Error("prune.max accepted with precision=float32")
	}
	ok, _ := Defaults("lbfgs")
	ok.PruneMax, ok.MaxIterations = 3, 3
	if _, err := Train(context.Background(), d, ok); err != nil {
		t.Errorf("pruned training: %v", err)
	}
}

// TestPruneStartsExact: at θ = 0 every label ties, so the first
// evaluation of pruned training is exact training's.
func TestPruneStartsExact(t *testing.T) {
	pool := engine.NewPool(1)
	defer pool.Close()
	const m = 12
	d := wordData(t, 25, 50, m, 30)
	cfg, _ := Defaults("lbfgs")
	cfg.Transitions = "tied"
	cfg.PruneMax = 3
	md, err := newParamSpace(d, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, md.nTotal())
	f2, g2 := evalAt(t, newObjective(md, d, cfg.C2, pool), theta)
	md.prune = newPruning(&cfg)
	f1, g1 := evalAt(t, newObjective(md, d, cfg.C2, pool), theta)
	sameObjective(t, "θ = 0", f1, f2, g1, g2, 1e-12)
}
