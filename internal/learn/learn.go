// Package learn is what `simdcrf learn` and package simdcrf's Trainer share
// between their input and the trainer: the training configuration from an
// algorithm, CRFsuite-style parameters and the input's Spec, with the rules
// that tie them together (a template without a B line trains no
// transitions, CRFsuite's model format holds less, --features morph turns
// sub-label weights on for positional labels), and the one step from a
// training result to a model. Both front ends call it, so that the same
// data and options give the same model through either.
package learn

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
	"github.com/simdcrf/simdcrf/train"
)

// Job is one training run's settings.
type Job struct {
	Algorithm string   // lbfgs (also ""), l1, sgd, ap
	Params    []string // NAME=VALUE, applied in order (the last value of a name wins)
	Spec      format.Spec
	// CRFsuite: the model is written in CRFsuite's format, which has no
	// start and end weights, lexicon, sub-labels, pruning or bigram
	// attributes. Path names the model in messages.
	CRFsuite bool
	Path     string
	Lexicon  bool // a lexicon of candidate labels is given
	Threads  int  // overrides a threads parameter (0: all cores)
	Every    int  // evaluate the holdout every Every iterations (0: 1)

	// AlgoName and ParamName name the options in errors: "-a" and "-p"
	// on the command line.
	AlgoName, ParamName string
	// Note, if not nil, receives what the command prints on standard
	// error about the settings (warnings, defaults it chose).
	Note func(string)
}

func (j *Job) note(format string, args ...any) {
	if j.Note != nil {
		j.Note(fmt.Sprintf(format, args...))
	}
}

