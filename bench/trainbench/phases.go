package trainbench

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/train"
)

// PhaseOptions controls Phases: where an L-BFGS iteration's time goes.
type PhaseOptions struct {
	DataDir     string // ../shared/data
	TemplateDir string // ../shared/templates
	WorkDir     string // attribute files
	Tasks       []string
	Threads     []int    // default 1 and 2
	Precisions  []string // train.Config.Precision values, default float64 and float32
	Iterations  int      // L-BFGS iterations per training (default DefaultPhaseIterations)
	Rounds      int      // trainings per case, cases in turn (default DefaultPhaseRounds)
	Progress    func(string)
}

// PhaseTasks are the tasks Phases runs by default: the two the issue's
// speed targets are on, from CRFsuite attribute files as in the report's
// side-by-side tables.
var PhaseTasks = []string{"chunking", "ewt-xpos"}

const (
	// DefaultPhaseIterations is the number of L-BFGS iterations a
	// breakdown training measures, after a first one it leaves out
	// (train.Stats.SkipFirst): the evaluation at the starting point and
	// the first line search's two would make 12 evaluations in 10
	// iterations, where a whole CoNLL-2000 training takes 1.06 each.
	DefaultPhaseIterations = 10
	// DefaultPhaseRounds is how many trainings of each case run, in
	// turns; the report quotes the one of median iteration time.
	DefaultPhaseRounds = 3
)

// PhaseResult is the breakdown of one case: milliseconds per L-BFGS
// iteration (the training of median iteration time among the rounds).
// Score, ForwardBackward and Scatter are the workers' mean busy time in
// each phase; Setup is the evaluations' serial parts (transitions, the
// workers' copies of the weights, adding their gradients, the L2 term);
// Wait is the pass over the sequences less the mean busy time (workers
// waiting for the slowest, the pool, the clock reads); Optimiser is the
// rest of the iteration (L-BFGS's vector passes and its line search's own
// work). They add up to Iteration.
type PhaseResult struct {
	Task      string
	Precision string
	Threads   int
	Labels    int
	Iters     int
	Evals     int // objective evaluations in the Iters iterations
	Loss      float64

	Iteration, Score, ForwardBackward, Scatter, Setup, Wait, Optimiser float64
	// CPU is the process's CPU time per iteration (all threads, the
	// reading of the data excluded): on a machine other processes load,
	// the wall times above grow by the time the threads wait for a core,
	// which CPU/(threads·Iteration) below 1 shows.
	CPU float64
	// Shape is what each evaluation worked on (train.Stats.Shape).
	Shape train.Shape
}

