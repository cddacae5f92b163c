package sparse

import "testing"

// TestTransDeltas checks the deltas against their definition, that a
// position whose lone attribute an earlier position had alone shares that
// slice (also far apart), that a position with more attributes or a value
// other than 1 does not, and that the next call starts afresh.
func TestTransDeltas(t *testing.T) {
	const M = 2
	// Attribute 0: pairs 1 and 2; attribute 1: pair 3; attribute 2: no weights.
	ptr := []int32{0, 2, 3, 3}
	pairs := []int32{1, 2, 3}
	weights := []float64{0.5, -1, 2}
	full := []float64{1, 2, 3, 4, 5, 6, 7, 8} // 2 blocks of M×M; attribute 2 none
	fullPtr := []int32{0, 4, 8, 8}
	type pos struct {
		ids  []int32
		vals []float64
	}
	seq := func(ps []pos) Seq {
		var b Builder
		for _, p := range ps {
			for k, id := range p.ids {
				b.Add(id, p.vals[k])
			}
			b.End(-1)
		}
		return b.Seq()
	}
	s := seq([]pos{{[]int32{0}, []float64{1}}, {[]int32{0}, []float64{1}}, {[]int32{1}, []float64{1}},
		{[]int32{0, 1}, []float64{1, 1}}, {[]int32{2}, []float64{1}}, {[]int32{0}, []float64{2}}, {[]int32{0}, []float64{1}}})
	var w DeltaWork
	for _, full1 := range []bool{false, true} {
		p, wt, pr := pairs, weights, ptr
		if full1 {
			p, wt, pr = nil, full, fullPtr
		}
		const scale = 3.0
		for run := range 2 {
			d := TransDeltas(&w, pr, p, wt, M, scale, s)
			if len(d) != s.Len() || d[0] != nil || d[4] != nil {
				t.Fatalf("full=%v: %d deltas, d[0]=%v d[4]=%v", full1, len(d), d[0], d[4])
			}
			for pos := 1; pos < s.Len(); pos++ {
				if d[pos] == nil {
					continue
				}
				want := make([]float64, M*M)
				for f := s.Ptr[pos]; f < s.Ptr[pos+1]; f++ {
					a := s.IDs[f]
					for k := pr[a]; k < pr[a+1]; k++ {
						j := int(k - pr[a])
						if p != nil {
							j = int(p[k])
						}
						want[j] += scale * s.Value(int(f)) * wt[k]
					}
				}
				for j := range want {
					if d[pos][j] != want[j] {
						t.Fatalf("full=%v run %d: d[%d] = %v, want %v", full1, run, pos, d[pos], want)
					}
				}
			}
			if &d[6][0] != &d[1][0] {
				t.Errorf("full=%v run %d: position 6 (attribute 0 alone, value 1) does not share position 1's slice", full1, run)
			}
			if &d[3][0] == &d[1][0] || &d[5][0] == &d[1][0] {
				t.Errorf("full=%v run %d: a position with two attributes or value 2 shares position 1's slice", full1, run)
			}
		}
		for a, u := range w.first {
			if u != -1 {
				t.Fatalf("full=%v: first[%d] = %d after a call", full1, a, u)
			}
		}
	}
	// No attribute with weights anywhere: nil.
	if d := TransDeltas(&w, ptr, pairs, weights, M, 1, seq([]pos{{nil, nil}, {[]int32{2}, []float64{1}}})); d != nil {
		t.Errorf("deltas %v, want nil", d)
	}
	if n := testing.AllocsPerRun(10, func() { TransDeltas(&w, ptr, pairs, weights, M, 1, s) }); n != 0 {
		t.Errorf("TransDeltas allocates %v times per call", n)
	}
}
