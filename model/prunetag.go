package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// A model trained with pruning (-p prune.max) learnt to tell each
// position's label apart only from the few its emission scores keep, and
// must be tagged over those (prune.Rule, the rule training used):
// over all labels, UD Czech CLTT's model (prune.max=8) tagged 17 % of the
// test tokens right, over the pruned sets 82 %. Section 20 holds the
// rule; it is marked needed, since a reader that skipped it would tag
// over all labels: uint32 Max, uint32 zero, float64 Threshold.
const secPrune = 20

// A model trained with a zeroth-order pruner (-p prune.by=zeroth) prunes
// with the pruner's state weights instead of its own: section 21 holds
// them, float64s in the order of the state weights (same layout and, for
// sparse rows, the same pattern), marked needed like every section.
const secPruner = 21

// Section 22 holds the pruner's sub-label weights, float64s in the order
// of Sub.W, with a pruner and sub-label weights both.
const secPrunerSub = 22

// pruneSection returns the section of m's pruning (none without).
func (m *Model) pruneSection() []section {
	p := m.Prune
	if p == nil {
		return nil
	}
	secs := []section{{secPrune, ruleBytes(*p)}}
	if m.Pruner != nil {
		secs = append(secs, section{secPruner, leBytes(params(m.Pruner))})
	}
	if m.PrunerSub != nil {
		secs = append(secs, section{secPrunerSub, leBytes(m.PrunerSub)})
	}
	return append(secs, m.pruner1Sections()...)
}

// ruleBytes encodes a pruning rule as section 20 holds it: uint32 Max,
// uint32 zero, float64 Threshold.
func ruleBytes(p prune.Rule) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(p.Max))
	b = le.AppendUint32(b, 0)
	return le.AppendUint64(b, math.Float64bits(p.Threshold))
}

// parseRule decodes ruleBytes' encoding, checked; what names the
// section in errors.
func parseRule(name, what string, b []byte) (prune.Rule, error) {
	if len(b) != 16 {
		return prune.Rule{}, formatError(name, "%s section of %d bytes, want 16", what, len(b))
	}
	le := binary.LittleEndian
	p := prune.Rule{Max: int(le.Uint32(b)), Threshold: math.Float64frombits(le.Uint64(b[8:]))}
	if err := p.Check(); err != nil {
		return prune.Rule{}, formatError(name, "bad %s: %v", what, err)
	}
	return p, nil
}

// parsePrune reads the pruning section, if any, into m.
func parsePrune(name string, secs map[uint32][]byte, m *Model) error {
	b, ok := secs[secPrune]
	_, hasPruner := secs[secPruner]
	_, hasSub := secs[secPrunerSub]
	if !ok {
		if hasPruner || hasSub { // (else tagged over all labels: wrong)
			return formatError(name, "pruner sections without a pruning rule (section %d)", secPrune)
		}
		return nil
	}
	if hasSub && !hasPruner {
		return formatError(name, "pruner sub-label section without the pruner's weights (section %d)", secPruner)
	}
	p, err := parseRule(name, "pruning", b)
	if err != nil {
		return err
	}
	m.Prune = &p
	b, ok = secs[secPruner]
	if !ok {
		return nil
	}
	n := m.State.NumParams()
	if len(b) != 8*n {
		return formatError(name, "pruner section of %d bytes, want %d weights", len(b), n)
	}
	if m.Pruner, err = WeightsLike(m.State, view[float64](b)); err != nil {
		return formatError(name, "bad pruner: %v", err)
	}
	if b, ok := secs[secPrunerSub]; ok {
		if m.Sub == nil || len(b) != 8*len(m.Sub.W) {
			return formatError(name, "pruner sub-label section of %d bytes for a model without sub-label weights or with another number", len(b))
		}
		m.PrunerSub = view[float64](b)
	}
	return nil
}

