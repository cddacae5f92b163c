package trainbench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/simdcrf/simdcrf/bench/crfsuite"
	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/train"
)

// Scaling measures the cost of an L-BFGS iteration against the number of
// labels M on one fixed set of sentences: UD Czech (the pool of the
// czech-pooled task) with its positional XPOS tags truncated to their
// first k characters, one label set per k (k = 15 is the full tag). The
// sentences are the fewest, shortest ones that hold every full tag of the
// pool (a greedy cover: 566 sentences, 12,553 tokens), so that the full
// tags' M is the pool's 1,208 while a dense single-sequence iteration at
// that M stays near half a minute (35 s of CPU, against ≈ 290 s on the
// whole pool).

// Structures of the scaling suite (ScaleTitle: as the report names them).
const (
	ScaleDense      = "dense"
	ScaleLockstep   = "lockstep"
	ScaleTied       = "tied"
	ScaleCandidates = "candidates"
	ScalePruned     = "pruned"
	ScaleCRFsuite   = "crfsuite"
)

// ScaleTitle is a structure's name in the report.
func ScaleTitle(s string) string {
	switch s {
	case ScaleDense:
		return "dense, single-sequence"
	case ScaleLockstep:
		return "dense, lockstep"
	case ScaleCandidates:
		return "candidate-restricted"
	case ScaleCRFsuite:
		return "CRFsuite"
	}
	return s
}

// ScaleStructures are the simdcrf structures Scaling measures by default,
// in the order they take turns.
var ScaleStructures = []string{ScaleDense, ScaleLockstep, ScaleTied, ScaleCandidates, ScalePruned}

// scaleConfig sets cfg up for a structure: dense transitions with the
// path forced (lockplan.Force), tied transitions, or each form seen
// twice or more held to its tags (feature.candidates=2, transitions at
// their default: dense below train.TiedLabels, tied from there, as the
// czech-pooled-morph-cand task trains), or pruned forward–backward
// (prune.max=ScalePruneMax at the default threshold, transitions at their
// default).
func scaleConfig(cfg *train.Config, structure string) error {
	switch structure {
	case ScaleDense:
		cfg.Transitions = "dense"
		lockplan.Force(cfg, "never")
	case ScaleLockstep:
		cfg.Transitions = "dense"
		lockplan.Force(cfg, "always")
	case ScaleTied:
		cfg.Transitions = "tied"
	case ScaleCandidates:
		cfg.Candidates = 2 // transitions "auto", as the czech-pooled-morph-cand task
	case ScalePruned:
		cfg.PruneMax = ScalePruneMax
	default:
		return fmt.Errorf("no structure %q (have %q)", structure, ScaleStructures)
	}
	return nil
}

const (
	// DefaultScaleIterations is the L-BFGS iterations of each training;
	// a point is their median time (the first, with its longer line
	// search, is one of them).
	DefaultScaleIterations = 3
	// DefaultScalePeerCap is the most CRFsuite's iteration may be
	// expected to take (seconds); larger M are skipped.
	DefaultScalePeerCap = 10.0
	// ScalePruneMax is the pruned structure's cap on labels per position
	// (-p prune.max).
	ScalePruneMax = 8
)

// DefaultScaleKs are the truncation lengths: M = 12, 59, 181, 277, 806
// and 1,208 on the pool.
var DefaultScaleKs = []int{1, 2, 3, 4, 5, 15}

// ScaleOptions controls Scaling.
type ScaleOptions struct {
	DataDir    string // ../shared/data
	WorkDir    string // the truncated files and attribute files
	Ks         []int  // default DefaultScaleKs
	Structures []string
	Iterations int     // default DefaultScaleIterations
	Rounds     int     // trainings of each point, in turns (default 1)
	Peers      bool    // run CRFsuite
	PeerCap    float64 // default DefaultScalePeerCap
	Progress   func(string)
}

// ScalePoint is one structure at one M.
type ScalePoint struct {
	Structure string
	K         int // XPOS characters kept
	Labels    int
	// Seconds and CPU are the median wall and CPU seconds of an L-BFGS
	// iteration (CRFsuite: CPU only, its log's clock() per iteration,
	// feature generation excluded).
	Seconds, CPU float64
	Iters        int
	Evals        int    // objective evaluations in the Iters iterations
	Skipped      string // why the point was not measured ("" if it was)
}

// ScaleResult is a Scaling run.
type ScaleResult struct {
	Sentences, Tokens int
	Iterations        int
	PeerCap           float64
	Points            []ScalePoint
}

// scaleFiles is the czech-pooled task's training pool.
var scaleFiles = czechPool

