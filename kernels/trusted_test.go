package kernels

import (
	"math"
	"strings"
	"testing"
)

// TestTrusted checks that GatherTrusted and ScatterTrusted give Gather's and
// Scatter's results bit for bit on valid input, and still reject wrong
// sizes.
func TestTrusted(t *testing.T) {
	r := newRand(7)
	for _, M := range []int{1, 5, 22, 49} {
		ld, rows, T := M+3, 40, 30
		ptr := []int32{0}
		var ids []int32
		var vals []float64
		for range T {
			for range r.IntN(5) {
				ids = append(ids, int32(r.IntN(rows)))
				vals = append(vals, r.NormFloat64())
			}
			ptr = append(ptr, int32(len(ids)))
		}
		w := randSlice(r, (rows-1)*ld+M, -2, 2)
		p := randSlice(r, T*M, -2, 2)
		s1, s2 := randSlice(r, T*M, -2, 2), make([]float64, T*M)
		copy(s2, s1)
		Gather(s1, w, ld, ptr, ids, vals, T, M)
		GatherTrusted(s2, w, ld, ptr, ids, vals, T, M)
		g1, g2 := randSlice(r, len(w), -2, 2), make([]float64, len(w))
		copy(g2, g1)
		Scatter(g1, ld, p, ptr, ids, vals, -0.5, T, M)
		ScatterTrusted(g2, ld, p, ptr, ids, vals, -0.5, T, M)
		for k := range s1 {
			if math.Float64bits(s1[k]) != math.Float64bits(s2[k]) {
				t.Fatalf("M=%d: GatherTrusted s[%d] = %v, Gather %v", M, k, s2[k], s1[k])
			}
		}
		for k := range g1 {
			if math.Float64bits(g1[k]) != math.Float64bits(g2[k]) {
				t.Fatalf("M=%d: ScatterTrusted g[%d] = %v, Scatter %v", M, k, g2[k], g1[k])
			}
		}
	}
	x := make([]float64, 8)
	ptr := []int32{0, 2}
	mustPanicT(t, "short s", "len(s)", func() { GatherTrusted(x[:1], x, 2, ptr, []int32{0, 1}, x[:2], 1, 2) })
	mustPanicT(t, "short ids", "len(ids)", func() { GatherTrusted(x[:2], x, 2, ptr, []int32{0}, x[:2], 1, 2) })
	mustPanicT(t, "short vals", "len(vals)", func() { ScatterTrusted(x, 2, x[:2], ptr, []int32{0, 1}, x[:1], 1, 1, 2) })
	mustPanicT(t, "ld < M", "bad sizes", func() { ScatterTrusted(x, 1, x[:2], ptr, []int32{0, 1}, x[:2], 1, 1, 2) })
	mustPanicT(t, "short ptr", "len(ptr)", func() { GatherTrusted(x[:4], x, 2, ptr, []int32{0, 1}, x[:2], 2, 2) })
}

func mustPanicT(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		msg, _ := r.(string)
		if r == nil || !strings.Contains(msg, want) {
			t.Errorf("%s: panic %v, want one mentioning %q", what, r, want)
		}
	}()
	f()
}
