package sparse

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// MaxSparseLabels is the largest number of labels the SparseRows layout
// supports (labels are stored as uint16).
const MaxSparseLabels = 1 << 16

// Pattern is the set of (attribute, label) pairs that have a weight in the
// SparseRows layout, in CSR form over attributes: attribute a has the
// labels Labels(a), sorted ascending, whose weights are parameters
// RowStart(a) … RowStart(a+1)−1. A Pattern is immutable.
type Pattern struct {
	m      int
	rowPtr []int32  // numAttrs+1
	labels []uint16 // NumPairs
}

// NewPattern makes a pattern from CSR arrays: rowPtr (numAttrs+1 entries,
// from 0, ascending) and the labels of every attribute (each row strictly
// ascending, in [0, m)). The slices are copied.
func NewPattern(m int, rowPtr []int32, labels []int32) (*Pattern, error) {
	if m < 1 || m > MaxSparseLabels {
		return nil, fmt.Errorf("sparse: pattern with %d labels; need 1 to %d", m, MaxSparseLabels)
	}
	lab := make([]uint16, len(labels))
	for k, y := range labels {
		if y < 0 || int(y) >= m {
			return nil, fmt.Errorf("sparse: pattern: label %d (entry %d) is out of range [0,%d)", y, k, m)
		}
		lab[k] = uint16(y)
	}
	return PatternView(m, slices.Clone(rowPtr), lab)
}

// PatternView is NewPattern over arrays it does not copy (labels as
// uint16): a model file's pattern is used in place. The caller must not
// modify them afterwards.
func PatternView(m int, rowPtr []int32, labels []uint16) (*Pattern, error) {
	if m < 1 || m > MaxSparseLabels {
		return nil, fmt.Errorf("sparse: pattern with %d labels; need 1 to %d", m, MaxSparseLabels)
	}
	if len(rowPtr) == 0 || rowPtr[0] != 0 {
		return nil, fmt.Errorf("sparse: pattern rowPtr must start with 0")
	}
	if int(rowPtr[len(rowPtr)-1]) != len(labels) {
		return nil, fmt.Errorf("sparse: pattern rowPtr ends at %d for %d labels", rowPtr[len(rowPtr)-1], len(labels))
	}
	for a := 0; a+1 < len(rowPtr); a++ {
		lo, hi := rowPtr[a], rowPtr[a+1]
		if hi < lo || int(hi) > len(labels) {
			return nil, fmt.Errorf("sparse: pattern rowPtr descends at attribute %d", a)
		}
		prev := -1
		for _, y := range labels[lo:hi] {
			if int(y) >= m {
				return nil, fmt.Errorf("sparse: pattern: attribute %d has label %d, out of range [0,%d)", a, y, m)
			}
			if int(y) <= prev {
				return nil, fmt.Errorf("sparse: pattern: labels of attribute %d are not strictly ascending", a)
			}
			prev = int(y)
		}
	}
	return &Pattern{m: m, rowPtr: rowPtr[:len(rowPtr):len(rowPtr)], labels: labels[:len(labels):len(labels)]}, nil
}

// FullPattern returns the pattern in which every attribute has every label
// (the SparseRows twin of DenseRows, mainly for tests).
func FullPattern(numAttrs, m int) (*Pattern, error) {
	if m < 1 || m > MaxSparseLabels || numAttrs < 0 || int64(numAttrs)*int64(m) > math.MaxInt32 {
		return nil, fmt.Errorf("sparse: full pattern of %d attributes × %d labels is not possible", numAttrs, m)
	}
	p := &Pattern{m: m, rowPtr: make([]int32, numAttrs+1), labels: make([]uint16, numAttrs*m)}
	for a := range numAttrs {
		p.rowPtr[a+1] = int32((a + 1) * m)
		for j := range m {
			p.labels[a*m+j] = uint16(j)
		}
	}
	return p, nil
}

// Labels returns M.
func (p *Pattern) Labels() int { return p.m }

// NumAttrs returns the number of attributes.
func (p *Pattern) NumAttrs() int { return len(p.rowPtr) - 1 }

// NumPairs returns the number of (attribute, label) pairs: the number of
// parameters of sparse weights over p.
func (p *Pattern) NumPairs() int { return int(p.rowPtr[len(p.rowPtr)-1]) }

// RowStart returns the parameter index of attribute a's first weight
// (a may be NumAttrs(), giving NumPairs()).
func (p *Pattern) RowStart(a int32) int { return int(p.rowPtr[a]) }

// CSR returns the pattern's arrays: attribute a has the labels
// labels[rowPtr[a]:rowPtr[a+1]] (ascending), whose weights have the same
// indices. They are views, not to be modified.
func (p *Pattern) CSR() (rowPtr []int32, labels []uint16) { return p.rowPtr, p.labels }

// AttrLabels appends the labels of attribute a to dst and returns it.
func (p *Pattern) AttrLabels(dst []int32, a int32) []int32 {
	for _, y := range p.labels[p.rowPtr[a]:p.rowPtr[a+1]] {
		dst = append(dst, int32(y))
	}
	return dst
}

