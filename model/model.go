// Package model holds a trained linear-chain CRF: its label and attribute
// dictionaries, state weights, transition scores and a description of how
// it was trained and what input it expects (Meta). It stores models in a
// versioned, checksummed little-endian file format laid out so that the
// weight arrays are used in place after one read (File format, below),
// tags encoded sequences from many goroutines at once (Tagger), prints a
// tagged sequence as simdcrf tag (and crfsuite tag) prints it (AppendText),
// and prints a model as text (Dump).
//
// Load and Map also read CRFsuite's model files (told apart by their magic
// number: see crfsuite.go for the format), which then tag as CRFsuite tags
// them: no start or end scores, state weights only for the (attribute,
// label) pairs in the file, attribute values scaling weights; the
// attribute dictionary is used in place. WriteCRFsuiteFile writes a model
// in CRFsuite's format, byte for byte as CRFsuite writes it, when
// CRFsuiteCompatible finds nothing the format cannot hold.
//
// # File format (version 1)
//
// All integers and floats are little-endian.
//
//	offset 0   magic "\x89SIMDCRF" (the high byte catches 7-bit transfers)
//	offset 8   uint32 format version (1)
//	offset 12  uint32 header size (64)
//	offset 16  uint64 file size
//	offset 24  uint32 number of sections n
//	offset 28  bytes up to 60 reserved (zero)
//	offset 60  uint32 CRC-32C (Castagnoli) of bytes [0,60) and [64, file size)
//	offset 64  n section entries of 32 bytes: uint32 kind, uint32 flags,
//	           uint64 offset, uint64 length in bytes, uint64 reserved
//
// The magic, version, file size and checksum keep their places in every
// version, so that a damaged file is told apart from a newer one. Every
// section starts at a multiple of 64 bytes (zero padding between), so
// that a file read into a 64-byte-aligned buffer holds its float64 arrays
// aligned to cache lines: on little-endian hosts Load views them where they
// lie; elsewhere it decodes them. Sections of unknown kind are skipped unless
// their flags mark them required, so version 1 readers can read files that
// add optional sections; anything else incompatible gets a new version.
// The sections are the metadata (JSON), the label and attribute dictionaries
// (sparse.Dict's binary encoding), a fixed-size shape record, the state
// weights, the sparse pattern (row offsets as int32, labels as uint16) for
// the sparse layout, and the transitions: start and end scores, and either
// the M×M matrix (dense) or the tied default with its exceptions. A model
// trained with candidate labels adds sections 16–18 (the lexicon: its
// words, offsets and label ids), one with sub-label weights section 19
// (see lexicon.go); both are marked needed, since a reader that skipped
// them would tag differently. A model
// with observation-dependent transitions (Bigrams) adds sections 24–29:
// their attribute dictionary (string ends, bytes, hash table), offsets,
// label pairs (absent for full M×M blocks) and weights; like every
// section they are marked needed, so that a reader that does not know
// them refuses the file instead of tagging without them. Sections 21–22
// hold a zeroth-order pruner (prunetag.go), 32–33 label trigrams
// (order2.go), 34 the unknown-word guesser (guesser.go), 35–38 a
// first-order pruner (prune1.go: its rule, state weights, transitions and
// sub-label weights).
package model

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// Model is a trained CRF. Its fields may share memory with the file it was
// loaded from or the trainer that made it; treat them as read-only.
type Model struct {
	Labels, Attrs *sparse.Dict
	State         sparse.Weights // *sparse.Dense or *sparse.Sparse
	Trans         *engine.Transitions
	Meta          Meta
	// Lexicon, if not nil, restricts the words it holds to their
	// candidate labels (trained with -p feature.candidates or --lexicon);
	// a tagger applies it through Options.Candidates.
	Lexicon *sparse.Lexicon
	// Sub, if not nil, adds sub-label weights to the state scores
	// (trained with -p feature.sublabels).
	Sub *sparse.SubLabels
	// Bigram holds the observation-dependent transitions, or nil.
	Bigram *Bigrams
	// Prune, if not nil, is the label pruning the model was trained with
	// (-p prune.max): a tagger keeps each position's labels under it
	// (within its candidates) and tags over those (see prunetag.go).
	Prune *prune.Rule
	// Pruner, if not nil, holds the state weights of the zeroth-order
	// pruner the model was trained with (-p prune.by=zeroth): its
	// emission scores, not the model's, choose the sets Prune keeps. It
	// has the layout (and pattern) of State.
	Pruner sparse.Weights
	// PrunerSub holds the pruner's sub-label weights (as Sub.W), exactly
	// when the model has a pruner and sub-label weights.
	PrunerSub []float64
	// Pruner1, if not nil, is the first-order stage of the pruning
	// cascade (-p prune.by=first): within each position's set from the
	// zeroth-order pruner (Pruner under Prune) it keeps the labels of
	// high posterior marginal under a first-order CRF of its own, and the
	// model is tagged over those narrower sets. It needs Pruner and Prune.
	Pruner1 *FirstOrderPruner
	// Trigrams, if not nil, holds label-trigram scores (-p order=2): the
	// model is second-order (engine.SecondOrder with Trans), tagged over
	// its pruned sets.
	Trigrams *engine.Trigrams

	mapped []byte // the file's mapping, for a model from Map (until unmapped)
	path   string // its file
}

