package crfbeam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
)

func init() {
	beam.RegisterType(reflect.TypeOf(Tagged{}))
	register.DoFn4x1[context.Context, Sequence, func(Tagged), func(DeadLetter), error](&tagFn{})
	register.Emitter1[Tagged]()
}

var (
	sequencesTagged = beam.NewCounter("simdcrf", "sequences")
	tokensTagged    = beam.NewCounter("simdcrf", "tokens")
	deadLetters     = beam.NewCounter("simdcrf", "dead_letters")
)

// setups counts the tagging DoFns set up (instances), for tests.
var setups atomic.Int64

// Tagged is a tagged sequence: what simdcrf tag prints for it, and where it
// is.
type Tagged struct {
	File  string
	Index int64
	Line  int64
	// Text is what simdcrf tag prints for the sequence with the same
	// options, byte for byte (model.AppendText).
	Text []byte
	// Labels (the best labelling) and Reference (the sequence's own
	// labels) are kept for Evaluate when TagOptions.Evaluate is set.
	Labels, Reference []string
}

// TagOptions say what Tag does.
type TagOptions struct {
	// Model is the model file: a local path or any URL Beam's file
	// systems know. Each worker process loads it once (LoadModel).
	Model string
	// Format reads the sequences in another format than the model's (as
	// simdcrf tag --format; only for models without a template or
	// feature set).
	Format string
	// Text is what to print, as simdcrf tag's -r, -p, -i, -l and -n.
	Text model.TextOptions
	// Evaluate keeps each sequence's labels and reference labels in
	// Tagged, for Evaluate; a sequence without reference labels is then a
	// dead letter.
	Evaluate bool
}

// Tag tags sequences with the model of o: the best labelling, and the
// probabilities and marginals o.Text asks for, printed as simdcrf tag prints
// them. Sequences it cannot read or tag go to dead.
func Tag(s beam.Scope, seqs beam.PCollection, o TagOptions) (tagged, dead beam.PCollection) {
	s = s.Scope("crfbeam.Tag")
	return beam.ParDo2(s, &tagFn{tagger: tagger{Model: o.Model, Format: o.Format, Text: o.Text, Evaluate: o.Evaluate}}, seqs)
}

// Spec returns how to read data for m given the input options a command
// was given (empty fields: not given; the template as text): as m was
// trained, with --format, --label, --features and --template checked
// against it exactly as simdcrf tag checks them (format.Spec.ForTagging).
func Spec(m *model.Model, given format.Spec) (format.Spec, error) {
	return m.Meta.Spec.ForTagging(given)
}

// tagger tags parsed sequences with a model and prints them: what tagFn
// and readTagFn share.
type tagger struct {
	Model    string
	Format   string
	Text     model.TextOptions
	Evaluate bool

	l      *loaded
	enc    *model.Encoder
	out    model.Output
	gold   []string
	intern map[string]string
	buf    []byte
}

// setup gets the model from the process's cache (loading it if it is the
// first) and returns how to read input for it.
func (t *tagger) setup(ctx context.Context) (format.Options, error) {
	setups.Add(1)
	t.l = cached(ctx, t.Model)
	if t.l.err != nil {
		return format.Options{}, t.l.err
	}
	spec, err := Spec(t.l.m, format.Spec{Format: t.Format})
	if err != nil {
		return format.Options{}, fmt.Errorf("%s: %w", t.Model, err)
	}
	o, err := spec.Resolve("").Options()
	if err != nil {
		return format.Options{}, fmt.Errorf("%s: %w", t.Model, err)
	}
	t.enc = t.l.m.NewEncoder()
	t.intern = map[string]string{}
	for _, l := range t.l.labels {
		t.intern[l] = l
	}
	return o, nil
}

// tagged is what tag returns for a sequence: what simdcrf tag prints for it
// and, with Evaluate, its labels and reference labels; or why it was
// rejected (Err, at line ErrLine as the sequence numbers lines).
type tagged struct {
	Text              []byte
	Labels, Reference []string
	Err               string
	ErrLine           int
}

func (t *tagger) tag(ctx context.Context, seq *format.Sequence) tagged {
	var ref []string
	if t.Evaluate || t.Text.Reference {
		if seq.Labels == nil {
			what := "no labels to evaluate against (-t)"
			if !t.Evaluate {
				what = "no reference labels to print (-r)"
			}
			return tagged{Err: what, ErrLine: seq.Line}
		}
		t.gold = t.gold[:0]
		for _, l := range seq.Labels {
			g, ok := t.intern[string(l)] // no allocation for a lookup
			if !ok {
				g = string(l)
				t.intern[g] = g
			}
			t.gold = append(t.gold, g)
		}
		ref = t.gold
	}
	names := t.l.labels
	var err error
	t.buf, err = t.l.tagger.TagText(t.buf[:0], &t.out, t.enc.Encode(seq), ref, t.Text)
	if err != nil {
		return tagged{Err: err.Error(), ErrLine: seq.Line}
	}
	out := &t.out
	r := tagged{Text: bytes.Clone(t.buf)}
	if t.Evaluate {
		r.Labels = make([]string, len(out.Labels))
		for i, y := range out.Labels {
			r.Labels[i] = names[y]
		}
		r.Reference = slices.Clone(ref)
	}
	sequencesTagged.Inc(ctx, 1)
	tokensTagged.Inc(ctx, int64(seq.Len()))
	return r
}

// tagFn is Tag's DoFn.
type tagFn struct {
	tagger
	parser *format.Parser
	seq    format.Sequence
}

func (fn *tagFn) Setup(ctx context.Context) error {
	o, err := fn.setup(ctx)
	if err != nil {
		return err
	}
	fn.parser, err = format.NewParser(fn.Model, o)
	return err
}

func (fn *tagFn) ProcessElement(ctx context.Context, sq Sequence, emit func(Tagged), dead func(DeadLetter)) error {
	reject := func(line int, msg string) {
		deadLetters.Inc(ctx, 1)
		dead(DeadLetter{File: sq.File, Line: int64(line), Index: sq.Index, Error: msg})
	}
	if err := fn.parser.Parse(&fn.seq, sq.File, sq.Text, int(sq.Line)); err != nil {
		var fe *format.Error
		switch {
		case errors.Is(err, io.EOF):
			reject(int(sq.Line), "no sequence in the text")
		case errors.As(err, &fe):
			reject(fe.Line, fe.Msg)
		default:
			reject(int(sq.Line), err.Error())
		}
		return nil
	}
	r := fn.tag(ctx, &fn.seq)
	if r.Err != "" {
		reject(r.ErrLine, r.Err)
		return nil
	}
	emit(Tagged{File: sq.File, Index: sq.Index, Line: sq.Line, Text: r.Text, Labels: r.Labels, Reference: r.Reference})
	return nil
}
