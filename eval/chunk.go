package eval

import (
	"slices"
	"strings"
)

// countChunks runs conlleval's chunk counting over one sequence: a chunk
// is correct when gold and prediction start it at the same token with the
// same type and end it at the same token with the same type, and nothing in
// between made them disagree about where a chunk ends or about a type.
// Like conlleval, it treats the sentence boundary as an O token on both
// sides, so chunks never span sequences and a chunk open at the end of a
// sequence is closed there.
func (e *Evaluator) countChunks(gold, pred []int32) {
	o := tag{prefix: 'O'}
	lastG, lastP := o, o
	inCorrect := false
	for t := 0; t <= len(gold); t++ {
		g, p := o, o // the boundary after the last token
		if t < len(gold) {
			g, p = e.tags[gold[t]], e.tags[pred[t]]
		}
		if inCorrect {
			ge, pe := chunkEnds(lastG, g), chunkEnds(lastP, p)
			if ge && pe && lastP.typ == lastG.typ {
				inCorrect = false
				e.chunk.correct++
				e.typeCounts(lastG.typ).correct++
			} else if ge != pe || p.typ != g.typ {
				inCorrect = false
			}
		}
		gs, ps := chunkStarts(lastG, g), chunkStarts(lastP, p)
		if gs && ps && p.typ == g.typ {
			inCorrect = true
		}
		if gs {
			e.chunk.gold++
			e.typeCounts(g.typ).gold++
		}
		if ps {
			e.chunk.predicted++
			e.typeCounts(p.typ).predicted++
		}
		lastG, lastP = g, p
	}
}

// chunkEnds reports whether a chunk ends between a token tagged prev and
// the next tagged cur. It is conlleval.pl's endOfChunk with the S (single)
// rules of its IOBES variant: after E or S a chunk always ends; after B or I
// it ends before B, S or O; and any change of type ends a chunk. On IOB1,
// IOB2 and IOE data (no S, no E before B) it is the original's rule set.
func chunkEnds(prev, cur tag) bool {
	switch prev.prefix {
	case 'O':
		return false
	case 'E', 'S':
		return true
	}
	// B or I.
	if cur.prefix == 'B' || cur.prefix == 'S' || cur.prefix == 'O' {
		return true
	}
	return prev.typ != cur.typ
}

// chunkStarts reports whether a chunk starts at a token tagged cur after one
// tagged prev: conlleval.pl's startOfChunk with the IOBES variant's S rules.
// B and S always start a chunk; I and E start one after O, E or S (so an I
// after O starts a chunk, as in IOB1); and a change of type starts one.
func chunkStarts(prev, cur tag) bool {
	switch cur.prefix {
	case 'O':
		return false
	case 'B', 'S':
		return true
	}
	// I or E.
	if prev.prefix == 'O' || prev.prefix == 'E' || prev.prefix == 'S' {
		return true
	}
	return prev.typ != cur.typ
}

func (e *Evaluator) typeCounts(typ string) *chunkCounts {
	c, ok := e.types[typ]
	if !ok {
		c = &chunkCounts{}
		e.types[strings.Clone(typ)] = c
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
