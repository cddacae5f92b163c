package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// randomData makes nSeq random sequences over numAttrs attributes and m
// labels; with separable, the label of a position is its first attribute
// mod m (so a CRF can learn it exactly).
func randomData(t testing.TB, seed uint64, nSeq, numAttrs, m int, weights, separable bool) *Data {
	r := rand.New(rand.NewPCG(seed, 1))
	c := sparse.NewCorpus()
	var b sparse.Builder
	var w []float64
	for range nSeq {
		b.Reset()
		T := 1 + r.IntN(7)
		for range T {
			a0 := int32(r.IntN(numAttrs))
			b.Add(a0, 1)
			for range r.IntN(4) * (1 - b2i(separable)) {
				v := 1.0
				if r.IntN(3) == 0 {
					v = 0.5 + r.Float64()
				}
				b.Add(int32(r.IntN(numAttrs)), v)
			}
			y := int32(r.IntN(m))
			if separable {
				y = a0 % int32(m)
			}
			b.End(y)
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
		w = append(w, 0.5+r.Float64())
	}
	d := &Data{Corpus: c, NumAttrs: numAttrs, Labels: m}
	if weights {
		d.Weights = w
	}
	return d
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// trainable reports whether parameter k is trained.
func (md *paramSpace) trainable(k int) bool {
	if k < md.hy.hotSize() && md.stateMask != nil && md.stateMask[k/64]&(1<<(k%64)) == 0 {
		return false
	}
	return !slices.Contains(md.fixedTrans, int32(k))
}

func TestGradientFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name          string
		trans         string
		weights, poss bool
		m             int
		attrs         int
	}{
		{"dense", "dense", false, false, 4, 10},
		{"dense-weighted", "dense", true, false, 4, 10},
		{"dense-possible", "dense", true, true, 3, 10},
		{"tied", "tied", false, false, 5, 10},
		{"tied-weighted", "tied", true, false, 5, 10},
		{"none", "none", false, false, 5, 10}, // independentPosteriors
		{"none-weighted", "none", true, false, 5, 10},
		{"many-labels", "dense", false, false, 12, 10}, // hot and cold rows
		{"rare-attrs", "dense", true, false, 12, 300},  // cold rows in first-occurrence order
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := randomData(t, 7, 40, tc.attrs, tc.m, tc.weights, false)
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions = tc.trans
			cfg.PossibleStates, cfg.PossibleTransitions = tc.poss, tc.poss
			cfg.C2 = 0.3
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.tied != (tc.trans == "tied") {
				t.Fatalf("tied = %v", md.tied)
			}
			pool := engine.NewPool(2)
			defer pool.Close()
			o := newObjective(md, d, cfg.C2, pool)
			r := rand.New(rand.NewPCG(3, 4))
			theta := make([]float64, md.nParams)
			for k := range theta {
				if md.trainable(k) {
					theta[k] = r.NormFloat64() * 0.5
				}
			}
			g := make([]float64, md.nParams)
			f0, err := o.eval(theta, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			gtmp := make([]float64, md.nParams)
			checked := 0
			for k := range theta {
				if !md.trainable(k) {
					if g[k] != 0 {
						t.Errorf("fixed parameter %d has gradient %v", k, g[k])
					}
					continue
				}
				const h = 1e-5
				x := theta[k]
				theta[k] = x + h
				fp, _ := o.eval(theta, gtmp, nil)
				theta[k] = x - h
				fm, _ := o.eval(theta, gtmp, nil)
				theta[k] = x
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("parameter %d of %d (state %d): gradient %.8g, finite difference %.8g", k, md.nParams, md.nState, g[k], fd)
				}
				checked++
			}
			if checked < md.nState/2 {
				t.Errorf("checked only %d of %d parameters", checked, md.nParams)
			}
			// The loss is the definition: Σ c·NLL + c2‖θ‖².
			want := 0.0
			tr, _ := md.transitions(theta, make([]engine.Exception, len(md.excs)))
			sc := md.hy.split(d.Corpus)
			ws := engine.NewWorkspace()
			for i := range d.Corpus.Len() {
				y := sc.labels[i]
				emit := make([]float64, len(y)*md.m)
				md.hy.score(theta, emit, sc, i)
				nll, err := tr.NLL(ws, emit, y, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				c := 1.0
				if d.Weights != nil {
					c = d.Weights[i]
				}
				want += c * nll
			}
			for _, v := range theta {
				want += cfg.C2 * v * v
			}
			if math.Abs(want-f0) > 1e-9*math.Abs(want) {
				t.Errorf("objective %v, want %v", f0, want)
			}
		})
	}
}

