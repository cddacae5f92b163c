package train

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/sparse"
)

// Config configures Train. Start from Defaults (the zero Config is not
// CRFsuite's defaults: C2 = 0 there means no regularisation) and change
// fields, or pass CRFsuite's -p NAME=VALUE pairs to Set.
type Config struct {
	// Algorithm is "lbfgs" (L-BFGS, L2; OWL-QN when C1 > 0, as CRFsuite),
	// "l1" (OWL-QN, L1 or elastic net), "sgd" (L2 SGD with a calibrated
	// step) or "ap" (averaged perceptron).
	Algorithm string
	// C1 and C2 are CRFsuite's coefficients: the objective is
	// Σ_i w_i·(−log p(y_i|x_i)) + C1·‖θ‖₁ + C2·‖θ‖² (not ½‖θ‖²: CRFsuite's
	// gradient of the L2 term is 2·C2·θ).
	C1, C2 float64
	// MaxIterations stops training after that many iterations (0: no limit
	// for lbfgs/l1; CRFsuite's defaults 1000 for sgd and 100 for ap).
	MaxIterations int
	// NumMemories is L-BFGS's history size m (6).
	NumMemories int
	// Epsilon stops L-BFGS when ‖g‖/max(1,‖θ‖) ≤ Epsilon (1e-5); for ap it
	// stops when the share of mistaken positions falls to Epsilon or below.
	Epsilon float64
	// Period and Delta: stop when the relative improvement of the
	// objective over the last Period iterations, (f_{k−Period} − f_k)/f_k,
	// is below Delta (10 and 1e-5; sgd 1e-6).
	Period int
	Delta  float64
	// LineSearch is "MoreThuente" (default), "Backtracking" (Armijo and
	// the regular Wolfe condition) or "StrongBacktracking" (strong Wolfe).
	// OWL-QN always backtracks along the orthant, as CRFsuite.
	LineSearch    string
	MaxLineSearch int // trials per line search (20)

	// MinFreq drops the (attribute, label) pairs (without PossibleStates)
	// and the label bigrams seen fewer than MinFreq times in training
	// (CRFsuite feature.minfreq, counting feature values; 0 keeps all).
	MinFreq float64
	// PossibleStates gives every attribute a weight for every label
	// (feature.possible_states); otherwise only the pairs seen in
	// training are parameters.
	PossibleStates bool
	// PossibleTransitions trains every label bigram of the dense matrix
	// (feature.possible_transitions), and the tied structure's default
	// (one weight shared by the bigrams never seen in training);
	// otherwise those bigrams keep weight 0, as in CRFsuite.
	PossibleTransitions bool
	// Transitions is "dense" (M×M weights), "tied" (one weight per
	// bigram seen in training, engine.NewTied, and a default of 0 for
	// the others: the same model as dense, trained in O(M + bigrams)
	// per position) or "auto" (tied when Labels ≥ TiedLabels). Start and
	// end weights (M each) are trained in both. "none" trains no
	// label-bigram, start or end weights (all held at 0: the model of a
	// CRF++ template without a B line).
	Transitions string
	// Candidates, if > 0, restricts the positions of every word form
	// seen at least Candidates times in training to the labels seen with
	// it, in training (the constrained chain: the likelihood of the gold
	// labelling among the allowed ones) and in the model, for tagging
	// (-p feature.candidates; Data.Words must be set). Other words are
	// free.
	Candidates int
	// PruneMax, if > 0, prunes the forward–backward of lbfgs and l1
	// training, MarMoT-style (-p prune.max): at every evaluation each
	// position keeps the labels whose zeroth-order posterior (the softmax
	// of its emission scores under the current weights) is at least
	// PruneThreshold times the best one (-p prune.threshold, 0.01), at most
	// PruneMax of them, always with the gold label, within its candidate
	// labels if it has any; the likelihood is that of the chain
	// constrained to those sets (an approximation of the CRF's, at
	// O(Σ_t |K_{t−1}|·|K_t|) per sequence). Labels of equal score are
	// kept or dropped together (at θ = 0 all are kept). The holdout, and
	// the model (Result.Prune), are tagged over the pruned sets (without
	// the gold label), as the model was trained: over all labels a pruned
	// model loses much accuracy (see model/prunetag.go).
	PruneMax       int
	PruneThreshold float64
	// PruneBy is what chooses the pruned sets (-p prune.by): "self" (the
	// weights being trained, at every evaluation, as above) or "zeroth"
	// (a zeroth-order pruner trained first, to the stopping rule: the CRF
	// without transitions over the same features; the sets it keeps are
	// then fixed for the whole training, the pruned objective is smooth,
	// and L-BFGS ends on the stopping rule; the model stores the pruner
	// and tags over its sets), or "first" (MarMoT's cascade one step
	// further: the zeroth-order pruner, then a first-order CRF trained
	// over its sets, whose posterior marginals, forward–backward over
	// those sets, narrow them to at most PruneFirstMax labels, fixed for
	// the model's training, which starts from the first-order weights;
	// the model stores both pruners and tags over the narrowed sets). ""
	// is "self".
	PruneBy string
	// PruneFirstMax and PruneFirstThreshold are the first-order pruner's
	// rule (PruneBy "first"; -p prune.first_max, prune.first_threshold):
	// a position keeps, of its zeroth-order set, the labels whose
	// posterior marginal is at least PruneFirstThreshold times the best
	// one (0.01; in tagging: training keeps the PruneFirstMax best, as
	// the zeroth-order sets do), at most PruneFirstMax of them (0: half of
	// PruneMax, rounded up), the gold label always in training.
	PruneFirstMax       int
	PruneFirstThreshold float64
	// PrunerIterations caps the pruner's L-BFGS iterations (-p
	// prune.pruner_iterations; 0: to its stopping rule). The pruner
	// only ranks labels, and a rough one ranks them well enough (see
	// prune.go).
	PrunerIterations int
	// Order is the order of the label dependencies (-p order): 1 (also 0,
	// the default) label bigrams; 2 label trigrams besides: a weight for
	// each triple (y_{t−2}, y_{t−1}, y_t) seen in training (at least
	// MinFreq times), as CRFsuite keeps the bigrams seen. Second-order
	// inference runs over pairs of labels, so order 2 trains and tags
	// over the pruned lattice of a zeroth-order pruner (PruneBy "zeroth",
	// PruneMax > 0: MarMoT's cascade) or of a first-order one after it
	// (PruneBy "first"), with lbfgs or l1 in float64.
	Order int
	// SubLabels, if > 0, adds weights on the first SubLabels parts
	// (bytes) of the labels, shared by every label with that part
	// (sparse.SubLabels: Czech positional tags' part of speech, gender,
	// number, case, …), for the (attribute, part) pairs seen in training
	// (-p feature.sublabels; lbfgs and l1; Data.LabelNames must be set).
	// With dense transitions the label bigrams get such weights too: i→j
	// scores Σ_k U[part k of i][part k of j] besides its own weight (on
	// UD Czech CLTT, dense with them 84.37 %, tied without 84.49 %: auto
	// still ties from TiedLabels on).
	SubLabels int
	// SubLabelSpans adds parts made of several characters, [i, j) each
	// (-p feature.sublabel_spans=2:5,0:2): Czech XPOS 2:5 is gender,
	// number and case together, the agreement of adjectives and nouns (on
	// UD Czech CLTT with the 15 single characters: 84.46 %, dev 85.53,
	// against 84.49 %, dev 85.67, without it; not a default).
	SubLabelSpans [][2]int
	// BigramPairs says which label pairs a bigram attribute (an expanded
	// CRF++ B line with %x) has weights for: BigramPairsSeen ("seen", the
	// default: those seen with it in training, as CRFsuite keeps only
	// the features seen) or BigramPairsAll ("all": CRF++'s full M×M
	// block). -p feature.bigram_pairs.
	BigramPairs string
	// NoStartEnd holds the start and end weights at 0, as CRFsuite's model
	// has none (simdcrf learn sets it for a model written in CRFsuite's
	// format).
	NoStartEnd bool

	// SGD (CRFsuite l2sgd): the step is 1/(λ·(t0+t)), λ = 2·C2/N, with t0
	// chosen from the initial rate η that did best on a sample.
	CalibrationEta        float64 // initial η (0.1)
	CalibrationRate       float64 // η is multiplied or divided by it (2)
	CalibrationSamples    int     // sample size (1000)
	CalibrationCandidates int     // number of η to try (10)
	CalibrationMaxTrials  int     // most trials (20)

	// Threads is the number of workers for the gradient (0: all cores).
	Threads int
	// Seed seeds the shuffling of sgd and ap (CRFsuite shuffles with
	// rand() unseeded, i.e. seed 1).
	Seed int64

	// Holdout, if not nil, is tagged every HoldoutEvery iterations (1 if
	// 0) and its Viterbi token accuracy reported; the parameters with the
	// best holdout accuracy are not kept: as CRFsuite, the last ones are.
	Holdout      *Data
	HoldoutEvery int
	// Progress, if not nil, is called after every iteration.
	Progress func(Progress)

	// Precision is "float64" (the default, also "") or "float32": lbfgs
	// and l1 then keep the state weights, their gradient and the emission
	// scores in float32 during the evaluations (the float32 kernels of
	// package kernels), with the objective, log Z, the gradient's totals
	// and the optimiser in float64 (-p precision=float32). The last
	// iterations (relative improvement over the period below 10·Delta),
	// and any after a line search fails on the float32 objective, are
	// evaluated in float64: its rounding (≈ 5e-7 of the objective on
	// CoNLL-2000) is of the order of the improvements the stopping rule
	// judges there. It supports dense transitions without candidate
	// labels, sub-label weights or bigram attributes.
	Precision string
	// Stats, if not nil, has the time of the lbfgs and l1 iterations
	// added to it, phase by phase (see Stats).
	Stats *Stats
	// lockstep chooses how lbfgs and l1 run dense forward–backward: ""
	// or "auto" in lockstep groups from engine.LockstepLabels labels on
	// (train/lockstep.go), "always" at every M, "never" one sequence at
	// a time. Only benchmarks set it, through lockplan.Force
	// (bench/trainbench's scaling suite plots both paths at every M);
	// results agree up to rounding.
	lockstep string
}

