package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/model"
	"github.com/simdcrf/simdcrf/train"
)

// multiFlag collects a repeated flag's values (-p NAME=VALUE …).
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// specFlags are the flags that say how text becomes attributes, shared by
// learn (which stores them in the model) and bench.
type specFlags struct {
	format, template, features, label *string
}

func addSpecFlags(fs interface {
	String(name, value, usage string) *string
}) specFlags {
	return specFlags{
		format:   fs.String("format", "", "input format: crfsuite, conll or conllu (default: conllu for *.conllu, conll with --template or --features, else crfsuite)"),
		template: fs.String("template", "", "CRF++ feature template `FILE` (conll and conllu input)"),
		features: fs.String("features", "", "built-in feature `SET` for conll and conllu input: pos, or morph (pos plus what inflected languages' tags need: longer affixes, the neighbours' affixes, case and digits with the suffix, quotation; for positional labels such as Czech XPOS also weights on each label character, -p feature.sublabels)"),
		label:    fs.String("label", "", "conllu label column: upos (default) or xpos"),
	}
}

// spec returns the Spec the flags give, reading the template file.
func (f specFlags) spec() (corpus.Spec, error) {
	s := corpus.Spec{Format: *f.format, Features: *f.features, Label: *f.label}
	if *f.template != "" {
		b, err := os.ReadFile(*f.template)
		if err != nil {
			return s, err
		}
		s.Template, s.TemplateName = string(b), *f.template
	}
	return s, nil
}

const learnSynopsis = "learn -m MODEL [--model-format simdcrf|crfsuite] [-a lbfgs|l1|sgd|ap] [-p NAME=VALUE]... [--threads N] [-e HOLDOUT] [--lexicon FILE] [--format crfsuite|conll|conllu] [--template FILE] [--features pos|morph] [--label upos|xpos] TRAIN..."

