package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/sparse"
)

// TestTaggerViterbi32: with Options.Viterbi32 the tagger's labelling is
// the float64 one, score bit for bit, on every sequence of random models
// (dense and sparse rows, dense with −Inf transitions and tied, 3 to 45
// labels) but where another labelling scores within float32 rounding of it
// (counted: at most one in twenty); the score is always its labelling's
// PathScore; Tag's probability is exp(score − log Z) of that labelling,
// with the float64 log Z; and on small models it is the best labelling by
// enumeration whenever that one leads by more than float32 rounding.
func TestTaggerViterbi32(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 32))
	for _, s := range []spec{
		{m: 3, attrs: 20, layout: sparse.DenseRows, forbid: true},
		{m: 4, attrs: 30, layout: sparse.SparseRows},
		{m: 22, attrs: 300, layout: sparse.SparseRows},
		{m: 22, attrs: 300, layout: sparse.DenseRows, tied: true},
		{m: 45, attrs: 200, layout: sparse.DenseRows, forbid: true},
	} {
		t.Run(s.String(), func(t *testing.T) {
			m := randomModel(t, r, s)
			tg := m.NewTagger()
			var out32, out64 Output
			differ, n := 0, 0
			for range 60 {
				T := r.IntN(30)
				if s.m <= 4 {
					T = r.IntN(6)
				}
				seq := randomSeq(r, s.attrs, T, true)
				p64, s64, err := tg.Viterbi(nil, seq)
				if err != nil {
					t.Fatal(err)
				}
				p32, s32, err := tg.ViterbiWith(nil, seq, Options{Viterbi32: true})
				if err != nil {
					t.Fatal(err)
				}
				emit := make([]float64, T*s.m)
				m.State.Score(emit, seq)
				if ps, _ := m.Trans.PathScore(emit, p32, nil); !near(s32, ps) {
					t.Fatalf("score %v, PathScore of its labelling %v", s32, ps)
				}
				n++
				if !slices.Equal(p32, p64) {
					differ++
					if tol := 1e-5 * (1 + math.Abs(s64)) * float64(T+1); !(s32 <= s64 && s32 >= s64-tol) {
						t.Fatalf("labelling %v scores %v, float64's %v scores %v", p32, s32, p64, s64)
					}
				} else if math.Float64bits(s32) != math.Float64bits(s64) {
					t.Fatalf("same labelling, score %v, float64's %v", s32, s64)
				}
				if err := tg.Tag(seq, Options{Prob: true, Viterbi32: true}, &out32); err != nil {
					t.Fatal(err)
				}
				if err := tg.Tag(seq, Options{Prob: true}, &out64); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out32.Labels, p32) || out32.Score != s32 || out32.LogZ != out64.LogZ || out32.Prob != math.Exp(s32-out64.LogZ) {
					t.Fatalf("Tag: %v %v %v %v; ViterbiWith %v %v, log Z %v", out32.Labels, out32.Score, out32.LogZ, out32.Prob, p32, s32, out64.LogZ)
				}
				if s.m <= 4 && T > 0 {
					best, second := bestTwo(t, m, emit, T, s.m)
					if best.score-second > 1e-5*(1+math.Abs(best.score)) && !slices.Equal(p32, best.y) {
						t.Fatalf("labelling %v, best by enumeration %v (by %v)", p32, best.y, best.score-second)
					}
				}
			}
			if differ*20 > n {
				t.Fatalf("float32 labellings differ on %d of %d sequences", differ, n)
			}
		})
	}
}

type scoredPath struct {
	y     []int32
	score float64
}

// bestTwo enumerates every labelling of a small chain: the best one and
// the second-best score (−Inf if none).
func bestTwo(t *testing.T, m *Model, emit []float64, T, M int) (scoredPath, float64) {
	best, second := scoredPath{score: math.Inf(-1)}, math.Inf(-1)
	y := make([]int32, T)
	for {
		sc, err := m.Trans.PathScore(emit, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sc > best.score {
			best, second = scoredPath{slices.Clone(y), sc}, best.score
		} else if sc > second {
			second = sc
		}
		k := 0
		for k < T && y[k] == int32(M-1) {
			y[k] = 0
			k++
		}
		if k == T {
			return best, second
		}
		y[k]++
	}
}

// TestTaggerViterbi32Concurrent: goroutines tagging with Viterbi32 on one
// tagger (its first calls making the float32 forms) find what one
// goroutine finds, and a steady-state call allocates nothing.
func TestTaggerViterbi32Concurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 33))
	for _, s := range []spec{{m: 22, attrs: 300, layout: sparse.SparseRows}, {m: 40, attrs: 200, layout: sparse.DenseRows}} {
		m := randomModel(t, r, s)
		seqs := make([]sparse.Seq, 100)
		want := make([][]int32, len(seqs))
		ref := m.NewTagger()
		for i := range seqs {
			seqs[i] = randomSeq(r, s.attrs, 1+r.IntN(40), false)
			var err error
			if want[i], _, err = ref.ViterbiWith(nil, seqs[i], Options{Viterbi32: true}); err != nil {
				t.Fatal(err)
			}
		}
		tg := m.NewTagger()
		errs := make(chan error, 8)
		for g := range 8 {
			go func() {
				var out Output
				for k := range 3 * len(seqs) {
					i := (k*7 + g) % len(seqs)
					if err := tg.Tag(seqs[i], Options{Viterbi32: true, Prob: g%2 == 0}, &out); err != nil {
						errs <- err
						return
					}
					if !slices.Equal(out.Labels, want[i]) {
						errs <- fmt.Errorf("goroutine %d, sequence %d: different labelling", g, i)
						return
					}
				}
				errs <- nil
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if !raceEnabled {
			dst := make([]int32, 0, 64)
			if a := testing.AllocsPerRun(100, func() { dst, _, _ = tg.ViterbiWith(dst, seqs[0], Options{Viterbi32: true}) }); a != 0 {
				t.Errorf("M=%d: %v allocations per sequence", s.m, a)
			}
		}
	}
}