// Scaling runs the suite: each k's data is written and read, then every
// structure trains it for Iterations iterations in this process on one
// thread (GOMAXPROCS 1), the structures taking turns; CRFsuite trains the
// same sentences, as attribute files of the same features, while its
// iteration is expected under PeerCap seconds (from the last M it ran at,
// by M²).
func Scaling(ctx context.Context, o ScaleOptions) (ScaleResult, error) {
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if len(o.Ks) == 0 {
		o.Ks = DefaultScaleKs
	}
	if len(o.Structures) == 0 {
		o.Structures = ScaleStructures
	}
	if o.Iterations <= 0 {
		o.Iterations = DefaultScaleIterations
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.PeerCap <= 0 {
		o.PeerCap = DefaultScalePeerCap
	}
	res := ScaleResult{Iterations: o.Iterations, PeerCap: o.PeerCap}
	for _, s := range o.Structures {
		if err := scaleConfig(&train.Config{}, s); err != nil {
			return res, err
		}
	}
	var paths []string
	for _, p := range scaleFiles {
		paths = append(paths, filepath.Join(o.DataDir, p))
	}
	sents, err := readConllu(paths)
	if err != nil {
		return res, err
	}
	sents = coverTags(sents)
	res.Sentences = len(sents)
	for _, s := range sents {
		res.Tokens += s.tokens
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return res, err
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	spec := format.Spec{Format: "conllu", Features: "pos", Label: "xpos"}
	peerLast, peerM := 0.0, 0 // CRFsuite's last s/iteration, and its M
	for _, k := range o.Ks {
		file := filepath.Join(o.WorkDir, fmt.Sprintf("scaling.k%d.conllu", k))
		if err := writeTruncated(file, sents, k); err != nil {
			return res, err
		}
		var l corpus.Loader
		tr, err := l.Load([]string{file}, spec)
		if err != nil {
			return res, err
		}
		d := &tr.Data
		m := d.Labels
		runs := make([][]ScalePoint, len(o.Structures))
		for r := range o.Rounds {
			for i := range o.Structures {
				j := (r + i) % len(o.Structures)
				s := o.Structures[j]
				o.Progress(fmt.Sprintf("scaling: M = %d (k = %d), %s, %d L-BFGS iterations, round %d of %d", m, k, s, o.Iterations, r+1, o.Rounds))
				p, err := scaleRun(ctx, d, s, o.Iterations)
				if err != nil {
					return res, fmt.Errorf("scaling: M = %d, %s: %w", m, s, err)
				}
				p.K, p.Labels = k, m
				o.Progress(fmt.Sprintf("  %.3g CPU s/iteration (wall %.3g), %d iterations, %d evaluations", p.CPU, p.Seconds, p.Iters, p.Evals))
				runs[j] = append(runs[j], p)
			}
		}
		for j := range o.Structures {
			slices.SortFunc(runs[j], func(a, b ScalePoint) int { return cmp.Compare(a.CPU, b.CPU) })
			res.Points = append(res.Points, runs[j][len(runs[j])/2])
		}
		if !o.Peers {
			continue
		}
		p := ScalePoint{Structure: ScaleCRFsuite, K: k, Labels: m}
		if p.Skipped = peerSkip(peerLast, peerM, m, o.PeerCap); p.Skipped == "" {
			o.Progress(fmt.Sprintf("scaling: M = %d (k = %d), CRFsuite, %d L-BFGS iterations", m, k, o.Iterations))
			q, err := scalePeer(ctx, o, file, spec, k)
			if err != nil {
				return res, fmt.Errorf("scaling: M = %d, CRFsuite: %w", m, err)
			}
			p.CPU, p.Iters = q.CPU, q.Iters
			o.Progress(fmt.Sprintf("  %.3g CPU s/iteration, %d iterations", p.CPU, p.Iters))
			peerLast, peerM = p.CPU, m
		}
		res.Points = append(res.Points, p)
	}
	return res, nil
}

// peerSkip says why CRFsuite is not run at M = m, given its last point
// (last s/iteration at M = lastM; lastM 0 for none), or "" to run it: its
// iteration, expected to grow as M², would take over limit seconds.
func peerSkip(last float64, lastM, m int, limit float64) string {
	if lastM == 0 {
		return ""
	}
	if last > limit {
		return fmt.Sprintf("its %.3g s/iteration at M = %d was over the %.0f s cap already", last, lastM, limit)
	}
	r := float64(m) / float64(lastM)
	if est := last * r * r; est > limit {
		return fmt.Sprintf("expected %.0f s/iteration from its %.3g s at M = %d by M², over the %.0f s cap", est, last, lastM, limit)
	}
	return ""
}

// scaleRun trains d with one structure for iters iterations, one thread.
func scaleRun(ctx context.Context, d *train.Data, structure string, iters int) (ScalePoint, error) {
	cfg, err := train.Defaults("lbfgs")
	if err != nil {
		return ScalePoint{}, err
	}
	if err := scaleConfig(&cfg, structure); err != nil {
		return ScalePoint{}, err
	}
	cfg.MaxIterations, cfg.Threads = iters, 1
	// Only the iterations count: a point is no convergence test.
	cfg.Epsilon, cfg.Delta = 0, 0
	var (
		wall, cpu []float64
		evals     int
	)
	last := time.Duration(0)
	cfg.Progress = func(p train.Progress) {
		c := processCPU()
		wall = append(wall, p.Seconds)
		evals += p.Evals
		cpu = append(cpu, (c - last).Seconds())
		last = c
	}
	runtime.GOMAXPROCS(1)
	runtime.GC()
	start := processCPU()
	last = start
	if _, err := train.Train(ctx, d, cfg); err != nil {
		return ScalePoint{}, err
	}
	if len(wall) == 0 {
		return ScalePoint{}, errors.New("no iteration ran")
	}
	// The first entry holds Train's setup (the model, candidate lexicon):
	// it is held to the iteration's wall time (one thread: CPU ≤ wall).
	cpu[0] = min(cpu[0], wall[0])
	return ScalePoint{Structure: structure, Seconds: median(wall), CPU: median(cpu), Iters: len(wall), Evals: evals}, nil
}

// scalePeer trains CRFsuite on the attribute file of file's sentences.
func scalePeer(ctx context.Context, o ScaleOptions, file string, spec format.Spec, k int) (ScalePoint, error) {
	if _, err := crfsuite.Ensure(ctx); err != nil {
		return ScalePoint{}, err
	}
	attr := filepath.Join(o.WorkDir, fmt.Sprintf("scaling.k%d.crfsuite", k))
	if _, _, err := writeAttrs([]string{file}, spec, attr); err != nil {
		return ScalePoint{}, err
	}
	// A training that runs far past the cap is stopped.
	limit := time.Duration(float64(o.Iterations+3)*o.PeerCap*3) * time.Second
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tr, err := crfsuite.Train(cctx, crfsuite.TrainOptions{Data: attr, Model: filepath.Join(o.WorkDir, "scaling.crfsuite.model"),
		Params: map[string]string{"c2": "1", "max_iterations": fmt.Sprint(o.Iterations), "epsilon": "0", "delta": "0"}})
	if err != nil {
		return ScalePoint{}, err
	}
	if len(tr.IterationSeconds) == 0 {
		return ScalePoint{}, errors.New("no iteration logged")
	}
	return ScalePoint{CPU: median(tr.IterationSeconds), Iters: len(tr.IterationSeconds)}, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// sentence is one CoNLL-U sentence as its lines, with its word lines'
// XPOS tags.
type sentence struct {
	lines  []string
	tags   []string
	tokens int
}

// readConllu reads the sentences of paths.
func readConllu(paths []string) ([]sentence, error) {
	var out []sentence
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		var cur sentence
		line := 0
		flush := func() {
			if cur.tokens > 0 {
				out = append(out, cur)
			}
			cur = sentence{}
		}
		for sc.Scan() {
			line++
			s := sc.Text()
			if s == "" {
				flush()
				continue
			}
			cur.lines = append(cur.lines, s)
			if strings.HasPrefix(s, "#") {
				continue
			}
			fs := strings.Split(s, "\t")
			if len(fs) != 10 {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %d fields, want 10", p, line, len(fs))
			}
			if strings.ContainsAny(fs[0], "-.") {
				continue // multiword token or empty node
			}
			cur.tags = append(cur.tags, fs[4])
			cur.tokens++
		}
		flush()
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}

// coverTags returns the fewest, shortest sentences that hold every tag:
// rarest tag first, the shortest sentence with it (in the files' order
// among equals), the tags it holds then covered. The sentences keep the
// files' order.
func coverTags(sents []sentence) []sentence {
	count := map[string]int{}
	with := map[string][]int{}
	for i, s := range sents {
		for _, t := range s.tags {
			count[t]++
			if w := with[t]; len(w) == 0 || w[len(w)-1] != i {
				with[t] = append(with[t], i)
			}
		}
	}
	tags := make([]string, 0, len(count))
	for t := range count {
		tags = append(tags, t)
	}
	slices.SortFunc(tags, func(a, b string) int { return cmp.Or(cmp.Compare(count[a], count[b]), cmp.Compare(a, b)) })
	covered := map[string]bool{}
	var keep []int
	for _, t := range tags {
		if covered[t] {
			continue
		}
		best := -1
		for _, i := range with[t] {
			if best < 0 || sents[i].tokens < sents[best].tokens {
				best = i
			}
		}
		keep = append(keep, best)
		for _, u := range sents[best].tags {
			covered[u] = true
		}
	}
	slices.Sort(keep)
	out := make([]sentence, len(keep))
	for j, i := range keep {
		out[j] = sents[i]
	}
	return out
}

// truncTag is a tag's first k characters (the whole tag if shorter).
func truncTag(tag string, k int) string {
	if r := []rune(tag); len(r) > k {
		return string(r[:k])
	}
	return tag
}

// writeTruncated writes sents as CoNLL-U with XPOS cut to k characters.
func writeTruncated(path string, sents []sentence, k int) error {
	var b bytes.Buffer
	for _, s := range sents {
		for _, l := range s.lines {
			if f := strings.Split(l, "\t"); len(f) == 10 && !strings.HasPrefix(l, "#") {
				f[4] = truncTag(f[4], k)
				l = strings.Join(f, "\t")
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
