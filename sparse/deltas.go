package sparse

import "github.com/simdcrf/simdcrf/kernels"

// DeltaWork is TransDeltas' scratch, reused from call to call.
type DeltaWork struct {
	buf []float64   // T×M² deltas
	dst [][]float64 // T views
	// first[a] is the position whose delta is attribute a's alone
	// (value 1), or −1: every entry is −1 between calls.
	first []int32
}

// Grow sizes w for sequences of up to T positions over M labels and
// nAttrs bigram attributes, so that TransDeltas does not allocate.
func (w *DeltaWork) Grow(T, M, nAttrs int) {
	if n := T * M * M; cap(w.buf) < n {
		w.buf = make([]float64, n)
	}
	if cap(w.dst) < T {
		w.dst = make([][]float64, T)
	}
	if len(w.first) < nAttrs {
		w.first = make([]int32, nAttrs)
		for a := range w.first {
			w.first[a] = -1
		}
	}
}

// TransDeltas returns the transition deltas of the bigram attributes s
// (checked by the caller; len(ptr)−1 attributes): entry t, for the
// transition into position t, is the sum of scale·value·weights[k] over
// the weights of the attributes active at t, M×M, where attribute a's
// weights are weights[ptr[a]:ptr[a+1]], at the label pairs pairs[ptr[a]:
// ptr[a+1]] (indexes into M×M), or a full M×M block when pairs is nil.
// An entry is nil where no attribute with weights is active (always at
// t = 0), and the result is nil when every entry is. Its slices are w's
// until the next call.
//
// A position whose only attribute (value 1) is an earlier position's only
// attribute gets that position's slice itself, which the engine recognises
// (one E_t for both): in a chain conditioned on part-of-speech tags most
// positions share one.
func TransDeltas(w *DeltaWork, ptr, pairs []int32, weights []float64, M int, scale float64, s Seq) [][]float64 {
	T, M2 := s.Len(), M*M
	w.Grow(T, M, len(ptr)-1)
	dst := w.dst[:T]
	some := false
	for t := range T {
		dst[t] = nil
		if t == 0 {
			continue
		}
		lone := int32(-1)
		if f := s.Ptr[t]; s.Ptr[t+1] == f+1 && s.Value(int(f)) == 1 {
			lone = s.IDs[f]
			if u := w.first[lone]; u >= 0 {
				dst[t] = dst[u]
				continue
			}
		}
		var d []float64
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			a := s.IDs[f]
			lo, hi := ptr[a], ptr[a+1]
			if lo == hi {
				continue
			}
			if d == nil {
				d = w.buf[t*M2 : (t+1)*M2]
				clear(d)
			}
			v := scale * s.Value(int(f))
			wa := weights[lo:hi]
			if pairs == nil {
				kernels.Axpy(v, wa, d)
				continue
			}
			for k, p := range pairs[lo:hi] {
				d[p] += v * wa[k]
			}
		}
		if d != nil {
			dst[t], some = d, true
			if lone >= 0 {
				w.first[lone] = int32(t)
			}
		}
	}
	// Leave first all −1 again: O(T), not O(attributes).
	for t := 1; t < T; t++ {
		if f := s.Ptr[t]; s.Ptr[t+1] == f+1 {
			w.first[s.IDs[f]] = -1
		}
	}
	if !some {
		return nil
	}
	return dst
}
