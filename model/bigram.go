package model

import (
	"fmt"

	"github.com/simdcrf/simdcrf/sparse"
)

// Bigrams are a model's observation-dependent transitions (CRF++ B
// template lines with %x): the bigram attribute a (an expanded B line,
// such as "B01:NN") has the weights Weights[Ptr[a]:Ptr[a+1]], weight k for
// the label pair Pairs[k] = i·M + j (the transition i → j); with Pairs nil
// (full M×M blocks, as CRF++ has) weight Ptr[a] + i·M + j. The transition
// scores from position t−1 to t are the shared matrix plus the weights of
// the bigram attributes of position t.
type Bigrams struct {
	Attrs   *sparse.Dict
	Ptr     []int32 // NumAttrs+1 offsets
	Pairs   []int32 // pair of each weight, ascending per attribute; nil: full blocks
	Weights []float64
}

// check verifies the shape of b for M labels.
func (b *Bigrams) check(M int) error {
	if b.Attrs == nil || len(b.Ptr) != b.Attrs.Len()+1 || b.Ptr[0] != 0 {
		return fmt.Errorf("model: bigram weights: %d offsets for %d attributes", len(b.Ptr), b.attrLen())
	}
	n := len(b.Weights)
	for a := range b.Attrs.Len() {
		lo, hi := b.Ptr[a], b.Ptr[a+1]
		if hi < lo || int(hi) > n {
			return fmt.Errorf("model: bigram weights: attribute %d has weights %d to %d of %d", a, lo, hi, n)
		}
		if b.Pairs == nil {
			if hi != lo && int64(hi-lo) != int64(M)*int64(M) {
				return fmt.Errorf("model: bigram weights: attribute %d has %d weights, not 0 or %d×%d", a, hi-lo, M, M)
			}
			continue
		}
		for k := lo; k < hi; k++ {
			p := b.Pairs[k]
			if p < 0 || int64(p) >= int64(M)*int64(M) || (k > lo && p <= b.Pairs[k-1]) {
				return fmt.Errorf("model: bigram weights: attribute %d has label pair %d (of %d labels) out of order or range", a, p, M)
			}
		}
	}
	if int(b.Ptr[len(b.Ptr)-1]) != n {
		return fmt.Errorf("model: bigram weights: offsets end at %d, %d weights", b.Ptr[len(b.Ptr)-1], n)
	}
	if b.Pairs != nil && len(b.Pairs) != n {
		return fmt.Errorf("model: bigram weights: %d pairs for %d weights", len(b.Pairs), n)
	}
	if k := nonFinite(b.Weights); k >= 0 {
		return fmt.Errorf("model: bigram weight %d is %v", k, b.Weights[k])
	}
	return nil
}

func (b *Bigrams) attrLen() int {
	if b.Attrs == nil {
		return 0
	}
	return b.Attrs.Len()
}

// EncodeBigrams turns the bigram attributes of one sequence, given by name
// (ptr has T+1 offsets into names, format.Sequence.BPtr and BNames), into
// ids in b (reset first), leaving out those the model does not know. A
// model without bigram weights, or ptr empty, gives a sequence of T
// positions without attributes.
func (m *Model) EncodeBigrams(b *sparse.Builder, T int, ptr []int32, names [][]byte) sparse.Seq {
	b.Reset()
	for t := range T {
		if m.Bigram != nil && len(ptr) > t+1 {
			for k := ptr[t]; k < ptr[t+1]; k++ {
				if id, ok := m.Bigram.Attrs.LookupBytes(names[k]); ok {
					b.Add(id, 1)
				}
			}
		}
		b.End(sparse.NoLabel)
	}
	return b.Seq()
}