// Config returns the trainer's configuration for the job: CRFsuite's
// defaults for the algorithm, the parameters, and the rules of the input
// and the model format. The Spec must be resolved (Spec.Resolve).
func (j *Job) Config() (train.Config, error) {
	cfg, err := train.Defaults(j.Algorithm)
	if err != nil {
		return cfg, fmt.Errorf("%s %s: %w", j.AlgoName, j.Algorithm, err)
	}
	// A CRF++ template without a B line has no label-bigram features.
	// (Options checks the spec and parses the template: its errors come
	// here, before any data is read.)
	opts, err := j.Spec.Options()
	if err != nil {
		return cfg, err
	}
	if opts.Template != nil && opts.Template.ObsBigram() && j.CRFsuite {
		return cfg, fmt.Errorf("%s has B lines with %%x (observation-dependent transitions), which CRFsuite's model format cannot hold: write a simdcrf model", j.Spec.TemplateName)
	}
	noBigram := false
	if opts.Template != nil && !opts.Template.Bigram() {
		noBigram = true
		cfg.Transitions = "none"
	}
	for _, p := range j.Params {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			return cfg, fmt.Errorf("%s %s: want NAME=VALUE", j.ParamName, p)
		}
		if name == "feature.guesser" {
			if value != "0" && value != "1" {
				return cfg, fmt.Errorf("%s %s: want 0 or 1", j.ParamName, p)
			}
			if value == "1" && opts.Features == "" {
				return cfg, fmt.Errorf("%s %s: the guesser adds attributes to a built-in feature set (--features pos or morph)", j.ParamName, p)
			}
			if value == "1" && j.CRFsuite {
				return cfg, fmt.Errorf("%s: CRFsuite's model format cannot hold an unknown-word guesser (-p feature.guesser=1): write a simdcrf model", j.Path)
			}
			continue
		}
		if err := cfg.Set(name, value); err != nil {
			return cfg, fmt.Errorf("%s %s: %w", j.ParamName, p, err)
		}
		if name == "transitions" && noBigram && value != "none" {
			j.note("simdcrf learn: warning: %s has no B line, but -p transitions=%s trains label-bigram weights\n", j.Spec.TemplateName, value)
		}
	}
	cfg.Threads = j.Threads
	cfg.HoldoutEvery = j.Every
	if j.CRFsuite && (cfg.Candidates > 0 || j.Lexicon || cfg.SubLabels > 0 || len(cfg.SubLabelSpans) > 0 || cfg.PruneMax > 0 || cfg.Order == 2) {
		return cfg, fmt.Errorf("%s: CRFsuite's model format cannot hold candidate labels (-p feature.candidates, --lexicon), sub-label weights (-p feature.sublabels), label pruning (-p prune.max) or label trigrams (-p order=2): write a simdcrf model", j.Path)
	}
	if j.CRFsuite {
		if err := j.crfsuite(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// crfsuite sets cfg to train only what CRFsuite's model format holds, and
// says what that leaves out: start and end weights (held at 0), a trained
// shared default of tied transitions (tied transitions hold it at 0,
// CRFsuite's score for a label bigram never seen, unless
// feature.possible_transitions trains it: then dense), and the template or
// feature set (the model holds the attribute names they make).
func (j *Job) crfsuite(cfg *train.Config) error {
	if cfg.PossibleTransitions {
		switch cfg.Transitions {
		case "tied":
			return fmt.Errorf("%s is written in CRFsuite's format, which cannot hold the shared default weight that tied transitions train with feature.possible_transitions=1 (CRFsuite gives every label bigram its own weight then): train with -p transitions=dense", j.Path)
		case "auto":
			cfg.Transitions = "dense"
		}
	}
	cfg.NoStartEnd = true
	j.note("simdcrf learn: %s is written in CRFsuite's format: trained without start and end weights (CRFsuite has none)\n", j.Path)
	if s := j.Spec; s.Template != "" || s.Features != "" {
		j.note("simdcrf learn: the model holds the attribute names the %s makes, not the %[1]s itself: it tags CRFsuite attribute files made with it\n", map[bool]string{true: "template", false: "feature set"}[s.Template != ""])
	}
	return nil
}

// MorphSubLabels is how many leading characters of positional labels get
// sub-label weights with --features morph: all 15 of Czech XPOS. On UD
// Czech CLTT (train → test) they took the accuracy from 82.02 % to 84.49 %
// (dev 83.36 → 85.67); the first 5 only (part of speech, detailed part of
// speech, gender, number, case) to 84.17 % (dev 85.38).
const MorphSubLabels = 15

// SubLabels turns sub-label weights on when --features morph reads
// positional labels (labels, in id order) and no feature.sublabels
// parameter was given, for the algorithms and model format that have them;
// it reports whether it did.
func (j *Job) SubLabels(cfg *train.Config, labels []string) bool {
	if j.Spec.Features != "morph" || j.given("feature.sublabels") || cfg.Algorithm == "sgd" || cfg.Algorithm == "ap" || j.CRFsuite {
		return false
	}
	n := Positional(labels)
	if n == 0 {
		return false
	}
	cfg.SubLabels = min(n, MorphSubLabels)
	j.note("--features morph: the labels are positional (%d characters each): sub-label weights on their first %d characters (-p feature.sublabels=0 for none)\n", n, cfg.SubLabels)
	return true
}

// Guess reports whether the job trains with an unknown-word guesser
// (format.Guesser): -p feature.guesser=1, or by default with a built-in
// feature set (pos, morph) for a simdcrf model, read from files (the
// guesser is learned in a first pass over them: standard input cannot be
// read twice). On UD Czech CLTT (--features morph) it took the test
// accuracy from 84.52 % to 85.52 %, on UD English EWT XPOS (--features
// pos) from 94.32 % to 94.39 % (docs/features.md).
func (j *Job) Guess(paths []string) (bool, error) {
	v, given := j.params()["feature.guesser"]
	if given {
		if v == "1" && slices.Contains(paths, "-") {
			return false, fmt.Errorf("%s feature.guesser=1: the guesser is learned in a pass of its own over the training data, and standard input cannot be read twice: give files", j.ParamName)
		}
		return v == "1", nil
	}
	if j.Spec.Features == "" || j.CRFsuite {
		return false, nil
	}
	if slices.Contains(paths, "-") {
		j.note("simdcrf learn: no unknown-word guesser (-p feature.guesser): it is learned in a pass of its own, and standard input cannot be read twice\n")
		return false, nil
	}
	return true, nil
}

// Guesser learns the unknown-word guesser from the words and labels of
// the training files (Spec.Features' column 0 and label), with the g@i=
// attributes for positional labels. Put it in Spec.Guesser before
// loading the data: every reader of the Spec adds its attributes then.
func (j *Job) Guesser(paths []string) (*format.Guesser, error) {
	var b format.GuesserBuilder
	spec := j.Spec
	spec.Guesser = nil
	for _, p := range paths {
		f, err := corpus.Open(p, spec)
		if err != nil {
			return nil, err
		}
		err = AddWords(&b, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return BuildGuesser(&b), nil
}

// AddWords adds the words and labels of every sequence of f to b.
func AddWords(b *format.GuesserBuilder, f *corpus.File) error {
	var s format.Sequence
	for {
		switch err := f.Read(&s); err {
		case nil:
			b.AddSequence(&s)
		case io.EOF:
			return nil
		default:
			return err
		}
	}
}

// BuildGuesser builds the guesser of the words and labels b holds, with
// the g@i= attributes for positional labels: Guesser's last step, and
// the front door's, which has its tokens in memory.
func BuildGuesser(b *format.GuesserBuilder) *format.Guesser {
	return b.Build(Positional(b.Labels()))
}

// PruneLabels is the label count from which training prunes by default
// (Prune): UD Czech CLTT (M = 304) and the UD Czech pool (M = 1,208),
// pos and morph features, trained with a zeroth-order pruner as accurate
// as exact training or more (docs/pruned-training.md); CoNLL-2000 (M =
// 22) and UD English EWT (M = 50) stay exact.
const PruneLabels = 300

// AutoPruneMax is the pruning cap the default rule sets (prune.max).
const AutoPruneMax = 8

// Prune turns pruning on by default (prune.max=8, prune.by=zeroth; for
// order=2 prune.by=first, Order2PruneBy) for m ≥ PruneLabels labels, or
// any m with order=2 (which trains over a pruned lattice; with prune.max
// given, order=2 implies prune.by=first), unless prune.by is given,
// when no prune.max parameter was given, for
// lbfgs and l1 in float64, a simdcrf model and a model its pruner can
// serve (no observation-dependent transitions, no sub-label transitions);
// it reports whether it did, and says so. Written in CRFsuite's format,
// which cannot hold the pruning, the model is trained exactly, and that
// is said too.
func (j *Job) Prune(cfg *train.Config, m int, obsBigrams bool) bool {
	if cfg.Order == 2 && cfg.PruneMax > 0 && !j.given("prune.by") {
		cfg.PruneBy = Order2PruneBy // (order 2's lattice comes from the pruners)
	}
	if m < PruneLabels && cfg.Order != 2 || j.given("prune.max") || cfg.Algorithm != "lbfgs" && cfg.Algorithm != "l1" {
		return false
	}
	if j.CRFsuite {
		j.note("simdcrf learn: %d labels: exact training, since %s is written in CRFsuite's format, which cannot hold label pruning (a simdcrf model would prune: -p prune.max=%d)\n", m, j.Path, AutoPruneMax)
		return false
	}
	tied := train.TiedTransitions(cfg.Transitions, m)
	if cfg.Precision == "float32" || obsBigrams || cfg.Transitions == "none" || cfg.SubLabels > 0 && !tied || len(cfg.SubLabelSpans) > 0 && !tied {
		if cfg.Order == 2 && (cfg.SubLabels > 0 || len(cfg.SubLabelSpans) > 0) && !tied {
			// (else the trainer's refusal would only say that order 2
			// needs the pruner)
			j.note("simdcrf learn: order=2 needs a zeroth-order pruner, which cannot serve the sub-label transitions that feature.sublabels trains with dense transitions: give -p transitions=tied, or -p feature.sublabels=0\n")
		}
		return false
	}
	cfg.PruneMax = AutoPruneMax
	if !j.given("prune.by") || cfg.PruneBy == "self" || cfg.PruneBy == "" {
		cfg.PruneBy = "zeroth"
		if cfg.Order == 2 {
			cfg.PruneBy = Order2PruneBy
		}
	}
	if !j.given("prune.pruner_iterations") {
		cfg.PrunerIterations = AutoPrunerIterations
	}
	how := fmt.Sprintf("prune.by=zeroth: a zeroth-order pruner first, its %d best labels per position", cfg.PruneMax)
	if cfg.PruneBy == "first" {
		how = fmt.Sprintf("prune.by=first: a zeroth-order pruner first, its %d best labels per position, then a first-order one", cfg.PruneMax)
	}
	if cfg.Order == 2 {
		j.note("simdcrf learn: order=2: trained over a pruned lattice (prune.max=%d, %s)\n", cfg.PruneMax, how)
		return true
	}
	j.note("simdcrf learn: %d labels: pruned training (prune.max=%d, %s); -p prune.max=0 for exact training\n", m, cfg.PruneMax, how)
	return true
}

// Order2PruneBy is the default pruning of order=2: a first-order pruner
// after the zeroth-order one (MarMoT's cascade), whose sets of 4 labels
// make the second-order lattice 8 times smaller than the zeroth-order
// pruner's 8. One thread, 2026-11-29, a shared 2-core Intel Xeon: UD
// English EWT XPOS 94.65 % in 308 s of CPU against prune.by=zeroth's
// 94.68 % in 884 s; UD Czech pool pos 79.20 % in 330 s against 79.25 %
// in 403 s; CLTT morph 85.40 % in 88 s against 85.43 % in 68 s
// (docs/pruned-training.md).
const Order2PruneBy = "first"

// AutoPrunerIterations caps the pruner's iterations under the default
// rule (prune.pruner_iterations): on the UD Czech pool the pruner's sets
// held the FicTree test token's gold label 95.47 % of the time after 80
// iterations, 95.65 % at its stopping rule (176 iterations), 93.50 %
// after 40; the model trained over them tagged 78.56 % against 78.76 %,
// 44 s sooner (docs/pruned-training.md).
const AutoPrunerIterations = 80

// Positional returns the length of the labels when they are positional
// tags: at least 4 labels, all of the same length of at least 4 bytes, none
// with white space (Czech XPOS: 15); else 0.
func Positional(labels []string) int {
	if len(labels) < 4 || len(labels[0]) < 4 {
		return 0
	}
	for _, l := range labels {
		if len(l) != len(labels[0]) || strings.ContainsAny(l, " \t") {
			return 0
		}
	}
	return len(labels[0])
}

// given reports whether the parameter name was given.
func (j *Job) given(name string) bool {
	for _, p := range j.Params {
		if n, _, _ := strings.Cut(p, "="); n == name {
			return true
		}
	}
	return false
}

// params returns the parameters as a map (the last value of a name wins),
// nil for none.
func (j *Job) params() map[string]string {
	if len(j.Params) == 0 {
		return nil
	}
	m := make(map[string]string, len(j.Params))
	for _, p := range j.Params {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return m
}

// Meta returns the model's metadata for a run of the job that read tr,
// trained with cfg (autoSub: SubLabels turned sub-labels on) to res, in
// seconds from the start of reading, with extra kept beside.
func (j *Job) Meta(tr *corpus.Training, cfg train.Config, autoSub bool, res *train.Result, seconds float64, extra map[string]string) model.Meta {
	if j.CRFsuite {
		// The attributes the template or feature set made, as names:
		// the model tags CRFsuite attribute files made the same way.
		return model.Meta{Spec: format.Spec{Format: "crfsuite"}}
	}
	spec := j.Spec
	spec.TemplateName, spec.Columns = "", tr.Columns
	meta := model.Meta{Spec: spec, Trainer: cfg.Algorithm, Params: j.params(),
		Stats: model.TrainStats{Iterations: res.Iterations, Loss: res.Loss, Seconds: seconds,
			Sequences: int64(tr.Seqs), Tokens: tr.Items, Reason: res.Reason, Interrupted: res.Interrupted},
		Extra: extra}
	if autoSub {
		if meta.Params == nil {
			meta.Params = map[string]string{}
		}
		meta.Params["feature.sublabels"] = fmt.Sprint(cfg.SubLabels)
	}
	if spec.Guesser != nil && !j.given("feature.guesser") { // (Guess's default)
		if meta.Params == nil {
			meta.Params = map[string]string{}
		}
		meta.Params["feature.guesser"] = "1"
	}
	if cfg.PruneMax > 0 && !j.given("prune.max") { // (Prune's default)
		if meta.Params == nil {
			meta.Params = map[string]string{}
		}
		meta.Params["prune.max"], meta.Params["prune.by"] = fmt.Sprint(cfg.PruneMax), cfg.PruneBy
		meta.Params["prune.pruner_iterations"] = fmt.Sprint(cfg.PrunerIterations)
	}
	return meta
}

// Model turns a training result into a model: the dictionaries of tr, the
// weights of res with its lexicon of candidate labels, pruning rule,
// sub-label, trigram and bigram weights, and meta; compacted (the weights training
// left at zero dropped). It is the one way simdcrf's front ends make a
// model of a training run.
func Model(tr *corpus.Training, res *train.Result, meta model.Meta) (*model.Model, error) {
	m, err := model.New(tr.Labels, tr.Attrs, res.State, res.Trans, meta)
	if err == nil && res.Lexicon != nil {
		m.Lexicon = res.Lexicon
		err = m.Lexicon.Check(tr.Labels.Len())
	}
	if err == nil && res.Prune != nil {
		m.Prune = res.Prune // tagged over the pruned sets, as trained
		m.Pruner, m.PrunerSub = res.Pruner, res.PrunerSub
		if p := res.Pruner1; p != nil {
			m.Pruner1 = &model.FirstOrderPruner{Rule: p.Rule, State: p.State, Trans: p.Trans, Sub: p.Sub}
		}
	}
	if err == nil && res.Sub != nil {
		m.Sub = res.Sub
		err = m.Sub.Check(tr.Labels.Len(), tr.Attrs.Len())
	}
	if err == nil && res.Trigrams != nil {
		m.Trigrams = res.Trigrams // second order: tagged over the pruner's sets
	}
	if err == nil && res.BigramWeights != nil {
		m.Bigram = &model.Bigrams{Attrs: tr.BAttrs, Ptr: res.BigramPtr, Pairs: res.BigramPairs, Weights: res.BigramWeights}
	}
	if err == nil {
		m, err = m.Compact()
	}
	return m, err
}