// Meta describes how a model was made and what input it expects, so that
// tagging can read data the way training did.
type Meta struct {
	// Spec is how text becomes the model's attributes: input format,
	// CRF++ template text or built-in feature set, conllu label column,
	// conll observation columns (stored as the JSON fields format,
	// template, features, label and columns).
	format.Spec

	Trainer string            `json:"trainer,omitempty"` // algorithm: lbfgs, l1, sgd, ap
	Params  map[string]string `json:"params,omitempty"`  // trainer parameters, CRFsuite -p names
	Stats   TrainStats        `json:"stats"`

	// Extra holds anything else worth keeping (program version, data
	// files, ...); Dump prints it.
	Extra map[string]string `json:"extra,omitempty"`
}

// TrainStats records what training did.
type TrainStats struct {
	Iterations  int     `json:"iterations,omitempty"`
	Loss        float64 `json:"loss,omitempty"`
	Seconds     float64 `json:"seconds,omitempty"`
	Sequences   int64   `json:"sequences,omitempty"`
	Tokens      int64   `json:"tokens,omitempty"`
	Reason      string  `json:"reason,omitempty"` // why training stopped
	Interrupted bool    `json:"interrupted,omitempty"`
}

// New assembles a model from a trainer's output, checking that the parts
// agree: as many labels as the weights and transitions have, as many
// attributes as weight rows, and finite weights. The model shares the
// arguments' memory.
func New(labels, attrs *sparse.Dict, state sparse.Weights, trans *engine.Transitions, meta Meta) (*Model, error) {
	m := &Model{Labels: labels, Attrs: attrs, State: state, Trans: trans, Meta: meta}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// check verifies the invariants New promises; WriteFile runs it too since
// the fields are exported.
func (m *Model) check() error {
	if m.Labels == nil || m.Attrs == nil || m.State == nil || m.Trans == nil {
		return fmt.Errorf("model: incomplete (labels, attributes, state weights and transitions are all needed)")
	}
	M := m.Labels.Len()
	if M < 1 {
		return fmt.Errorf("model: no labels")
	}
	if m.State.Labels() != M || m.Trans.Labels() != M {
		return fmt.Errorf("model: %d labels, but state weights have %d and transitions %d", M, m.State.Labels(), m.Trans.Labels())
	}
	if m.State.NumAttrs() != m.Attrs.Len() {
		return fmt.Errorf("model: %d attributes, but state weights have %d rows", m.Attrs.Len(), m.State.NumAttrs())
	}
	switch w := m.State.(type) {
	case *sparse.Dense:
	case *sparse.Sparse:
		if w.Pattern().NumAttrs() != m.Attrs.Len() {
			return fmt.Errorf("model: pattern has %d attributes, want %d", w.Pattern().NumAttrs(), m.Attrs.Len())
		}
	default:
		return fmt.Errorf("model: state weights of type %T are not supported (want *sparse.Dense or *sparse.Sparse)", m.State)
	}
	if m.Lexicon != nil {
		if err := m.Lexicon.Check(M); err != nil {
			return fmt.Errorf("model: %v", err)
		}
	}
	if m.Sub != nil {
		if err := m.Sub.Check(M, m.Attrs.Len()); err != nil {
			return fmt.Errorf("model: %v", err)
		}
	}
	if m.Prune != nil {
		if err := m.Prune.Check(); err != nil {
			return fmt.Errorf("model: %v", err)
		}
	}
	if err := m.checkPruner(); err != nil {
		return err
	}
	if err := m.checkPruner1(); err != nil {
		return err
	}
	if k := nonFinite(params(m.State)); k >= 0 {
		return fmt.Errorf("model: state weight %d is %v", k, params(m.State)[k])
	}
	if g := m.Trigrams; g != nil {
		if g.Labels() != M {
			return fmt.Errorf("model: %d labels, but trigrams have %d", M, g.Labels())
		}
		if m.Bigram != nil {
			return fmt.Errorf("model: a second-order model has no bigram weights")
		}
	}
	if m.Bigram != nil {
		if m.Trans.Structure() != engine.Dense {
			return fmt.Errorf("model: bigram weights need dense transitions")
		}
		return m.Bigram.check(M)
	}
	return nil
}

// params returns the weights' own parameters.
func params(w sparse.Weights) []float64 { return w.Params()[:w.NumParams()] }

// nonFinite returns the index of the first NaN or ±Inf in v, or -1. It
// first sums x·0 over v (NaN if and only if some x is not finite) in four
// independent chains, about four times faster than testing each value, since
// it runs on every Load.
func nonFinite(v []float64) int {
	var a, b, c, d float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		a += v[i] * 0
		b += v[i+1] * 0
		c += v[i+2] * 0
		d += v[i+3] * 0
	}
	for ; i < len(v); i++ {
		a += v[i] * 0
	}
	if a+b+c+d == 0 {
		return -1
	}
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return k
		}
	}
	return -1
}

