package model

import (
	"encoding/binary"
	"math"

	"github.com/simdcrf/simdcrf/sparse"
)

// Candidate labels (issue 14): a model trained with a lexicon restricts the
// words it holds to their labels when tagging, as in training. Sections
// 16–19 hold it; they are marked needed, since a reader that skipped them
// would tag those words differently.
const (
	secLexWords  = 16 // the words: sparse.Dict's binary encoding
	secLexPtr    = 17 // uint32 offsets into secLexLabels, words+1 of them
	secLexLabels = 18 // uint32 label ids, sorted within a word
	// Sub-label weights (sparse.SubLabels), one record: uint32 N, NSub,
	// M, number of attributes, number of weights, zero; M·N int32
	// sub-label ids; attributes+1 uint32 offsets; the weights' int32
	// sub-label ids; zero padding to 8 bytes; the float64 weights.
	secSubLabels            = 19
	secLexFirst, secLexLast = secLexWords, secSubLabels
)

// lexiconSections returns the sections of m's lexicon (none without one).
func (m *Model) lexiconSections() ([]section, error) {
	l := m.Lexicon
	if l == nil {
		return nil, nil
	}
	words, err := l.Words.MarshalBinary()
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	ptr := make([]byte, 0, 4*len(l.Ptr))
	for _, p := range l.Ptr {
		ptr = le.AppendUint32(ptr, uint32(p))
	}
	lab := make([]byte, 0, 4*len(l.Labels))
	for _, y := range l.Labels {
		lab = le.AppendUint32(lab, uint32(y))
	}
	return []section{{secLexWords, words}, {secLexPtr, ptr}, {secLexLabels, lab}}, nil
}

// subSection returns the section of m's sub-label weights (none without).
func (m *Model) subSection() []section {
	s := m.Sub
	if s == nil {
		return nil
	}
	le := binary.LittleEndian
	b := make([]byte, 0, 24+4*(len(s.Of)+len(s.Ptr)+len(s.IDs))+8+8*len(s.W))
	for _, v := range []int{s.N, s.NSub, s.Labels, len(s.Ptr) - 1, len(s.IDs), 0} {
		b = le.AppendUint32(b, uint32(v))
	}
	for _, v := range s.Of {
		b = le.AppendUint32(b, uint32(v))
	}
	for _, v := range s.Ptr {
		b = le.AppendUint32(b, uint32(v))
	}
	for _, v := range s.IDs {
		b = le.AppendUint32(b, uint32(v))
	}
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	for _, w := range s.W {
		b = le.AppendUint64(b, math.Float64bits(w))
	}
	return []section{{secSubLabels, b}}
}

// parseSub reads the sub-label section, if any, into m.
func parseSub(name string, secs map[uint32][]byte, m *Model) error {
	b, ok := secs[secSubLabels]
	if !ok {
		return nil
	}
	le := binary.LittleEndian
	if len(b) < 24 {
		return formatError(name, "sub-label section of %d bytes", len(b))
	}
	n, nsub, M, na, nw := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:])), uint64(le.Uint32(b[12:])), uint64(le.Uint32(b[16:]))
	ints := M*n + na + 1 + nw
	size := 24 + 4*ints
	size += (8 - size%8) % 8
	size += 8 * nw
	if M != uint64(m.Labels.Len()) || na != uint64(m.Attrs.Len()) || n > 1<<16 || uint64(len(b)) != size {
		return formatError(name, "sub-label section: %d bytes for %d parts, %d labels, %d attributes, %d weights (the model has %d labels, %d attributes)",
			len(b), n, M, na, nw, m.Labels.Len(), m.Attrs.Len())
	}
	s := &sparse.SubLabels{N: int(n), NSub: int(nsub), Labels: int(M)}
	off := 24
	read := func(k uint64) []int32 {
		v := make([]int32, k)
		for i := range v {
			v[i] = int32(le.Uint32(b[off:]))
			off += 4
		}
		return v
	}
	s.Of, s.Ptr, s.IDs = read(M*n), read(na+1), read(nw)
	off += (8 - off%8) % 8
	s.W = make([]float64, nw)
	for i := range s.W {
		s.W[i] = math.Float64frombits(le.Uint64(b[off:]))
		off += 8
	}
	if err := s.Check(int(M), int(na)); err != nil {
		return formatError(name, "bad sub-label weights: %v", err)
	}
	m.Sub = s
	return nil
}

// parseLexicon reads the lexicon sections, if any, into m (whose labels
// are known).
func parseLexicon(name string, secs map[uint32][]byte, m *Model) error {
	wb, ok := secs[secLexWords]
	if !ok {
		if _, ok := secs[secLexPtr]; ok {
			return formatError(name, "lexicon offsets without lexicon words")
		}
		return nil
	}
	pb, lb := secs[secLexPtr], secs[secLexLabels]
	words := &sparse.Dict{}
	if err := words.UnmarshalBinary(wb); err != nil {
		return formatError(name, "bad lexicon words: %v", err)
	}
	n := words.Len()
	if len(pb) != 4*(n+1) || len(lb)%4 != 0 {
		return formatError(name, "lexicon sections have %d and %d bytes for %d words", len(pb), len(lb), n)
	}
	le := binary.LittleEndian
	l := &sparse.Lexicon{Words: words, Ptr: make([]int32, n+1), Labels: make([]int32, len(lb)/4)}
	for i := range l.Ptr {
		v := le.Uint32(pb[4*i:])
		if v > uint32(len(l.Labels)) {
			return formatError(name, "lexicon offset %d is %d, beyond its %d labels", i, v, len(l.Labels))
		}
		l.Ptr[i] = int32(v)
	}
	for i := range l.Labels {
		v := le.Uint32(lb[4*i:])
		if v >= uint32(m.Labels.Len()) {
			return formatError(name, "lexicon label %d of %d", v, m.Labels.Len())
		}
		l.Labels[i] = int32(v)
	}
	if err := l.Check(m.Labels.Len()); err != nil {
		return formatError(name, "bad lexicon: %v", err)
	}
	m.Lexicon = l
	return nil
}

// Candidates sets dst (grown if needed; returned) to the lexicon entry of
// each of T positions, for Options.Candidates: that of its word, −1 (free)
// for a word the model's lexicon does not hold and for positions without
// a word (input with no word column has none). It returns nil when the
// model has no lexicon.
func (m *Model) Candidates(dst []int32, words [][]byte, T int) []int32 {
	if m.Lexicon == nil {
		return nil
	}
	dst = m.Lexicon.Lookup(dst, words[:min(len(words), T)])
	for len(dst) < T {
		dst = append(dst, -1)
	}
	return dst
}
