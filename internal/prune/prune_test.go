package prune

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPruneSet checks one position's set: the threshold, the cap, the
// gold label, candidates, and ties kept or dropped together.
func TestPruneSet(t *testing.T) {
	p := Rule{Max: 3, Threshold: 0.01}
	var pb Buf
	l := math.Log
	row := []float64{0, 5, l(0.5) + 5, 5 + l(0.02), 5 + l(0.005), -9, 4, 1}
	for _, c := range []struct {
		name string
		row  []float64
		cand []int32
		gold int32
		want []int32
	}{
		{"cap, gold inside", row, nil, 1, []int32{1, 2, 6}},
		{"cap, gold below the threshold", row, nil, 5, []int32{1, 2, 5}},
		{"no gold: max labels", row, nil, -1, []int32{1, 2, 6}},
		{"threshold below the cap", row, []int32{1, 3, 4, 5}, 5, []int32{1, 3, 5}},
		{"threshold 0.01 drops 0.005", row, []int32{1, 4}, -1, []int32{1}},
		{"all tied", make([]float64, 8), nil, 2, []int32{0, 1, 2, 3, 4, 5, 6, 7}},
		{"tie at the cap", []float64{3, 1, 2, 2, 2, 0, 0, 0}, nil, 0, []int32{0, 2, 3, 4}},
		{"tie above the cap", []float64{3, 1, 3, 2, 2, 0, 0, 3}, nil, -1, []int32{0, 2, 7}},
	} {
		labs := c.cand
		if labs == nil {
			labs = []int32{0, 1, 2, 3, 4, 5, 6, 7}
		}
		got := p.set(&pb, []int32{99}, c.row, labs, c.gold, math.Log(p.Threshold))
		if got[0] != 99 || !slices.Equal(got[1:], c.want) {
			t.Errorf("%s: %v, want %v after 99", c.name, got, c.want)
		}
	}
}

// TestPruneSetRandom compares set with a sort of every label, on scores
// with many ties.
func TestPruneSetRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 27))
	var pb Buf
	for trial := range 3000 {
		m := 1 + r.IntN(40)
		p := Rule{Max: 1 + r.IntN(6), Threshold: []float64{0, 0.01, 0.3, 1}[r.IntN(4)]}
		all := make([]int32, m)
		for y := range all {
			all[y] = int32(y)
		}
		row := make([]float64, m)
		for j := range row {
			row[j] = float64(r.IntN(6)) * 0.7
		}
		var cand []int32
		if r.IntN(3) == 0 {
			for _, y := range r.Perm(m)[:1+r.IntN(m)] {
				cand = append(cand, int32(y))
			}
			slices.Sort(cand)
		}
		gold := int32(-1)
		if r.IntN(4) > 0 {
			gold = int32(r.IntN(m))
			if cand != nil && !slices.Contains(cand, gold) {
				cand = append(cand, gold)
				slices.Sort(cand)
			}
		}
		labs := cand
		if labs == nil {
			labs = all
		}
		best := math.Inf(-1)
		for _, y := range labs {
			best = max(best, row[y])
		}
		var pass []int32
		for _, y := range labs {
			if y != gold && row[y] >= best+math.Log(p.Threshold) {
				pass = append(pass, y)
			}
		}
		slices.SortStableFunc(pass, func(a, b int32) int { return cmp.Compare(row[b], row[a]) })
		keep := p.Max
		if gold >= 0 {
			keep--
		}
		want := pass
		if len(pass) > keep {
			want = pass[:keep]
			if keep > 0 && row[pass[keep]] == row[pass[keep-1]] {
				last := row[pass[keep-1]]
				want = nil
				for _, y := range pass {
					if row[y] >= last {
						want = append(want, y)
					}
				}
			}
		}
		want = slices.Clone(want)
		if gold >= 0 {
			want = append(want, gold)
		}
		slices.Sort(want)
		if got := p.set(&pb, nil, row, labs, gold, math.Log(p.Threshold)); !slices.Equal(got, want) {
			t.Fatalf("trial %d: row %v cand %v gold %d max %d τ %v: %v, want %v", trial, row, cand, gold, p.Max, p.Threshold, got, want)
		}
	}
}

