package simdcrf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/learn"
	"github.com/simdcrf/simdcrf/train"
)

// Progress reports one iteration of training.
type Progress struct {
	Iteration int
	Loss      float64 // the objective after this iteration
	Holdout   float64 // item accuracy on the holdout sequences, NaN when there are none
	Seconds   float64 // since Train started
	// Pruner marks the iterations of the pruners' training, which come
	// before the model's own: the zeroth-order pruner's (prune.by=zeroth
	// and first), then the first-order one's (prune.by=first), which
	// FirstOrder marks too.
	Pruner, FirstOrder bool
}

// Options configure a Trainer. The zero value trains with L-BFGS and
// CRFsuite's defaults from attributes (Append).
type Options struct {
	Algorithm string            // "lbfgs" (also when empty), "l1", "sgd", "ap": as `simdcrf learn -a`
	Params    map[string]string // as `simdcrf learn -p NAME=VALUE`: c1, c2, max_iterations, transitions, …
	Threads   int               // 0: all cores
	Progress  func(Progress)    // called after every iteration when not nil

	// Template is a CRF++ feature template (its text), and Features a
	// built-in feature set ("pos", or "morph" for the positional tags of
	// inflected languages), as `simdcrf learn --template` and
	// `--features`: with either, sequences are tokens (AppendTokens), and
	// the model extracts its attributes from them itself (TagTokens).
	// With Features, training also learns an unknown-word guesser from
	// the tokens' words and labels (Params "feature.guesser": "0" for
	// none), so the tokens are held until Train.
	Template string
	Features string
	// ModelFormat is "simdcrf" (also when empty) or "crfsuite": train only
	// what CRFsuite's model format holds (no start and end weights,
	// candidate labels, sub-labels or pruning), as `simdcrf learn
	// --model-format crfsuite`, so that SaveCRFsuite can write the model.
	ModelFormat string
}

// A Trainer trains a Model from labelled sequences: Append (or
// AppendTokens) them, then Train. It is not for concurrent use.
type Trainer struct {
	o      Options
	job    learn.Job
	cfg    train.Config
	tokens *format.Tokens // with a template or feature set
	loader corpus.Loader
	seq    format.Sequence
	n      int               // sequences appended
	hold   []format.Sequence // holdout sequences, copied, encoded by Train
	done   bool
	// With the unknown-word guesser (learn.Job.Guess), whose attributes
	// need every training word first, the tokens wait in raw (and
	// rawHold) until Train learns the guesser and extracts them.
	guess   bool
	raw     []rawSeq
	rawHold []rawSeq
	cols    int // the columns of the first raw sequence
}

// rawSeq is a sequence of tokens and labels, copied.
type rawSeq struct {
	tokens [][]string
	labels []string
}

