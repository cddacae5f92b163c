// Package simdcrf trains and applies linear-chain conditional random fields
// (CRFs) for sequence labelling — part-of-speech tags, chunks, named
// entities, morphological tags — with SIMD kernels in its hot loops and no
// cgo. It is the place to start: two types do what python-crfsuite's
// Trainer and Tagger do.
//
// A Trainer takes labelled sequences and returns a Model:
//
//	tr, _ := simdcrf.NewTrainer(simdcrf.Options{Params: map[string]string{"c2": "1"}})
//	tr.Append([]simdcrf.Item{simdcrf.Binary("w=the"), simdcrf.Binary("w=dog")}, []string{"DT", "NN"})
//	m, err := tr.Train(ctx)
//
// A sequence is a list of Items, one per position, each a list of
// Attributes (a name and a value, 1 for a binary feature), as in CRFsuite's
// attribute files; or, with Options.Template (a CRF++ template) or
// Options.Features (a built-in feature set), a list of tokens, each a row of
// columns, from which the model extracts its own attributes (AppendTokens,
// TagTokens). A Model's Tagger labels sequences (Viterbi), and gives the
// probability of a labelling, the marginal probability of every label at
// every position, and the k best labellings; it is safe for concurrent use.
//
// Models are saved in simdcrf's format (Save) or in CRFsuite's (SaveCRFsuite),
// which python-crfsuite, sklearn-crfsuite and crfsuite itself load; Load
// reads either. A model trained here is the model `simdcrf learn` trains
// from the same data and options, and tags as `simdcrf tag` tags.
//
// The packages below this one are the machinery: engine (exact inference
// over scores, for a neural tagger's CRF layer see package layer), train
// (the optimisers), model (the file format and the concurrent tagger),
// format and corpus (reading data).
package simdcrf

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/simdcrf/simdcrf/format"
)

// An Attribute is one feature of a position: a name and a value that
// scales its weights (1 for a binary feature), as in CRFsuite.
type Attribute struct {
	Name  string
	Value float64 // 1 for a binary feature; scales the weights, as in CRFsuite
}

// An Item is the attributes of one position of a sequence.
type Item []Attribute

// Binary returns an Item of the named attributes, each with value 1.
func Binary(names ...string) Item {
	it := make(Item, len(names))
	for i, n := range names {
		it[i] = Attribute{Name: n, Value: 1}
	}
	return it
}

// A SequenceError says what is wrong with a sequence given to a Trainer or
// Tagger, and where.
type SequenceError struct {
	// Sequence is the index of the sequence among those appended (training
	// or holdout: Holdout says which), −1 for the one sequence a Tagger
	// call was given.
	Sequence int
	Holdout  bool
	// Position is the index of the position at fault, −1 when the fault
	// is the sequence's as a whole.
	Position int
	Err      error
}

func (e *SequenceError) Error() string {
	s := "simdcrf: "
	if e.Sequence >= 0 {
		if e.Holdout {
			s += "holdout "
		}
		s += fmt.Sprintf("sequence %d", e.Sequence)
		if e.Position >= 0 {
			s += ", "
		} else {
			s += ": "
		}
	}
	if e.Position >= 0 {
		s += fmt.Sprintf("position %d: ", e.Position)
	}
	return s + e.Err.Error()
}

func (e *SequenceError) Unwrap() error { return e.Err }

// seqError returns a SequenceError for sequence seq (−1: a Tagger's), turning
// a format.TokenError's position into Position.
func seqError(seq int, holdout bool, pos int, err error) error {
	var te *format.TokenError
	if errors.As(err, &te) {
		pos, err = te.Pos, errors.New(te.Msg)
	}
	return &SequenceError{Sequence: seq, Holdout: holdout, Position: pos, Err: err}
}

// bytesOf views s as bytes without copying; the bytes must not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// fromItems sets s to xseq's attributes and yseq's labels (nil: none), as
// views of their strings. It reports the position of a non-finite value,
// of an empty label, or a length mismatch (position −1).
func fromItems(s *format.Sequence, xseq []Item, yseq []string) (int, error) {
	if yseq != nil && len(yseq) != len(xseq) {
		return -1, fmt.Errorf("%d items but %d labels", len(xseq), len(yseq))
	}
	s.File, s.Line, s.Weight = "", 1, 1
	s.Lines, s.Labels = s.Lines[:0], s.Labels[:0]
	s.Ptr, s.Names, s.Values = append(s.Ptr[:0], 0), s.Names[:0], s.Values[:0]
	s.Words, s.BPtr, s.BNames = s.Words[:0], s.BPtr[:0], s.BNames[:0]
	for t, it := range xseq {
		for _, a := range it {
			if math.IsNaN(a.Value) || math.IsInf(a.Value, 0) {
				return t, fmt.Errorf("attribute %q has value %v", a.Name, a.Value)
			}
			s.Names = append(s.Names, bytesOf(a.Name))
			s.Values = append(s.Values, a.Value)
		}
		s.Ptr = append(s.Ptr, int32(len(s.Names)))
		s.Lines = append(s.Lines, t+1)
		if yseq != nil {
			if yseq[t] == "" {
				return t, errors.New("empty label")
			}
			s.Labels = append(s.Labels, bytesOf(yseq[t]))
		}
	}
	if yseq == nil {
		s.Labels = nil
	}
	return 0, nil
}
