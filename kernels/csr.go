package kernels

import (
	"fmt"
	"math"
)

// CSR is a list of sequences' features in CSR form, checked once, for the
// callers of Gather and Scatter that score the same features again and
// again (a trainer scores its corpus every iteration): Gather and Scatter
// over a sequence of it check only sizes, O(1), where the plain forms scan
// every id, which cost a fifth of Gather itself on CoNLL-2000.
//
// Sequence b has positions t < T_b, position t the features f with
// ptr_b[t] ≤ f < ptr_b[t+1] (offsets from the sequence's first feature),
// feature f the attribute id ids_b[f], below the bound given to NewCSR (or
// Reset). The values are not part of it: the caller passes them per call,
// vals[f] for the sequence's features in order, so that float64 and
// float32 callers can share one CSR, and a caller whose values are all 1
// can pass one short slice of ones.
//
// A CSR owns its arrays (NewCSR copies them), so they cannot change after
// the check. It is safe for concurrent use, except Reset, Add and EndRow,
// which build one in place.
type CSR struct {
	bound int
	seq   []int   // sequence b has the positions seq[b] ≤ t < seq[b+1] of all
	ptr   []int32 // sequence b's T_b+1 offsets at ptr[seq[b]+b:]
	first []int32 // sequence b's features are ids[first[b]:first[b+1]]
	ids   []int32
	// built: one sequence built in place (Reset, Add, EndRow), seq and
	// first unused: its T+1 offsets are ptr, its features ids[:ptr[T]].
	built bool
}

// NewCSR checks and copies a CSR list of sequences: seq holds the first
// position of each sequence and then the number of positions (seq[0] = 0,
// ascending); ptr holds each position's first feature and then the end
// (seq[len(seq)−1]+1 entries, ascending; ptr[0] ≥ 0 need not be 0); ids
// the features' attribute ids, each in [0, bound) (those from ptr[0] to
// the end). It returns an error naming what is wrong.
func NewCSR(seq []int, ptr, ids []int32, bound int) (*CSR, error) {
	if bound < 0 {
		return nil, fmt.Errorf("kernels: NewCSR: bound %d is negative", bound)
	}
	if len(seq) == 0 || seq[0] != 0 {
		return nil, fmt.Errorf("kernels: NewCSR: seq must start with 0")
	}
	for b := 1; b < len(seq); b++ {
		if seq[b] < seq[b-1] {
			return nil, fmt.Errorf("kernels: NewCSR: seq not ascending at %d", b)
		}
	}
	n := seq[len(seq)-1]
	if len(ptr) != n+1 {
		return nil, fmt.Errorf("kernels: NewCSR: %d entries of ptr for %d positions", len(ptr), n)
	}
	if ptr[0] < 0 {
		return nil, fmt.Errorf("kernels: NewCSR: ptr[0] = %d is negative", ptr[0])
	}
	for t := range n {
		if ptr[t+1] < ptr[t] {
			return nil, fmt.Errorf("kernels: NewCSR: ptr not ascending at %d", t)
		}
	}
	if int(ptr[n]) > len(ids) {
		return nil, fmt.Errorf("kernels: NewCSR: ptr ends at %d, beyond the %d ids", ptr[n], len(ids))
	}
	own := ids[ptr[0]:ptr[n]]
	for f, id := range own {
		if id < 0 || int(id) >= bound {
			return nil, fmt.Errorf("kernels: NewCSR: ids[%d] = %d is out of range [0, %d)", int(ptr[0])+f, id, bound)
		}
	}
	c := &CSR{
		bound: bound,
		seq:   append([]int(nil), seq...),
		ptr:   make([]int32, 0, n+len(seq)-1),
		first: make([]int32, len(seq)),
		ids:   append([]int32(nil), own...),
	}
	for b := range len(seq) - 1 {
		f0 := ptr[seq[b]]
		c.first[b] = f0 - ptr[0]
		for _, p := range ptr[seq[b] : seq[b+1]+1] {
			c.ptr = append(c.ptr, p-f0)
		}
	}
	c.first[len(seq)-1] = ptr[n] - ptr[0]
	return c, nil
}

// Len returns the number of sequences (0 in a zero CSR, before Reset).
func (cs *CSR) Len() int {
	if cs.built {
		return 1
	}
	return max(len(cs.seq)-1, 0)
}

// Positions returns the number of positions of sequence b.
func (cs *CSR) Positions(b int) int {
	if cs.built && b == 0 {
		return len(cs.ptr) - 1
	}
	return cs.seq[b+1] - cs.seq[b]
}

// Reset empties the CSR for building one sequence in place, for ids below
// bound: Add a position's features, then EndRow, for each position. It
// keeps the arrays, so that a caller building a sequence per call
// allocates nothing once they have grown.
func (cs *CSR) Reset(bound int) {
	if bound < 0 {
		panic(fmt.Sprintf("kernels: CSR.Reset: bound %d is negative", bound))
	}
	cs.bound, cs.built = bound, true
	cs.seq, cs.first = nil, nil
	cs.ptr = append(cs.ptr[:0], 0)
	cs.ids = cs.ids[:0]
}

