package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/cli"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/model"
)

// recall is what benchRecall measures of a pruned model on labelled files.
type recall struct {
	Tokens  int     `json:"tokens"`
	InSet   float64 `json:"gold_in_set"`     // share of tokens whose pruned set holds the gold label
	SetSize float64 `json:"mean_set"`        // labels per token
	Acc     float64 `json:"item_accuracy"`   // tagged as simdcrf tag tags
	AccIn   float64 `json:"accuracy_in_set"` // among the tokens whose set holds the gold label
}

// tally counts what recall reports, for a class of tokens.
type tally struct{ tokens, in, size, right, rightIn int }

func (c tally) recall() recall {
	r := recall{Tokens: c.tokens}
	if c.tokens > 0 {
		n := float64(c.tokens)
		r.InSet, r.SetSize, r.Acc = float64(c.in)/n, float64(c.size)/n, float64(c.right)/n
	}
	if c.in > 0 {
		r.AccIn = float64(c.rightIn) / float64(c.in)
	}
	return r
}

func (r recall) String() string {
	return fmt.Sprintf("tokens %d, gold label in the pruned set %.2f %%, %.2f labels a set, accuracy %.2f %% (%.2f %% where the set holds the gold label)",
		r.Tokens, 100*r.InSet, r.SetSize, 100*r.Acc, 100*r.AccIn)
}

// benchRecall prints how often a pruned model's sets (its pruner's, with
// a zeroth-order pruner) hold the gold label of labelled files: the
// ceiling pruning puts on accuracy (docs/pruned-training.md). With -max,
// any model's own scores prune: a transitions=none model is a pruner.
// With -known, the same for the tokens whose word the given (training)
// files hold and for the others, the unknown words.
func benchRecall(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("recall", "recall -m MODEL [-known TRAIN,...] FILE...", stderr)
	modelPath := fs.String("m", "", "a model trained with pruning (-p prune.max), or any with -max")
	maxK := fs.Int("max", 0, "prune with this cap instead of the model's rule (0: the model's); a transitions=none model so measured is a pruner")
	tau := fs.Float64("threshold", 0.01, "with -max: the threshold")
	knownFiles := fs.String("known", "", "comma-separated files (the training data) whose words count as known: known and unknown words measured apart")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *modelPath == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "simdcrf-bench recall: want -m MODEL and labelled files")
		return errUsage
	}
	m, err := model.Load(*modelPath)
	if err != nil {
		return err
	}
	if *maxK > 0 {
		rule := prune.Rule{Max: *maxK, Threshold: *tau}
		if err := rule.Check(); err != nil {
			return err
		}
		m.Prune = &rule
	}
	var known map[string]bool
	if *knownFiles != "" {
		if known, err = words(m, strings.Split(*knownFiles, ",")); err != nil {
			return err
		}
	}
	r, err := pruneRecall(m, fs.Args(), known)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, r[0])
	if known != nil {
		fmt.Fprintf(stdout, "known words: %v\nunknown words: %v\n", r[1], r[2])
	}
	return nil
}

// eachSeq calls f with every sequence of the files, read as m reads text.
func eachSeq(m *model.Model, paths []string, f func(*format.Sequence) error) error {
	spec, err := m.Meta.Spec.ForTagging(format.Spec{})
	if err != nil {
		return err
	}
	var seq format.Sequence
	for _, path := range paths {
		in, err := corpus.Open(path, spec)
		if err != nil {
			return err
		}
		for {
			err := in.Read(&seq)
			if err == io.EOF {
				break
			}
			if err == nil && seq.Len() > 0 {
				err = f(&seq)
			}
			if err != nil {
				in.Close()
				return err
			}
		}
		in.Close()
	}
	return nil
}

// words returns the words of the files.
func words(m *model.Model, paths []string) (map[string]bool, error) {
	w := map[string]bool{}
	err := eachSeq(m, paths, func(seq *format.Sequence) error {
		if seq.Words == nil {
			return &format.Error{File: seq.File, Line: seq.Line, Msg: "no words (attribute files): -known needs column input"}
		}
		for _, x := range seq.Words {
			w[string(x)] = true
		}
		return nil
	})
	return w, err
}

// pruneRecall measures m's pruned sets on the labelled files: all tokens,
// then (with known words) the tokens of known and of unknown words.
func pruneRecall(m *model.Model, paths []string, known map[string]bool) ([3]recall, error) {
	var r [3]recall
	if m.Prune == nil {
		return r, fmt.Errorf("the model does not prune (trained without prune.max)")
	}
	tg, enc := m.NewTagger(), m.NewEncoder()
	var (
		sets [][]int32
		out  model.Output
		c    [3]tally
	)
	err := eachSeq(m, paths, func(seq *format.Sequence) error {
		if seq.Labels == nil {
			return &format.Error{File: seq.File, Line: seq.Line, Msg: "no labels to measure against"}
		}
		if known != nil && seq.Words == nil {
			return &format.Error{File: seq.File, Line: seq.Line, Msg: "no words (attribute files): -known needs column input"}
		}
		e := enc.Encode(seq)
		var err error
		if sets, err = tg.PrunedSets(sets, e.Seq, e.Candidates); err != nil {
			return err
		}
		if err := tg.Tag(e.Seq, e.Options(model.Options{}), &out); err != nil {
			return err
		}
		for t := range seq.Len() {
			g, ok := m.Labels.Lookup(string(seq.Labels[t]))
			hit := false
			for _, y := range sets[t] {
				hit = hit || ok && y == g
			}
			right := ok && out.Labels[t] == g
			classes := []int{0}
			if known != nil {
				classes = append(classes, map[bool]int{true: 1, false: 2}[known[string(seq.Words[t])]])
			}
			for _, k := range classes {
				x := &c[k]
				x.tokens++
				x.size += len(sets[t])
				if hit {
					x.in++
				}
				if right {
					x.right++
					if hit {
						x.rightIn++
					}
				}
			}
		}
		return nil
	})
	for k := range c {
		r[k] = c[k].recall()
	}
	return r, err
}
