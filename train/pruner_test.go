package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestPrunerSets: with a zeroth-order pruner (prune.by=zeroth) the pruner
// is the CRF without transitions trained to the stopping rule (its
// weights are those of transitions=none training), the fixed sets hold
// the gold label, stay within the candidates and hold at most prune.max
// labels, the best under the pruner's scores; the pruned
// objective and gradient are the chain's constrained to those sets, which
// do not change with the weights, and the gradient matches finite
// differences; dense and tied, with and without candidate labels.
func TestPrunerSets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trans string
		cand  bool
		m     int
		sub   bool
	}{{"dense", "dense", false, 30, false}, {"tied", "tied", false, 30, false}, {"dense-candidates", "dense", true, 30, false},
		{"tied-candidates", "tied", true, 30, false}, {"tied-wide", "tied", false, 80, false}, {"tied-sublabels", "tied", false, 30, true}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := engine.NewPool(2)
			defer pool.Close()
			m := tc.m
			d := wordData(t, 31, 120, m, 40)
			if m > 30 {
				d = prunerData(t, 32, 150, m, 60)
			}
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2 = tc.trans, 0.2
			cfg.PruneMax, cfg.PruneThreshold, cfg.PruneBy = 4, 0.05, "zeroth"
			if tc.sub {
				withSubLabels(d, &cfg)
			}
			md := stagedParamSpace(t, d, &cfg)
			var err error
			if tc.cand {
				if md.lex, md.allowed, err = candidates(d, 2); err != nil {
					t.Fatal(err)
				}
			}
			cands := md.allowed
			if m > 30 { // hot rows, and cold rows long enough to be searched
				long := false
				for _, n := range md.hy.coldN {
					long = long || n > 8
				}
				if md.hy.nHot == 0 || !long {
					t.Fatalf("%d hot rows, cold rows of more than 8 labels: %v", md.hy.nHot, long)
				}
			}
			md.prune = newPruning(&cfg)
			tr := &trainer{ctx: context.Background(), d: d, cfg: &cfg, md: md, pool: pool, stop: new(atomic.Bool)}
			theta := sparse.MakeParams(md.nTotal())
			res, err := tr.trainPruner(theta)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.reason, "stopping criterion") {
				t.Fatalf("the pruner's training ended on %q", res.reason)
			}
			sets := md.prune.fixed

			// Trained whole: the pruner is transitions=none training, and
			// the model's training ends on the stopping rule.
			whole := cfg
			whole.Threads = 2
			if tc.cand {
				whole.Candidates = 2
			}
			none := whole
			none.Transitions, none.PruneMax, none.PruneBy = "none", 0, ""
			rz, err := Train(context.Background(), d, whole)
			if err != nil {
				t.Fatal(err)
			}
			rn, err := Train(context.Background(), d, none)
			if err != nil {
				t.Fatal(err)
			}
			// Bit for bit without sub-labels; with them, whose weights come
			// after the transitions' in θ, L-BFGS's blocked sums add in
			// another order (tied and none have different transition
			// counts): to 1e-6.
			tol := 0.0
			if tc.sub {
				tol = 1e-6
			}
			if rz.Pruner == nil || !near(rz.Pruner.Params()[:rz.Pruner.NumParams()], rn.State.Params()[:rn.State.NumParams()], tol) || math.Abs(rz.PrunerLoss-rn.Loss) > tol*rn.Loss {
				t.Fatalf("the pruner (loss %v) is not transitions=none training (loss %v)", rz.PrunerLoss, rn.Loss)
			}
			if tc.sub && (rn.Sub == nil || len(rn.Sub.W) == 0 || !near(rz.PrunerSub, rn.Sub.W, tol)) {
				t.Fatal("the pruner's sub-label weights are not those of transitions=none training")
			}
			if !strings.HasPrefix(rz.Reason, "stopping criterion") || !strings.HasPrefix(rz.PrunerReason, "stopping criterion") {
				t.Fatalf("training ended on %q, the pruner's on %q", rz.Reason, rz.PrunerReason)
			}
			if rz.PrunerIterations < 2 || rz.Iterations < 2 {
				t.Fatalf("%d iterations, the pruner's %d", rz.Iterations, rz.PrunerIterations)
			}

			// What the sets promise, under the pruner's scores: the gold
			// label, within the candidates, at most prune.max labels, the
			// best ones (the threshold is for tagging).
			kept, total := 0, 0
			sc := md.hy.split(d.Corpus)
			for i, y := range sc.labels {
				emit := make([]float64, len(y)*m)
				var sbuf []float64
				md.prune.score(md, emit, sc, d.Corpus, i, md.prune.prunerSub(md), &sbuf)
				for p, s := range sets[i] {
					row := emit[p*m : (p+1)*m]
					if !slices.Contains(s, y[p]) || len(s) > cfg.PruneMax || !slices.IsSorted(s) {
						t.Fatalf("sequence %d position %d: set %v (gold %d)", i, p, s, y[p])
					}
					var cset []int32
					if cands != nil {
						cset = cands[i][p]
					}
					lowKept, highDropped := math.Inf(1), math.Inf(-1)
					for j, v := range row {
						in := slices.Contains(s, int32(j))
						switch {
						case cset != nil && !slices.Contains(cset, int32(j)):
							if in {
								t.Fatalf("sequence %d position %d: label %d outside the candidates %v", i, p, j, cset)
							}
						case in && int32(j) != y[p]:
							lowKept = min(lowKept, v)
						case !in:
							highDropped = max(highDropped, v)
						}
					}
					if highDropped >= lowKept {
						t.Fatalf("sequence %d position %d: a label scoring %v dropped, one scoring %v kept", i, p, highDropped, lowKept)
					}
					kept += len(s)
					total++
				}
			}
			if kept >= total*m/2 || kept <= total {
				t.Fatalf("%d labels kept over %d positions: the test does not prune", kept, total)
			}

			// The objective is the constrained chain's, at any weights.
			r := rand.New(rand.NewPCG(9, 10))
			for round := range 2 {
				for k := range theta {
					theta[k] = 0
					if md.trainable(k) {
						theta[k] = r.NormFloat64() * 1.5
					}
				}
				pruned := newObjective(md, d, cfg.C2, pool)
				f1, g1 := evalAt(t, pruned, theta)
				pr := md.prune
				md.prune, md.allowed = nil, sets
				fixed := newObjective(md, d, cfg.C2, pool)
				f2, g2 := evalAt(t, fixed, theta)
				sameObjective(t, "pruned vs constrained", f1, f2, g1, g2, 1e-12)
				if round == 0 {
					finiteDiff(t, pruned, md, r, theta, g1, 60)
				}
				md.prune, md.allowed = pr, cands
			}
		})
	}
}