// Encode turns the attributes of one sequence, given by name, into a
// sequence of attribute ids in b (reset first), leaving out attributes the
// model does not know: they have no weights, so dropping them changes no
// score. ptr has T+1 offsets (position t has names[ptr[t]:ptr[t+1]]), values
// is nil (all 1) or parallel to names. The result is a view of b's memory
// with no gold labels; once b has grown, Encode does not allocate.
func (m *Model) Encode(b *sparse.Builder, ptr []int32, names [][]byte, values []float64) sparse.Seq {
	b.Reset()
	var ids [64]int32
	for t := 0; t+1 < len(ptr); t++ {
		for f0 := ptr[t]; f0 < ptr[t+1]; f0 += int32(len(ids)) {
			f1 := min(ptr[t+1], f0+int32(len(ids)))
			m.Attrs.LookupBytesAll(ids[:], names[f0:f1])
			for k, id := range ids[:f1-f0] {
				if id < 0 {
					continue
				}
				v := 1.0
				if values != nil {
					v = values[f0+int32(k)]
				}
				b.Add(id, v)
			}
		}
		b.End(sparse.NoLabel)
	}
	return b.Seq()
}

// LabelNames returns the model's labels in id order (for
// eval.NewEvaluator, so that label ids and report order agree).
func (m *Model) LabelNames() []string {
	names := make([]string, m.Labels.Len())
	for i := range names {
		names[i] = m.Labels.String(int32(i))
	}
	return names
}
