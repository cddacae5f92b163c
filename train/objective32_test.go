package train

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// eps32 is float32's unit roundoff, 2^-24.
const eps32 = 1.0 / (1 << 24)

// objectives32 returns a float64 and a float32 objective over the same
// model of d (dense transitions).
func objectives32(t *testing.T, d *Data, c2 float64, pool *engine.Pool) (*paramSpace, *objective, *objective) {
	t.Helper()
	cfg, _ := Defaults("lbfgs")
	cfg.Transitions = "dense"
	cfg.C2 = c2
	md, err := newParamSpace(d, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	o64 := newObjective(md, d, c2, pool)
	o32 := newObjective(md, d, c2, pool)
	if o32.f32, err = newState32(o32); err != nil {
		t.Fatal(err)
	}
	return md, o64, o32
}

// TestObjective32 compares the float32 evaluation with the float64 one at
// the same θ, on every kernel tier, and its gradient with finite
// differences of its own objective. The bounds follow from float32's
// roundoff: a position's scores (|s| ≤ S, a sum of a few weights) and its
// forward–backward are each off by a few eps32 relative (the rounding of a
// score repeats at its positions: the error adds up linearly, not as √N),
// so the objective, summed in float64 over N positions, is within about 2·eps32·N·(1+S) of
// float64's; a gradient entry sums at most N marginals, each within about
// M·eps32 absolute (the float32 kernels' √M·eps, rounded up), plus its
// float32 accumulation, so it is within 2·M·eps32·N of float64's.
// (Measured: 10 to 100 times below the bounds.)
func TestObjective32(t *testing.T) {
	cases := []struct {
		name    string
		weights bool
		m       int
		attrs   int
		scale   float64 // of the random θ
	}{
		{"dense", false, 4, 10, 0.5},
		{"weighted", true, 4, 10, 0.5},
		{"many-labels", false, 12, 10, 0.5}, // hot and cold rows
		{"rare-attrs", true, 12, 300, 0.5},  // cold rows
		// Scores ±40 and more: spreads beyond ScaledRange32 send sequences
		// to the float64 path.
		{"wide", true, 6, 30, 15},
	}
	for _, tier := range kernels.Impls() {
		restore, err := kernels.Use(tier)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(tier+"/"+tc.name, func(t *testing.T) {
				d := randomData(t, 11, 40, tc.attrs, tc.m, tc.weights, false)
				pool := engine.NewPool(2)
				defer pool.Close()
				md, o64, o32 := objectives32(t, d, 0.3, pool)
				r := rand.New(rand.NewPCG(5, 6))
				theta := make([]float64, md.nParams)
				for k := range theta {
					if md.trainable(k) {
						theta[k] = r.NormFloat64() * tc.scale
					}
				}
				g64, g32 := make([]float64, md.nParams), make([]float64, md.nParams)
				f64, err := o64.eval(theta, g64, nil)
				if err != nil {
					t.Fatal(err)
				}
				f32, err := o32.eval(theta, g32, nil)
				if err != nil {
					t.Fatal(err)
				}
				N := float64(d.Corpus.Tokens())
				S := 0.0 // the largest |score| of a position (bound)
				for _, v := range theta {
					S = max(S, math.Abs(v))
				}
				S *= 8 // up to 4 features (values ≤ 1.5) and a transition, start or end weight
				tolF := 2 * eps32 * N * (1 + S)
				if math.Abs(f32-f64) > tolF {
					t.Errorf("objective %.10g, float64 %.10g: |Δ| %.3g > %.3g", f32, f64, math.Abs(f32-f64), tolF)
				}
				tolG := 2 * float64(tc.m) * eps32 * N
				worst := 0.0
				for k := range g64 {
					if !md.trainable(k) {
						if g32[k] != 0 {
							t.Errorf("fixed parameter %d has gradient %v", k, g32[k])
						}
						continue
					}
					worst = max(worst, math.Abs(g32[k]-g64[k]))
					if math.Abs(g32[k]-g64[k]) > tolG {
						t.Errorf("parameter %d (state %d): gradient %.8g, float64 %.8g", k, md.nState, g32[k], g64[k])
					}
				}
				t.Logf("|Δf| %.2g (bound %.2g), worst |Δg| %.2g (bound %.2g), %d sequences by float64", math.Abs(f32-f64), tolF, worst, tolG, o32.f32.fallbacks())
				if fb := o32.f32.fallbacks(); (tc.name == "wide") != (fb > 0) {
					t.Errorf("%d sequences took the float64 path", fb)
				}
				// Finite differences of the float32 objective itself: its
				// noise is up to tolF, so the step is large (h = 1e-2,
				// central: truncation h²·f'''/6) and the bound is
				// 2·tolF/(2h) plus the truncation, taken as 1e-3·(1+|g|).
				if tc.name == "wide" {
					return // (f''' is large at scores ±100)
				}
				gtmp := make([]float64, md.nParams)
				const h = 1e-2
				for k := range theta {
					if !md.trainable(k) || k%3 != 0 {
						continue
					}
					x := theta[k]
					theta[k] = x + h
					fp, _ := o32.eval(theta, gtmp, nil)
					theta[k] = x - h
					fm, _ := o32.eval(theta, gtmp, nil)
					theta[k] = x
					fd := (fp - fm) / (2 * h)
					if tol := tolF/h + 1e-3*(1+math.Abs(fd)); math.Abs(fd-g32[k]) > tol {
						t.Errorf("parameter %d: gradient %.8g, finite difference %.8g (bound %.2g)", k, g32[k], fd, tol)
					}
				}
			})
		}
		restore()
	}
}