// Index returns the parameter index of (attr, label), or -1 if the pair is
// not in the pattern.
func (p *Pattern) Index(attr, label int32) int {
	if attr < 0 || int(attr) >= p.NumAttrs() || label < 0 || int(label) >= p.m {
		return -1
	}
	lo, hi := int(p.rowPtr[attr]), int(p.rowPtr[attr+1])
	row := p.labels[lo:hi]
	k := sort.Search(len(row), func(i int) bool { return row[i] >= uint16(label) })
	if k < len(row) && row[k] == uint16(label) {
		return lo + k
	}
	return -1
}

// MemoryBytes returns the bytes of the pattern's arrays.
func (p *Pattern) MemoryBytes() int64 {
	return 4*int64(cap(p.rowPtr)) + 2*int64(cap(p.labels))
}

// PatternBuilder collects the (attribute, label) pairs seen in training
// data. Its memory is proportional to the number of distinct pairs.
type PatternBuilder struct {
	numAttrs, m int
	set         []uint64 // open addressing: key+1, 0 = empty
	n           int
}

// NewPatternBuilder returns a builder for numAttrs attributes and m labels.
func NewPatternBuilder(numAttrs, m int) (*PatternBuilder, error) {
	if m < 1 || m > MaxSparseLabels || numAttrs < 0 {
		return nil, fmt.Errorf("sparse: pattern of %d attributes × %d labels (need 1 to %d labels)", numAttrs, m, MaxSparseLabels)
	}
	return &PatternBuilder{numAttrs: numAttrs, m: m, set: make([]uint64, 1024)}, nil
}

// Add records the pair (attr, label).
func (b *PatternBuilder) Add(attr, label int32) error {
	if attr < 0 || int(attr) >= b.numAttrs {
		return fmt.Errorf("sparse: attribute id %d out of range [0,%d)", attr, b.numAttrs)
	}
	if label < 0 || int(label) >= b.m {
		return fmt.Errorf("sparse: label %d out of range [0,%d)", label, b.m)
	}
	b.insert(uint64(attr)*uint64(b.m) + uint64(label) + 1)
	return nil
}

func (b *PatternBuilder) insert(key uint64) {
	mask := uint64(len(b.set) - 1)
	for i := (key * 0x9e3779b97f4a7c15) >> 20 & mask; ; i = (i + 1) & mask {
		switch b.set[i] {
		case key:
			return
		case 0:
			b.set[i] = key
			b.n++
			if b.n*2 > len(b.set) {
				b.grow()
			}
			return
		}
	}
}

func (b *PatternBuilder) grow() {
	old := b.set
	b.set = make([]uint64, 2*len(old))
	b.n = 0
	for _, k := range old {
		if k != 0 {
			b.insert(k)
		}
	}
}

// AddSeq records the pair (ids[f], labels[t]) of every feature of a
// labelled sequence; with possibleStates it records every label for every
// attribute of the sequence instead (CRFsuite's feature.possible_states).
func (b *PatternBuilder) AddSeq(s Seq, possibleStates bool) error {
	if s.Labels == nil && s.Len() > 0 && !possibleStates {
		return fmt.Errorf("sparse: pattern from an unlabelled sequence")
	}
	if err := s.Validate(b.numAttrs, b.m); err != nil {
		return err
	}
	for t := range s.Len() {
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			a := uint64(s.IDs[f])
			if possibleStates {
				if b.hasAll(a) {
					continue
				}
				for y := range uint64(b.m) {
					b.insert(a*uint64(b.m) + y + 1)
				}
			} else {
				b.insert(a*uint64(b.m) + uint64(s.Labels[t]) + 1)
			}
		}
	}
	return nil
}

// hasAll is a cheap check that attribute a already has its label 0 (with
// possibleStates, then it has all).
func (b *PatternBuilder) hasAll(a uint64) bool {
	key := a*uint64(b.m) + 1
	mask := uint64(len(b.set) - 1)
	for i := (key * 0x9e3779b97f4a7c15) >> 20 & mask; ; i = (i + 1) & mask {
		switch b.set[i] {
		case key:
			return true
		case 0:
			return false
		}
	}
}

// Build returns the pattern of the pairs recorded so far.
func (b *PatternBuilder) Build() (*Pattern, error) {
	if b.n > math.MaxInt32 {
		return nil, fmt.Errorf("sparse: pattern has %d pairs; at most 2³¹−1 are supported", b.n)
	}
	keys := make([]uint64, 0, b.n)
	for _, k := range b.set {
		if k != 0 {
			keys = append(keys, k-1)
		}
	}
	slices.Sort(keys)
	p := &Pattern{m: b.m, rowPtr: make([]int32, b.numAttrs+1), labels: make([]uint16, len(keys))}
	m := uint64(b.m)
	for k, key := range keys {
		p.rowPtr[key/m+1]++
		p.labels[k] = uint16(key % m)
	}
	for a := range b.numAttrs {
		p.rowPtr[a+1] += p.rowPtr[a]
	}
	return p, nil
}

// BuildPattern returns the pattern of a labelled corpus: attribute a gets
// label y if some position labelled y has a. With possibleStates every
// attribute that occurs gets every label.
func BuildPattern(c *Corpus, numAttrs, m int, possibleStates bool) (*Pattern, error) {
	b, err := NewPatternBuilder(numAttrs, m)
	if err != nil {
		return nil, err
	}
	for i := range c.Len() {
		if err := b.AddSeq(c.Seq(i), possibleStates); err != nil {
			return nil, fmt.Errorf("sequence %d: %w", i, err)
		}
	}
	return b.Build()
}
