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
		return out, s.NumAttrs() - len(keep), (s.NumAttrs() - len(keep)) * M, err
	case *sparse.Sparse:
		pat := s.Pattern()
		rowPtr := []int32{0}
		var labels, row []int32
		for a := range int32(s.NumAttrs()) {
			row = pat.AttrLabels(row[:0], a)
			base, n := pat.RowStart(a), len(labels)
			for k, j := range row {
				if v := p[base+k]; v != 0 {
					labels = append(labels, j)
					w = append(w, v)
				}
			}
			if len(labels) > n {
				keep = append(keep, a)
				rowPtr = append(rowPtr, int32(len(labels)))
			}
		}
		if len(w) == len(p) {
			return m, 0, 0, nil
		}
		attrs, _, err := m.Attrs.Reorder(keep)
		if err != nil {
			return nil, 0, 0, err
		}
		np, err := sparse.NewPattern(M, rowPtr, labels)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("model: dropping zeros: %w", err)
		}
		state, err := sparse.NewSparse(np, append(sparse.MakeParams(len(w))[:0], w...))
		if err != nil {
			return nil, 0, 0, err
		}
		out, err := New(m.Labels, attrs, state, m.Trans, m.Meta)
		return out, s.NumAttrs() - len(keep), len(p) - len(w), err
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