// pruned returns the allowed sets of a chain with emissions emit (T×M)
// under m's pruning, within allowed (nil, or each position's candidate
// labels, nil: free), or allowed itself without pruning. With a pruner
// the sets come from its emissions (w.pemit, score filled them) instead.
func (t *Tagger) pruned(w *work, emit []float64, allowed [][]int32) [][]int32 {
	p := t.m.Prune
	if p == nil {
		return allowed
	}
	if t.m.Pruner != nil {
		emit = w.pemit[:len(emit)]
	}
	return p.Sets(&w.prune, emit, t.m.State.Labels(), allowed, nil)
}

// WeightsLike returns weights w (as many as s has) in the layout of s,
// with its pattern for sparse rows: a pruner's (Model.Pruner).
func WeightsLike(s sparse.Weights, w []float64) (sparse.Weights, error) {
	switch s := s.(type) {
	case *sparse.Dense:
		return sparse.NewDenseStride(s.NumAttrs(), s.Labels(), s.Stride(), w)
	case *sparse.Sparse:
		return sparse.NewSparse(s.Pattern(), w)
	}
	return nil, fmt.Errorf("model: state weights of type %T are not supported", s)
}

// checkPruner checks that m's pruner weights match its state weights.
func (m *Model) checkPruner() error {
	p := m.Pruner
	if p == nil {
		return nil
	}
	if m.Prune == nil {
		return fmt.Errorf("model: pruner weights without a pruning rule")
	}
	if (m.Sub == nil) != (m.PrunerSub == nil) || m.Sub != nil && len(m.PrunerSub) != len(m.Sub.W) {
		return fmt.Errorf("model: a pruner needs sub-label weights exactly when the model has them")
	}
	if k := nonFinite(m.PrunerSub); k >= 0 {
		return fmt.Errorf("model: pruner sub-label weight %d is %v", k, m.PrunerSub[k])
	}
	if !sameShape(p, m.State) {
		return fmt.Errorf("model: pruner weights of another shape than the state weights")
	}
	if k := nonFinite(params(p)); k >= 0 {
		return fmt.Errorf("model: pruner weight %d is %v", k, params(p)[k])
	}
	return nil
}

// sameShape reports whether weights p have the layout of s: as many
// labels, attributes and parameters, the same stride (dense rows) or
// pattern (sparse rows), so that p's weights line up with s's.
func sameShape(p, s sparse.Weights) bool {
	ok := p.Labels() == s.Labels() && p.NumAttrs() == s.NumAttrs() && p.NumParams() == s.NumParams()
	switch s := s.(type) {
	case *sparse.Dense:
		d, isDense := p.(*sparse.Dense)
		return ok && isDense && d.Stride() == s.Stride()
	case *sparse.Sparse:
		sp, isSparse := p.(*sparse.Sparse)
		return ok && isSparse && samePattern(sp.Pattern(), s.Pattern())
	}
	return ok
}

func samePattern(a, b *sparse.Pattern) bool {
	if a == b {
		return true
	}
	ra, la := a.CSR()
	rb, lb := b.CSR()
	return a.Labels() == b.Labels() && slices.Equal(ra, rb) && slices.Equal(la, lb)
}

// PrunedSets returns the labels each position of s is tagged over under
// the model's pruning (Prune, from the pruner's scores when it has a
// Pruner, narrowed by Pruner1 when it has one), within the lexicon
// entries cands (as Options.Candidates):
// copies, appended to dst[:0]. Without pruning it returns nil.
func (t *Tagger) PrunedSets(dst [][]int32, s sparse.Seq, cands []int32) ([][]int32, error) {
	if t.m.Prune == nil {
		return nil, nil
	}
	w := t.pool.Get().(*work)
	defer t.pool.Put(w)
	_, c, err := t.prepare(w, s, cands, sparse.Seq{})
	if err != nil {
		return nil, err
	}
	dst = dst[:0]
	for _, set := range c.Allowed {
		dst = append(dst, slices.Clone(set))
	}
	return dst, nil
}
