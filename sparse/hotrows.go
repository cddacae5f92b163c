package sparse

import (
	"unsafe"

	"github.com/simdcrf/simdcrf/kernels"
)

// HotRows is the hot/cold layout of a pattern's rows that the trainer and
// the tagger score with: a hot attribute, one seen with at least HotMin(M)
// labels (in CoNLL-2000 chunking the part-of-speech n-grams: 2% of the
// attributes, 58% of the features), gets a dense row of M weights (0
// outside its pattern), scored and scattered by the SIMD kernels a row in a
// few vector adds (GatherHot, ScatterHot); the others (rare words, one or
// two labels each) keep their sparse rows, which the caller lays out as it
// needs. Hot rows are numbered in attribute order.
type HotRows struct {
	m, ld int
	row   []int32 // attribute → hot row, or −1
	n     int
}

// HotMin returns the number of labels from which a row is hot at M labels.
func HotMin(M int) int { return max((M+3)/4, 2) }

// hotStride returns the stride of hot rows of M weights: M rounded up to
// whole cache lines of float64 where that pads a row by at most a sixth
// (M = 22: 24; 45: 48; 49: 56), else M. A row that starts and ends on a
// line boundary is read in whole lines, and no vector load straddles two.
// simdcrf-bench phases -tasks chunking,ewt-xpos -threads 1 -precision
// float64, binaries before and after in turns (Intel Xeon): scattering
// 20.8 -> 18.6 ms an iteration on CoNLL-2000, 32.7 -> 28.4 on EWT XPOS;
// scoring even.
func hotStride(M int) int {
	ld := (M + 7) &^ 7
	if 6*(ld-M) > M {
		return M
	}
	return ld
}

// NewHotRows splits the rows of p (M labels); with allCold no row is hot.
func NewHotRows(p *Pattern, M int, allCold bool) *HotRows {
	h := &HotRows{m: M, ld: hotStride(M), row: make([]int32, p.NumAttrs())}
	minHot := HotMin(M)
	for a := range h.row {
		h.row[a] = -1
		if k := p.RowStart(int32(a)+1) - p.RowStart(int32(a)); k >= minHot && !allCold {
			h.row[a] = int32(h.n)
			h.n++
		}
	}
	return h
}

// Len returns the number of hot rows.
func (h *HotRows) Len() int { return h.n }

// Row returns attribute a's hot row, or −1 when it is cold.
func (h *HotRows) Row(a int32) int32 { return h.row[a] }

// Stride returns the distance between hot rows, M or a little more: the
// weights past M in a row are 0, and the kernels neither read nor write
// them.
func (h *HotRows) Stride() int { return h.ld }

// Size returns the number of weights of the hot rows, Len()·Stride().
func (h *HotRows) Size() int { return h.n * h.ld }

// Dense returns the hot rows of w (weights in p's order, as
// Sparse.Params) as a block of Len() rows of Stride() weights.
func (h *HotRows) Dense(p *Pattern, w []float64) []float64 {
	rowPtr, labels := p.CSR()
	d := make([]float64, h.n*h.ld)
	for a, r := range h.row {
		if r >= 0 {
			dst := d[int(r)*h.ld : int(r)*h.ld+h.m]
			for k := rowPtr[a]; k < rowPtr[a+1]; k++ {
				dst[labels[k]] = w[k]
			}
		}
	}
	return d
}

// CSR returns the hot features of sequences in kernels.CSR form, checked
// once: seq and ptr as kernels.NewCSR takes them, ids hot rows.
func (h *HotRows) CSR(seq []int, ptr, ids []int32) (*kernels.CSR, error) {
	return kernels.NewCSR(seq, ptr, ids, h.n)
}

// GatherHot adds to emit (T_b×M) the hot rows of w (Len()×Stride(), in E) that
// sequence b of cs lists, times vals (one per feature, in order): the one
// place the trainer and the tagger call the gather kernels. cs holds hot
// rows (CSR, or built in place with Reset(Len())).
func GatherHot[E float32 | float64](h *HotRows, emit, w []E, cs *kernels.CSR, vals []E, b int) {
	m, ld := h.m, h.ld
	var z E
	if unsafe.Sizeof(z) == 4 {
		cs.Gather32(f32(emit), f32(w[:h.n*ld]), ld, f32(vals), b, m)
		return
	}
	cs.Gather(f64(emit), f64(w[:h.n*ld]), ld, f64(vals), b, m)
}

// ScatterHot adds c·vals[f]·p[t·M+j] to the hot row weights g (Len()×Stride())
// of sequence b of cs, as GatherHot reads them.
func ScatterHot[E float32 | float64](h *HotRows, g, p []E, cs *kernels.CSR, vals []E, c E, b int) {
	m, ld := h.m, h.ld
	var z E
	if unsafe.Sizeof(z) == 4 {
		cs.Scatter32(f32(g[:h.n*ld]), ld, f32(p), f32(vals), float32(c), b, m)
		return
	}
	cs.Scatter(f64(g[:h.n*ld]), ld, f64(p), f64(vals), float64(c), b, m)
}

func f32[E float32 | float64](s []E) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func f64[E float32 | float64](s []E) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