// TestPruneSets checks Sets on whole chains: its views, the candidate
// sets and gold labels per position, and no allocation in steady state.
func TestPruneSets(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 29))
	p := Rule{Max: 3, Threshold: 0.05}
	var buf Buf
	const M = 20
	for trial := range 50 {
		T := 1 + r.IntN(30)
		emit := make([]float64, T*M)
		for k := range emit {
			emit[k] = 2 * r.NormFloat64()
		}
		gold := make([]int32, T)
		cands := make([][]int32, T)
		all := make([]int32, M)
		for y := range all {
			all[y] = int32(y)
		}
		for t := range T {
			gold[t] = int32(r.IntN(M))
			if r.IntN(2) == 0 {
				cands[t] = []int32{gold[t]}
				for _, y := range r.Perm(M)[:4] {
					if !slices.Contains(cands[t], int32(y)) {
						cands[t] = append(cands[t], int32(y))
					}
				}
				slices.Sort(cands[t])
			}
		}
		if trial%3 == 0 {
			cands = nil
		}
		sets := p.Sets(&buf, emit, M, cands, gold)
		if len(sets) != T {
			t.Fatalf("%d sets for %d positions", len(sets), T)
		}
		for pos, s := range sets {
			labs := all
			if cands != nil && cands[pos] != nil {
				labs = cands[pos]
			}
			want := p.set(&Buf{}, nil, emit[pos*M:(pos+1)*M], labs, gold[pos], math.Log(p.Threshold))
			if !slices.Equal(s, want) || cap(s) != len(s) {
				t.Fatalf("trial %d position %d: %v (cap %d), want %v", trial, pos, s, cap(s), want)
			}
		}
	}
	emit := make([]float64, 30*M)
	for k := range emit {
		emit[k] = r.NormFloat64()
	}
	p.Sets(&buf, emit, M, nil, nil)
	if n := testing.AllocsPerRun(20, func() { p.Sets(&buf, emit, M, nil, nil) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
	if (Rule{Max: 0}).Check() == nil || (Rule{Max: 2, Threshold: 1.5}).Check() == nil || (Rule{Max: 2, Threshold: 0.01}).Check() != nil {
		t.Fatal("Check")
	}
}

// TestPruneSetsSelect: without candidates and with a threshold, Sets
// narrows each position to the labels within log τ of the best with the
// select kernels before set's pass; the sets must be set's over all labels,
// for every length around the kernels' block sizes, with ties, −Inf, NaN
// and +Inf scores, and gold labels.
func TestPruneSetsSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 31))
	var buf Buf
	for M := 1; M <= 70; M++ {
		all := make([]int32, M)
		for y := range all {
			all[y] = int32(y)
		}
		for trial := range 20 {
			p := Rule{Max: 1 + r.IntN(6), Threshold: []float64{0.01, 0.3, 1}[r.IntN(3)]}
			const T = 4
			emit := make([]float64, T*M)
			for k := range emit {
				emit[k] = float64(r.IntN(8)) * 0.7
				switch r.IntN(25) {
				case 0:
					emit[k] = math.Inf(-1)
				case 1:
					emit[k] = math.NaN()
				case 2:
					if trial%5 == 0 {
						emit[k] = math.Inf(1)
					}
				}
			}
			var gold []int32
			if trial%2 == 0 {
				gold = make([]int32, T)
				for t := range gold {
					gold[t] = int32(r.IntN(M))
				}
			}
			sets := p.Sets(&buf, emit, M, nil, gold)
			for pos, s := range sets {
				g := int32(-1)
				if gold != nil {
					g = gold[pos]
				}
				row := emit[pos*M : (pos+1)*M]
				want := p.set(&Buf{}, nil, row, all, g, math.Log(p.Threshold))
				if !slices.Equal(s, want) {
					t.Fatalf("M=%d trial %d position %d: row %v gold %d max %d τ %v: %v, want %v", M, trial, pos, row, g, p.Max, p.Threshold, s, want)
				}
				for _, y := range s {
					if y != g && math.IsNaN(row[y]) {
						t.Fatalf("M=%d trial %d position %d: NaN label %d kept", M, trial, pos, y)
					}
				}
			}
		}
	}
}
