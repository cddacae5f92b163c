package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/learn"
	"github.com/simdcrf/simdcrf/train"
)

// The demo's data: a sample of UD English EWT (CC BY-SA 4.0; see
// demodata/README.md for the source, the attribution and how it was made).
//
//go:embed demodata/en_ewt-sample-train.conllu.gz demodata/en_ewt-sample-test.conllu.gz
var demoData embed.FS

const (
	demoTrain = "demodata/en_ewt-sample-train.conllu.gz"
	demoTest  = "demodata/en_ewt-sample-test.conllu.gz"
)

// demoSpec is how the demo reads its data: CoNLL-U, XPOS labels, the
// built-in part-of-speech features.
var demoSpec = format.Spec{Format: "conllu", Features: "pos", Label: "xpos"}

func cmdDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "demo [-m MODEL] [--threads N] [--json]", stderr)
	modelPath := fs.String("m", "", "also keep the model in `FILE`")
	threads := fs.Int("threads", 0, "threads for training and tagging (0: all cores)")
	asJSON := fs.Bool("json", false, "print the evaluation as one JSON object")
	quiet := fs.Bool("q", false, "print no training progress")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	spec := demoSpec
	open := func(name string) (*corpus.File, error) {
		data, err := demoData.ReadFile(name)
		if err != nil {
			return nil, err
		}
		return corpus.OpenBytes(data, filepath.Base(name), spec)
	}

	fmt.Fprintf(stderr, "simdcrf demo: part-of-speech tagging (XPOS) on a sample of UD English EWT (CC BY-SA 4.0),\n"+
		"training on 4,000 sentences of its train file and tagging its whole test file.\n")
	start := time.Now()
	// The unknown-word guesser, as learn learns it by default for a
	// feature set: a pass of its own over the training data first.
	f, err := open(demoTrain)
	if err != nil {
		return err
	}
	var gb format.GuesserBuilder
	if err := learn.AddWords(&gb, f); err != nil {
		return err
	}
	spec.Guesser = learn.BuildGuesser(&gb)
	if f, err = open(demoTrain); err != nil {
		return err
	}
	var loader corpus.Loader
	if err := loader.Add(f); err != nil {
		return err
	}
	tr, err := loader.Finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "read %d sentences, %d words, %d attributes, %d labels in %.2fs\n",
		tr.Seqs, tr.Items, tr.Attrs.Len(), tr.Labels.Len(), time.Since(start).Seconds())

	job := learn.Job{Algorithm: "lbfgs", Spec: spec, Threads: *threads}
	cfg, err := job.Config()
	if err != nil {
		return err
	}
	autoSub := job.SubLabels(&cfg, tr.Data.LabelNames)
	if !*quiet {
		fmt.Fprintf(stderr, "%5s %14s %12s %9s %9s %8s\n", "iter", "loss", "|grad|", "features", "holdout", "seconds")
		cfg.Progress = func(p train.Progress) { printProgress(stderr, p) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tstart := time.Now()
	res, err := train.Train(ctx, &tr.Data, cfg)
	stop()
	if err != nil {
		return err
	}
	trainSecs := time.Since(tstart).Seconds()
	m, err := learn.Model(tr, res, job.Meta(tr, cfg, autoSub, res, trainSecs, nil))
	if err != nil {
		return err
	}
	if *modelPath != "" {
		if err := m.WriteFile(*modelPath); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "trained in %.2fs (%d iterations, %s)\n", trainSecs, res.Iterations, res.Reason)

	tf, err := open(demoTest)
	if err != nil {
		return err
	}
	tstart = time.Now()
	r, err := tagFiles(m, []*corpus.File{tf}, tagOptions{evaluate: true, quiet: true, threads: *threads}, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tagged %d words in %.3fs\n", r.Tokens, time.Since(tstart).Seconds())
	return writeEval(stdout, r, *asJSON)
}
