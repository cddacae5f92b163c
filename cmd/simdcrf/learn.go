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
		features: fs.String("features", "", "built-in feature `SET` (pos) for conll and conllu input"),
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

const learnSynopsis = "learn -m MODEL [--model-format simdcrf|crfsuite] [-a lbfgs|l1|sgd|ap] [-p NAME=VALUE]... [--threads N] [-e HOLDOUT] [--format crfsuite|conll|conllu] [--template FILE] [--features pos] [--label upos|xpos] TRAIN..."

func cmdLearn(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("learn", learnSynopsis, stderr)
	modelPath := fs.String("m", "", "write the model to `FILE` (required; a name ending in .crfsuite: in CRFsuite's format)")
	modelFormat := fs.String("model-format", "", "the model file's `FORMAT`: simdcrf, or crfsuite (CRFsuite's own, without start and end weights; default: crfsuite for a name ending in .crfsuite)")
	algo := fs.String("a", "lbfgs", "training algorithm: lbfgs (L2), l1 (OWL-QN, L1 or elastic net), sgd (L2), ap (averaged perceptron)")
	var params multiFlag
	fs.Var(&params, "p", "set a training parameter `NAME=VALUE` (CRFsuite's names: c1, c2, max_iterations, delta, period, epsilon, num_memories, feature.minfreq, feature.possible_states, feature.possible_transitions, …; repeatable)")
	threads := fs.Int("threads", 0, "worker threads for the gradient (0: all cores)")
	holdout := fs.String("e", "", "evaluate on holdout `FILE` during training")
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
	if format == model.FormatCRFsuite {
		// The attributes the template or feature set made, as names:
		// the model tags CRFsuite attribute files made the same way.
		meta = model.Meta{Format: "crfsuite"}
	}
	m, err := model.New(tr.Labels, tr.Attrs, res.State, res.Trans, meta)
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
