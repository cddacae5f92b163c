package roofline

import (
	"context"
	"fmt"

	"github.com/simdcrf/simdcrf/bench/trainbench"
	"github.com/simdcrf/simdcrf/internal/machine"
	"github.com/simdcrf/simdcrf/kernels/kernelbench"
)

// Options controls Run.
type Options struct {
	DataDir     string // ../shared/data
	TemplateDir string // ../shared/templates
	WorkDir     string // attribute files
	Tasks       []string
	Iterations  int // L-BFGS iterations measured (trainbench.DefaultPhaseIterations)
	Rounds      int // trainings per task; the median (trainbench.DefaultPhaseRounds)
	Reps        int // machine measurements: the best of Reps (default 3)
	Progress    func(string)
}

// Row is one phase of one task, as simdcrf-bench roofline --json prints it.
type Row struct {
	Task    string  `json:"task"`
	Phase   string  `json:"phase"`
	Threads int     `json:"threads"`
	Ms      float64 `json:"ms"`
	LimitMs float64 `json:"limit_ms"`
	Bound   string  `json:"bound"`
}

// Result is a roofline: the machine, the trainings measured and a row per
// phase of each.
type Result struct {
	Machine Machine
	Info    machine.Info
	Phases  []trainbench.PhaseResult
	Work    [][]Work // per training, per phase (Phases' order)
	Rows    []Row
	Reps    int // the machine's measurements: the best of Reps
}

// Run measures the machine, then trains each task for a few L-BFGS
// iterations on one thread in float64 (trainbench.Phases) and sets each
// phase's time beside its limit.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	reps := max(o.Reps, 3)
	mc, err := MeasureMachine(reps, o.Progress)
	if err != nil {
		return nil, err
	}
	res := &Result{Machine: mc, Info: machine.Describe(), Reps: reps}
	res.Phases, err = trainbench.Phases(ctx, trainbench.PhaseOptions{DataDir: o.DataDir, TemplateDir: o.TemplateDir, WorkDir: o.WorkDir,
		Tasks: o.Tasks, Threads: []int{1}, Precisions: []string{"float64"}, Iterations: o.Iterations, Rounds: o.Rounds, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	for _, p := range res.Phases {
		iters := max(p.Iters, 1)
		evals := float64(p.Evals) / float64(iters)
		w := PhaseWork(p.Shape, evals, Pairs(iters, p.Shape.Memories), mc)
		res.Work = append(res.Work, w)
		ms := []float64{p.Score, p.ForwardBackward, p.Scatter, p.Optimiser, p.Setup}
		for k, name := range Phases {
			lim, bound := mc.Limit(w[k])
			res.Rows = append(res.Rows, Row{Task: p.Task, Phase: name, Threads: p.Threads, Ms: ms[k], LimitMs: lim, Bound: bound})
		}
	}
	return res, nil
}

// Pairs returns the mean number of valid history pairs over iterations 2
// to iters+1 (those trainbench.Phases measures: train.Stats.SkipFirst),
// min(k, m) at iteration k.
func Pairs(iters, m int) float64 {
	m = max(m, 1)
	s := 0
	for k := 2; k <= iters+1; k++ {
		s += min(k, m)
	}
	return float64(s) / float64(max(iters, 1))
}

// MeasureMachine measures this machine's limits: the FMA peak of the
// active kernels tier, a dependent FMA's latency and the memory levels
// (each the best of reps).
func MeasureMachine(reps int, progress func(string)) (Machine, error) {
	if progress == nil {
		progress = func(string) {}
	}
	var mc Machine
	progress("roofline: measuring the FMA peak and latency")
	peaks, err := kernelbench.Peaks(nil, reps)
	if err != nil {
		return mc, err
	}
	for _, p := range peaks {
		mc.PeakGFLOPs = max(mc.PeakGFLOPs, p)
	}
	if mc.PeakGFLOPs <= 0 {
		return mc, fmt.Errorf("roofline: no FMA probe for this CPU's kernels (%v)", peaks)
	}
	mc.FMALatencyNs = FMALatency(reps)
	l1, l2, l3, _ := Caches()
	mc.Sizes = [3]int64{l1, l2, l3}
	if mc.Curve, err = Curve(reps, progress); err != nil {
		return mc, err
	}
	mc.Levels, err = Measure(reps, progress)
	if err != nil {
		return mc, err
	}
	if len(mc.Levels) != 4 {
		return mc, fmt.Errorf("roofline: %d memory levels measured, want 4", len(mc.Levels))
	}
	return mc, nil
}
