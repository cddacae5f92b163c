package model

import (
	"encoding/binary"
	"math"

	"github.com/simdcrf/simdcrf/internal/prune"
)

// A model trained with pruning (-p prune.max) learnt to tell each
// position's label apart only from the few its emission scores keep, and
// must be tagged over those (prune.Rule, the rule training used):
// over all labels, UD Czech CLTT's model (prune.max=8) tagged 17 % of the
// test tokens right, over the pruned sets 82 %. Section 20 holds the
// rule; it is marked needed, since a reader that skipped it would tag
// over all labels: uint32 Max, uint32 zero, float64 Threshold.
const secPrune = 20

// pruneSection returns the section of m's pruning (none without).
func (m *Model) pruneSection() []section {
	p := m.Prune
	if p == nil {
		return nil
	}
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(p.Max))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, math.Float64bits(p.Threshold))
	return []section{{secPrune, b}}
}

// parsePrune reads the pruning section, if any, into m.
func parsePrune(name string, secs map[uint32][]byte, m *Model) error {
	b, ok := secs[secPrune]
	if !ok {
		return nil
	}
	if len(b) != 16 {
		return formatError(name, "pruning section of %d bytes, want 16", len(b))
	}
	le := binary.LittleEndian
	p := &prune.Rule{Max: int(le.Uint32(b)), Threshold: math.Float64frombits(le.Uint64(b[8:]))}
	if err := p.Check(); err != nil {
		return formatError(name, "bad pruning: %v", err)
	}
	m.Prune = p
	return nil
}

// pruned returns the allowed sets of a chain with emissions emit (T×M)
// under m's pruning, within allowed (nil, or each position's candidate
// labels, nil: free), or allowed itself without pruning.
func (t *Tagger) pruned(w *work, emit []float64, allowed [][]int32) [][]int32 {
	p := t.m.Prune
	if p == nil {
		return allowed
	}
	return p.Sets(&w.prune, emit, t.m.State.Labels(), allowed, nil)
}
