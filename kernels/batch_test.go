package kernels

import (
	"fmt"
	"testing"
)

// TestTransitionsBatch checks, in every tier, that TransitionsBatch(32) of a
// lockstep batch equals the sum of Transitions(32) over its sequences laid
// out one by one.
func TestTransitionsBatch(t *testing.T) {
	r := newRand(41)
	for _, p := range append([]*impl{generic}, asmImpls(t)...) {
		useTier(t, p.name)
		for _, M := range []int{1, 3, 9, 17, 45} {
			for _, TK := range [][2]int{{1, 3}, {2, 1}, {2, 4}, {6, 5}, {9, 2}} {
				T, K := TK[0], TK[1]
				what := fmt.Sprintf("%s T=%d K=%d M=%d", p.name, T, K, M)
				psi := round32(randSlice(r, T*K*M, 0.05, 1))
				e := round32(randSlice(r, M*M, 0.05, 1))
				alpha, scale := make([]float64, T*K*M), make([]float64, T*K)
				ForwardBatch(alpha, scale, psi, e, T, K, M)
				et := transpose(e, M)
				// β per sequence, then interleaved.
				beta := make([]float64, T*K*M)
				want := make([]float64, M*M)
				for k := 0; k < K; k++ {
					ps, a, s := make([]float64, T*M), make([]float64, T*M), make([]float64, T)
					for tt := 0; tt < T; tt++ {
						copy(ps[tt*M:(tt+1)*M], psi[(tt*K+k)*M:])
						copy(a[tt*M:(tt+1)*M], alpha[(tt*K+k)*M:])
						s[tt] = scale[tt*K+k]
					}
					b := make([]float64, T*M)
					Backward(b, s, ps, et, T, M)
					for tt := 0; tt < T; tt++ {
						copy(beta[(tt*K+k)*M:(tt*K+k+1)*M], b[tt*M:])
					}
					Transitions(want, e, a, b, ps, s, make([]float64, T*M), T, M)
				}
				g := make([]float64, M*M)
				TransitionsBatch(g, e, alpha, beta, psi, scale, make([]float64, T*K*M), T, K, M)
				checkClose(t, what+" TransitionsBatch", g, want, 1e-12, 1e-300)
				g32 := make([]float32, M*M)
				TransitionsBatch32(g32, to32(e), to32(alpha), to32(beta), to32(psi), to32(scale), make([]float32, T*K*M), T, K, M)
				big := 0.0
				for _, v := range want {
					big = max(big, v)
				}
				checkClose32(t, what+" TransitionsBatch32", g32, want, fb32Tol, fb32Tol*big)
			}
		}
	}
}
