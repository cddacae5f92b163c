package sparse

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/simdcrf/simdcrf/kernels"
)

// Layout names a layout of the state weights.
type Layout int

const (
	// DenseRows stores a weight for every (attribute, label) pair: row a
	// of M weights (stride ld) is gathered with SIMD kernels. It is
	// CRFsuite's feature.possible_states=1.
	DenseRows Layout = iota
	// SparseRows stores, per attribute, only the labels in its Pattern
	// (those it was seen with in training).
	SparseRows
)

// String returns "dense" or "sparse".
func (l Layout) String() string {
	switch l {
	case DenseRows:
		return "dense"
	case SparseRows:
		return "sparse"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Weights are the state (attribute × label) weights of a linear-chain CRF,
// a view on the first NumParams() entries of a caller-owned []float64 (an
// optimiser's parameter vector; transition weights may follow them).
// Gradients use the same layout: the methods that take g add to
// g[0:NumParams()].
//
// The sequences passed in must be valid for the weights
// (s.Validate(NumAttrs(), Labels()) == nil): malformed ones are programming
// errors and panic, as do emission or marginal slices shorter than T×M.
// None of the methods allocates, and any number of goroutines may score
// with the same Weights (the gradient methods write only to g).
type Weights interface {
	// Layout returns DenseRows or SparseRows.
	Layout() Layout
	// Labels returns M.
	Labels() int
	// NumAttrs returns the number of attributes.
	NumAttrs() int
	// NumParams returns the number of parameters the weights occupy.
	NumParams() int
	// Params returns the parameter slice the weights are a view of.
	Params() []float64
	// Index returns the parameter index of the weight of (attr, label),
	// or -1 if there is none (outside the sparse pattern or the ranges).
	Index(attr int32, label int32) int
	// WithParams returns weights of the same shape viewing another
	// parameter slice (for instance an optimiser's trial point).
	WithParams(params []float64) (Weights, error)
	// Score sets emit[t·M+j] (T×M) to the state score of label j at
	// position t: Σ_f vals[f]·w[ids[f]][j].
	Score(emit []float64, s Seq)
	// AddGradient adds c·vals[f]·p[t·M+j] to the gradient entry of
	// (ids[f], j) for every feature f of every position t, where p is T×M
	// (the marginals, for the expected counts of a log-likelihood
	// gradient). Sparse rows only have entries in their pattern.
	AddGradient(g []float64, s Seq, p []float64, c float64)
	// AddObserved adds c·vals[f] to the gradient entry of (ids[f],
	// labels[t]) for every feature f of every position t: the empirical
	// feature counts (with c = −1, the other half of the negative
	// log-likelihood's gradient). Sparse rows skip pairs outside their
	// pattern.
	AddObserved(g []float64, s Seq, labels []int32, c float64)
}

func checkEmit(what string, have, T, M int) {
	if have < T*M {
		panic(fmt.Sprintf("sparse: %s: %d entries for a %d×%d matrix", what, have, T, M))
	}
}

func checkLabels(labels []int32, T int) {
	if len(labels) < T {
		panic(fmt.Sprintf("sparse: AddObserved: %d labels for %d positions", len(labels), T))
	}
}

// Dense is the DenseRows layout: the weight of (a, j) is params[a·ld + j].
type Dense struct {
	numAttrs, m, ld int
	w               []float64
}

// NewDense returns dense weights for numAttrs attributes and m labels
// (rows of stride m) viewing params[0 : numAttrs·m].
func NewDense(numAttrs, m int, params []float64) (*Dense, error) {
	return NewDenseStride(numAttrs, m, m, params)
}

// NewDenseStride is NewDense with rows of stride ld ≥ m. Padding rows to a
// multiple of 8 (64 bytes) makes each row start a cache line when params is
// 64-byte aligned (as large Go allocations are); the padding entries are
// parameters that get no gradient. (BenchmarkStride found no gain from it
// at M = 9 or 45.)
func NewDenseStride(numAttrs, m, ld int, params []float64) (*Dense, error) {
	if numAttrs < 0 || m < 1 || ld < m {
		return nil, fmt.Errorf("sparse: dense weights with %d attributes, %d labels, stride %d", numAttrs, m, ld)
	}
	n := numAttrs * ld
	if n/ld != numAttrs {
		return nil, fmt.Errorf("sparse: %d×%d dense weights overflow", numAttrs, ld)
	}
	if len(params) < n {
		return nil, fmt.Errorf("sparse: dense weights need %d parameters, have %d", n, len(params))
	}
	return &Dense{numAttrs: numAttrs, m: m, ld: ld, w: params[:n:n]}, nil
}

// Layout returns DenseRows.
func (d *Dense) Layout() Layout { return DenseRows }

// Labels returns M.
func (d *Dense) Labels() int { return d.m }

// NumAttrs returns the number of attributes.
func (d *Dense) NumAttrs() int { return d.numAttrs }

// NumParams returns numAttrs·ld.
func (d *Dense) NumParams() int { return len(d.w) }

// Stride returns the row stride ld.
func (d *Dense) Stride() int { return d.ld }

// Params returns the parameter slice (length NumParams()).
func (d *Dense) Params() []float64 { return d.w }

// Index returns attr·ld + label, or -1 if either is out of range.
func (d *Dense) Index(attr, label int32) int {
	if attr < 0 || int(attr) >= d.numAttrs || label < 0 || int(label) >= d.m {
		return -1
	}
	return int(attr)*d.ld + int(label)
}

// WithParams returns dense weights of the same shape viewing params.
func (d *Dense) WithParams(params []float64) (Weights, error) {
	return NewDenseStride(d.numAttrs, d.m, d.ld, params)
}

// Score sets emit (T×M) to the state scores of s: kernels.Gather over
// blocks of positions (the whole sequence at small M), each after a pass
// that touches the block's weight rows so that their cache misses overlap
// (see BenchmarkTouchPass: 1.15–1.55× with the pure-Go gather).
func (d *Dense) Score(emit []float64, s Seq) {
	T := s.Len()
	checkEmit("Score", len(emit), T, d.m)
	clear(emit[:T*d.m])
	vals := s.values()
	if !prefetchRows {
		kernels.Gather(emit, d.w, d.ld, s.Ptr, s.IDs, vals, T, d.m)
		return
	}
	d.blocks(s, d.w, func(t0, t1 int) {
		kernels.Gather(emit[t0*d.m:t1*d.m], d.w, d.ld, s.Ptr[t0:t1+1], s.IDs, vals, t1-t0, d.m)
	})
}

// prefetchRows turns on the touch pass of dense rows (a variable for
// benchmarks).
var prefetchRows = true

// touchLines is the most cache lines one touch pass loads before the
// kernel uses them (128 KiB: well within L2).
const touchLines = 2048

// blocks splits s into blocks of positions [t0, t1) whose weight rows
// together span at most touchLines cache lines (at least one position),
// loads one word of every cache line of those rows (independent loads, so
// that the misses overlap instead of queueing behind the kernel's
// arithmetic), then calls f on the block. w is the array whose rows are
// touched (the weights, or the gradient).
func (d *Dense) blocks(s Seq, w []float64, f func(t0, t1 int)) {
	T := s.Len()
	per := (d.m*8+63)/64 + 1
	maxFeat := int32(max(touchLines/per, 1))
	var sink uint64
	for t0 := 0; t0 < T; {
		t1 := t0 + 1
		for t1 < T && s.Ptr[t1+1]-s.Ptr[t0] <= maxFeat {
			t1++
		}
		sink ^= touchRows(w, d.ld, d.m, s.IDs[s.Ptr[t0]:s.Ptr[t1]])
		f(t0, t1)
		t0 = t1
	}
	if sink == touchMagic {
		touchSink.Store(sink) // practically never: only keeps the loads alive
	}
}

// touchSink keeps the touch loads from being optimised away (without a
// racy write on every call).
var touchSink atomic.Uint64

const touchMagic = 0x5eed_0f_f00d_cafe

// touchRows loads one word of each cache line of the rows ids.
func touchRows(w []float64, ld, m int, ids []int32) uint64 {
	var acc uint64
	for _, id := range ids {
		row := w[int(id)*ld : int(id)*ld+m]
		for off := 0; off < len(row); off += 8 {
			acc ^= math.Float64bits(row[off])
		}
		acc ^= math.Float64bits(row[len(row)-1])
	}
	return acc
}

// AddGradient adds the expected counts c·vals[f]·p[t] to g's rows:
// kernels.Scatter over blocks of positions, as Score.
func (d *Dense) AddGradient(g []float64, s Seq, p []float64, c float64) {
	T := s.Len()
	checkEmit("AddGradient", len(p), T, d.m)
	g = g[:len(d.w)]
	vals := s.values()
	if !prefetchRows {
		kernels.Scatter(g, d.ld, p, s.Ptr, s.IDs, vals, c, T, d.m)
		return
	}
	d.blocks(s, g, func(t0, t1 int) {
		kernels.Scatter(g, d.ld, p[t0*d.m:t1*d.m], s.Ptr[t0:t1+1], s.IDs, vals, c, t1-t0, d.m)
	})
}

// AddObserved adds c·vals[f] at (ids[f], labels[t]).
func (d *Dense) AddObserved(g []float64, s Seq, labels []int32, c float64) {
	T := s.Len()
	checkLabels(labels, T)
	g = g[:len(d.w)]
	for t := range T {
		y := int(labels[t])
		if y < 0 || y >= d.m {
			panic(fmt.Sprintf("sparse: AddObserved: label %d at position %d out of range [0,%d)", y, t, d.m))
		}
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			g[int(s.IDs[f])*d.ld+y] += c * s.Value(int(f))
		}
	}
}

// Sparse is the SparseRows layout: attribute a has the weights
// params[k] for k in [rowPtr[a], rowPtr[a+1]), of the labels
// pattern.labels[k].
type Sparse struct {
	p *Pattern
	w []float64
}

// NewSparse returns sparse weights over pattern p viewing
// params[0 : p.NumPairs()].
func NewSparse(p *Pattern, params []float64) (*Sparse, error) {
	if p == nil {
		return nil, fmt.Errorf("sparse: nil pattern")
	}
	n := p.NumPairs()
	if len(params) < n {
		return nil, fmt.Errorf("sparse: sparse weights need %d parameters, have %d", n, len(params))
	}
	return &Sparse{p: p, w: params[:n:n]}, nil
}

// Layout returns SparseRows.
func (sp *Sparse) Layout() Layout { return SparseRows }

// Labels returns M.
func (sp *Sparse) Labels() int { return sp.p.m }

// NumAttrs returns the number of attributes.
func (sp *Sparse) NumAttrs() int { return sp.p.NumAttrs() }

// NumParams returns the number of (attribute, label) pairs of the pattern.
func (sp *Sparse) NumParams() int { return len(sp.w) }

// Params returns the parameter slice (length NumParams()).
func (sp *Sparse) Params() []float64 { return sp.w }

// Pattern returns the pattern of the weights.
func (sp *Sparse) Pattern() *Pattern { return sp.p }

// Index returns the parameter index of (attr, label), or -1 if the pattern
// does not have the pair.
func (sp *Sparse) Index(attr, label int32) int {
	return sp.p.Index(attr, label)
}

// WithParams returns sparse weights over the same pattern viewing params.
func (sp *Sparse) WithParams(params []float64) (Weights, error) {
	return NewSparse(sp.p, params)
}

// Score sets emit (T×M) to the state scores of s.
func (sp *Sparse) Score(emit []float64, s Seq) {
	T, M := s.Len(), sp.p.m
	checkEmit("Score", len(emit), T, M)
	clear(emit[:T*M])
	rowPtr, labels, w := sp.p.rowPtr, sp.p.labels, sp.w
	for t := range T {
		row := emit[t*M : (t+1)*M]
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			a := s.IDs[f]
			lo, hi := rowPtr[a], rowPtr[a+1]
			lab, wr := labels[lo:hi], w[lo:hi]
			wr = wr[:len(lab)]
			if s.Vals == nil {
				for k, y := range lab {
					row[y] += wr[k]
				}
			} else {
				v := s.Vals[f]
				for k, y := range lab {
					row[y] += v * wr[k]
				}
			}
		}
	}
}