// deltas returns the transition deltas of the bigram attributes bs
// (checked against the model; sparse.TransDeltas, in w), or nil when no
// position has any.
func (b *Bigrams) deltas(w *sparse.DeltaWork, bs sparse.Seq, T, M int) ([][]float64, error) {
	if b == nil || bs.NumFeatures() == 0 {
		return nil, nil
	}
	if bs.Len() != T {
		return nil, fmt.Errorf("model: bigram attributes for %d positions, sequence has %d", bs.Len(), T)
	}
	bs.Labels = nil
	if err := bs.Validate(b.Attrs.Len(), M); err != nil {
		return nil, fmt.Errorf("model: bigram attributes: %w", err)
	}
	return sparse.TransDeltas(w, b.Ptr, b.Pairs, b.Weights, M, 1, bs), nil
}

// Section kinds of the bigram weights (24–31 are theirs).
const (
	secBigramEnds    = 24 + iota // bigram attribute dictionary: string ends (uint32)
	secBigramArena               // its bytes
	secBigramTable               // its hash table (uint64)
	secBigramPtr                 // offsets (int32), attributes+1
	secBigramPairs               // label pairs (int32); absent: full M×M blocks
	secBigramWeights             // weights (float64)
	secBigramFirst   = secBigramEnds
	secBigramLast    = secBigramWeights
)

// bigramSections returns the sections of the bigram weights (none without).
func (m *Model) bigramSections() ([]section, error) {
	b := m.Bigram
	if b == nil {
		return nil, nil
	}
	own, err := b.Attrs.Own()
	if err != nil {
		return nil, fmt.Errorf("model: bigram attribute dictionary: %w", err)
	}
	ends, arena, table := own.Flat()
	secs := []section{
		{secBigramEnds, leBytes(ends)},
		{secBigramArena, arena},
		{secBigramTable, leBytes(table)},
		{secBigramPtr, leBytes(b.Ptr)},
		{secBigramWeights, leBytes(b.Weights)},
	}
	if b.Pairs != nil {
		secs = append(secs, section{secBigramPairs, leBytes(b.Pairs)})
	}
	return secs, nil
}

// parseBigrams reads the bigram sections, if any.
func parseBigrams(name string, secs map[uint32][]byte, M int) (*Bigrams, error) {
	eb, ok := secs[secBigramEnds]
	if !ok {
		for k := uint32(secBigramFirst); k <= secBigramLast; k++ {
			if _, ok := secs[k]; ok {
				return nil, formatError(name, "bigram section %d without the bigram attribute dictionary", k)
			}
		}
		return nil, nil
	}
	ab, tb, pb, wb := secs[secBigramArena], secs[secBigramTable], secs[secBigramPtr], secs[secBigramWeights]
	if len(eb)%4 != 0 || len(tb)%8 != 0 || len(pb)%4 != 0 || len(wb)%8 != 0 || len(pb) == 0 {
		return nil, formatError(name, "bigram sections have %d, %d, %d and %d bytes, not whole numbers of entries", len(eb), len(tb), len(pb), len(wb))
	}
	attrs, err := sparse.DictFromFlat(view[uint32](eb), ab, view[uint64](tb))
	if err != nil {
		return nil, formatError(name, "bad bigram attribute dictionary: %v", err)
	}
	b := &Bigrams{Attrs: attrs, Ptr: view[int32](pb), Weights: view[float64](wb)}
	if p, ok := secs[secBigramPairs]; ok {
		if len(p) != len(wb)/2 {
			return nil, formatError(name, "bigram pairs section has %d bytes for %d weights", len(p), len(wb)/8)
		}
		b.Pairs = view[int32](p)
		if b.Pairs == nil {
			b.Pairs = []int32{}
		}
	}
	if err := b.check(M); err != nil {
		return nil, formatError(name, "%v", err)
	}
	return b, nil
}

// each calls f with every bigram weight.
func (b *Bigrams) each(M int, f func(attr int32, i, j int, w float64)) {
	for a := range int32(b.Attrs.Len()) {
		for k := b.Ptr[a]; k < b.Ptr[a+1]; k++ {
			p := int(k - b.Ptr[a])
			if b.Pairs != nil {
				p = int(b.Pairs[k])
			}
			f(a, p/M, p%M, b.Weights[k])
		}
	}
}
