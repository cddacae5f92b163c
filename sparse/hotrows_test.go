package sparse

import (
	"math"
	"testing"
)

// TestHotRows: which rows are hot, their numbering and dense copy, the id
// checked CSR, and GatherHot and ScatterHot (float64 and float32) against the
// straightforward loops over the model's sparse rows.
func TestHotRows(t *testing.T) {
	const M = 8 // HotMin: 2 labels
	p, err := NewPattern(M, []int32{0, 1, 4, 4, 6, 7}, []int32{1, 0, 3, 5, 2, 7, 4})
	if err != nil {
		t.Fatal(err)
	}
	w := []float64{0.5, -1, 2, 0.25, 3, -0.5, 7}
	sp, err := NewSparse(p, w)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHotRows(p, M, false)
	if h.Len() != 2 || h.Row(0) != -1 || h.Row(1) != 0 || h.Row(2) != -1 || h.Row(3) != 1 || h.Row(4) != -1 {
		t.Fatalf("hot rows %v (%d)", h.row, h.Len())
	}
	if c := NewHotRows(p, M, true); c.Len() != 0 || c.Row(1) != -1 {
		t.Errorf("allCold: %d hot rows", c.Len())
	}
	d := h.Dense(p, w)
	for a, r := range []int32{1, 3} {
		for j := range int32(M) {
			if got, want := d[a*M+int(j)], weightOf(sp, r, j); got != want {
				t.Errorf("dense row %d label %d: %v, want %v", a, j, got, want)
			}
		}
	}
	if _, err := h.CSR([]int{0, 3}, []int32{0, 2, 3, 3}, []int32{0, 1, 1}); err != nil {
		t.Errorf("CSR of hot rows: %v", err)
	}
	for _, bad := range [][]int32{{0, 2, 1}, {-1, 0, 0}} {
		if _, err := h.CSR([]int{0, 3}, []int32{0, 2, 3, 3}, bad); err == nil {
			t.Errorf("CSR of %v: no error", bad)
		}
	}
	// Three positions of hot features: attributes 1, 3; 3; 1 (value 2).
	checkHotKernels(t, h, p, sp, d, []int32{1, 3}, 1e-6)
}

// checkHotKernels runs GatherHot and ScatterHot (float64 and float32) over
// three positions of the hot attributes a0, a1 (a0, a1; a1; a0 with value
// 2) on the dense rows d of h, against the loops over the sparse rows of
// sp (pattern p), within tol32 in float32, and checks that the padding
// past M in each row is left at 0.
func checkHotKernels(t *testing.T, h *HotRows, p *Pattern, sp *Sparse, d []float64, attrs []int32, tol32 float64) {
	t.Helper()
	M, ld := h.m, h.Stride()
	a0, a1 := attrs[0], attrs[1]
	s := Seq{Ptr: []int32{0, 2, 3, 4}, IDs: []int32{a0, a1, a1, a0}, Vals: []float64{1, 1, 1, 2}}
	ids := []int32{h.Row(a0), h.Row(a1), h.Row(a1), h.Row(a0)}
	cs, err := h.CSR([]int{0, 3}, s.Ptr, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := refScore(sp, s)
	probs := make([]float64, len(want))
	for k := range probs {
		probs[k] = float64(k%5) / 4
	}
	wantG := make([]float64, sp.NumParams())
	refGradient(sp, wantG, s, probs, 0.5)
	forEachTier(t, func(t *testing.T) {
		emit := make([]float64, 3*M)
		GatherHot(h, emit, d, cs, s.Vals, 0)
		emit32 := make([]float32, 3*M)
		GatherHot(h, emit32, toF32(d), cs, toF32(s.Vals), 0)
		for k := range want {
			if emit[k] != want[k] || math.Abs(float64(emit32[k])-want[k]) > tol32 {
				t.Fatalf("score %d: %v and %v, want %v", k, emit[k], emit32[k], want[k])
			}
		}
		g := make([]float64, len(d))
		ScatterHot(h, g, probs, cs, s.Vals, 0.5, 0)
		g32 := make([]float32, len(d))
		ScatterHot(h, g32, toF32(probs), cs, toF32(s.Vals), 0.5, 0)
		rowPtr, labels := p.CSR()
		for a, r := range attrs {
			for k := rowPtr[r]; k < rowPtr[r+1]; k++ {
				got, got32 := g[a*ld+int(labels[k])], g32[a*ld+int(labels[k])]
				if math.Abs(got-wantG[k]) > 1e-12 || math.Abs(float64(got32)-wantG[k]) > 1e-6 {
					t.Fatalf("gradient of weight %d: %v and %v, want %v", k, got, got32, wantG[k])
				}
			}
			for j := M; j < ld; j++ {
				if g[a*ld+j] != 0 || g32[a*ld+j] != 0 {
					t.Fatalf("row %d: padding entry %d written", a, j)
				}
			}
		}
	})
}

func toF32(x []float64) []float32 {
	y := make([]float32, len(x))
	for k, v := range x {
		y[k] = float32(v)
	}
	return y
}

// TestHotRowsPadded: rows padded to whole cache lines (M = 22, stride 24):
// the dense copy, GatherHot and ScatterHot (float64 and float32) against
// the loops over the sparse rows, and the padding left at 0.
func TestHotRowsPadded(t *testing.T) {
	for M, want := range map[int]int{1: 1, 8: 8, 9: 9, 13: 13, 17: 17, 20: 20, 21: 24, 22: 24, 45: 48, 49: 56, 50: 56, 64: 64} {
		if got := hotStride(M); got != want {
			t.Errorf("hotStride(%d) = %d, want %d", M, got, want)
		}
	}
	const M, ld = 22, 24
	// Attribute 0 cold (one label), 1 and 2 hot (HotMin(22) = 6 labels).
	p, err := NewPattern(M, []int32{0, 1, 7, 14}, []int32{4, 0, 3, 5, 7, 11, 21, 1, 2, 4, 8, 16, 20, 21})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, p.NumPairs())
	for k := range w {
		w[k] = float64(k+1) / 8
	}
	sp, err := NewSparse(p, w)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHotRows(p, M, false)
	if h.Len() != 2 || h.Stride() != ld || h.Size() != 2*ld {
		t.Fatalf("%d hot rows of stride %d, size %d", h.Len(), h.Stride(), h.Size())
	}
	d := h.Dense(p, w)
	if len(d) != 2*ld {
		t.Fatalf("dense rows: %d weights", len(d))
	}
	for a, r := range []int32{1, 2} {
		for j := range int32(ld) {
			want := 0.0
			if j < M {
				want = weightOf(sp, r, j)
			}
			if got := d[a*ld+int(j)]; got != want {
				t.Errorf("dense row %d entry %d: %v, want %v", a, j, got, want)
			}
		}
	}
	checkHotKernels(t, h, p, sp, d, []int32{1, 2}, 1e-5)
}