func cmdLearn(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("learn", learnSynopsis, stderr)
	modelPath := fs.String("m", "", "write the model to `FILE` (required; a name ending in .crfsuite: in CRFsuite's format)")
	modelFormat := fs.String("model-format", "", "the model file's `FORMAT`: simdcrf, or crfsuite (CRFsuite's own, without start and end weights; default: crfsuite for a name ending in .crfsuite)")
	algo := fs.String("a", "lbfgs", "training algorithm: lbfgs (L2), l1 (OWL-QN, L1 or elastic net), sgd (L2), ap (averaged perceptron)")
	var params multiFlag
	fs.Var(&params, "p", "set a training parameter `NAME=VALUE` (CRFsuite's names: c1, c2, max_iterations, delta, period, epsilon, num_memories, feature.minfreq, feature.possible_states, feature.possible_transitions, …; simdcrf's: transitions, feature.candidates, feature.sublabels, feature.sublabel_spans, precision, prune.max, prune.threshold; repeatable). prune.max=K (lbfgs, l1) prunes training's forward–backward MarMoT-style: each position keeps its labels whose emission softmax is ≥ prune.threshold (0.01) × the best, at most K, always the gold one; the model tags over such sets too")
	threads := fs.Int("threads", 0, "worker threads for the gradient (0: all cores)")
	holdout := fs.String("e", "", "evaluate on holdout `FILE` during training")
	lexicon := fs.String("lexicon", "", "restrict the words of lexicon `FILE` (lines WORD<TAB>LABEL LABEL…) to those labels, in training and in the model (for tag); with -p feature.candidates=K also the words seen K times in training to their labels there")
	every := fs.Int("every", 1, "evaluate the holdout every `N` iterations")
	sf := addSpecFlags(fs)
	quiet := fs.Bool("q", false, "print no progress")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *modelPath == "" || fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	format := *modelFormat
	switch {
	case format == "" && strings.HasSuffix(*modelPath, ".crfsuite"):
		format = model.FormatCRFsuite
	case format == "":
		format = model.FormatSimdcrf
	case format != model.FormatSimdcrf && format != model.FormatCRFsuite:
		return fmt.Errorf("--model-format %s: want simdcrf or crfsuite", format)
	}
	spec, err := sf.spec()
	if err != nil {
		return err
	}
	spec = spec.Resolve(fs.Arg(0))
	cfg, err := train.Defaults(*algo)
	if err != nil {
		return fmt.Errorf("-a %s: %w", *algo, err)
	}
	// A CRF++ template without a B line has no label-bigram features.
	// (Options checks the spec and parses the template: its errors come
	// here, before any data is read.)
	opts, err := spec.Options()
	if err != nil {
		return err
	}
	if opts.Template != nil && opts.Template.ObsBigram() && format == model.FormatCRFsuite {
		return fmt.Errorf("%s has B lines with %%x (observation-dependent transitions), which CRFsuite's model format cannot hold: write a simdcrf model", *sf.template)
	}
	noBigram := false
	if opts.Template != nil && !opts.Template.Bigram() {
		noBigram = true
		cfg.Transitions = "none"
	}
	for _, p := range params {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			return fmt.Errorf("-p %s: want NAME=VALUE", p)
		}
		if err := cfg.Set(name, value); err != nil {
			return fmt.Errorf("-p %s: %w", p, err)
		}
		if name == "transitions" && noBigram && value != "none" && !*quiet {
			fmt.Fprintf(stderr, "simdcrf learn: warning: %s has no B line, but -p transitions=%s trains label-bigram weights\n", *sf.template, value)
		}
	}
	cfg.Threads = *threads
	cfg.HoldoutEvery = *every
	if format == model.FormatCRFsuite && (cfg.Candidates > 0 || *lexicon != "" || cfg.SubLabels > 0 || len(cfg.SubLabelSpans) > 0 || cfg.PruneMax > 0) {
		return fmt.Errorf("%s: CRFsuite's model format cannot hold candidate labels (-p feature.candidates, --lexicon), sub-label weights (-p feature.sublabels) or label pruning (-p prune.max): write a simdcrf model", *modelPath)
	}
	if format == model.FormatCRFsuite {
		if err := crfsuiteLearn(&cfg, spec, *modelPath, *quiet, stderr); err != nil {
			return err
		}
	}

	start := time.Now()
	bar := newProgressBar(stderr, *quiet)
	loader := corpus.Loader{Progress: bar.file}
	tr, err := loader.Load(fs.Args(), spec)
	bar.done()
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stderr, "read %d sequences, %d items, %d attributes, %d labels in %.2fs\n",
			tr.Seqs, tr.Items, tr.Attrs.Len(), tr.Labels.Len(), time.Since(start).Seconds())
	}
	if *lexicon != "" {
		lex, unknown, err := corpus.ReadLexicon(*lexicon, tr.Labels)
		if err != nil {
			return err
		}
		tr.Data.Lexicon = lex
		if !*quiet {
			fmt.Fprintf(stderr, "lexicon %s: %d words with labels the training data has", *lexicon, lex.Len())
			if unknown > 0 {
				fmt.Fprintf(stderr, " (%d labels it lacks left out)", unknown)
			}
			fmt.Fprintln(stderr)
		}
	}
	autoSub := false
	if spec.Features == "morph" && !paramGiven(params, "feature.sublabels") && cfg.Algorithm != "sgd" && cfg.Algorithm != "ap" && format != model.FormatCRFsuite {
		if n := positional(tr.Data.LabelNames); n > 0 {
			cfg.SubLabels, autoSub = min(n, morphSubLabels), true
			if !*quiet {
				fmt.Fprintf(stderr, "--features morph: the labels are positional (%d characters each): sub-label weights on their first %d characters (-p feature.sublabels=0 for none)\n", n, cfg.SubLabels)
			}
		}
	}
	if *holdout != "" {
		h, err := corpus.LoadHoldout(*holdout, spec, tr)
		if err != nil {
			return err
		}
		cfg.Holdout = h
	}
	if !*quiet {
		fmt.Fprintf(stderr, "%5s %14s %12s %9s %9s %8s\n", "iter", "loss", "|grad|", "features", "holdout", "seconds")
		cfg.Progress = func(p train.Progress) { printProgress(stderr, p) }
	}

	// Ctrl-C stops training cleanly: the trainer returns the best
	// parameters so far and the model is written as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	readSecs := time.Since(start).Seconds()
	tstart := time.Now()
	res, err := train.Train(ctx, &tr.Data, cfg)
	trainSecs := time.Since(tstart).Seconds()
	stop()
	if err != nil {
		return err
	}
	meta := model.Meta{Format: spec.Format, Template: spec.Template, Features: spec.Features, Label: spec.Label, Columns: tr.Columns,
		Trainer: cfg.Algorithm, Params: paramMap(params),
		Stats: model.TrainStats{Iterations: res.Iterations, Loss: res.Loss, Seconds: time.Since(start).Seconds(),
			Sequences: int64(tr.Seqs), Tokens: tr.Items, Reason: res.Reason, Interrupted: res.Interrupted},
		Extra: map[string]string{
			"read_seconds":  strconv.FormatFloat(readSecs, 'f', 3, 64),
			"train_seconds": strconv.FormatFloat(trainSecs, 'f', 3, 64),
			"threads":       strconv.Itoa(cfg.Threads),
		}}
	if autoSub {
		if meta.Params == nil {
			meta.Params = map[string]string{}
		}
		meta.Params["feature.sublabels"] = strconv.Itoa(cfg.SubLabels)
	}
	if format == model.FormatCRFsuite {
		// The attributes the template or feature set made, as names:
		// the model tags CRFsuite attribute files made the same way.
		meta = model.Meta{Format: "crfsuite"}
	}
	m, err := model.New(tr.Labels, tr.Attrs, res.State, res.Trans, meta)
	if err == nil && res.Lexicon != nil {
		m.Lexicon = res.Lexicon
		err = m.Lexicon.Check(tr.Labels.Len())
	}
	if err == nil && res.Prune != nil {
		m.Prune = res.Prune // tagged over the pruned sets, as trained
	}
	if err == nil && res.Sub != nil {
		m.Sub = res.Sub
		err = m.Sub.Check(tr.Labels.Len(), tr.Attrs.Len())
	}
	if err == nil && res.BigramWeights != nil {
		m.Bigram = &model.Bigrams{Attrs: tr.BAttrs, Ptr: res.BigramPtr, Pairs: res.BigramPairs, Weights: res.BigramWeights}
	}
	if err == nil {
		m, err = m.Compact()
	}
	if err != nil {
		return err
	}
	if format == model.FormatCRFsuite {
		err = m.WriteCRFsuiteFile(*modelPath)
	} else {
		err = m.WriteFile(*modelPath)
	}
	if err != nil {
		return err
	}
	if !*quiet {
		how := res.Reason
		if res.Interrupted {
			how = "interrupted"
		}
		fmt.Fprintf(stderr, "%d iterations (%s), loss %.4f, %.2fs; model written to %s\n",
			res.Iterations, how, res.Loss, time.Since(start).Seconds(), *modelPath)
	}
	return nil
}

