package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// This file is our own L-BFGS (Nocedal 1980, two-loop recursion) and OWL-QN
// (Andrew & Gao 2007: pseudo-gradient, orthant-constrained direction and
// orthant projection in the line search), one implementation for both, with
// libLBFGS's conventions as CRFsuite uses them: the first step is 1/‖d‖,
// later steps start at 1; stop when ‖g‖/max(1,‖x‖) ≤ ε, or when
// (f_{k−period} − f_k)/f_k < δ, or after max_iterations; a failed line
// search ends training with the last accepted point.
//
// gonum's optimize package is not used: it is not a dependency of this
// module (and may not become one), it has no OWL-QN, and its convergence
// tests (gradient and function-value thresholds over absolute changes) are
// not CRFsuite's relative improvement over a period, which decides how many
// iterations a CRFsuite user's settings give.

// errInterrupted is returned by an evaluation when the context is done.
var errInterrupted = errors.New("train: interrupted")

// evalFunc sets g to the gradient of the smooth part of the objective at x
// and returns its value.
type evalFunc func(x, g []float64) (float64, error)

type qnOptions struct {
	m          int
	epsilon    float64
	period     int
	delta      float64
	maxIter    int // 0: none
	maxLS      int
	lineSearch string
	c1         float64 // > 0: OWL-QN on x[l1lo:l1hi]
	l1lo, l1hi int
	// run runs f(0) … f(n−1), in parallel if it likes (nil: in order).
	run func(n int, f func(b int))
	vo  *vecOps // set by minimize
	// refine, if not nil, is called when a line search fails: if it
	// returns true, eval has become more precise (the float32 evaluation
	// handing over to float64), and the iteration is tried again from the
	// last accepted point instead of ending training. It is also called
	// when the relative improvement over the period falls below
	// refineRate (and then the point is re-evaluated before the next
	// direction), so that the last iterations, which the stopping rule
	// judges, run on the precise objective.
	refine     func() bool
	refineRate float64
}

// qnProgress is called after every iteration with the accepted point; it
// returns true to stop.
type qnProgress func(k int, x, g []float64, fx, xnorm, gnorm, step float64, evals int) bool

// lineSearch constants: libLBFGS's defaults.
const (
	lsFtol    = 1e-4
	lsWolfe   = 0.9 // the curvature constant of the Wolfe tests
	lsMinStep = 1e-20
	lsMaxStep = 1e20
)

// qnResult is how minimize ended.
type qnResult struct {
	iters       int
	fx          float64
	reason      string
	interrupted bool
}