// Add adds a feature with attribute id to the position being built. An id
// outside [0, bound) panics: the ids a caller builds in place are its own
// (NewCSR returns an error for ids that come from data).
func (cs *CSR) Add(id int32) {
	if uint(int(id)) >= uint(cs.bound) { // id < 0 or id ≥ bound
		panic(idError{id, cs.bound})
	}
	cs.ids = append(cs.ids, id)
}

// idError is Add's panic (a string would keep Add from inlining).
type idError struct {
	id    int32
	bound int
}

func (e idError) Error() string {
	return fmt.Sprintf("kernels: CSR.Add: id %d out of range [0, %d)", e.id, e.bound)
}

// EndRow ends the position being built.
func (cs *CSR) EndRow() {
	if !cs.built || len(cs.ids) > math.MaxInt32 {
		panic(rowError(len(cs.ids)))
	}
	cs.ptr = append(cs.ptr, int32(len(cs.ids)))
}

// rowError is EndRow's panic: not after Reset, or too many features.
type rowError int

func (e rowError) Error() string {
	return fmt.Sprintf("kernels: CSR.EndRow: not after Reset, or %d features", int(e))
}

// Gather is Gather over sequence b: for each position t < T_b and feature
// f of it,
//
//	s[t][0:M] += vals[f] · w[ids_b[f]·ld : ids_b[f]·ld+M]
//
// s is T_b×M; w holds bound rows of stride ld ≥ M (the last may end with
// its M elements); vals holds at least the sequence's number of features.
func (cs *CSR) Gather(s, w []float64, ld int, vals []float64, b, M int) {
	if T, ptr, ids := cs.args("CSR.Gather", "s", len(s), len(w), ld, len(vals), b, M); T > 0 {
		cur().gather(s, w, ld, ptr, ids, vals, T, M)
	}
}

// Scatter is Scatter over sequence b: for each position t < T_b and
// feature f of it,
//
//	g[ids_b[f]·ld : ids_b[f]·ld+M] += (c·vals[f]) · p[t][0:M]
//
// with the sizes of Gather (p T_b×M, g bound rows of stride ld).
func (cs *CSR) Scatter(g []float64, ld int, p, vals []float64, c float64, b, M int) {
	if T, ptr, ids := cs.args("CSR.Scatter", "p", len(p), len(g), ld, len(vals), b, M); T > 0 {
		cur().scatter(g, ld, p, ptr, ids, vals, c, T, M)
	}
}

// Gather32 is Gather in float32.
func (cs *CSR) Gather32(s, w []float32, ld int, vals []float32, b, M int) {
	if T, ptr, ids := cs.args("CSR.Gather32", "s", len(s), len(w), ld, len(vals), b, M); T > 0 {
		cur().gather32(s, w, ld, ptr, ids, vals, T, M)
	}
}

// Scatter32 is Scatter in float32.
func (cs *CSR) Scatter32(g []float32, ld int, p, vals []float32, c float32, b, M int) {
	if T, ptr, ids := cs.args("CSR.Scatter32", "p", len(p), len(g), ld, len(vals), b, M); T > 0 {
		cur().scatter32(g, ld, p, ptr, ids, vals, c, T, M)
	}
}

// args checks the sizes of a call on sequence b (dense: s or p, T×M; w:
// the weights or gradient) in O(1) and returns its T, ptr and ids, T = 0
// when there is nothing to do.
func (cs *CSR) args(kernel, dense string, ldense, lw, ld, lvals, b, M int) (T int, ptr, ids []int32) {
	if M < 0 || ld < M {
		panic(fmt.Sprintf("kernels: %s: bad sizes M=%d ld=%d", kernel, M, ld))
	}
	if b < 0 || b >= cs.Len() {
		panic(fmt.Sprintf("kernels: %s: sequence %d of %d", kernel, b, cs.Len()))
	}
	var f0, f1 int32
	if cs.built {
		T = len(cs.ptr) - 1
		ptr, f1 = cs.ptr, cs.ptr[T]
	} else {
		lo, hi := cs.seq[b], cs.seq[b+1]
		T = hi - lo
		ptr, f0, f1 = cs.ptr[lo+b:hi+b+1], cs.first[b], cs.first[b+1]
	}
	need(kernel, dense, ldense, area(kernel, T, M))
	need(kernel, "vals", lvals, int(f1-f0))
	// The rows 0..bound−1 of stride ld: the last ends at (bound−1)·ld+M.
	if cs.bound > 0 && area(kernel, cs.bound-1, ld) > lw-M {
		panic(fmt.Sprintf("kernels: %s: len(w) = %d holds fewer than %d rows of stride %d", kernel, lw, cs.bound, ld))
	}
	if T == 0 || M == 0 {
		return 0, nil, nil
	}
	return T, ptr, cs.ids[f0:f1]
}

// PrefetchCSR is PrefetchRows for the rows of w that sequence b of c
// reads (or, for a gradient, writes).
func PrefetchCSR[E float32 | float64](w []E, ld int, c *CSR, b, M int) {
	if c.built {
		PrefetchRows(w, ld, c.ids[:c.ptr[len(c.ptr)-1]], M)
		return
	}
	PrefetchRows(w, ld, c.ids[c.first[b]:c.first[b+1]], M)
}