// morphSubLabels is how many leading characters of positional labels get
// sub-label weights with --features morph: all 15 of Czech XPOS. On UD
// Czech CLTT (train → test) they took the accuracy from 82.02 % to 84.49 %
// (dev 83.36 → 85.67); the first 5 only (part of speech, detailed part of
// speech, gender, number, case) to 84.17 % (dev 85.38).
const morphSubLabels = 15

// positional returns the length of the labels when they are positional
// tags: at least 4 labels, all of the same length of at least 4 bytes, none
// with white space (Czech XPOS: 15); else 0.
func positional(labels []string) int {
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

// paramGiven reports whether -p NAME=… was given.
func paramGiven(params []string, name string) bool {
	for _, p := range params {
		if n, _, _ := strings.Cut(p, "="); n == name {
			return true
		}
	}
	return false
}

// paramMap returns -p NAME=VALUE pairs as a map (the last value of a name wins).
func paramMap(params []string) map[string]string {
	if len(params) == 0 {
		return nil
	}
	m := make(map[string]string, len(params))
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return m
}

// crfsuiteLearn sets cfg to train only what CRFsuite's model format holds,
// and says what that leaves out: start and end weights (held at 0), a
// trained shared default of tied transitions (tied transitions hold it at 0,
// CRFsuite's score for a label bigram never seen, unless
// feature.possible_transitions trains it: then dense), and the template or
// feature set (the model holds the attribute names they make).
func crfsuiteLearn(cfg *train.Config, spec corpus.Spec, path string, quiet bool, stderr io.Writer) error {
	if cfg.PossibleTransitions {
		switch cfg.Transitions {
		case "tied":
			return fmt.Errorf("%s is written in CRFsuite's format, which cannot hold the shared default weight that tied transitions train with feature.possible_transitions=1 (CRFsuite gives every label bigram its own weight then): train with -p transitions=dense", path)
		case "auto":
			cfg.Transitions = "dense"
		}
	}
	cfg.NoStartEnd = true
	if quiet {
		return nil
	}
	fmt.Fprintf(stderr, "simdcrf learn: %s is written in CRFsuite's format: trained without start and end weights (CRFsuite has none)\n", path)
	if spec.Template != "" || spec.Features != "" {
		fmt.Fprintf(stderr, "simdcrf learn: the model holds the attribute names the %s makes, not the %[1]s itself: it tags CRFsuite attribute files made with it\n", map[bool]string{true: "template", false: "feature set"}[spec.Template != ""])
	}
	return nil
}
