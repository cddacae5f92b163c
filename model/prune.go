package model

import (
	"fmt"

	"github.com/simdcrf/simdcrf/sparse"
)

// DropZeros returns a copy of the model without the state weights that are
// exactly zero, as L1 training leaves many: attributes whose weights are all
// zero leave the attribute dictionary (Encode then skips them as unknown)
// and, in the sparse layout, zero (attribute, label) pairs leave the
// pattern. Scores are unchanged (a zero weight adds nothing) and so is the
// layout: a dense model stays dense, with fewer rows. It returns how many
// attributes and weights were dropped. The transitions and metadata are
// shared with m.
func (m *Model) DropZeros() (*Model, int, int, error) {
	if m.Sub != nil || m.Pruner != nil || m.Pruner1 != nil { // (kept as they are: see Compact)
		return m, 0, 0, m.check()
	}
	if err := m.check(); err != nil {
		return nil, 0, 0, err
	}
	M := m.Labels.Len()
	p := params(m.State)
	var keep []int32 // attributes kept, in order
	var w []float64  // their weights
	switch s := m.State.(type) {
	case *sparse.Dense:
		ld := s.Stride()
		for a := range int32(s.NumAttrs()) {
			row := p[int(a)*ld : int(a)*ld+ld]
			if !allZero(row[:M]) {
				keep = append(keep, a)
				w = append(w, row...)
			}
		}
		if len(keep) == s.NumAttrs() {
			return m, 0, 0, nil
		}
		attrs, _, err := m.Attrs.Reorder(keep)
		if err != nil {
			return nil, 0, 0, err
		}
		w = append(sparse.MakeParams(len(w))[:0], w...)
		state, err := sparse.NewDenseStride(len(keep), M, ld, w)
		if err != nil {
			return nil, 0, 0, err
		}
		out, err := New(m.Labels, attrs, state, m.Trans, m.Meta)
		if out != nil {
			out.Lexicon = m.Lexicon
			out.Bigram = m.Bigram
			out.Prune = m.Prune
			out.Trigrams = m.Trigrams
		}
		return out, s.NumAttrs() - len(keep), (s.NumAttrs() - len(keep)) * M, err
	case *sparse.Sparse:
		nnz := 0
		for _, v := range p {
			if v != 0 {
				nnz++
			}
		}
		if nnz == len(p) {
			return m, 0, 0, nil
		}
		rowPtr, labels := s.Pattern().CSR()
		out, dropped, err := m.nonzeroRows(s.NumAttrs(), nnz, func(a int32, add func(j int32, v float64)) {
			for k := rowPtr[a]; k < rowPtr[a+1]; k++ {
				add(int32(labels[k]), p[k])
			}
		})
		return out, dropped, len(p) - nnz, err
	}
	return nil, 0, 0, fmt.Errorf("model: state weights of type %T are not supported", m.State)
}

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Compact returns the model in its smallest equivalent form, for saving:
// DropZeros, then, when the dense rows that remain are mostly zeros (fewer
// than M/4 non-zero weights per row on average, where sparse.ChooseLayout
// finds sparse rows the faster to score), sparse rows holding only the
// non-zero weights. Scores are unchanged: a zero weight adds nothing. L2
// training on CRFsuite's features leaves most (attribute, label) pairs at
// exactly zero (they are not parameters), so a CoNLL-2000 model shrinks
// about tenfold, and loads and tags that much faster.
func (m *Model) Compact() (*Model, error) {
	// (Sub's weights are by attribute id, Pruner's and Pruner1's by state
	// weight: kept as they are)
	if m.Sub != nil || m.Pruner != nil || m.Pruner1 != nil {
		return m, m.check()
	}
	d, ok := m.State.(*sparse.Dense)
	if !ok {
		m, _, _, err := m.DropZeros()
		return m, err
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	M := m.Labels.Len()
	p := params(d)
	ld := d.Stride()
	nnz := 0
	for a := range d.NumAttrs() {
		for _, v := range p[a*ld : a*ld+M] {
			if v != 0 {
				nnz++
			}
		}
	}
	if 4*nnz >= d.NumAttrs()*M {
		m, _, _, err := m.DropZeros()
		return m, err
	}
	// Sparse rows straight from the dense ones (DropZeros first would
	// copy the dense rows it keeps: 0.3 s on CoNLL-2000).
	out, _, err := m.nonzeroRows(d.NumAttrs(), nnz, func(a int32, add func(j int32, v float64)) {
		for j, v := range p[int(a)*ld : int(a)*ld+M] {
			add(int32(j), v)
		}
	})
	return out, err
}

// nonzeroRows returns m with sparse rows holding the nnz non-zero state
// weights that row gives (row(a, add) calls add(label, weight) for each
// weight of attribute a, labels ascending), without the attributes left
// with none, and how many attributes it dropped.
func (m *Model) nonzeroRows(numAttrs, nnz int, row func(a int32, add func(j int32, v float64))) (*Model, int, error) {
	rowPtr := make([]int32, 1, numAttrs+1)
	labels := make([]int32, 0, nnz)
	w := sparse.MakeParams(nnz)[:0]
	keep := make([]int32, 0, numAttrs)
	add := func(j int32, v float64) {
		if v != 0 {
			labels = append(labels, j)
			w = append(w, v)
		}
	}
	for a := range int32(numAttrs) {
		n := len(labels)
		row(a, add)
		if len(labels) > n {
			keep = append(keep, a)
			rowPtr = append(rowPtr, int32(len(labels)))
		}
	}
	attrs := m.Attrs
	if len(keep) < numAttrs {
		var err error
		if attrs, _, err = m.Attrs.Reorder(keep); err != nil {
			return nil, 0, err
		}
	}
	pat, err := sparse.NewPattern(m.Labels.Len(), rowPtr, labels)
	if err != nil {
		return nil, 0, fmt.Errorf("model: sparse rows: %w", err)
	}
	state, err := sparse.NewSparse(pat, w)
	if err != nil {
		return nil, 0, err
	}
	out, err := New(m.Labels, attrs, state, m.Trans, m.Meta)
	if out != nil {
		out.Lexicon = m.Lexicon
		out.Bigram = m.Bigram
		out.Prune = m.Prune
		out.Trigrams = m.Trigrams
	}
	return out, numAttrs - len(keep), err
}