// TestObjective32Fallback: with scores spread beyond ScaledRange32 the
// float32 evaluation takes the float64 path for those sequences and still
// agrees with float64 (checked above on the "wide" case); here the
// spread is made certain, every sequence's.
func TestObjective32Fallback(t *testing.T) {
	d := randomData(t, 3, 20, 8, 5, false, true)
	pool := engine.NewPool(1)
	defer pool.Close()
	md, o64, o32 := objectives32(t, d, 0, pool)
	theta := make([]float64, md.nParams)
	for k := range theta {
		if md.trainable(k) {
			theta[k] = float64(k%7) * 30 // spreads of 180 nats, transition columns too
		}
	}
	g64, g32 := make([]float64, md.nParams), make([]float64, md.nParams)
	f64, err := o64.eval(theta, g64, nil)
	if err != nil {
		t.Fatal(err)
	}
	f32, err := o32.eval(theta, g32, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fb := o32.f32.fallbacks(); fb != int64(d.Corpus.Len()) {
		t.Errorf("%d of %d sequences took the float64 path", fb, d.Corpus.Len())
	}
	// The float64 path on float32-rounded scores: the scores' rounding
	// (eps32·180 a position) is the whole difference.
	N := float64(d.Corpus.Tokens())
	if tol := 4 * eps32 * 180 * N; math.Abs(f32-f64) > tol {
		t.Errorf("objective %v, float64 %v (bound %.2g)", f32, f64, tol)
	}
	for k := range g64 {
		if math.Abs(g32[k]-g64[k]) > 1e-4 {
			t.Errorf("parameter %d: gradient %v, float64 %v", k, g32[k], g64[k])
		}
	}
}

// TestTrain32 trains with precision=float32 and float64: the same
// accuracy on separable data and objectives close at every iteration of a
// fixed number (the trajectories part only by rounding); and the models
// float32 does not support are refused by name.
func TestTrain32(t *testing.T) {
	d := randomData(t, 9, 200, 40, 6, false, true)
	run := func(prec string) []float64 {
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions = "dense"
		cfg.Threads = 2
		cfg.MaxIterations = 15
		cfg.Precision = prec
		var losses []float64
		cfg.Progress = func(p Progress) { losses = append(losses, p.Loss) }
		if _, err := Train(context.Background(), d, cfg); err != nil {
			t.Fatal(err)
		}
		return losses
	}
	l64, l32 := run("float64"), run("float32")
	if len(l64) != len(l32) {
		t.Fatalf("%d and %d iterations", len(l64), len(l32))
	}
	for k := range l64 {
		if rel := math.Abs(l32[k]-l64[k]) / l64[k]; rel > 1e-5 {
			t.Errorf("iteration %d: loss %v, float64 %v (relative %.2g)", k+1, l32[k], l64[k], rel)
		}
	}
	for _, bad := range []struct{ trans, want string }{{"tied", "dense transitions"}, {"none", "dense transitions"}} {
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions = bad.trans
		cfg.Precision = "float32"
		if _, err := Train(context.Background(), d, cfg); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("transitions=%s, float32: error %v, want one naming %q", bad.trans, err, bad.want)
		}
	}
	cfg, _ := Defaults("sgd")
	cfg.Precision = "float32"
	if _, err := Train(context.Background(), d, cfg); err == nil || !strings.Contains(err.Error(), "lbfgs and l1") {
		t.Errorf("sgd, float32: error %v", err)
	}
	if err := cfg.Set("precision", "float16"); err == nil {
		t.Errorf("precision=float16 accepted")
	}
}