// TestPrunerConfig: prune.by and prune.pruner_iterations, their checks,
// the pruner's iteration cap, and the models a pruner does not take.
func TestPrunerConfig(t *testing.T) {
	cfg, _ := Defaults("lbfgs")
	if cfg.PruneBy != "" || cfg.PrunerIterations != 0 {
		t.Fatalf("defaults: prune.by %q, prune.pruner_iterations %d", cfg.PruneBy, cfg.PrunerIterations)
	}
	if err := cfg.Set("prune.by", "zeroth"); err != nil || cfg.PruneBy != "zeroth" {
		t.Fatalf("prune.by: %v, %q", err, cfg.PruneBy)
	}
	if err := cfg.Set("prune.pruner_iterations", "3"); err != nil || cfg.PrunerIterations != 3 {
		t.Fatalf("prune.pruner_iterations: %v, %d", err, cfg.PrunerIterations)
	}
	for _, bad := range [][2]string{{"prune.by", "second"}, {"prune.by", ""}, {"prune.pruner_iterations", "-1"}} {
		if err := cfg.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s accepted", bad[0], bad[1])
		}
	}
	d := wordData(t, 26, 40, 8, 12)
	capped, _ := Defaults("lbfgs")
	capped.PruneMax, capped.PruneBy, capped.PrunerIterations, capped.MaxIterations = 3, "zeroth", 3, 4
	r, err := Train(context.Background(), d, capped)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pruner == nil || r.PrunerIterations != 3 || r.Iterations > 4 {
		t.Fatalf("pruner %v after %d iterations (cap 3), model %d (cap 4)", r.Pruner != nil, r.PrunerIterations, r.Iterations)
	}
	// Cancelled while the pruner trains: no error, the result interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAt := capped
	stopAt.PrunerIterations, stopAt.MaxIterations = 0, 0
	stopAt.Progress = func(p Progress) {
		if p.Pruner && p.Iteration == 2 {
			cancel()
		}
	}
	if r, err := Train(ctx, d, stopAt); err != nil || !r.Interrupted {
		t.Fatalf("cancelled in the pruner's training: %v, %+v", err, r)
	}
	sub := capped
	sub.SubLabels = 1
	d.LabelNames = make([]string, d.Labels)
	for k := range d.LabelNames {
		d.LabelNames[k] = string(rune('a' + k))
	}
	if _, err := Train(context.Background(), d, sub); err == nil || !strings.Contains(err.Error(), "prune.by=self") {
		t.Errorf("prune.by=zeroth with feature.sublabels: %v", err)
	}
}

// prunerData is labelled data for pruning at larger M: per position a
// word attribute (three labels each), a class attribute of twelve labels
// with a value in [0.5, 1.5) (long cold rows), and one of three shared
// attributes seen with every label, of value in [0, 2) (hot rows).
func prunerData(t testing.TB, seed uint64, nSeq, m, nWords int) *Data {
	r := rand.New(rand.NewPCG(seed, 3))
	c := sparse.NewCorpus()
	var b sparse.Builder
	nClass := (m + 11) / 12
	for range nSeq {
		b.Reset()
		T := 1 + r.IntN(6)
		for range T {
			w := r.IntN(nWords)
			y := int32((w*7 + r.IntN(3)) % m)
			b.Add(int32(w), 1)
			b.Add(int32(nWords+int(y)/12), 0.5+r.Float64())
			b.Add(int32(nWords+nClass+r.IntN(3)), 2*r.Float64())
			b.End(y)
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
	}
	return &Data{Corpus: c, NumAttrs: nWords + nClass + 3, Labels: m}
}

// near reports whether a and b have the same length and differ by at most
// tol·max(1, |b|) in each entry.
func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Abs(a[k]-b[k]) > tol*math.Max(1, math.Abs(b[k])) {
			return false
		}
	}
	return true
}

// withSubLabels names d's labels so that they share sub-labels (five
// first parts, three second ones) and trains sub-label weights on them.
func withSubLabels(d *Data, cfg *Config) {
	d.LabelNames = make([]string, d.Labels)
	for j := range d.LabelNames {
		d.LabelNames[j] = fmt.Sprintf("%c%d", 'A'+j%5, j%3)
	}
	cfg.SubLabels = 2
}

// stagedParamSpace returns the parameter space Train makes for d and cfg,
// sub-label weights included, to run training's stages one by one.
func stagedParamSpace(t *testing.T, d *Data, cfg *Config) *paramSpace {
	t.Helper()
	md, err := newParamSpace(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SubLabels > 0 {
		if md.sub, err = sparse.NewSubLabels(d.LabelNames, cfg.subParts(), d.Corpus, d.NumAttrs); err != nil {
			t.Fatal(err)
		}
	}
	return md
}
