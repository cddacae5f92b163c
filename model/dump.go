package model

import (
	"bufio"
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

// Dump writes the model as text, in the spirit of crfsuite dump: the
// metadata, the labels, the transition scores (every non-zero entry of a
// dense matrix, or the tied default and its exceptions), the start and end
// scores, and the top state features by absolute weight (all non-zero ones,
// by attribute, if top ≤ 0).
func (m *Model) Dump(w io.Writer, top int) error {
	bw := bufio.NewWriter(w)
	meta, err := json.MarshalIndent(m.Meta, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "META = %s\n\n", meta)
	M := m.Labels.Len()
	lab := func(j int) string { return m.Labels.String(int32(j)) }
	fmt.Fprintf(bw, "LABELS = {\n")
	for j := range M {
		fmt.Fprintf(bw, "  %d: %s\n", j, lab(j))
	}
	fmt.Fprintf(bw, "}\n\n")

	tr := m.Trans
	if tr.Structure() == engine.Tied {
		def, exc := tr.Exceptions()
		fmt.Fprintf(bw, "TRANSITIONS (tied: default %g, %d exceptions) = {\n", def, len(exc))
		for _, e := range exc {
			fmt.Fprintf(bw, "  %s --> %s: %f\n", lab(int(e.From)), lab(int(e.To)), e.Score)
		}
	} else {
		fmt.Fprintf(bw, "TRANSITIONS (dense, non-zero entries) = {\n")
		for i := range M {
			for j := range M {
				if v := tr.Score(i, j); v != 0 {
					fmt.Fprintf(bw, "  %s --> %s: %f\n", lab(i), lab(j), v)
				}
			}
		}
	}
	fmt.Fprintf(bw, "}\n\nSTART_END (non-zero) = {\n")
	for j := range M {
		if s, e := tr.Start(j), tr.End(j); s != 0 || e != 0 {
			fmt.Fprintf(bw, "  %s: start %f, end %f\n", lab(j), s, e)
		}
	}
	fmt.Fprintf(bw, "}\n\n")
	if l := m.Lexicon; l != nil {
		fmt.Fprintf(bw, "CANDIDATES = %d words held to %d labels in all\n\n", l.Len(), len(l.Labels))
	}
	if p := m.Prune; p != nil {
		by := "the model's own emission scores"
		if m.Pruner != nil {
			by = fmt.Sprintf("a zeroth-order pruner's (%d weights)", m.Pruner.NumParams())
		}
		fmt.Fprintf(bw, "PRUNING = at most %d labels per position, softmax ≥ %g × the best, of %s\n\n", p.Max, p.Threshold, by)
		if p1 := m.Pruner1; p1 != nil {
			sub := ""
			if p1.Sub != nil {
				sub = fmt.Sprintf(", %d sub-label weights", len(p1.Sub))
			}
			fmt.Fprintf(bw, "FIRST_ORDER_PRUNING = within those, at most %d labels per position, marginal ≥ %g × the best, of a first-order pruner's (%d weights, %v transitions%s)\n\n",
				p1.Rule.Max, p1.Rule.Threshold, p1.State.NumParams(), p1.Trans.Structure(), sub)
		}
	}
	if g := m.Meta.Spec.Guesser; g != nil {
		known, rare, suffixes := g.Len()
		fmt.Fprintf(bw, "GUESSER = guesses of %d labels for words seen at most %d times (%d) and unknown ones by %d suffixes; %d frequent words get none\n\n", len(g.Labels()), format.GuessRare, rare, suffixes, known)
	}
	if g := m.Trigrams; g != nil {
		fmt.Fprintf(bw, "TRIGRAMS (second order, %d triples seen in training, non-zero entries) = {\n", g.Len())
		for k := range g.Len() {
			if v := g.Score(k); v != 0 {
				h, i, j := g.Triple(k)
				fmt.Fprintf(bw, "  %s --> %s --> %s: %f\n", lab(int(h)), lab(int(i)), lab(int(j)), v)
			}
		}
		fmt.Fprintf(bw, "}\n\n")
	}
	if sl := m.Sub; sl != nil {
		fmt.Fprintf(bw, "SUB_LABELS = %d parts per label, %d sub-labels, %d weights\n\n", sl.N, sl.NSub, len(sl.W))
	}
	if b := m.Bigram; b != nil {
		layout := "label pairs seen in training"
		if b.Pairs == nil {
			layout = "full blocks"
		}
		fmt.Fprintf(bw, "OBSERVATION_TRANSITIONS (%s, %d attributes, %d weights, non-zero entries) = {\n", layout, b.Attrs.Len(), len(b.Weights))
		b.each(M, func(a int32, i, j int, v float64) {
			if v != 0 {
				fmt.Fprintf(bw, "  %s: %s --> %s: %f\n", b.Attrs.String(a), lab(i), lab(j), v)
			}
		})
		fmt.Fprintf(bw, "}\n\n")
	}

	nonzero := 0
	var all []feature
	h := &featureHeap{}
	m.eachWeight(func(a, j int32, v float64) {
		if v == 0 {
			return
		}
		nonzero++
		f := feature{a, j, v}
		switch {
		case top <= 0:
			all = append(all, f)
		case h.Len() < top:
			heap.Push(h, f)
		case f.stronger((*h)[0]):
			(*h)[0] = f
			heap.Fix(h, 0)
		}
	})
	if top > 0 {
		all = []feature(*h)
		slices.SortFunc(all, func(x, y feature) int {
			if x.stronger(y) {
				return -1
			}
			if y.stronger(x) {
				return 1
			}
			return 0
		})
		fmt.Fprintf(bw, "STATE_FEATURES (%s layout, %d attributes, %d weights, %d non-zero; top %d by |weight|) = {\n",
			m.State.Layout(), m.State.NumAttrs(), m.State.NumParams(), nonzero, len(all))
	} else {
		fmt.Fprintf(bw, "STATE_FEATURES (%s layout, %d attributes, %d weights, %d non-zero) = {\n",
			m.State.Layout(), m.State.NumAttrs(), m.State.NumParams(), nonzero)
	}
	for _, f := range all {
		fmt.Fprintf(bw, "  %s --> %s: %f\n", m.Attrs.String(f.attr), lab(int(f.label)), f.w)
	}
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}

// eachWeight calls f for every stored state weight, by attribute then
// label.
func (m *Model) eachWeight(f func(attr, label int32, w float64)) {
	p := params(m.State)
	switch s := m.State.(type) {
	case *sparse.Dense:
		M, ld := s.Labels(), s.Stride()
		for a := range int32(s.NumAttrs()) {
			row := p[int(a)*ld : int(a)*ld+M]
			for j, v := range row {
				f(a, int32(j), v)
			}
		}
	case *sparse.Sparse:
		pat := s.Pattern()
		var labels []int32
		for a := range int32(s.NumAttrs()) {
			labels = pat.AttrLabels(labels[:0], a)
			base := pat.RowStart(a)
			for k, j := range labels {
				f(a, j, p[base+k])
			}
		}
	}
}

type feature struct {
	attr, label int32
	w           float64
}

// stronger orders features by decreasing |w|, then by attribute and label,
// so that the dump does not depend on the order of the scan.
func (f feature) stronger(g feature) bool {
	if a, b := math.Abs(f.w), math.Abs(g.w); a != b {
		return a > b
	}
	if f.attr != g.attr {
		return f.attr < g.attr
	}
	return f.label < g.label
}

// featureHeap is a min-heap by strength: its root is the weakest kept.
type featureHeap []feature

func (h featureHeap) Len() int           { return len(h) }
func (h featureHeap) Less(i, j int) bool { return h[j].stronger(h[i]) }
func (h featureHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *featureHeap) Push(x any)        { *h = append(*h, x.(feature)) }
func (h *featureHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
