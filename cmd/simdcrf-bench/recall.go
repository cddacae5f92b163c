package main

import (
	"fmt"
	"io"

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

// benchRecall prints how often a pruned model's sets (its pruner's, with
// a zeroth-order pruner) hold the gold label of labelled files: the
// ceiling pruning puts on accuracy (docs/pruned-training.md). With -max,
// any model's own scores prune: a transitions=none model is a pruner.
func benchRecall(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("recall", "recall -m MODEL FILE...", stderr)
	modelPath := fs.String("m", "", "a model trained with pruning (-p prune.max), or any with -max")
	maxK := fs.Int("max", 0, "prune with this cap instead of the model's rule (0: the model's); a transitions=none model so measured is a pruner")
	tau := fs.Float64("threshold", 0.01, "with -max: the threshold")
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
	r, err := pruneRecall(m, fs.Args())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tokens %d, gold label in the pruned set %.2f %%, %.2f labels a set, accuracy %.2f %% (%.2f %% where the set holds the gold label)\n",
		r.Tokens, 100*r.InSet, r.SetSize, 100*r.Acc, 100*r.AccIn)
	return nil
}

// pruneRecall measures m's pruning on the labelled files (read as m
// expects).
func pruneRecall(m *model.Model, paths []string) (recall, error) {
	var r recall
	if m.Prune == nil {
		return r, fmt.Errorf("the model does not prune (trained without prune.max)")
	}
	spec, err := m.Meta.Spec.ForTagging(format.Spec{})
	if err != nil {
		return r, err
	}
	tg, enc := m.NewTagger(), m.NewEncoder()
	var (
		seq             format.Sequence
		sets            [][]int32
		out             model.Output
		in, size, right int
		rightIn         int
	)
	for _, path := range paths {
		f, err := corpus.Open(path, spec)
		if err != nil {
			return r, err
		}
		for {
			err := f.Read(&seq)
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return r, err
			}
			if seq.Len() == 0 {
				continue
			}
			if seq.Labels == nil {
				f.Close()
				return r, &format.Error{File: seq.File, Line: seq.Line, Msg: "no labels to measure against"}
			}
			e := enc.Encode(&seq)
			T := seq.Len()
			if sets, err = tg.PrunedSets(sets, e.Seq, e.Candidates); err != nil {
				f.Close()
				return r, err
			}
			if err := tg.Tag(e.Seq, e.Options(model.Options{}), &out); err != nil {
				f.Close()
				return r, err
			}
			for t := range T {
				g, known := m.Labels.Lookup(string(seq.Labels[t]))
				hit := false
				for _, y := range sets[t] {
					hit = hit || known && y == g
				}
				r.Tokens++
				size += len(sets[t])
				if hit {
					in++
				}
				if known && out.Labels[t] == g {
					right++
					if hit {
						rightIn++
					}
				}
			}
		}
		f.Close()
	}
	if r.Tokens > 0 {
		n := float64(r.Tokens)
		r.InSet, r.SetSize, r.Acc = float64(in)/n, float64(size)/n, float64(right)/n
	}
	if in > 0 {
		r.AccIn = float64(rightIn) / float64(in)
	}
	return r, nil
}