func init() {
	lockplan.RegisterForce(func(c *Config, mode string) { c.lockstep = mode })
}

// TiedLabels is the label count from which Transitions "auto" ties the
// transition weights. From a few hundred labels the dense O(M²) steps of
// forward–backward dominate an iteration (the shared research notes,
// ../shared/docs/crf-peers.md, measure the edge expectations alone at
// ≈ 19.5 µs per position at M = 256, against ≈ 2.9 µs to score 20 sparse
// features), while the bigrams seen in training are a small share of M²
// (UD Czech pooled: 14 718 of 1 341², 0.8%), so the O(M + exceptions)
// tied steps pay; below that the dense kernels are fast and exact
// bigram weights cost nothing.
const TiedLabels = 200

// TiedTransitions reports whether Config.Transitions t ties the transition
// weights of m labels.
func TiedTransitions(t string, m int) bool {
	switch t {
	case "tied":
		return true
	case "dense", "none":
		return false
	}
	return m >= TiedLabels
}

// Progress reports one iteration.
type Progress struct {
	Iteration int
	Loss      float64 // the objective, regularisation included
	GradNorm  float64 // ‖g‖ (the pseudo-gradient for l1); 0 for sgd and ap
	Active    int     // parameters ≠ 0
	// Holdout is the holdout token accuracy in [0,1], or −1 when not
	// evaluated this iteration.
	Holdout float64
	Seconds float64 // of this iteration
	Step    float64 // line search step (sgd: learning rate)
	Evals   int     // function evaluations of the line search
	// Pruner marks the iterations of the pruners' training, which come
	// first: the zeroth-order pruner's (Config.PruneBy "zeroth" and
	// "first"), then the first-order one's (PruneBy "first"), which
	// FirstOrder marks too.
	Pruner, FirstOrder bool
}