// minimize minimises eval (+ c1·‖x[l1lo:l1hi]‖₁) from x, leaving the last
// accepted point in x.
func minimize(x0 []float64, eval evalFunc, o qnOptions, progress qnProgress) (qnResult, error) {
	n := len(x0)
	// x and xp (g and gp) swap at each iteration rather than copy; the
	// last accepted point goes back to the caller's slice at the end.
	x := x0
	defer func() {
		if n > 0 && &x[0] != &x0[0] {
			copy(x0, x)
		}
	}()
	m := max(o.m, 1)
	owl := o.c1 > 0
	g := make([]float64, n)
	xp := make([]float64, n)
	gp := make([]float64, n)
	d := make([]float64, n)
	var pg []float64
	if owl {
		pg = make([]float64, n)
	}
	vo := newVecOps(n, o.run)
	o.vo = vo
	hist := newHistory(m, vo)
	var pf []float64
	if o.period > 0 {
		pf = make([]float64, o.period)
	}
	res := qnResult{}

	fx, err := eval(x, g)
	if err != nil {
		if errors.Is(err, errInterrupted) {
			res.interrupted, res.reason = true, "interrupted"
			return res, nil
		}
		return res, err
	}
	if owl {
		fx += o.c1 * l1norm(x[o.l1lo:o.l1hi])
		pseudoGradient(pg, x, g, o.c1, o.l1lo, o.l1hi)
	}
	res.fx = fx
	if pf != nil {
		pf[0] = fx
	}
	dir := g
	if owl {
		dir = pg
	}
	for i, v := range dir {
		d[i] = -v
	}
	xnorm := math.Max(math.Sqrt(vo.dot(x, x)), 1)
	gnorm := math.Sqrt(vo.dot(dir, dir))
	if gnorm/xnorm <= o.epsilon {
		res.reason = "already at a minimum (‖g‖/‖x‖ ≤ epsilon)"
		return res, nil
	}
	step := 1 / math.Sqrt(kernels.Dot(d, d))
	dginit := vo.dot(dir, d) // the directional derivative along d
	// reeval evaluates the objective again at x (after refine) and takes
	// the next direction from there.
	reeval := func() error {
		var err error
		if fx, err = eval(x, g); err != nil {
			return err
		}
		dir = g
		if owl {
			fx += o.c1 * l1norm(x[o.l1lo:o.l1hi])
			pseudoGradient(pg, x, g, o.c1, o.l1lo, o.l1hi)
			dir = pg
		}
		res.fx = fx
		if hist.count == 0 {
			for i, v := range dir {
				d[i] = -v
			}
			step = 1 / math.Sqrt(kernels.Dot(d, d))
			dginit = vo.dot(dir, d)
			return nil
		}
		hist.setDir(dir)
		if owl {
			hist.direction(d, dir, pg, o.l1lo, o.l1hi)
		} else {
			dginit = hist.direction(d, dir, nil, 0, 0)
		}
		step = 1
		return nil
	}
	k := 1
	for {
		x, xp = xp, x
		g, gp = gp, g
		var evals int
		if owl {
			fx, evals, err = lineSearchOWL(x, g, d, xp, pg, fx, &step, eval, o)
			if err == nil {
				pseudoGradient(pg, x, g, o.c1, o.l1lo, o.l1hi)
			}
		} else {
			fx, evals, err = lineSearch(x, g, d, xp, dginit, fx, &step, eval, o)
		}
		var lsErr lineSearchError
		if err != nil && errors.As(err, &lsErr) && o.refine != nil && o.refine() {
			// Back to the last accepted point, re-evaluated; the history's
			// products with the direction taken again.
			x, xp = xp, x
			g, gp = gp, g
			if err = reeval(); err == nil {
				continue
			}
			x, xp = xp, x
			g, gp = gp, g
		}
		if err != nil {
			copy(x, xp)
			copy(g, gp)
			res.iters = k - 1
			if errors.Is(err, errInterrupted) {
				res.interrupted, res.reason = true, "interrupted"
				return res, nil
			}
			if errors.As(err, &lsErr) {
				res.reason = "line search failed: " + lsErr.msg
				return res, nil
			}
			return res, err
		}
		res.fx, res.iters = fx, k
		dir = g
		if owl {
			dir = pg
		}
		// Update the history with s = x − xp, y = g − gp (the smooth
		// gradient), and take ‖x‖ and ‖dir‖ in the same pass (wasted on
		// the last iteration).
		xx, dd := hist.update(x, xp, g, gp, dir)
		xnorm, gnorm = math.Sqrt(xx), math.Sqrt(dd)
		if progress != nil && progress(k, x, g, fx, xnorm, gnorm, step, evals) {
			res.interrupted, res.reason = true, "interrupted"
			return res, nil
		}
		stop, slow := "", false
		if gnorm/math.Max(xnorm, 1) <= o.epsilon {
			stop = "converged (‖g‖/‖x‖ ≤ epsilon)"
		}
		if pf != nil && o.period <= k {
			rate := math.Abs((pf[k%o.period] - fx) / fx)
			if stop == "" && rate < o.delta {
				stop = fmt.Sprintf("stopping criterion (improvement over %d iterations below delta)", o.period)
			}
			slow = rate < o.refineRate
		}
		// A stop judged on the approximate evaluation, or an improvement
		// that slow, hands over to the exact one first (refine).
		if (stop != "" || slow) && o.refine != nil && o.refine() {
			if o.maxIter > 0 && o.maxIter < k+1 {
				res.reason = "maximum number of iterations"
				return res, nil
			}
			if err := reeval(); err != nil {
				if errors.Is(err, errInterrupted) {
					res.interrupted, res.reason = true, "interrupted"
					return res, nil
				}
				return res, err
			}
			if pf != nil {
				pf[k%o.period] = fx // (the precise value)
			}
			k++
			continue
		}
		if stop != "" {
			res.reason = stop
			return res, nil
		}
		if pf != nil {
			pf[k%o.period] = fx
		}
		if o.maxIter > 0 && o.maxIter < k+1 {
			res.reason = "maximum number of iterations"
			return res, nil
		}
		// The two-loop recursion on d = −dir (the pseudo-gradient for
		// OWL-QN).
		k++
		if owl {
			hist.direction(d, dir, pg, o.l1lo, o.l1hi)
		} else {
			dginit = hist.direction(d, dir, nil, 0, 0)
		}
		step = 1
	}
}

