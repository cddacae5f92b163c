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
				ForwardBatch(alpha, scale, psi, e, nil, T, K, M)
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

// checkBackwardBatch runs p's BackwardBatch and BackwardBatch32 on a random
// lockstep batch and compares every sequence with Backward (Backward32,
// generic) run on its own rows, and the float32 one with float64.
func checkBackwardBatch(t *testing.T, p *impl, T, K, M int) {
	t.Helper()
	what := fmt.Sprintf("%s T=%d K=%d M=%d", p.name, T, K, M)
	rr := newRand(uint64(T*10000 + K*100 + M))
	psi := round32(randSlice(rr, T*K*M, 0.05, 1))
	e := round32(randSlice(rr, M*M, 0.05, 1))
	if M > 2 {
		psi[rr.IntN(T*K*M)] = 0
		e[rr.IntN(M*M)] = 0
	}
	et := transpose(e, M)
	alpha, scale := make([]float64, T*K*M), make([]float64, T*K)
	forwardBatchGeneric(alpha, scale, psi, e, nil, T, K, M)
	bbuf, beta := guarded(T*K*M, nil)
	wbuf, work := guarded(K*M, nil)
	p.backwardBatch(beta, scale, psi, et, work, nil, T, K, M)
	checkGuards(t, what+" backwardBatch beta", bbuf)
	checkGuards(t, what+" backwardBatch work", wbuf)
	b32buf, beta32 := guarded32(T*K*M, nil)
	w32buf, work32 := guarded32(K*M, nil)
	p.backwardBatch32(beta32, to32(scale), to32(psi), to32(et), work32, nil, T, K, M)
	checkGuards32(t, what+" backwardBatch32 beta", b32buf)
	checkGuards32(t, what+" backwardBatch32 work", w32buf)
	for k := 0; k < K; k++ {
		ps, s := make([]float64, T*M), make([]float64, T)
		for tt := 0; tt < T; tt++ {
			copy(ps[tt*M:(tt+1)*M], psi[(tt*K+k)*M:])
			s[tt] = scale[tt*K+k]
		}
		want := make([]float64, T*M)
		backwardGeneric(want, s, ps, et, T, M)
		want32 := make([]float32, T*M)
		backwardGeneric(want32, to32(s), to32(ps), to32(et), T, M)
		got, got32 := make([]float64, T*M), make([]float32, T*M)
		for tt := 0; tt < T; tt++ {
			copy(got[tt*M:(tt+1)*M], beta[(tt*K+k)*M:])
			copy(got32[tt*M:(tt+1)*M], beta32[(tt*K+k)*M:])
		}
		checkBeta(t, fmt.Sprintf("%s seq %d backwardBatch", what, k), got, want, T, M)
		checkBeta32(t, fmt.Sprintf("%s seq %d backwardBatch32 vs generic32", what, k), got32, to64(want32), T, M, fb32Tol)
		checkBeta32(t, fmt.Sprintf("%s seq %d backwardBatch32 vs float64", what, k), got32, want, T, M, fb32Tol)
	}
}

func TestBackwardBatch(t *testing.T) {
	for _, p := range append([]*impl{generic}, asmImpls(t)...) {
		for _, M := range []int{1, 2, 3, 5, 8, 9, 16, 17, 23, 33, 45, 64, 70, 130} {
			for _, TK := range [][2]int{{1, 1}, {1, 3}, {2, 1}, {5, 4}, {9, 7}, {3, 13}} {
				checkBackwardBatch(t, p, TK[0], TK[1], M)
			}
		}
	}
	// The exported wrapper and its checks.
	defer func() {
		if recover() == nil {
			t.Error("BackwardBatch: no panic on a short work slice")
		}
	}()
	BackwardBatch(make([]float64, 12), make([]float64, 4), make([]float64, 12), make([]float64, 9), make([]float64, 5), nil, 2, 2, 3)
}