// NewTrainer returns a Trainer with the options o, checked: an unknown
// algorithm or parameter, or a value out of range, is an error.
func NewTrainer(o Options) (*Trainer, error) {
	spec := format.Spec{Format: "crfsuite"}
	if o.Template != "" || o.Features != "" {
		spec = format.Spec{Format: "conll", Template: o.Template, TemplateName: "Options.Template", Features: o.Features}
	}
	var crfsuite bool
	switch o.ModelFormat {
	case "", "simdcrf":
	case "crfsuite":
		crfsuite = true
	default:
		return nil, fmt.Errorf("simdcrf: Options.ModelFormat %q: want simdcrf or crfsuite", o.ModelFormat)
	}
	if o.Threads < 0 {
		return nil, fmt.Errorf("simdcrf: Options.Threads %d: want 0 (all cores) or more", o.Threads)
	}
	t := &Trainer{o: o, job: learn.Job{Algorithm: o.Algorithm, Spec: spec, CRFsuite: crfsuite,
		Path: "the model", Threads: o.Threads, Every: 1, AlgoName: "simdcrf: Options.Algorithm", ParamName: "simdcrf: Options.Params"}}
	for _, k := range slices.Sorted(maps.Keys(o.Params)) {
		t.job.Params = append(t.job.Params, k+"="+o.Params[k])
	}
	cfg, err := t.job.Config()
	if err != nil {
		return nil, err
	}
	t.cfg = cfg
	if spec.Format == "conll" {
		opts, err := spec.Options()
		if err != nil {
			return nil, err
		}
		if t.tokens, err = format.NewTokens(opts); err != nil {
			return nil, err
		}
		if t.guess, err = t.job.Guess(nil); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Append adds a training sequence: the attributes of each position and
// its label. An empty sequence is left out. For a Trainer with a template
// or feature set, use AppendTokens.
func (t *Trainer) Append(xseq []Item, yseq []string) error {
	i := t.n
	if err := t.usable("Append", false); err != nil {
		return err
	}
	t.n++
	if yseq == nil && len(xseq) > 0 {
		return seqError(i, false, -1, errors.New("no labels"))
	}
	if pos, err := fromItems(&t.seq, xseq, yseq); err != nil {
		return seqError(i, false, pos, err)
	}
	if err := t.loader.AddSequence(&t.seq, 0); err != nil {
		return seqError(i, false, -1, err)
	}
	return nil
}

// AppendHoldout adds a sequence to evaluate on after every iteration
// (Progress.Holdout): it changes nothing in the model. Labels the training
// sequences do not have count as errors.
func (t *Trainer) AppendHoldout(xseq []Item, yseq []string) error {
	i := len(t.hold)
	if err := t.usable("AppendHoldout", false); err != nil {
		return err
	}
	if len(yseq) == 0 && len(xseq) > 0 {
		return seqError(i, true, -1, errors.New("no labels"))
	}
	if pos, err := fromItems(&t.seq, xseq, yseq); err != nil {
		return seqError(i, true, pos, err)
	}
	t.hold = append(t.hold, cloneSeq(&t.seq))
	return nil
}

// AppendTokens adds a training sequence of tokens, each a row of columns
// (the word first, then whatever columns the template reads), with its
// labels, for a Trainer with Options.Template or Options.Features: the
// attributes are the template's or feature set's, as `simdcrf learn`
// extracts them from a column file with the same rows. Every token of
// every sequence must have the same number of columns.
func (t *Trainer) AppendTokens(tokens [][]string, labels []string) error {
	i := t.n
	if err := t.usable("AppendTokens", true); err != nil {
		return err
	}
	t.n++
	if pos, err := t.tokenSeq(tokens, labels); err != nil {
		return seqError(i, false, pos, err)
	}
	if t.guess {
		if len(tokens) == 0 {
			return nil
		}
		if c := columns(tokens); len(t.raw) > 0 && c != t.cols {
			// (as the loader would say at Train)
			return seqError(i, false, -1, fmt.Errorf("%d observation columns, but the sequences before have %d", c, t.cols))
		}
		t.cols = columns(tokens)
		t.raw = append(t.raw, copyRaw(tokens, labels))
		return nil
	}
	if err := t.loader.AddSequence(&t.seq, columns(tokens)); err != nil {
		return seqError(i, false, -1, err)
	}
	return nil
}

// copyRaw copies a sequence of tokens and its labels.
func copyRaw(tokens [][]string, labels []string) rawSeq {
	r := rawSeq{tokens: make([][]string, len(tokens)), labels: slices.Clone(labels)}
	for i, row := range tokens {
		r.tokens[i] = slices.Clone(row)
	}
	return r
}

// extractRaw learns the guesser from the raw training sequences, then
// extracts and loads them, and the raw holdout's, with its attributes.
func (t *Trainer) extractRaw() error {
	var b format.GuesserBuilder
	for _, r := range t.raw {
		for k, row := range r.tokens {
			if len(row) > 0 && k < len(r.labels) {
				b.Add([]byte(row[0]), []byte(r.labels[k]))
			}
		}
	}
	spec := t.job.Spec
	spec.Guesser = learn.BuildGuesser(&b)
	opts, err := spec.Options()
	if err != nil {
		return err
	}
	if t.tokens, err = format.NewTokens(opts); err != nil {
		return err
	}
	t.job.Spec = spec
	for i, r := range t.raw {
		if pos, err := t.tokenSeq(r.tokens, r.labels); err != nil {
			return seqError(i, false, pos, err)
		}
		if err := t.loader.AddSequence(&t.seq, columns(r.tokens)); err != nil {
			return seqError(i, false, -1, err)
		}
	}
	for _, r := range t.rawHold {
		if _, err := t.tokenSeq(r.tokens, r.labels); err != nil {
			return err // (checked by AppendHoldoutTokens)
		}
		t.hold = append(t.hold, cloneSeq(&t.seq))
	}
	t.raw, t.rawHold = nil, nil
	return nil
}

// AppendHoldoutTokens is AppendHoldout for tokens (see AppendTokens).
func (t *Trainer) AppendHoldoutTokens(tokens [][]string, labels []string) error {
	i := len(t.hold)
	if err := t.usable("AppendHoldoutTokens", true); err != nil {
		return err
	}
	if pos, err := t.tokenSeq(tokens, labels); err != nil {
		return seqError(i, true, pos, err)
	}
	if t.guess {
		t.rawHold = append(t.rawHold, copyRaw(tokens, labels))
		return nil
	}
	t.hold = append(t.hold, cloneSeq(&t.seq))
	return nil
}

// columns returns the number of columns of a sentence's tokens.
func columns(tokens [][]string) int {
	if len(tokens) == 0 {
		return 0
	}
	return len(tokens[0])
}

// tokenSeq sets t.seq to the attributes of tokens with labels.
func (t *Trainer) tokenSeq(tokens [][]string, labels []string) (int, error) {
	if len(tokens) > 0 && labels == nil {
		return -1, errors.New("no labels")
	}
	for i, l := range labels {
		if l == "" && i < len(tokens) {
			return i, errors.New("empty label")
		}
	}
	if err := t.tokens.Sequence(&t.seq, tokens, labels); err != nil {
		return -1, err
	}
	return 0, nil
}

// usable reports why a method cannot be called now.
func (t *Trainer) usable(method string, tokens bool) error {
	switch {
	case t.done:
		return fmt.Errorf("simdcrf: Trainer.%s after Train", method)
	case tokens && t.tokens == nil:
		return fmt.Errorf("simdcrf: Trainer.%s needs Options.Template or Options.Features (use Append for attributes)", method)
	case !tokens && t.tokens != nil:
		return fmt.Errorf("simdcrf: Trainer.%s: this Trainer extracts attributes from tokens (Options.Template or Options.Features): use %sTokens", method, method)
	}
	return nil
}

// cloneSeq returns a copy of s that shares no memory with it.
func cloneSeq(s *format.Sequence) format.Sequence {
	c := format.Sequence{File: s.File, Line: s.Line, Weight: s.Weight, Lines: slices.Clone(s.Lines),
		Ptr: slices.Clone(s.Ptr), Values: slices.Clone(s.Values), BPtr: slices.Clone(s.BPtr)}
	clone := func(b [][]byte) [][]byte {
		if b == nil {
			return nil
		}
		out := make([][]byte, len(b))
		for i := range b {
			out[i] = bytes.Clone(b[i])
		}
		return out
	}
	c.Labels, c.Names, c.Words, c.BNames = clone(s.Labels), clone(s.Names), clone(s.Words), clone(s.BNames)
	return c
}

// Train trains the model on the sequences appended, with the options of
// NewTrainer, and can be called once. On one thread, the model is the one
// `simdcrf learn` trains from the same sequences in a file with the same
// options, weight for weight.
//
// Cancelling ctx stops training after the iteration under way: Train then
// returns the model of the last completed iteration together with ctx's
// error (context.Canceled or context.DeadlineExceeded). Cancelled before
// training begins, it returns no model and ctx's error.
func (t *Trainer) Train(ctx context.Context) (*Model, error) {
	if t.done {
		return nil, errors.New("simdcrf: Trainer.Train called twice")
	}
	t.done = true
	if t.n == 0 {
		return nil, errors.New("simdcrf: no training sequences (Append some)")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	if t.guess {
		if err := t.extractRaw(); err != nil {
			return nil, err
		}
	}
	tr, err := t.loader.Finish()
	if err != nil {
		return nil, fmt.Errorf("simdcrf: %w", err)
	}
	cfg := t.cfg
	autoSub := t.job.SubLabels(&cfg, tr.Data.LabelNames)
	t.job.Prune(&cfg, tr.Data.Labels, tr.Data.Bigram != nil && tr.Data.NumBigramAttrs > 0)
	if len(t.hold) > 0 {
		h := tr.Holdout()
		for i := range t.hold {
			if err := h.Add(&t.hold[i]); err != nil {
				return nil, seqError(i, true, -1, err)
			}
		}
		if h.Len() > 0 {
			cfg.Holdout = h.Data()
		}
		t.hold = nil
	}
	if f := t.o.Progress; f != nil {
		cfg.Progress = func(p train.Progress) {
			h := p.Holdout
			if h < 0 {
				h = math.NaN()
			}
			f(Progress{Iteration: p.Iteration, Loss: p.Loss, Holdout: h, Seconds: time.Since(start).Seconds(), Pruner: p.Pruner, FirstOrder: p.FirstOrder})
		}
	}
	res, err := train.Train(ctx, &tr.Data, cfg)
	if err != nil {
		return nil, fmt.Errorf("simdcrf: %w", err)
	}
	m, err := learn.Model(tr, res, t.job.Meta(tr, cfg, autoSub, res, time.Since(start).Seconds(), nil))
	if err != nil {
		return nil, fmt.Errorf("simdcrf: %w", err)
	}
	if res.Interrupted {
		return newModel(m), ctx.Err()
	}
	return newModel(m), nil
}