type lineSearchError struct{ msg string }

func (e lineSearchError) Error() string { return "train: line search: " + e.msg }

// lineSearch finds a step along d from xp (value finit, gradient gp),
// leaving the accepted point in x and its gradient in g. MoreThuente is a
// strong-Wolfe search with safeguarded cubic interpolation (the bracketing
// and zoom phases of Moré–Thuente as Nocedal & Wright present them);
// Backtracking halves or grows (×2.1) the step until the Armijo and
// regular Wolfe conditions hold, StrongBacktracking the strong ones, as
// libLBFGS does.
func lineSearch(x, g, d, xp []float64, dginit, finit float64, step *float64, eval evalFunc, o qnOptions) (float64, int, error) {
	if dginit >= 0 {
		return 0, 0, lineSearchError{"the direction does not decrease the objective"}
	}
	if *step <= 0 {
		return 0, 0, lineSearchError{"non-positive step"}
	}
	maxLS := max(o.maxLS, 1)
	evals := 0
	phi := func(a float64) (float64, float64, error) {
		o.vo.step(x, xp, d, a)
		evals++
		f, err := eval(x, g)
		if err != nil {
			return 0, 0, err
		}
		return f, o.vo.dot(g, d), nil
	}
	if o.lineSearch == "Backtracking" || o.lineSearch == "StrongBacktracking" {
		strong := o.lineSearch == "StrongBacktracking"
		for {
			f, dg, err := phi(*step)
			if err != nil {
				return 0, evals, err
			}
			width := 0.5
			if f <= finit+*step*lsFtol*dginit && !math.IsNaN(f) {
				if dg >= lsWolfe*dginit && (!strong || dg <= -lsWolfe*dginit) {
					return f, evals, nil
				}
				if dg < lsWolfe*dginit {
					width = 2.1
				}
			}
			if *step < lsMinStep || *step > lsMaxStep {
				return 0, evals, lineSearchError{"the step left [1e-20, 1e20]"}
			}
			if evals >= maxLS {
				return 0, evals, lineSearchError{fmt.Sprintf("no acceptable step in %d trials", maxLS)}
			}
			*step *= width
		}
	}
	// Strong Wolfe: bracket, then zoom.
	sufficient := func(a, f float64) bool { return f <= finit+lsFtol*a*dginit }
	curvature := func(dg float64) bool { return math.Abs(dg) <= -lsWolfe*dginit }
	aPrev, fPrev, dgPrev := 0.0, finit, dginit
	a := *step
	zoom := func(lo, flo, dglo, hi, fhi, dghi float64) (float64, error) {
		for {
			if evals >= maxLS {
				return 0, lineSearchError{fmt.Sprintf("no acceptable step in %d trials", maxLS)}
			}
			if math.Abs(hi-lo) <= 1e-16*math.Max(math.Abs(lo), math.Abs(hi)) {
				return 0, lineSearchError{"the interval of uncertainty is too small"}
			}
			at := cubicMin(lo, flo, dglo, hi, fhi, dghi)
			w := 0.1 * math.Abs(hi-lo)
			l, h := math.Min(lo, hi)+w, math.Max(lo, hi)-w
			if !(at >= l && at <= h) {
				at = 0.5 * (lo + hi)
			}
			f, dg, err := phi(at)
			if err != nil {
				return 0, err
			}
			if !sufficient(at, f) || f >= flo || math.IsNaN(f) {
				hi, fhi, dghi = at, f, dg
				continue
			}
			if curvature(dg) {
				*step = at
				return f, nil
			}
			if dg*(hi-lo) >= 0 {
				hi, fhi, dghi = lo, flo, dglo
			}
			lo, flo, dglo = at, f, dg
		}
	}
	for {
		f, dg, err := phi(a)
		if err != nil {
			return 0, evals, err
		}
		if math.IsNaN(f) || math.IsInf(f, 1) || !sufficient(a, f) || (evals > 1 && f >= fPrev) {
			if math.IsNaN(f) || math.IsInf(f, 1) {
				f, dg = math.Inf(1), math.Inf(1)
			}
			f, err = zoom(aPrev, fPrev, dgPrev, a, f, dg)
			return f, evals, err
		}
		if curvature(dg) {
			*step = a
			return f, evals, nil
		}
		if dg >= 0 {
			f, err = zoom(a, f, dg, aPrev, fPrev, dgPrev)
			return f, evals, err
		}
		if evals >= maxLS {
			return 0, evals, lineSearchError{fmt.Sprintf("no acceptable step in %d trials", maxLS)}
		}
		if a > lsMaxStep {
			return 0, evals, lineSearchError{"the step exceeds 1e20"}
		}
		aPrev, fPrev, dgPrev = a, f, dg
		a *= 4
	}
}