// TestMinimizeQuadratic: L-BFGS (every line search) reaches the minimum of
// a convex quadratic.
func TestMinimizeQuadratic(t *testing.T) {
	n := 20
	r := rand.New(rand.NewPCG(5, 6))
	diag := make([]float64, n)
	opt := make([]float64, n)
	for i := range n {
		diag[i] = 0.1 + 10*r.Float64()
		opt[i] = r.NormFloat64()
	}
	eval := func(x, g []float64) (float64, error) {
		f := 0.0
		for i := range x {
			d := x[i] - opt[i]
			f += 0.5 * diag[i] * d * d
			g[i] = diag[i] * d
		}
		// a coupling term, so that the Hessian is not diagonal
		s := x[0] + x[1]
		f += 0.5 * s * s
		g[0] += s
		g[1] += s
		return f, nil
	}
	for _, ls := range []string{"MoreThuente", "Backtracking", "StrongBacktracking"} {
		x := make([]float64, n)
		res, err := minimize(x, eval, qnOptions{m: 6, epsilon: 1e-10, maxLS: 40, lineSearch: ls}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, n)
		eval(x, g)
		gn := math.Sqrt(dot(g, g))
		if gn > 1e-8 {
			t.Errorf("%s: ‖g‖ = %g after %d iterations (%s)", ls, gn, res.iters, res.reason)
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestLBFGSConverges: on a small CRF, L-BFGS stops at a point whose
// gradient is ≈ 0, and the objective never increases.
func TestLBFGSConverges(t *testing.T) {
	d := randomData(t, 11, 60, 15, 4, true, false)
	cfg, _ := Defaults("lbfgs")
	// ε = 1e-6: at ‖g‖ ≈ 4e-7 this objective (≈ 315) changes by less
	// than its rounding error along a step, and whether a line search
	// still finds a decrease there is luck of the last bits.
	cfg.Epsilon, cfg.Delta = 1e-6, 0
	var last Progress
	prev := math.Inf(1)
	cfg.Progress = func(p Progress) {
		if p.Loss > prev+1e-9*math.Abs(prev) {
			t.Errorf("iteration %d: objective rose from %v to %v", p.Iteration, prev, p.Loss)
		}
		prev, last = p.Loss, p
	}
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Reason, "converged") {
		t.Errorf("reason %q after %d iterations (‖g‖ = %g)", res.Reason, res.Iterations, last.GradNorm)
	}
	if last.GradNorm > 1e-5 {
		t.Errorf("‖g‖ = %g", last.GradNorm)
	}
}

// TestLineSearchEvaluations: on small CRFs, with CRFsuite's defaults, one
// line-search evaluation per iteration is the common case once L-BFGS has
// a history (the unit step of a quasi-Newton direction passes the strong
// Wolfe tests). On CoNLL-2000 a whole training takes 170 evaluations in
// its 161 iterations (1.06 each), 2 of them in the first iteration. The
// five CRFs here take 100 in 91 iterations after their first; a curvature
// constant of 0.1 instead of 0.9 makes it 228 in 85, an initial step of
// 0.05 instead of 1 274 in 142, and either fails. (An initial step of 0.5
// does not: the strong Wolfe tests with 0.9 accept it.)
func TestLineSearchEvaluations(t *testing.T) {
	evals, iters := 0, 0
	for seed := uint64(11); seed < 16; seed++ {
		d := randomData(t, seed, 60, 15, 4, true, false)
		cfg, _ := Defaults("lbfgs")
		cfg.Progress = func(p Progress) {
			if p.Iteration > 1 {
				evals += p.Evals
				iters++
			}
		}
		if _, err := Train(context.Background(), d, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if iters < 50 || float64(evals) > 1.25*float64(iters) {
		t.Errorf("%d evaluations in %d iterations after the first (want ≤ 1.25 each, ≥ 50 iterations)", evals, iters)
	}
	t.Logf("%d evaluations in %d iterations after the first", evals, iters)
}

// TestResultMatchesTraining: the Result's State and Trans score as the
// training parameters did (the export to package sparse's layout).
func TestResultMatchesTraining(t *testing.T) {
	d := randomData(t, 12, 50, 30, 9, false, true)
	cfg, _ := Defaults("lbfgs")
	cfg.MaxIterations = 15
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ws := engine.NewWorkspace()
	correct, total := 0, 0
	for i := range d.Corpus.Len() {
		s := d.Corpus.Seq(i)
		emit := make([]float64, s.Len()*d.Labels)
		res.State.Score(emit, s)
		path := make([]int32, s.Len())
		if _, err := res.Trans.Viterbi(ws, emit, nil, path); err != nil {
			t.Fatal(err)
		}
		for k, y := range s.Labels {
			if path[k] == y {
				correct++
			}
			total++
		}
	}
	if correct != total {
		t.Errorf("training accuracy %d/%d on separable data", correct, total)
	}
	if len(res.Params) != res.State.NumParams()+res.TransParams {
		t.Errorf("%d params, state %d + transitions %d", len(res.Params), res.State.NumParams(), res.TransParams)
	}
}

func TestOWLQN(t *testing.T) {
	d := randomData(t, 13, 80, 40, 4, false, false)
	cfg, _ := Defaults("l1")
	cfg.C1 = 2
	cfg.MaxIterations = 60
	prev := math.Inf(1)
	cfg.Progress = func(p Progress) {
		if p.Loss > prev+1e-9*math.Abs(prev) {
			t.Errorf("iteration %d: objective rose from %v to %v", p.Iteration, prev, p.Loss)
		}
		prev = p.Loss
	}
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	zeros, nonzeros := 0, 0
	for k := range res.State.NumParams() {
		if res.Params[k] == 0 {
			zeros++
		} else {
			nonzeros++
		}
	}
	if zeros == 0 || nonzeros == 0 {
		t.Errorf("%d zero and %d non-zero state weights; want both", zeros, nonzeros)
	}
	// Stronger L1, fewer non-zeros.
	cfg.C1, cfg.Progress = 20, nil
	res2, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	nz2 := 0
	for _, v := range res2.Params {
		if v != 0 {
			nz2++
		}
	}
	if nz2 >= nonzeros {
		t.Errorf("c1=20 left %d non-zeros, c1=2 %d", nz2, nonzeros)
	}
}

func TestDeterministic(t *testing.T) {
	d := randomData(t, 14, 300, 50, 6, true, false)
	run := func(threads int) []float64 {
		cfg, _ := Defaults("lbfgs")
		cfg.Threads = threads
		cfg.MaxIterations = 10
		res, err := Train(context.Background(), d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res.Params
	}
	for _, th := range []int{1, 2, 3} {
		a, b := run(th), run(th)
		if !slices.Equal(a, b) {
			t.Errorf("threads %d: two runs differ", th)
		}
	}
}

func TestOnlineSeparable(t *testing.T) {
	for _, alg := range []string{"ap", "sgd"} {
		t.Run(alg, func(t *testing.T) {
			d := randomData(t, 15, 200, 30, 5, false, true)
			cfg, _ := Defaults(alg)
			cfg.MaxIterations = 30
			if alg == "sgd" {
				cfg.C2 = 0.01
				cfg.CalibrationSamples = 100
			}
			cfg.Holdout = d
			var last Progress
			cfg.Progress = func(p Progress) { last = p }
			res, err := Train(context.Background(), d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if last.Holdout < 0.99 {
				t.Errorf("%s: training accuracy %.3f after %d epochs (%s)", alg, last.Holdout, res.Iterations, res.Reason)
			}
		})
	}
}

func TestInterrupt(t *testing.T) {
	d := randomData(t, 16, 100, 30, 5, false, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, _ := Defaults("lbfgs")
	cfg.Delta = 0
	cfg.Epsilon = 0
	cfg.Progress = func(p Progress) {
		if p.Iteration == 3 {
			cancel()
		}
	}
	res, err := Train(ctx, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Iterations != 3 {
		t.Errorf("interrupted %v after %d iterations (%s)", res.Interrupted, res.Iterations, res.Reason)
	}
	if res.State == nil || res.Trans == nil {
		t.Error("no model")
	}
}

func TestSet(t *testing.T) {
	cfg, _ := Defaults("lbfgs")
	for _, kv := range [][2]string{
		{"c1", "-1"}, {"c2", "x"}, {"c2", "NaN"}, {"num_memories", "0"}, {"period", "1.5"},
		{"linesearch", "Foo"}, {"feature.possible_states", "yes"}, {"transitions", "sparse"},
		{"calibration.rate", "1"}, {"no_such", "1"}, {"max_iterations", "-3"},
	} {
		if err := cfg.Set(kv[0], kv[1]); err == nil {
			t.Errorf("Set(%q, %q) accepted", kv[0], kv[1])
		} else if !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("Set(%q, %q): error %q does not name the parameter", kv[0], kv[1], err)
		}
	}
	for _, kv := range [][2]string{
		{"c2", "0.5"}, {"c1", "0.1"}, {"max_iterations", "50"}, {"num_memories", "10"}, {"epsilon", "1e-4"},
		{"period", "5"}, {"delta", "1e-4"}, {"linesearch", "Backtracking"}, {"max_linesearch", "30"},
		{"feature.minfreq", "2"}, {"feature.possible_states", "1"}, {"feature.possible_transitions", "1"},
		{"transitions", "tied"}, {"calibration.eta", "0.2"}, {"calibration.samples", "500"},
	} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Errorf("Set(%q, %q): %v", kv[0], kv[1], err)
		}
	}
	if cfg.C2 != 0.5 || cfg.MaxIterations != 50 || !cfg.PossibleStates || cfg.Transitions != "tied" || cfg.MinFreq != 2 {
		t.Errorf("Set did not set: %+v", cfg)
	}
	if _, err := Defaults("crf"); err == nil {
		t.Error("Defaults accepted an unknown algorithm")
	}
}

func TestMinFreq(t *testing.T) {
	d := randomData(t, 17, 100, 40, 4, false, false)
	cfg, _ := Defaults("lbfgs")
	md1, _ := newParamSpace(d, &cfg)
	cfg.MinFreq = 3
	md3, _ := newParamSpace(d, &cfg)
	if md3.pattern.NumPairs() >= md1.pattern.NumPairs() || len(md3.fixedTrans) < len(md1.fixedTrans) {
		t.Errorf("minfreq 3: %d pairs (%d fixed bigrams), minfreq 0: %d (%d)", md3.pattern.NumPairs(), len(md3.fixedTrans), md1.pattern.NumPairs(), len(md1.fixedTrans))
	}
}

// TestNoTransitions trains with transitions=none (a CRF++ template
// without a B line): every transition, start and end weight stays 0, for
// each algorithm, and the state weights still learn.
func TestNoTransitions(t *testing.T) {
	d := randomData(t, 5, 60, 30, 4, false, false)
	for _, alg := range []string{"lbfgs", "l1", "sgd", "ap"} {
		cfg, _ := Defaults(alg)
		if alg == "l1" {
			cfg.C1 = 0.05
		}
		if err := cfg.Set("transitions", "none"); err != nil {
			t.Fatal(err)
		}
		cfg.MaxIterations = 15
		res, err := Train(context.Background(), d, cfg)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		for k, v := range res.Params[res.State.NumParams():] {
			if v != 0 {
				t.Fatalf("%s: transition parameter %d = %v, want 0", alg, k, v)
			}
		}
		nonzero := 0
		for _, v := range res.State.Params() {
			if v != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Errorf("%s: no state weight trained", alg)
		}
	}
}

// TestNoStartEnd: with NoStartEnd every algorithm leaves the start and end
// weights at 0 and trains the transitions, dense and tied; without it they
// are trained.
func TestNoStartEnd(t *testing.T) {
	d := randomData(t, 6, 60, 30, 4, false, false)
	for _, alg := range []string{"lbfgs", "l1", "sgd", "ap"} {
		for _, trans := range []string{"dense", "tied"} {
			for _, hold := range []bool{true, false} {
				cfg, _ := Defaults(alg)
				if alg == "l1" {
					cfg.C1 = 0.05
				}
				cfg.Transitions, cfg.NoStartEnd, cfg.MaxIterations = trans, hold, 15
				res, err := Train(context.Background(), d, cfg)
				if err != nil {
					t.Fatalf("%s: %v", alg, err)
				}
				startEnd, transitions := 0, 0
				for j := range 4 {
					if res.Trans.Start(j) != 0 || res.Trans.End(j) != 0 {
						startEnd++
					}
					for i := range 4 {
						if res.Trans.Score(i, j) != 0 {
							transitions++
						}
					}
				}
				if hold && startEnd > 0 || !hold && startEnd == 0 || transitions == 0 {
					t.Errorf("%s, %s, NoStartEnd %v: %d labels with start/end weights, %d transitions ≠ 0", alg, trans, hold, startEnd, transitions)
				}
			}
		}
	}
}

// TestTiedEqualsDense: the tied structure is the dense model's
// reparameterisation (the bigrams seen in training, every other one held at
// 0), so L-BFGS follows the same path on both and ends at the same
// objective, weights and labels; a trained tied default (one shared weight
// for the unseen bigrams, driven far negative) made them drift apart by 3
// points of accuracy on UD Czech. With PossibleTransitions the tied default
// is trained and the tied model is a different one.
func TestTiedEqualsDense(t *testing.T) {
	d := randomData(t, 21, 80, 25, 9, true, false)
	run := func(trans string, poss bool) *Result {
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions, cfg.PossibleTransitions = trans, poss
		cfg.C2 = 0.1 // a weak prior: unseen bigrams matter
		cfg.MaxIterations = 60
		cfg.Threads = 1
		res, err := Train(context.Background(), d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Tied != (trans == "tied") {
			t.Fatalf("%s: Tied = %v", trans, res.Tied)
		}
		return res
	}
	dense, tied := run("dense", false), run("tied", false)
	if dense.Iterations != tied.Iterations || math.Abs(dense.Loss-tied.Loss) > 1e-9*dense.Loss {
		t.Errorf("dense: loss %.12g after %d iterations; tied: %.12g after %d", dense.Loss, dense.Iterations, tied.Loss, tied.Iterations)
	}
	def, exc := tied.Trans.Exceptions()
	if def != 0 {
		t.Errorf("tied default %v, want 0", def)
	}
	m := d.Labels
	unseen := m*m - len(exc)
	if unseen == 0 {
		t.Fatal("every bigram occurs: the test data must leave some out")
	}
	for i := range m {
		for j := range m {
			if a, b := dense.Trans.Score(i, j), tied.Trans.Score(i, j); math.Abs(a-b) > 1e-6 {
				t.Errorf("transition %d→%d: dense %v, tied %v", i, j, a, b)
			}
		}
		if a, b := dense.Trans.Start(i), tied.Trans.Start(i); math.Abs(a-b) > 1e-6 {
			t.Errorf("start %d: dense %v, tied %v", i, a, b)
		}
	}
	ws := engine.NewWorkspace()
	for i := range d.Corpus.Len() {
		s := d.Corpus.Seq(i)
		T := s.Len()
		for _, r := range []*Result{dense, tied} {
			emit := make([]float64, T*m)
			r.State.Score(emit, s)
			path := make([]int32, T)
			if _, err := r.Trans.Viterbi(ws, emit, nil, path); err != nil {
				t.Fatal(err)
			}
			if r == dense {
				s.Labels = path // (a copy of the header: the corpus keeps its gold)
			} else if !slices.Equal(path, s.Labels) {
				t.Errorf("sequence %d: dense labels %v, tied %v", i, s.Labels, path)
			}
		}
	}
	// A trained default is another model: lower loss, default < 0.
	learnt := run("tied", true)
	if def, _ := learnt.Trans.Exceptions(); def >= 0 || learnt.Loss >= tied.Loss {
		t.Errorf("tied with possible transitions: default %v, loss %v (fixed default: %v)", def, learnt.Loss, tied.Loss)
	}
}
