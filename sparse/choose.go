package sparse

import "fmt"

// DefaultDenseBudget is the ChooseLayout budget for dense weights: 1 GiB.
const DefaultDenseBudget int64 = 1 << 30

// ChooseLayout picks the layout of the state weights for a model whose
// training data has the pattern p (built without possibleStates), given how
// often each attribute occurs (counts, as Corpus.AttrCounts returns; nil
// weighs attributes equally) and a budget in bytes for dense weights.
//
// Dense rows are chosen when numAttrs·M·8 bytes fit the budget and
//
//	M ≤ denseSlack + denseFactor·k̄
//
// where k̄ is the mean number of pattern labels per feature occurrence (the
// labels an attribute row touches, weighted by how often the row is
// fetched). Both layouts are bound by the cache lines they fetch per
// feature: a dense row is ⌈8M/64⌉ lines, fetched by SIMD code; a sparse row
// is its rowPtr entry, ⌈2k/64⌉ lines of labels and ⌈8k/64⌉ of weights,
// followed by scalar code. The constants come from BenchmarkLayouts (see
// bench_test.go), where dense rows win up to M ≈ 32 even with one label per
// attribute, and sparse rows win at M ≥ 256 with k̄ below M/8.
func ChooseLayout(p *Pattern, counts []int64, budget int64) Layout {
	numAttrs, m := int64(p.NumAttrs()), int64(p.m)
	if numAttrs*m*8 > budget {
		return SparseRows
	}
	if float64(m) <= denseSlack+denseFactor*p.meanLabels(counts) {
		return DenseRows
	}
	return SparseRows
}

const (
	denseSlack  = 32
	denseFactor = 4
)

// meanLabels returns the mean number of labels per attribute, weighted by
// counts (or over the attributes with labels when counts is nil).
func (p *Pattern) meanLabels(counts []int64) float64 {
	var num, den float64
	for a := range p.NumAttrs() {
		k := float64(p.rowPtr[a+1] - p.rowPtr[a])
		if counts == nil {
			if k > 0 {
				num, den = num+k, den+1
			}
			continue
		}
		if a < len(counts) {
			num += k * float64(counts[a])
			den += float64(counts[a])
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// New returns weights in the given layout for the attributes and labels of
// p, viewing params: dense rows of stride M (p only gives the sizes), or
// sparse rows over p.
func New(layout Layout, p *Pattern, params []float64) (Weights, error) {
	switch layout {
	case DenseRows:
		return NewDense(p.NumAttrs(), p.m, params)
	case SparseRows:
		return NewSparse(p, params)
	}
	return nil, fmt.Errorf("sparse: unknown layout %v", layout)
}
