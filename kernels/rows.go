package kernels

import "fmt"

// Rows is the structure of a sparse matrix in CSR form — row offsets and
// column indices — checked once, for callers that multiply by the same
// structure again and again with values that change (engine's tied
// transitions, at every position of every chain): SpMV and MaxPlus over it
// check only sizes, O(1), where the plain SpMV and MaxPlusCSR scan every
// index, an O(entries) pass that costs as much as the product.
//
// A Rows owns its arrays (NewRows copies them), so they cannot change after
// the check. It is safe for concurrent use.
type Rows struct {
	ptr, idx []int32
	cols     int
}

// NewRows checks and copies a CSR structure: ptr holds each row's first
// entry and then the end (ascending, from 0), idx each entry's column, in
// [0, cols). It returns an error naming what is wrong.
func NewRows(ptr, idx []int32, cols int) (*Rows, error) {
	if cols < 0 {
		return nil, fmt.Errorf("kernels: NewRows: %d columns", cols)
	}
	if len(ptr) == 0 || ptr[0] != 0 {
		return nil, fmt.Errorf("kernels: NewRows: ptr must start with 0")
	}
	rows := len(ptr) - 1
	for r := range rows {
		if ptr[r+1] < ptr[r] {
			return nil, fmt.Errorf("kernels: NewRows: ptr not ascending at %d", r)
		}
	}
	if int(ptr[rows]) != len(idx) {
		return nil, fmt.Errorf("kernels: NewRows: ptr ends at %d, idx has %d entries", ptr[rows], len(idx))
	}
	for k, c := range idx {
		if c < 0 || int(c) >= cols {
			return nil, fmt.Errorf("kernels: NewRows: idx[%d] = %d is out of range [0, %d)", k, c, cols)
		}
	}
	return &Rows{ptr: append([]int32(nil), ptr...), idx: append([]int32(nil), idx...), cols: cols}, nil
}

// Len returns the number of rows.
func (r *Rows) Len() int { return len(r.ptr) - 1 }

// NNZ returns the number of entries.
func (r *Rows) NNZ() int { return len(r.idx) }

// sizes checks the per-call arguments: y of one entry per row, x of at
// least the columns, v of one value per entry.
func (r *Rows) sizes(kernel string, ly, lx, lv int) {
	need(kernel, "y", ly, r.Len())
	need(kernel, "x", lx, r.cols)
	need(kernel, "v", lv, len(r.idx))
}

// SpMV is SpMV over the structure with the values v (one per entry): for
// every row i, y[i] = Σ_k x[idx[k]]·v[k] over the row's entries, with
// SpMV's summation order.
func (r *Rows) SpMV(y, x, v []float64) {
	r.sizes("Rows.SpMV", len(y), len(x), len(v))
	if r.Len() == 0 {
		return
	}
	cur().spmv(y[:r.Len()], x, r.ptr, r.idx, v)
}

// MaxPlus is MaxPlusCSR over the structure with the values v: for every
// row i, y[i] = max_k x[idx[k]] + v[k] over the row's entries, arg[i] the
// winning column (ties and empty rows as MaxPlusCSR).
func (r *Rows) MaxPlus(y []float64, arg []int32, x, v []float64) {
	r.sizes("Rows.MaxPlus", len(y), len(x), len(v))
	need("Rows.MaxPlus", "arg", len(arg), r.Len())
	if r.Len() == 0 {
		return
	}
	cur().maxPlusCSR(y[:r.Len()], arg[:r.Len()], x, r.ptr, r.idx, v)
}

// Pairs is a list of index pairs (xi[k], yi[k]), checked once against the
// lengths of the vectors they index, for GatherMulAdd over the same pairs
// again and again. It owns its arrays and is safe for concurrent use.
type Pairs struct {
	xi, yi []int32
	xn, yn int
}

// NewPairs checks and copies the pairs: xi and yi of one length, every
// xi[k] in [0, xn) and yi[k] in [0, yn).
func NewPairs(xi, yi []int32, xn, yn int) (*Pairs, error) {
	if len(xi) != len(yi) {
		return nil, fmt.Errorf("kernels: NewPairs: %d and %d indices", len(xi), len(yi))
	}
	for k := range xi {
		if xi[k] < 0 || int(xi[k]) >= xn || yi[k] < 0 || int(yi[k]) >= yn {
			return nil, fmt.Errorf("kernels: NewPairs: pair %d (%d, %d) is out of range [0, %d)×[0, %d)", k, xi[k], yi[k], xn, yn)
		}
	}
	return &Pairs{xi: append([]int32(nil), xi...), yi: append([]int32(nil), yi...), xn: xn, yn: yn}, nil
}

// Len returns the number of pairs.
func (p *Pairs) Len() int { return len(p.xi) }

// GatherMulAdd is GatherMulAdd over the pairs: q[k] += x[xi[k]]·y[yi[k]]
// for every pair k (len(q) of them, one fused multiply-add each).
func (p *Pairs) GatherMulAdd(q, x, y []float64) {
	need("Pairs.GatherMulAdd", "q", len(q), len(p.xi))
	need("Pairs.GatherMulAdd", "x", len(x), p.xn)
	need("Pairs.GatherMulAdd", "y", len(y), p.yn)
	if len(p.xi) == 0 {
		return
	}
	cur().gatherMulAdd(q[:len(p.xi)], x, p.xi, y, p.yi)
}
