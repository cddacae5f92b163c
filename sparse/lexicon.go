package sparse

import (
	"fmt"
	"slices"
)

// Lexicon restricts words to candidate labels: word i of Words may take
// the labels Labels[Ptr[i]:Ptr[i+1]] (sorted, distinct); a word with no
// labels, or not in Words, is free (any label). Trainers and taggers use it
// to restrict a position to its word's labels (engine.ChainOptions.Allowed).
type Lexicon struct {
	Words  *Dict
	Ptr    []int32 // Words.Len()+1 offsets into Labels
	Labels []int32
}

// Allowed returns the labels word id may take, or nil when it is free (id
// < 0 too).
func (l *Lexicon) Allowed(id int32) []int32 {
	if l == nil || id < 0 || int(id) >= len(l.Ptr)-1 {
		return nil
	}
	s := l.Labels[l.Ptr[id]:l.Ptr[id+1]:l.Ptr[id+1]]
	if len(s) == 0 {
		return nil
	}
	return s
}

// Lookup sets dst (grown if needed; returned) to each word's id, −1 for
// words the lexicon does not hold.
func (l *Lexicon) Lookup(dst []int32, words [][]byte) []int32 {
	dst = slices.Grow(dst[:0], len(words))[:len(words)]
	if l == nil || l.Words == nil {
		for i := range dst {
			dst[i] = -1
		}
		return dst
	}
	l.Words.LookupBytesAll(dst, words)
	return dst
}

// Len returns the number of words with candidate labels.
func (l *Lexicon) Len() int {
	if l == nil || l.Words == nil {
		return 0
	}
	return l.Words.Len()
}

// Check verifies the offsets and that every label is in [0, m), sorted and
// distinct within a word.
func (l *Lexicon) Check(m int) error {
	if l.Words == nil {
		return fmt.Errorf("sparse: lexicon without words")
	}
	n := l.Words.Len()
	if len(l.Ptr) != n+1 || l.Ptr[0] != 0 || int(l.Ptr[n]) != len(l.Labels) {
		return fmt.Errorf("sparse: lexicon of %d words has %d offsets for %d labels", n, len(l.Ptr), len(l.Labels))
	}
	for i := range n {
		lo, hi := l.Ptr[i], l.Ptr[i+1]
		if hi < lo {
			return fmt.Errorf("sparse: lexicon word %d: offsets %d, %d decrease", i, lo, hi)
		}
		for k := lo; k < hi; k++ {
			y := l.Labels[k]
			if y < 0 || int(y) >= m {
				return fmt.Errorf("sparse: lexicon word %d allows label %d of %d", i, y, m)
			}
			if k > lo && y <= l.Labels[k-1] {
				return fmt.Errorf("sparse: lexicon word %d: labels not sorted and distinct", i)
			}
		}
	}
	return nil
}

// LexiconBuilder collects (word, label) pairs into a Lexicon.
type LexiconBuilder struct {
	words *Dict
	sets  [][]int32
}

// Add allows label y for word w.
func (b *LexiconBuilder) Add(w []byte, y int32) {
	if b.words == nil {
		b.words = NewDict(1 << 10)
	}
	id, _ := b.words.AddBytes(w)
	if int(id) == len(b.sets) {
		b.sets = append(b.sets, nil)
	}
	if s := b.sets[id]; !slices.Contains(s, y) {
		b.sets[id] = append(s, y)
	}
}

// Len returns the number of words added so far.
func (b *LexiconBuilder) Len() int { return len(b.sets) }

// Build returns the Lexicon (nil when nothing was added).
func (b *LexiconBuilder) Build() *Lexicon {
	if len(b.sets) == 0 {
		return nil
	}
	l := &Lexicon{Words: b.words, Ptr: make([]int32, 1, len(b.sets)+1)}
	for _, s := range b.sets {
		slices.Sort(s)
		l.Labels = append(l.Labels, s...)
		l.Ptr = append(l.Ptr, int32(len(l.Labels)))
	}
	return l
}
