package engine

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
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
