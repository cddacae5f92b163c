package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSubLabelScores: AddScoresSets equals AddScores bit for bit at the
// sets' labels and leaves the rest of emit alone, with labels missing
// parts (shorter labels) and feature values.
func TestSubLabelScores(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 5, 64, 199} {
		labels := make([]string, m)
		for y := range labels {
			n := 3 + r.IntN(3) // 3 to 5 bytes: parts 3 and 4 sometimes missing
			b := make([]byte, n)
			for k := range b {
				b[k] = byte('a' + r.IntN(4))
			}
			labels[y] = fmt.Sprintf("%s%d", b, y) // distinct
		}
		const nAttrs = 12
		c := NewCorpus()
		var bld Builder
		for range 30 {
			bld.Reset()
			for range 1 + r.IntN(5) {
				for range 3 {
					bld.Add(int32(r.IntN(nAttrs)), 0.5+r.Float64())
				}
				bld.End(int32(r.IntN(m)))
			}
			if err := c.Append(bld.Seq()); err != nil {
				t.Fatal(err)
			}
		}
		s, err := NewSubLabels(labels, Positions(5), c, nAttrs)
		if err != nil {
			t.Fatal(err)
		}
		for k := range s.W {
			s.W[k] = r.NormFloat64() * math.Exp(4*r.NormFloat64())
		}
		for i := range c.Len() {
			seq := c.Seq(i)
			T := seq.Len()
			base := make([]float64, T*m)
			for k := range base {
				base[k] = r.NormFloat64()
			}
			buf := make([]float64, T*s.NSub)
			want := slices.Clone(base)
			s.AddScores(want, seq, buf)
			sets := make([][]int32, T)
			for p := range sets {
				for y := range int32(m) {
					if r.IntN(3) == 0 {
						sets[p] = append(sets[p], y)
					}
				}
			}
			got := slices.Clone(base)
			s.AddScoresSets(got, seq, buf, sets)
			for p := range T {
				for y := range m {
					k := p*m + y
					w := base[k]
					if slices.Contains(sets[p], int32(y)) {
						w = want[k]
					}
					if math.Float64bits(got[k]) != math.Float64bits(w) {
						t.Fatalf("M = %d, sequence %d, position %d, label %d: AddScoresSets %v, want %v", m, i, p, y, got[k], w)
					}
				}
			}
		}
	}
}
