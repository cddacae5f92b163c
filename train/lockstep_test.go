package train

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestLockstepObjective: the dense evaluation in lockstep groups gives the
// objective and gradient of the per-sequence path (within 1e-9 relative to
// the gradient's largest entry) on every tier, for one and two threads,
// with hot and cold state rows, possible transitions and sub-label weights
// (and sub-label transitions), and its gradient matches finite
// differences. Models it does not take (tied, candidates, instance
// weights) get no plan.
func TestLockstepObjective(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m, attrs int
		poss     bool
		sub      bool
	}{
		{"dense", 4, 10, false, false},
		{"possible", 5, 10, true, false},
		{"many-labels", 12, 300, false, false},
		{"sub-labels", 5, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d *Data
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2 = "dense", 0.3
			cfg.PossibleStates, cfg.PossibleTransitions = tc.poss, tc.poss
			if tc.sub {
				d = wordData(t, 11, 60, 5, 8)
				d.LabelNames = []string{"NA1", "NB2", "VA", "NA2", "VB1"}
				cfg.SubLabels = 3
			} else {
				d = randomData(t, 9, 90, tc.attrs, tc.m, false, false)
			}
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sub {
				if md.sub, err = sparse.NewSubLabels(d.LabelNames, cfg.subParts(), d.Corpus, d.NumAttrs); err != nil {
					t.Fatal(err)
				}
				md.subTrans = true
			}
			r := rand.New(rand.NewPCG(3, 4))
			theta := make([]float64, md.nTotal())
			for k := range theta {
				if k >= md.nParams || md.trainable(k) {
					theta[k] = r.NormFloat64() * 0.7
				}
			}
			for _, threads := range []int{1, 2} {
				pool := engine.NewPool(threads)
				single := newObjective(md, d, cfg.C2, pool)
				if single.lock != nil {
					t.Fatal("lockstep plan below engine.LockstepLabels")
				}
				lock := newObjective(md, d, cfg.C2, pool)
				if lock.lock = lock.newLockstep(true); lock.lock == nil {
					t.Fatal("no lockstep plan")
				}
				groups := 0
				for _, u := range lock.lock.units {
					if len(u) > 1 {
						groups++
					}
				}
				if groups < 3 {
					t.Fatalf("%d lockstep groups", groups)
				}
				want := make([]float64, len(theta))
				fw, err := single.eval(theta, want, nil)
				if err != nil {
					t.Fatal(err)
				}
				gmax := 0.0
				for _, v := range want {
					gmax = max(gmax, math.Abs(v))
				}
				for _, name := range kernels.Impls() {
					restore, err := kernels.Use(name)
					if err != nil {
						t.Fatal(err)
					}
					got := make([]float64, len(theta))
					f, err := lock.eval(theta, got, nil)
					restore()
					if err != nil {
						t.Fatal(err)
					}
					if math.Abs(f-fw) > 1e-9*math.Abs(fw) {
						t.Errorf("%s threads=%d: objective %.15g, per sequence %.15g", name, threads, f, fw)
					}
					for k := range want {
						if math.Abs(got[k]-want[k]) > 1e-9*gmax {
							t.Errorf("%s threads=%d: gradient[%d] = %.15g, per sequence %.15g", name, threads, k, got[k], want[k])
						}
					}
				}
				if threads == 2 { // finite differences on the lockstep path
					g := make([]float64, len(theta))
					lock.eval(theta, g, nil)
					tmp := make([]float64, len(theta))
					for k := range theta {
						if k < md.nParams && !md.trainable(k) {
							continue
						}
						const h = 1e-5
						x := theta[k]
						theta[k] = x + h
						fp, _ := lock.eval(theta, tmp, nil)
						theta[k] = x - h
						fm, _ := lock.eval(theta, tmp, nil)
						theta[k] = x
						if fd := (fp - fm) / (2 * h); math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
							t.Errorf("parameter %d: gradient %.8g, finite difference %.8g", k, g[k], fd)
						}
					}
				}
				pool.Close()
			}
		})
	}
	// Models the lockstep path does not take.
	pool := engine.NewPool(1)
	defer pool.Close()
	for _, c := range []struct {
		name  string
		trans string
		wts   bool
		cand  bool
	}{{"tied", "tied", false, false}, {"weighted", "dense", true, false}, {"candidates", "dense", false, true}} {
		d := wordData(t, 12, 40, 5, 8)
		if c.wts {
			d.Weights = make([]float64, d.Corpus.Len())
			for i := range d.Weights {
				d.Weights[i] = 1 + float64(i%3)
			}
		}
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions = c.trans
		md, err := newParamSpace(d, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.cand {
			if md.lex, md.allowed, err = candidates(d, 2); err != nil {
				t.Fatal(err)
			}
		}
		o := newObjective(md, d, 0.1, pool)
		if o.newLockstep(true) != nil {
			t.Errorf("%s: a lockstep plan", c.name)
		}
	}
}

// TestLockstepSwitch: the Config's lockstep mode (lockplan.Force) forces either path ("always" plans
// groups below engine.LockstepLabels, "never" drops them above it, "auto"
// keeps the label rule), trainings on both paths end at the same loss up
// to rounding, and an unknown value is refused.
func TestLockstepSwitch(t *testing.T) {
	pool := engine.NewPool(1)
	for _, tc := range []struct {
		m    int
		mode string
		want bool
	}{{5, "always", true}, {5, "auto", false}, {5, "", false}, {engine.LockstepLabels, "never", false}, {engine.LockstepLabels, "auto", true}} {
		d := randomData(t, 21, 80, 30, tc.m, false, false)
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions = "dense"
		md, err := newParamSpace(d, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		o := newObjective(md, d, cfg.C2, pool)
		o.setLockstep(tc.mode)
		if got := o.lock != nil; got != tc.want {
			t.Errorf("M = %d, lockstep %q: plan %v, want %v", tc.m, tc.mode, got, tc.want)
		}
	}
	d := randomData(t, 22, 60, 20, 6, false, false)
	loss := map[string]float64{}
	for _, mode := range []string{"always", "never"} {
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions, cfg.MaxIterations, cfg.Threads = "dense", 8, 1
		lockplan.Force(&cfg, mode)
		res, err := Train(context.Background(), d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		loss[mode] = res.Loss
	}
	if a, b := loss["always"], loss["never"]; math.Abs(a-b) > 1e-8*math.Abs(b) {
		t.Errorf("loss after 8 iterations: lockstep %.12g, single %.12g", a, b)
	}
	cfg, _ := Defaults("lbfgs")
	lockplan.Force(&cfg, "sometimes")
	if _, err := Train(context.Background(), d, cfg); err == nil || !strings.Contains(err.Error(), "lockstep") {
		t.Errorf("lockstep %q: error %v", cfg.lockstep, err)
	}
}
