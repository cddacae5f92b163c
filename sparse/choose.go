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
// labels an attribute row holds, weighted by how often the row is fetched).
// Both layouts are bound by the memory they touch per feature: a dense row
// is ⌈8M/64⌉ cache lines read by the kernels; a sparse row its rowPtr
// entry, ⌈2k/64⌉ lines of labels and ⌈8k/64⌉ of weights, read by scalar
// Go. BenchmarkLayouts (Score + AddGradient, F = 30 Zipf attributes per
// position, 500 000 attributes, 200 000 for M ≥ 128) measured, in ns per
// position, dense rows at about 1 000 + 85·M and sparse rows at about
// 1 000 + 200·k, crossing at k ≈ M/3:
//
//	M = 9:   dense 1 877; sparse k=2 1 537, k=4 2 291
//	M = 16:  dense 2 349; sparse k=4 1 777, k=8 3 062
//	M = 32:  dense 4 155; sparse k=8 3 111, k=16 7 405
//	M = 128: dense 11 231; sparse k=32 5 560, k=64 9 433
//	M = 256: dense 22 840; sparse k=64 10 548
//
// (amd64, all kernel tiers then used the pure-Go gather and scatter). With
// possible states (every attribute has every label) dense rows are always
// chosen if they fit.
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
	denseSlack  = 2
	denseFactor = 3
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
