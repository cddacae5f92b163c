package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// TestViterbiRejectsBadEmissions: a NaN or +Inf emission anywhere (first,
// middle or last row; the middle rows are checked by a sum) is an error
// naming its position; huge finite emissions whose sum overflows and -Inf
// emissions are not.
func TestViterbiRejectsBadEmissions(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 51))
	for _, M := range []int{3, 45} {
		for _, structure := range []Structure{Dense, Tied} {
			tr0, _ := randomChain(r, 1, M, 1, 0)
			tr, err := NewTransitionsWith(M, tr0.score, nil, nil, Options{Structure: structure})
			if err != nil {
				t.Fatal(err)
			}
			ws := NewWorkspace()
			for _, T := range []int{1, 2, 3, 7} {
				path := make([]int32, T)
				for _, bad := range []float64{math.NaN(), math.Inf(1)} {
					for _, tt := range []int{0, T / 2, T - 1} {
						_, emit := randomChain(r, T, M, 1, 0)
						j := r.IntN(M)
						emit[tt*M+j] = bad
						_, err := tr.Viterbi(ws, emit, nil, path)
						if err == nil || !strings.Contains(err.Error(), "emission score ["+strconv.Itoa(tt)+"]["+strconv.Itoa(j)+"]") {
							t.Fatalf("M=%d T=%d %v at [%d][%d]: error %v", M, T, bad, tt, j, err)
						}
					}
				}
				_, emit := randomChain(r, T, M, 1, 0)
				for k := range emit {
					emit[k] = math.MaxFloat64 / 2 // the sum overflows to +Inf
				}
				emit[r.IntN(len(emit))] = math.Inf(-1)
				if _, err := tr.Viterbi(ws, emit, nil, path); err != nil {
					t.Fatalf("M=%d T=%d: huge finite emissions rejected: %v", M, T, err)
				}
			}
		}
	}
}

// TestViterbiBoundedDense checks the dense Viterbi's bounded steps (M ≥
// boundedDenseLabels: only the rows that can win scored) against the
// kernel over all rows, bit for bit: δ, back-pointers, labelling and
// score, on sharp emissions (the bounded steps, and the kernel over a
// two-row window where a step cannot be bounded) and flat ones (the
// whole-chain kernel when the first step cannot be), with −Inf
// transitions, ±0 and ties, under every kernel implementation.
func TestViterbiBoundedDense(t *testing.T) { forEachTier(t, viterbiBoundedDense) }

func viterbiBoundedDense(t *testing.T) {
	// It reads the full path's scores and back-pointers (the restricted
	// Viterbi keeps neither; restrict_viterbi_test.go checks it).
	restrictOff = true
	defer func() { restrictOff = false }()
	r := rand.New(rand.NewPCG(28, 29))
	vals := []float64{-2, -1, 0, math.Copysign(0, -1), 1, 2}
	ws := NewWorkspace()
	steps, kept := 0, 0
	for trial := range 12 {
		M := boundedDenseLabels + r.IntN(40)
		score := make([]float64, M*M)
		for k := range score {
			score[k] = vals[r.IntN(len(vals))]
			if k/M%7 == 0 && r.IntN(50) == 0 { // −Inf in some rows
				score[k] = math.Inf(-1)
			}
		}
		tr, err := NewTransitionsWith(M, score, nil, nil, Options{Structure: Dense})
		if err != nil {
			t.Fatal(err)
		}
		T := 2 + r.IntN(12)
		emit := make([]float64, T*M)
		sharp := trial%3 != 0
		for k := range emit {
			emit[k] = vals[r.IntN(len(vals))]
			if sharp {
				emit[k] -= 12
				if r.IntN(M) < 3 {
					emit[k] += 12
				}
			}
		}
		var c *ChainOptions
		if trial%4 == 1 {
			c = randomConstraint(r, T, M)
		}
		name := fmt.Sprintf("trial %d M=%d T=%d", trial, M, T)
		path := make([]int32, T)
		got, err := tr.Viterbi(ws, emit, c, path)
		if err != nil {
			if err == ErrNoLabelling {
				continue
			}
			t.Fatal(err)
		}
		// The kernel over all rows, on the scores the engine used.
		delta, bp, want := make([]float64, T*M), make([]int32, T*M), make([]int32, T)
		best := kernels.Viterbi(want, delta, bp, ws.s[:T*M], tr.score, T, M)
		if math.Float64bits(got) != math.Float64bits(best) || !slices.Equal(path, want) {
			t.Fatalf("%s: %v %v, kernel %v %v", name, path, got, want, best)
		}
		cand, scr := make([]int32, maxBounded), make([]float64, M+2)
		cur, arg := make([]float64, M), make([]int32, M)
		// The back-pointers where the chain ran step by step (its first
		// step bounded; else the max-only kernel ran, which keeps none).
		if tr.boundedDense(delta[:M], cur, arg, cand, scr) && !slices.Equal(ws.bp[M:T*M], bp[M:]) {
			t.Fatalf("%s: back-pointers differ", name)
		}
		for k := range T * M {
			if math.Float64bits(ws.delta[k]) != math.Float64bits(delta[k]) {
				t.Fatalf("%s: δ[%d] %v, kernel %v", name, k, ws.delta[k], delta[k])
			}
		}
		for s := range T - 1 {
			steps++
			if tr.boundedDense(delta[s*M:(s+1)*M], cur, arg, cand, scr) {
				kept++
			}
		}
	}
	if kept == 0 || kept == steps {
		t.Fatalf("bounded in %d of %d steps: want both kinds", kept, steps)
	}
	t.Logf("bounded in %d of %d steps", kept, steps)
}