// Defaults returns CRFsuite's defaults for an algorithm.
func Defaults(algorithm string) (Config, error) {
	c := Config{
		Algorithm:             algorithm,
		C2:                    1,
		NumMemories:           6,
		Epsilon:               1e-5,
		Period:                10,
		Delta:                 1e-5,
		LineSearch:            "MoreThuente",
		MaxLineSearch:         20,
		Transitions:           "auto",
		CalibrationEta:        0.1,
		CalibrationRate:       2,
		CalibrationSamples:    1000,
		CalibrationCandidates: 10,
		CalibrationMaxTrials:  20,
		Seed:                  1,
		HoldoutEvery:          1,
		PruneThreshold:        0.01,
		PruneFirstThreshold:   0.01,
	}
	switch algorithm {
	case "lbfgs", "":
		c.Algorithm = "lbfgs"
	case "l1":
		c.C1, c.C2 = 1, 0
	case "sgd":
		c.MaxIterations = 1000
		c.Delta = 1e-6
	case "ap":
		c.C2 = 0
		c.MaxIterations = 100
		c.Epsilon = 0
	default:
		return c, fmt.Errorf("train: unknown algorithm %q (want lbfgs, l1, sgd or ap)", algorithm)
	}
	return c, nil
}

// Set sets a parameter by its CRFsuite -p name (c1, c2, max_iterations,
// num_memories, epsilon, period, delta, linesearch, max_linesearch,
// feature.minfreq, feature.possible_states, feature.possible_transitions,
// calibration.eta, calibration.rate, calibration.samples,
// calibration.candidates, calibration.max_trials) or one of ours
// (feature.candidates, feature.sublabels, feature.sublabel_spans,
// feature.bigram_pairs, transitions, threads, seed, holdout_every,
// precision, prune.max, prune.threshold, prune.by,
// prune.pruner_iterations, prune.first_max, prune.first_threshold,
// order). Unknown names and bad values
// are errors.
func (c *Config) Set(name, value string) error {
	value = strings.TrimSpace(value)
	bad := func(want string) error {
		return fmt.Errorf("train: parameter %s=%q: want %s", name, value, want)
	}
	num := func(dst *float64, ok func(float64) bool, want string) error {
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || !ok(v) {
			return bad(want)
		}
		*dst = v
		return nil
	}
	integer := func(dst *int, min int, want string) error {
		v, err := strconv.Atoi(value)
		if err != nil || v < min {
			return bad(want)
		}
		*dst = v
		return nil
	}
	boolean := func(dst *bool) error {
		switch value {
		case "1", "true":
			*dst = true
		case "0", "false":
			*dst = false
		default:
			return bad("0 or 1")
		}
		return nil
	}
	nonneg := func(v float64) bool { return v >= 0 }
	pos := func(v float64) bool { return v > 0 }
	switch name {
	case "c1":
		return num(&c.C1, nonneg, "a number ≥ 0")
	case "c2":
		return num(&c.C2, nonneg, "a number ≥ 0")
	case "max_iterations":
		return integer(&c.MaxIterations, 0, "an integer ≥ 0")
	case "num_memories":
		return integer(&c.NumMemories, 1, "an integer ≥ 1")
	case "epsilon":
		return num(&c.Epsilon, nonneg, "a number ≥ 0")
	case "period":
		return integer(&c.Period, 1, "an integer ≥ 1")
	case "delta":
		return num(&c.Delta, nonneg, "a number ≥ 0")
	case "linesearch":
		switch value {
		case "MoreThuente", "Backtracking", "StrongBacktracking":
			c.LineSearch = value
			return nil
		}
		return bad("MoreThuente, Backtracking or StrongBacktracking")
	case "max_linesearch":
		return integer(&c.MaxLineSearch, 1, "an integer ≥ 1")
	case "feature.minfreq":
		return num(&c.MinFreq, nonneg, "a number ≥ 0")
	case "feature.possible_states":
		return boolean(&c.PossibleStates)
	case "feature.possible_transitions":
		return boolean(&c.PossibleTransitions)
	case "feature.sublabels":
		return integer(&c.SubLabels, 0, "an integer ≥ 0 (the label parts: 0 for none)")
	case "feature.sublabel_spans":
		c.SubLabelSpans = nil
		if value == "" {
			return nil
		}
		for _, f := range strings.Split(value, ",") {
			a, b, ok := strings.Cut(strings.TrimSpace(f), ":")
			i, err1 := strconv.Atoi(a)
			j, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil || i < 0 || j <= i {
				return bad("spans I:J (0 ≤ I < J), separated by commas")
			}
			c.SubLabelSpans = append(c.SubLabelSpans, [2]int{i, j})
		}
		return nil
	case "feature.candidates":
		return integer(&c.Candidates, 0, "an integer ≥ 0 (0: no candidate labels)")
	case "prune.max":
		return integer(&c.PruneMax, 0, "an integer ≥ 0 (0: no pruning)")
	case "prune.threshold":
		return num(&c.PruneThreshold, func(v float64) bool { return v >= 0 && v <= 1 }, "a number in [0, 1]")
	case "prune.first_max":
		return integer(&c.PruneFirstMax, 0, "an integer ≥ 0 (0: half of prune.max)")
	case "prune.first_threshold":
		return num(&c.PruneFirstThreshold, func(v float64) bool { return v >= 0 && v <= 1 }, "a number in [0, 1]")
	case "prune.pruner_iterations":
		return integer(&c.PrunerIterations, 0, "an integer ≥ 0 (0: to the stopping rule)")
	case "order":
		switch value {
		case "1", "2":
			c.Order = int(value[0] - '0')
			return nil
		}
		return bad("1 or 2")
	case "prune.by":
		switch value {
		case "self", "zeroth", "first":
			c.PruneBy = value
			return nil
		}
		return bad("self, zeroth or first")
	case "feature.bigram_pairs":
		switch value {
		case BigramPairsSeen, BigramPairsAll:
			c.BigramPairs = value
			return nil
		}
		return bad("seen or all")
	case "transitions":
		switch value {
		case "dense", "tied", "auto", "none":
			c.Transitions = value
			return nil
		}
		return bad("dense, tied, auto or none")
	case "calibration.eta":
		return num(&c.CalibrationEta, pos, "a number > 0")
	case "calibration.rate":
		return num(&c.CalibrationRate, func(v float64) bool { return v > 1 }, "a number > 1")
	case "calibration.samples":
		return integer(&c.CalibrationSamples, 1, "an integer ≥ 1")
	case "calibration.candidates":
		return integer(&c.CalibrationCandidates, 1, "an integer ≥ 1")
	case "calibration.max_trials":
		return integer(&c.CalibrationMaxTrials, 1, "an integer ≥ 1")
	case "threads":
		return integer(&c.Threads, 0, "an integer ≥ 0")
	case "seed":
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return bad("an integer")
		}
		c.Seed = v
		return nil
	case "holdout_every":
		return integer(&c.HoldoutEvery, 1, "an integer ≥ 1")
	case "precision":
		switch value {
		case "float64", "float32":
			c.Precision = value
			return nil
		}
		return bad("float64 or float32")
	}
	return fmt.Errorf("train: unknown parameter %q for %s", name, c.Algorithm)
}

