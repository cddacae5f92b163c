package train

import (
	"fmt"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// candidates builds the candidate-label lexicon of the training data: the
// word forms seen at least k times (k > 0) with the labels seen with them,
// joined with d.Lexicon (a lexicon file's words and labels), and the
// allowed labels of every training position (nil: free). A position whose
// gold label its word's entry lacks (a lexicon file that does not know the
// use) is left free, so that the constrained likelihood stays finite.
// It returns nil, nil when there are no candidates.
func candidates(d *Data, k int) (*sparse.Lexicon, [][][]int32, error) {
	if k <= 0 && d.Lexicon == nil {
		return nil, nil, nil
	}
	if d.Words == nil || d.Vocab == nil {
		return nil, nil, fmt.Errorf("train: candidate labels need the words of the training data (column input: conll or conllu)")
	}
	if len(d.Words) != d.Corpus.Len() {
		return nil, nil, fmt.Errorf("train: %d word sequences for %d sequences", len(d.Words), d.Corpus.Len())
	}
	nv := d.Vocab.Len()
	var b sparse.LexiconBuilder
	if k > 0 {
		count := make([]int, nv)
		for i, ws := range d.Words {
			if len(ws) != d.Corpus.Seq(i).Len() {
				return nil, nil, fmt.Errorf("train: sequence %d has %d words for %d positions", i, len(ws), d.Corpus.Seq(i).Len())
			}
			for _, w := range ws {
				if w >= 0 && int(w) < nv {
					count[w]++
				}
			}
		}
		for i, ws := range d.Words {
			labels := d.Corpus.Seq(i).Labels
			for t, w := range ws {
				if w >= 0 && int(w) < nv && count[w] >= k {
					b.Add([]byte(d.Vocab.String(w)), labels[t])
				}
			}
		}
	}
	if l := d.Lexicon; l != nil {
		if err := l.Check(d.Labels); err != nil {
			return nil, nil, fmt.Errorf("train: lexicon: %w", err)
		}
		for id := range int32(l.Len()) {
			w := []byte(l.Words.String(id))
			for _, y := range l.Allowed(id) {
				b.Add(w, y)
			}
		}
	}
	lex := b.Build()
	if lex == nil {
		return nil, nil, nil
	}
	// Vocabulary id → lexicon id, then each position's set.
	toLex := make([]int32, nv)
	for v := range int32(nv) {
		id, ok := lex.Words.Lookup(d.Vocab.String(v))
		if !ok {
			id = -1
		}
		toLex[v] = id
	}
	allowed := make([][][]int32, len(d.Words))
	for i, ws := range d.Words {
		labels := d.Corpus.Seq(i).Labels
		a := make([][]int32, len(ws))
		for t, w := range ws {
			if w < 0 || int(w) >= nv {
				continue
			}
			if set := lex.Allowed(toLex[w]); set != nil {
				if _, found := slices.BinarySearch(set, labels[t]); found {
					a[t] = set
				}
			}
		}
		allowed[i] = a
	}
	return lex, allowed, nil
}

// holdoutAllowed returns the allowed labels of every holdout position
// under lex (nil: free), looked up by word; nil when h has no words.
func holdoutAllowed(h *Data, lex *sparse.Lexicon) [][][]int32 {
	if lex == nil || h.Words == nil || h.Vocab == nil {
		return nil
	}
	toLex := make([]int32, h.Vocab.Len())
	for v := range toLex {
		id, ok := lex.Words.Lookup(h.Vocab.String(int32(v)))
		if !ok {
			id = -1
		}
		toLex[v] = id
	}
	allowed := make([][][]int32, len(h.Words))
	for i, ws := range h.Words {
		a := make([][]int32, len(ws))
		for t, w := range ws {
			if w >= 0 && int(w) < len(toLex) {
				a[t] = lex.Allowed(toLex[w])
			}
		}
		allowed[i] = a
	}
	return allowed
}

var negInf = math.Inf(-1)

// chainOpts returns the constraint of sequence i in allowed, in c, or nil
// when there is none.
func chainOpts(c *engine.ChainOptions, allowed [][][]int32, i int) *engine.ChainOptions {
	if allowed == nil || i >= len(allowed) {
		return nil
	}
	c.Allowed = allowed[i]
	return c
}

// maskAllowed sets the emissions of the labels a position's allowed set
// excludes to −Inf (the constrained chain without transitions, where the
// engine is not used). mark is scratch of m entries.
func maskAllowed(emit []float64, allowed [][]int32, m int, mark []int32) {
	for j := range mark {
		mark[j] = -1
	}
	for t, set := range allowed {
		if set == nil {
			continue
		}
		for _, y := range set {
			mark[y] = int32(t)
		}
		row := emit[t*m : (t+1)*m]
		for j := range row {
			if mark[j] != int32(t) {
				row[j] = negInf
			}
		}
	}
}