// AddGradient adds c·vals[f]·p[t·M+j] at (ids[f], j) for every j in the
// pattern of ids[f].
func (sp *Sparse) AddGradient(g []float64, s Seq, p []float64, c float64) {
	T, M := s.Len(), sp.p.m
	checkEmit("AddGradient", len(p), T, M)
	rowPtr, labels := sp.p.rowPtr, sp.p.labels
	g = g[:len(sp.w)]
	for t := range T {
		row := p[t*M : (t+1)*M]
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			a := s.IDs[f]
			lo, hi := rowPtr[a], rowPtr[a+1]
			lab, gr := labels[lo:hi], g[lo:hi]
			gr = gr[:len(lab)]
			v := c * s.Value(int(f))
			for k, y := range lab {
				gr[k] += v * row[y]
			}
		}
	}
}

// AddObserved adds c·vals[f] at (ids[f], labels[t]) where the pattern has
// the pair (binary search in the attribute's sorted labels).
func (sp *Sparse) AddObserved(g []float64, s Seq, labels []int32, c float64) {
	T, M := s.Len(), sp.p.m
	checkLabels(labels, T)
	g = g[:len(sp.w)]
	for t := range T {
		y := labels[t]
		if y < 0 || int(y) >= M {
			panic(fmt.Sprintf("sparse: AddObserved: label %d at position %d out of range [0,%d)", y, t, M))
		}
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			if k := sp.p.Index(s.IDs[f], y); k >= 0 {
				g[k] += c * s.Value(int(f))
			}
		}
	}
}