// cubicMin returns the minimiser of the cubic interpolating f and f' at a
// and b, or NaN when it has none.
func cubicMin(a, fa, da, b, fb, db float64) float64 {
	if math.IsInf(fb, 0) || math.IsInf(db, 0) {
		return math.NaN()
	}
	d1 := da + db - 3*(fa-fb)/(a-b)
	r := d1*d1 - da*db
	if r < 0 {
		return math.NaN()
	}
	d2 := math.Copysign(math.Sqrt(r), b-a)
	return b - (b-a)*(db+d2-d1)/(db-da+2*d2)
}

// lineSearchOWL backtracks along d from xp, projecting each trial point on
// the orthant of xp (of −pg where xp is 0), until the objective with its L1
// term decreases by ftol·(x−xp)·pg.
func lineSearchOWL(x, g, d, xp, pg []float64, finit float64, step *float64, eval evalFunc, o qnOptions) (float64, int, error) {
	if *step <= 0 {
		return 0, 0, lineSearchError{"non-positive step"}
	}
	maxLS := max(o.maxLS, 1)
	evals := 0
	for {
		for i := range x {
			x[i] = xp[i] + *step*d[i]
		}
		for i := o.l1lo; i < o.l1hi; i++ {
			orth := xp[i]
			if orth == 0 {
				orth = -pg[i]
			}
			if x[i]*orth <= 0 {
				x[i] = 0
			}
		}
		evals++
		f, err := eval(x, g)
		if err != nil {
			return 0, evals, err
		}
		f += o.c1 * l1norm(x[o.l1lo:o.l1hi])
		dgtest := 0.0
		for i := range x {
			dgtest += (x[i] - xp[i]) * pg[i]
		}
		if f <= finit+lsFtol*dgtest {
			return f, evals, nil
		}
		if *step < lsMinStep {
			return 0, evals, lineSearchError{"the step fell below 1e-20"}
		}
		if evals >= maxLS {
			return 0, evals, lineSearchError{fmt.Sprintf("no acceptable step in %d trials", maxLS)}
		}
		*step *= 0.5
	}
}

func l1norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += math.Abs(v)
	}
	return s
}

// pseudoGradient sets pg to the pseudo-gradient of f + c·‖x[lo:hi]‖₁: the
// one-sided derivative that decreases the objective, or 0 at a kink
// neither side of which descends.
func pseudoGradient(pg, x, g []float64, c float64, lo, hi int) {
	copy(pg[:lo], g[:lo])
	copy(pg[hi:], g[hi:])
	for i := lo; i < hi; i++ {
		switch {
		case x[i] < 0:
			pg[i] = g[i] - c
		case x[i] > 0:
			pg[i] = g[i] + c
		case g[i]+c < 0:
			pg[i] = g[i] + c
		case g[i]-c > 0:
			pg[i] = g[i] - c
		default:
			pg[i] = 0
		}
	}
}