// TestStats: the phase times add up (Total ⊇ Eval ⊇ Sequences ⊇ the
// workers' phases), count every sequence of every evaluation, and are not
// recorded without Stats.
func TestStats(t *testing.T) {
	d := randomData(t, 2, 120, 30, 5, false, false)
	for _, prec := range []string{"float64", "float32"} {
		for _, threads := range []int{1, 2} {
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions = "dense"
			cfg.Threads = threads
			cfg.MaxIterations = 5
			cfg.Precision = prec
			var st Stats
			cfg.Stats = &st
			res, err := Train(context.Background(), d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if st.Iterations != 5 || st.Evals < 5 {
				t.Errorf("%s, %d threads: %d iterations, %d evaluations", prec, threads, st.Iterations, st.Evals)
			}
			if len(st.Workers) != threads {
				t.Fatalf("%d workers' times for %d threads", len(st.Workers), threads)
			}
			var seqs int64
			var busy [2]float64
			for w, p := range st.Workers {
				seqs += p.Seqs
				if p.Score <= 0 || p.ForwardBackward <= 0 || p.Scatter <= 0 {
					t.Errorf("%s: worker %d: phases %+v", prec, w, p)
				}
				busy[w] = (p.Score + p.ForwardBackward + p.Scatter).Seconds()
			}
			if want := int64(st.Evals * d.Corpus.Len()); seqs != want {
				t.Errorf("%s: %d sequences timed, want %d", prec, seqs, want)
			}
			if !(st.Total >= st.Eval && st.Eval >= st.Sequences && st.Optimiser() >= 0) {
				t.Errorf("%s: total %v, eval %v, sequences %v, optimiser %v", prec, st.Total, st.Eval, st.Sequences, st.Optimiser())
			}
			for w := range threads {
				if busy[w] > st.Sequences.Seconds() {
					t.Errorf("%s: worker %d busy %.6fs in a pass of %v", prec, w, busy[w], st.Sequences)
				}
			}
			checkShape(t, st.Shape, d, res, prec)
		}
	}
}

// TestStatsSkipFirst: with SkipFirst, two trainings of 5 iterations into
// one Stats count their iterations 2–5 only (8), with exactly the
// evaluations of those iterations, and every sequence of each.
func TestStatsSkipFirst(t *testing.T) {
	d := randomData(t, 3, 80, 30, 5, false, false)
	st := Stats{SkipFirst: true}
	evals := 0
	for range 2 {
		cfg, _ := Defaults("lbfgs")
		cfg.MaxIterations = 5
		cfg.Stats = &st
		cfg.Progress = func(p Progress) {
			if p.Iteration > 1 {
				evals += p.Evals
			}
		}
		if _, err := Train(context.Background(), d, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if st.Iterations != 8 || st.Evals != evals {
		t.Errorf("%d iterations, %d evaluations; want 8, %d", st.Iterations, st.Evals, evals)
	}
	var seqs int64
	for _, w := range st.Workers {
		seqs += w.Seqs
	}
	if seqs != int64(evals*d.Corpus.Len()) {
		t.Errorf("workers %+v, want %d sequences", st.Workers, evals*d.Corpus.Len())
	}
	if !(st.Total >= st.Eval && st.Eval >= st.Sequences && st.Sequences > 0 && st.Optimiser() >= 0) {
		t.Errorf("total %v, eval %v, sequences %v, optimiser %v", st.Total, st.Eval, st.Sequences, st.Optimiser())
	}
}

// TestObjective32Chunking: on CoNLL-2000, at the weights of 20 float64
// L-BFGS iterations, the float32 objective is within 1e-6 relative of
// float64's (the bound for the trained objective) and its gradient
// within 1e-4 of float64's in norm, relative (each entry sums up to 10⁵
// marginals: 2·M·eps32·N is the worst case, random rounding √N of it).
func TestObjective32Chunking(t *testing.T) {
	if testing.Short() {
		t.Skip("long: trains on CoNLL-2000")
	}
	d, _, _ := loadChunking(t)
	cfg, _ := Defaults("lbfgs")
	cfg.MaxIterations = 20
	cfg.Threads = 2
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := engine.NewPool(2)
	defer pool.Close()
	md, o64, o32 := objectives32(t, d, cfg.C2, pool)
	// The trained state weights in the model's hybrid layout: train again
	// from them is not possible, so read them back through export's
	// inverse, the pattern's index.
	theta := make([]float64, md.nParams)
	var lab []int32
	for a := range int32(d.NumAttrs) {
		lab = md.pattern.AttrLabels(lab[:0], a)
		for k, y := range lab {
			idx := res.State.Index(a, y)
			if idx < 0 {
				continue
			}
			if r := md.hy.hot.Row(a); r >= 0 {
				theta[int(r)*md.hy.ld+int(y)] = res.Params[idx]
			} else {
				theta[md.hy.hotSize()+int(md.hy.coldOff[a])+k] = res.Params[idx]
			}
		}
	}
	copy(theta[md.nState:], res.Params[len(res.Params)-(md.nParams-md.nState):])
	g64, g32 := make([]float64, md.nParams), make([]float64, md.nParams)
	f64, err := o64.eval(theta, g64, nil)
	if err != nil {
		t.Fatal(err)
	}
	f32, err := o32.eval(theta, g32, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f64-res.Loss) > 1e-9*res.Loss {
		t.Fatalf("objective at the trained weights %v, training's %v: θ not rebuilt", f64, res.Loss)
	}
	var dd, gg float64
	for k := range g64 {
		dd += (g32[k] - g64[k]) * (g32[k] - g64[k])
		gg += g64[k] * g64[k]
	}
	rel := math.Abs(f32-f64) / f64
	t.Logf("objective %.10g, float64 %.10g: relative %.2g; ‖Δg‖/‖g‖ %.2g (‖g‖ %.4g); %d sequences by float64", f32, f64, rel, math.Sqrt(dd/gg), math.Sqrt(gg), o32.f32.fallbacks())
	if rel > 1e-6 {
		t.Errorf("objective relative difference %.2g > 1e-6", rel)
	}
	if math.Sqrt(dd/gg) > 1e-4 {
		t.Errorf("gradient relative difference %.2g > 1e-4", math.Sqrt(dd/gg))
	}
}

// TestMinimizeRefine: a quadratic evaluated with noise (as the float32
// objective is, relative to float64) until refine hands over to the exact
// evaluation: minimize reaches the exact minimum either way the hand-over
// comes (a line search failing on the noise, the improvement rate, or a
// stopping rule met on the noisy values), and refine is asked once it has
// nothing left to give.
func TestMinimizeRefine(t *testing.T) {
	n := 30
	r := rand.New(rand.NewPCG(8, 9))
	diag, opt := make([]float64, n), make([]float64, n)
	for i := range n {
		diag[i] = 0.1 + 10*r.Float64()
		opt[i] = 3 + r.NormFloat64()
	}
	for _, tc := range []struct {
		name  string
		noise float64 // relative, of f and g
		rate  float64
		eps   float64 // the stopping rule's epsilon
		gmax  float64 // the bound on ‖g‖ at the end
	}{{"line-search", 1e-4, 0, 1e-12, 1e-6}, {"rate", 1e-7, 1e-4, 1e-12, 1e-6}, {"epsilon", 1e-7, 0, 1e-3, 1e-3 * 40 /* ‖x‖ ≈ ‖opt‖ ≈ 17 */}} {
		t.Run(tc.name, func(t *testing.T) {
			noisy, calls := true, 0
			eval := func(x, g []float64) (float64, error) {
				f := 10.0 // an offset, as the NLL has
				for i := range x {
					d := x[i] - opt[i]
					f += 0.5 * diag[i] * d * d
					g[i] = diag[i] * d
				}
				if noisy { // deterministic "rounding" noise
					h := 0.0
					for i, v := range x {
						h += math.Sin(1e3 * v * float64(i+1))
					}
					f *= 1 + tc.noise*h/float64(n)
					for i := range g {
						g[i] *= 1 + tc.noise*math.Sin(7e2*x[i])
					}
				}
				return f, nil
			}
			refine := func() bool {
				calls++
				if !noisy {
					return false
				}
				noisy = false
				return true
			}
			x := make([]float64, n)
			res, err := minimize(x, eval, qnOptions{m: 6, epsilon: tc.eps, period: 5, delta: 1e-14, maxLS: 20, lineSearch: "MoreThuente",
				refine: refine, refineRate: tc.rate}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if noisy {
				t.Fatalf("never handed over (%d iterations, %s)", res.iters, res.reason)
			}
			g := make([]float64, n)
			eval(x, g)
			if gn := math.Sqrt(dot(g, g)); gn > tc.gmax {
				t.Errorf("‖g‖ = %g after %d iterations (%s, refine asked %d times)", gn, res.iters, res.reason, calls)
			}
		})
	}
}

// checkShape checks Stats.Shape against the data and the trained model:
// every feature occurrence is hot or cold, a hot one's attribute has a
// row of at least sparse.HotMin labels, and the cold labels are those of
// the cold occurrences' attributes.
func checkShape(t *testing.T, sh Shape, d *Data, res *Result, prec string) {
	t.Helper()
	M := d.Labels
	var tokens, hot, cold, coldLabels int
	for i := range d.Corpus.Len() {
		s := d.Corpus.Seq(i)
		tokens += s.Len()
		for _, a := range s.IDs {
			k := 0
			if int(a) < res.Pattern.NumAttrs() {
				k = int(res.Pattern.RowStart(a+1) - res.Pattern.RowStart(a))
			}
			if k >= sparse.HotMin(M) {
				hot++
			} else {
				cold++
				coldLabels += k
			}
		}
	}
	// θ's hot rows may be padded to whole cache lines (HotStride): zeros
	// the optimiser moves and the model leaves out.
	if s := sh.HotStride; s < M || s >= M+8 || s != M && s%8 != 0 {
		t.Errorf("%s: hot stride %d at M = %d", prec, s, M)
	}
	pad := sh.HotRows * (sh.HotStride - M)
	want := Shape{Labels: M, Sequences: d.Corpus.Len(), Tokens: tokens, Params: len(res.Params) + pad, StateParams: res.State.NumParams() + pad,
		HotFeatures: hot, ColdFeatures: cold, ColdLabels: coldLabels, Memories: 6, Float32: prec == "float32"}
	got := sh
	got.HotRows, got.HotStride, got.Values, got.Lockstep = 0, 0, false, false
	if got != want {
		t.Errorf("%s: Shape %+v, counted %+v", prec, got, want)
	}
	if sh.HotRows <= 0 || sh.HotRows*sh.HotStride > sh.StateParams {
		t.Errorf("%s: %d hot rows of %d labels in %d state weights", prec, sh.HotRows, M, sh.StateParams)
	}
}
