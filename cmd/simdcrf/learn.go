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
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/learn"
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
func (f specFlags) spec() (format.Spec, error) {
	s := format.Spec{Format: *f.format, Features: *f.features, Label: *f.label}
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
	fs.Var(&params, "p", "set a training parameter `NAME=VALUE` (CRFsuite's names: c1, c2, max_iterations, delta, period, epsilon, num_memories, feature.minfreq, feature.possible_states, feature.possible_transitions, …; simdcrf's: transitions, feature.candidates, feature.sublabels, feature.sublabel_spans, feature.guesser, precision, prune.max, prune.threshold, prune.by, prune.pruner_iterations, prune.first_max, prune.first_threshold; repeatable). prune.max=K (lbfgs, l1) prunes training's forward–backward MarMoT-style: each position keeps its labels whose emission softmax is ≥ prune.threshold (0.01) × the best, at most K, always the gold one; the model tags over such sets too. prune.by=zeroth takes the sets from a zeroth-order pruner trained first (at most prune.pruner_iterations iterations) and holds them fixed, so that L-BFGS ends on its stopping rule; prune.by=first then trains a first-order pruner over those sets and narrows them by its posterior marginals to at most prune.first_max labels (half of prune.max) at least prune.first_threshold (0.01) × the best; prune.by=self from the weights being trained, at every evaluation")
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
	mf := *modelFormat
	switch {
	case mf == "" && strings.HasSuffix(*modelPath, ".crfsuite"):
		mf = model.FormatCRFsuite
	case mf == "":
		mf = model.FormatSimdcrf
	case mf != model.FormatSimdcrf && mf != model.FormatCRFsuite:
		return fmt.Errorf("--model-format %s: want simdcrf or crfsuite", mf)
	}
	spec, err := sf.spec()
	if err != nil {
		return err
	}
	job := learn.Job{Algorithm: *algo, Params: params, Spec: spec.Resolve(fs.Arg(0)),
		CRFsuite: mf == model.FormatCRFsuite, Path: *modelPath, Lexicon: *lexicon != "",
		Threads: *threads, Every: *every, AlgoName: "-a", ParamName: "-p"}
	if !*quiet {
		job.Note = func(s string) { io.WriteString(stderr, s) }
	}
	cfg, err := job.Config()
	if err != nil {
		return err
	}

	start := time.Now()
	guess, err := job.Guess(fs.Args())
	if err != nil {
		return err
	}
	if guess {
		g, err := job.Guesser(fs.Args())
		if err != nil {
			return err
		}
		job.Spec.Guesser = g
		if g != nil && !*quiet {
			known, rare, suffixes := g.Len()
			fmt.Fprintf(stderr, "unknown-word guesser: %d rare words, %d suffixes, %d frequent words (-p feature.guesser=0 for none)\n", rare, suffixes, known)
		}
	}
	bar := newProgressBar(stderr, *quiet)
	loader := corpus.Loader{Progress: bar.file}
	tr, err := loader.Load(fs.Args(), job.Spec)
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
	autoSub := job.SubLabels(&cfg, tr.Data.LabelNames)
	job.Prune(&cfg, tr.Data.Labels, tr.Data.Bigram != nil && tr.Data.NumBigramAttrs > 0)
	if *holdout != "" {
		h, err := corpus.LoadHoldout(*holdout, job.Spec, tr)
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
	meta := job.Meta(tr, cfg, autoSub, res, time.Since(start).Seconds(), map[string]string{
		"read_seconds":  strconv.FormatFloat(readSecs, 'f', 3, 64),
		"train_seconds": strconv.FormatFloat(trainSecs, 'f', 3, 64),
		"threads":       strconv.Itoa(cfg.Threads),
	})
	m, err := learn.Model(tr, res, meta)
	if err != nil {
		return err
	}
	if job.CRFsuite {
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
