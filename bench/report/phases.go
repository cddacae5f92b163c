package report

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

// WritePhases writes the section "Where an iteration's time goes" from
// trainbench.Phases; nothing without results.
func WritePhases(buf *bytes.Buffer, res []trainbench.PhaseResult, o trainbench.PhaseOptions) {
	if len(res) == 0 {
		return
	}
	iters, rounds := o.Iterations, o.Rounds
	if iters <= 0 {
		iters = trainbench.DefaultPhaseIterations
	}
	if rounds <= 0 {
		rounds = trainbench.DefaultPhaseRounds
	}
	fmt.Fprintf(buf, "## Where an iteration's time goes\n\n")
	fmt.Fprintf(buf, "`go run ./cmd/simdcrf-bench phases` prints this section. Each corpus is read from the CRFsuite attribute file of the tables above "+
		"and trained in-process for 1 + %d L-BFGS iterations (CRFsuite's defaults otherwise) with `train.Config.Stats`, which reads the monotonic clock "+
		"a few times per sequence (never per position) and adds up each worker's time in each phase; GOMAXPROCS is the thread count. "+
		"The figures are those of the last %d iterations: the evaluation at the starting point and the first iteration (its line search takes two "+
		"evaluations, libLBFGS's first step 1/‖d‖ then ×4) are left out (`Stats.SkipFirst`), as they are a few of a whole training's ≈ 170 evaluations. "+
		"Each case ran %d time(s), the cases taking turns; the row is the run of median iteration time. Milliseconds per iteration (share of it): "+
		"**scoring** gathers the state scores of a sequence's features (emissions); **forward–backward** computes log Z, the marginals and the "+
		"expected transition counts, with the path score and observed counts; **scattering** adds marginals minus observed counts into the state "+
		"gradient — these three are the workers' mean busy time; **setup** is the evaluations' serial part (transition forms, the workers' copies of "+
		"the weights, adding the workers' gradients and the L2 term); **waiting** is the pass over the sequences less the mean busy time (workers "+
		"waiting for the slowest, the pool, the clock reads); **optimiser** is the rest: L-BFGS's vector passes (history update, two-loop direction, "+
		"steps) and the line search's own work. The columns add up to the iteration, a wall time: where other processes load the machine it includes the time the threads waited for a core, which the last column shows (the process's CPU time per iteration, all threads, from the end of the first iteration; CPU ≈ threads × ms/iteration on an idle machine). float32 is `-p precision=float32` (state weights, their "+
		"gradient and the emissions in float32; sums, log Z and the optimiser in float64). Loss is the objective after the 1 + %d iterations.\n\n",
		iters, iters, rounds, iters)
	fmt.Fprintf(buf, "| corpus | labels | precision | threads | ms/iteration | evaluations/iteration | scoring | forward–backward | scattering | setup | waiting | optimiser | loss | CPU ms/iteration |\n")
	fmt.Fprintf(buf, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	cell := func(v, total float64) string {
		if total <= 0 {
			return fmt.Sprintf("%.1f", v)
		}
		return fmt.Sprintf("%.1f (%.0f%%)", v, 100*v/total)
	}
	for _, r := range res {
		fmt.Fprintf(buf, "| %s | %d | %s | %d | %.1f | %.2f | %s | %s | %s | %s | %s | %s | %.9g | %.1f |\n", r.Task, r.Labels, r.Precision, r.Threads,
			r.Iteration, float64(r.Evals)/float64(max(r.Iters, 1)),
			cell(r.Score, r.Iteration), cell(r.ForwardBackward, r.Iteration), cell(r.Scatter, r.Iteration),
			cell(r.Setup, r.Iteration), cell(r.Wait, r.Iteration), cell(r.Optimiser, r.Iteration), r.Loss, r.CPU)
	}
	fmt.Fprintln(buf)
	// Ratios: float32 against float64, two threads against one.
	find := func(task, prec string, th int) *trainbench.PhaseResult {
		for i := range res {
			if r := &res[i]; r.Task == task && r.Precision == prec && r.Threads == th {
				return r
			}
		}
		return nil
	}
	var lines []string
	seen := map[string]bool{}
	for _, r := range res {
		if seen[r.Task] {
			continue
		}
		seen[r.Task] = true
		for _, th := range threadList(res, r.Task) {
			a, b := find(r.Task, "float64", th), find(r.Task, "float32", th)
			if a != nil && b != nil && b.Iteration > 0 {
				lines = append(lines, fmt.Sprintf("%s, %d thread(s): float32's speed-up over float64, iteration ×%.2f (forward–backward ×%.2f, scoring ×%.2f, scattering ×%.2f); loss after 1 + %d iterations %+.2g relative",
					r.Task, th, a.Iteration/b.Iteration, ratio(a.ForwardBackward, b.ForwardBackward), ratio(a.Score, b.Score), ratio(a.Scatter, b.Scatter), iters, (b.Loss-a.Loss)/a.Loss))
			}
		}
		for _, prec := range []string{"float64", "float32"} {
			one, two := find(r.Task, prec, 1), find(r.Task, prec, 2)
			if one != nil && two != nil && two.Iteration > 0 {
				lines = append(lines, fmt.Sprintf("%s, %s: two threads' speed-up over one ×%.2f (optimiser ×%.2f)", r.Task, prec, one.Iteration/two.Iteration, ratio(one.Optimiser, two.Optimiser)))
			}
		}
	}
	for _, l := range lines {
		fmt.Fprintf(buf, "- %s.\n", l)
	}
	if len(lines) > 0 {
		fmt.Fprintln(buf)
	}
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// threadList returns the thread counts of task's results, in order of
// first appearance.
func threadList(res []trainbench.PhaseResult, task string) []int {
	var out []int
	for _, r := range res {
		if r.Task == task {
			if !slices.Contains(out, r.Threads) {
				out = append(out, r.Threads)
			}
		}
	}
	return out
}
