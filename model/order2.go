package model

import (
	"encoding/binary"

	"github.com/simdcrf/simdcrf/engine"
)

// A second-order model (-p order=2) scores label trigrams besides the
// bigrams: section 32 holds its triples (h, i, j) = (y_{t−2}, y_{t−1},
// y_t), three uint32s each, and section 33 their scores, float64s in the
// same order. Like every section they are marked needed: a reader that
// skipped them would tag another model.
const (
	secTrigrams      = 32 // (after the bigram weights' 24–31)
	secTrigramScores = 33
)

// trigramSections returns the sections of m's trigrams (none without).
func (m *Model) trigramSections() []section {
	g := m.Trigrams
	if g == nil {
		return nil
	}
	le := binary.LittleEndian
	tri := make([]byte, 0, 12*g.Len())
	scores := make([]float64, g.Len())
	for k := range g.Len() {
		h, i, j := g.Triple(k)
		tri = le.AppendUint32(tri, uint32(h))
		tri = le.AppendUint32(tri, uint32(i))
		tri = le.AppendUint32(tri, uint32(j))
		scores[k] = g.Score(k)
	}
	return []section{{secTrigrams, tri}, {secTrigramScores, leBytes(scores)}}
}

// parseTrigrams reads the trigram sections, if any, into m (of M labels).
func parseTrigrams(name string, secs map[uint32][]byte, M int, m *Model) error {
	tb, ok := secs[secTrigrams]
	sb, ok2 := secs[secTrigramScores]
	if !ok && !ok2 {
		return nil
	}
	if ok != ok2 || len(tb)%12 != 0 || len(sb) != 8*(len(tb)/12) {
		return formatError(name, "trigram sections of %d and %d bytes, want 12 and 8 per triple", len(tb), len(sb))
	}
	le := binary.LittleEndian
	n := len(tb) / 12
	tri := make([][3]int32, n)
	for k := range tri {
		for p := range 3 {
			v := le.Uint32(tb[12*k+4*p:])
			if v >= uint32(M) {
				return formatError(name, "trigram %d has label %d of %d", k, v, M)
			}
			tri[k][p] = int32(v)
		}
	}
	scores := make([]float64, n)
	copy(scores, view[float64](sb))
	g, err := engine.NewTrigrams(M, tri, scores)
	if err != nil {
		return formatError(name, "bad trigrams: %v", err)
	}
	m.Trigrams = g
	return nil
}