// Phases trains each task for a few iterations per case (precision ×
// threads), the cases taking turns round by round, and returns the
// breakdowns. Each training runs in this process with GOMAXPROCS set to
// its thread count (one thread: one core, the garbage collector's work
// included), train.Config.Stats timing it.
func Phases(ctx context.Context, o PhaseOptions) ([]PhaseResult, error) {
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if len(o.Tasks) == 0 {
		o.Tasks = PhaseTasks
	}
	if len(o.Threads) == 0 {
		o.Threads = []int{1, 2}
	}
	if len(o.Precisions) == 0 {
		o.Precisions = []string{"float64", "float32"}
	}
	if o.Iterations <= 0 {
		o.Iterations = DefaultPhaseIterations
	}
	if o.Rounds <= 0 {
		o.Rounds = DefaultPhaseRounds
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	var out []PhaseResult
	for _, name := range o.Tasks {
		i := slices.IndexFunc(Tasks, func(t Task) bool { return t.Name == name })
		if i < 0 {
			return out, fmt.Errorf("trainbench: no task %q", name)
		}
		t := Tasks[i]
		d, err := loadAttrs(o, t)
		if err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		type kase struct {
			prec    string
			threads int
			runs    []PhaseResult
		}
		var cases []kase
		for _, p := range o.Precisions {
			for _, n := range o.Threads {
				cases = append(cases, kase{prec: p, threads: n})
			}
		}
		for r := range o.Rounds {
			for k := range cases {
				c := &cases[(r+k)%len(cases)]
				o.Progress(fmt.Sprintf("%s: %d L-BFGS iterations, %s, %d thread(s), round %d of %d", name, o.Iterations, c.prec, c.threads, r+1, o.Rounds))
				res, err := phaseRun(ctx, d, o.Iterations, c.prec, c.threads)
				if err != nil {
					return out, fmt.Errorf("%s, %s, %d threads: %w", name, c.prec, c.threads, err)
				}
				res.Task = name
				c.runs = append(c.runs, res)
			}
		}
		for _, c := range cases {
			slices.SortFunc(c.runs, func(a, b PhaseResult) int { return cmp.Compare(a.Iteration, b.Iteration) })
			out = append(out, c.runs[len(c.runs)/2])
		}
	}
	return out, nil
}

// loadAttrs writes task t's training file in CRFsuite's attribute format
// and reads it back as simdcrf learn --format crfsuite does.
func loadAttrs(o PhaseOptions, t Task) (*train.Data, error) {
	spec, err := t.spec(Options{TemplateDir: o.TemplateDir})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range t.Train {
		paths = append(paths, filepath.Join(o.DataDir, p))
	}
	attr := filepath.Join(o.WorkDir, t.Name+".phases.crfsuite")
	o.Progress(fmt.Sprintf("%s: writing the attribute file", t.Name))
	if _, _, err := writeAttrs(paths, spec, attr); err != nil {
		return nil, err
	}
	var l corpus.Loader
	tr, err := l.Load([]string{attr}, format.Spec{Format: "crfsuite"})
	if err != nil {
		return nil, err
	}
	return &tr.Data, nil
}

// phaseRun trains d for 1 + iters L-BFGS iterations (CRFsuite's defaults
// otherwise) and returns the breakdown per iteration of the last iters
// (train.Stats.SkipFirst; the CPU time from the end of the first too).
func phaseRun(ctx context.Context, d *train.Data, iters int, prec string, threads int) (PhaseResult, error) {
	cfg, err := train.Defaults("lbfgs")
	if err != nil {
		return PhaseResult{}, err
	}
	cfg.MaxIterations, cfg.Threads, cfg.Precision = iters+1, threads, prec
	st := train.Stats{SkipFirst: true}
	cfg.Stats = &st
	var cpu0 time.Duration
	cfg.Progress = func(p train.Progress) {
		if p.Iteration == 1 {
			cpu0 = processCPU()
		}
	}
	runtime.GOMAXPROCS(threads)
	runtime.GC()
	res, err := train.Train(ctx, d, cfg)
	if err != nil {
		return PhaseResult{}, err
	}
	r := phaseResult(&st, res.Loss, prec, threads, d)
	// (The CPU time includes the per-iteration report, a pass over the
	// weights counting the active ones, which Iteration leaves out.)
	r.CPU = (processCPU() - cpu0).Seconds() * 1e3 / float64(max(st.Iterations, 1))
	return r, nil
}

// phaseResult turns Stats into milliseconds per iteration.
func phaseResult(st *train.Stats, loss float64, prec string, threads int, d *train.Data) PhaseResult {
	n := float64(max(st.Iterations, 1))
	ms := func(x time.Duration) float64 { return x.Seconds() * 1e3 / n }
	m := st.Mean()
	busy := m.Score + m.ForwardBackward + m.Scatter
	return PhaseResult{
		Precision: prec, Threads: threads, Labels: d.Labels,
		Iters: st.Iterations, Evals: st.Evals, Loss: loss,
		Iteration: ms(st.Total - st.Progress), Score: ms(m.Score), ForwardBackward: ms(m.ForwardBackward), Scatter: ms(m.Scatter),
		Setup: ms(st.Eval - st.Sequences), Wait: ms(st.Sequences - busy), Optimiser: ms(st.Optimiser()),
		Shape: st.Shape,
	}
}
