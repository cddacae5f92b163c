package simdcrf

import (
	"fmt"
	"sync"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
)

// A Model is a trained CRF: its labels, attributes and weights, and how it
// reads tokens when it was trained from them. It is safe for concurrent
// use.
type Model struct {
	m      *model.Model
	once   sync.Once
	tagger *Tagger
}

func newModel(m *model.Model) *Model { return &Model{m: m} }

// Load reads a model file: simdcrf's format or CRFsuite's (those of
// crfsuite learn, python-crfsuite and sklearn-crfsuite), told apart by the
// file itself.
func Load(path string) (*Model, error) {
	m, err := model.Load(path)
	if err != nil {
		return nil, err
	}
	return newModel(m), nil
}

// Save writes the model to path in simdcrf's format, atomically: path holds
// the whole model or, after an error, what it held before.
func (m *Model) Save(path string) error { return m.m.WriteFile(path) }

// SaveCRFsuite writes the model to path in CRFsuite's format, atomically,
// for python-crfsuite, sklearn-crfsuite or crfsuite to load. A model with
// what that format cannot hold (start and end weights: train with
// Options.ModelFormat "crfsuite"; candidate labels, sub-label weights,
// pruning, a template's observation-dependent transitions) is not written:
// the error names the part.
func (m *Model) SaveCRFsuite(path string) error {
	if err := m.m.WriteCRFsuiteFile(path); err != nil {
		return fmt.Errorf("simdcrf: %s: %w", path, err)
	}
	return nil
}

// Labels returns the model's labels in the model's label order (that of
// Tagger.Marginals).
func (m *Model) Labels() []string { return m.m.LabelNames() }

// Spec describes the input the model reads: CRFsuite attributes, or the
// template or feature set it extracts from tokens.
func (m *Model) Spec() format.Spec { return m.m.Meta.Spec }

// Tagger returns the model's tagger (one per model, shared: it is safe for
// concurrent use).
func (m *Model) Tagger() *Tagger {
	m.once.Do(func() { m.tagger = newTagger(m.m) })
	return m.tagger
}
