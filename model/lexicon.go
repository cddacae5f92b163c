package model

import (
	"encoding/binary"

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
	// 19 is reserved for candidate labels too.
	secLexFirst, secLexLast = secLexWords, 19
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
// each word, −1 for words the model's lexicon does not hold (free), for
// Options.Candidates; nil when the model has no lexicon.
func (m *Model) Candidates(dst []int32, words [][]byte) []int32 {
	if m.Lexicon == nil {
		return nil
	}
	return m.Lexicon.Lookup(dst, words)
}