// subParts returns the sub-label parts: the first SubLabels characters one
// by one, then SubLabelSpans.
func (c *Config) subParts() [][2]int {
	return append(sparse.Positions(c.SubLabels), c.SubLabelSpans...)
}

// check validates a Config before training.
func (c *Config) check() error {
	switch c.Algorithm {
	case "lbfgs", "sgd", "ap":
	case "l1":
		if c.C1 <= 0 {
			return fmt.Errorf("train: l1 needs c1 > 0")
		}
	default:
		return fmt.Errorf("train: unknown algorithm %q (want lbfgs, l1, sgd or ap)", c.Algorithm)
	}
	if c.Algorithm == "sgd" && c.C2 <= 0 {
		return fmt.Errorf("train: sgd needs c2 > 0 (its step size is 1/(λ(t0+t)), λ = 2·c2/N)")
	}
	for _, v := range []float64{c.C1, c.C2, c.Epsilon, c.Delta, c.MinFreq} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("train: c1, c2, epsilon, delta and feature.minfreq must be finite and ≥ 0")
		}
	}
	if c.PruneMax > 0 && c.Algorithm != "lbfgs" && c.Algorithm != "l1" {
		return fmt.Errorf("train: prune.max is for lbfgs and l1, not %s", c.Algorithm)
	}
	switch c.PruneBy {
	case "", "self", "zeroth", "first":
	default:
		return fmt.Errorf("train: prune.by %q: want self, zeroth or first", c.PruneBy)
	}
	if c.PruneFirstMax < 0 || !(c.PruneFirstThreshold >= 0 && c.PruneFirstThreshold <= 1) {
		return fmt.Errorf("train: prune.first_max %d, prune.first_threshold %v: want an integer ≥ 0 and a number in [0, 1]", c.PruneFirstMax, c.PruneFirstThreshold)
	}
	switch c.Order {
	case 0, 1:
	case 2:
		if c.Algorithm != "lbfgs" && c.Algorithm != "l1" {
			return fmt.Errorf("train: order=2 is for lbfgs and l1, not %s", c.Algorithm)
		}
		if c.PruneMax <= 0 || c.PruneBy != "zeroth" && c.PruneBy != "first" {
			return fmt.Errorf("train: order=2 trains over a pruned lattice: it needs prune.max > 0 and prune.by=zeroth or first")
		}
		if c.Precision == "float32" {
			return fmt.Errorf("train: order=2 is float64 only")
		}
		if c.Transitions == "none" {
			return fmt.Errorf("train: order=2 needs transitions (not transitions=none)")
		}
	default:
		return fmt.Errorf("train: order %d: want 1 or 2", c.Order)
	}
	if !(c.PruneThreshold >= 0 && c.PruneThreshold <= 1) {
		return fmt.Errorf("train: prune.threshold %v: want a number in [0, 1]", c.PruneThreshold)
	}
	if c.C1 > 0 && (c.Algorithm == "sgd" || c.Algorithm == "ap") {
		return fmt.Errorf("train: c1 is for lbfgs and l1 (OWL-QN), not %s", c.Algorithm)
	}
	switch c.Transitions {
	case "", "auto", "dense", "tied", "none":
	default:
		return fmt.Errorf("train: transitions %q: want dense, tied, auto or none", c.Transitions)
	}
	switch c.lockstep {
	case "", "auto", "always", "never":
	default:
		return fmt.Errorf("train: lockstep %q: want auto, always or never", c.lockstep)
	}
	switch c.Precision {
	case "", "float64":
	case "float32":
		if c.Algorithm != "lbfgs" && c.Algorithm != "l1" {
			return fmt.Errorf("train: precision=float32 is for lbfgs and l1, not %s", c.Algorithm)
		}
	default:
		return fmt.Errorf("train: precision %q: want float64 or float32", c.Precision)
	}
	switch c.BigramPairs {
	case "", BigramPairsSeen, BigramPairsAll:
	default:
		return fmt.Errorf("train: feature.bigram_pairs %q: want seen or all", c.BigramPairs)
	}
	switch c.LineSearch {
	case "", "MoreThuente", "Backtracking", "StrongBacktracking":
	default:
		return fmt.Errorf("train: linesearch %q: want MoreThuente, Backtracking or StrongBacktracking", c.LineSearch)
	}
	if c.MaxIterations < 0 || c.NumMemories < 0 || c.Period < 0 || c.MaxLineSearch < 0 || c.Threads < 0 {
		return fmt.Errorf("train: negative count in Config")
	}
	return nil
}
