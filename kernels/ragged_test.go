package kernels

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// raggedSentinel fills the rows a ragged batch step must leave alone; it
// is exact in float32.
const raggedSentinel = -3.25

// TestBatchRagged runs ForwardBatch and BackwardBatch (float64 and
// float32, every tier) on sequences of different lengths, shortest first,
// with from set to skip their padding: each sequence's rows must match
// Forward (Backward) on its own rows, and every row from leaves out must
// keep what it held.
func TestBatchRagged(t *testing.T) {
	r := newRand(61)
	for _, M := range []int{1, 3, 8, 9, 16, 17, 23, 33, 45, 64, 70, 128, 130} {
		for _, TK := range [][2]int{{1, 1}, {2, 3}, {3, 2}, {7, 5}, {9, 13}, {50, 7}} {
			T, K := TK[0], TK[1]
			if testing.Short() && M > 45 && T*K > 40 {
				continue
			}
			lens := make([]int, K)
			for k := range lens {
				lens[k] = 1 + r.IntN(T)
			}
			if K > 2 {
				lens[K/2] = T
			}
			slices.Sort(lens)
			// fwd: forward; bwd: backward aligned at the end; bws: backward
			// aligned at the start.
			fwd, bwd, bws := make([]int32, T), make([]int32, T), make([]int32, T)
			for tt := range T {
				for _, L := range lens {
					if L <= tt {
						fwd[tt]++
					}
					if L < T-tt {
						bwd[tt]++
					}
					if L-1 <= tt {
						bws[tt]++
					}
				}
			}
			psi := round32(randSlice(r, T*K*M, 0.05, 1))
			e := round32(randSlice(r, M*M, 0.05, 1))
			et := transpose(e, M)
			for _, p := range append([]*impl{generic}, asmImpls(t)...) {
				what := fmt.Sprintf("%s T=%d K=%d M=%d lens=%v", p.name, T, K, M, lens)
				checkRagged(t, what, p.forwardBatch, p.backwardBatch, psi, e, et, fwd, bwd, bws, lens, T, K, M, false)
				f32 := func(a, s, ps, e []float64, from []int32, T, K, M int) {
					a32, s32 := to32(a), to32(s)
					p.forwardBatch32(a32, s32, to32(ps), to32(e), from, T, K, M)
					copy(a, to64(a32))
					copy(s, to64(s32))
				}
				b32 := func(b, s, ps, et, w []float64, from []int32, T, K, M int) {
					b32 := to32(b)
					p.backwardBatch32(b32, to32(s), to32(ps), to32(et), to32(w), from, T, K, M)
					copy(b, to64(b32))
				}
				checkRagged(t, what+" float32", f32, b32, psi, e, et, fwd, bwd, bws, lens, T, K, M, true)
			}
		}
	}
}

// checkRagged checks one ragged batch: forward with fwd on chains aligned
// at the start, then backward with bwd on the same chains aligned at the
// end, and with bws on them aligned at the start (scales from the float64
// reference).
func checkRagged(t *testing.T, what string,
	fb func(alpha, scale, psi, e []float64, from []int32, T, K, M int),
	bb func(beta, scale, psi, et, work []float64, from []int32, T, K, M int),
	psi, e, et []float64, fwd, bwd, bws []int32, lens []int, T, K, M int, f32 bool) {
	t.Helper()
	check := func(w string, got, want []float64, atol float64) {
		if f32 {
			checkClose32(t, w, to32(got), want, fb32Tol, max(atol, fb32Atol))
		} else {
			checkClose(t, w, got, want, fbTol, atol)
		}
	}
	abuf, a := guarded(T*K*M, nil)
	sbuf, s := guarded(T*K, nil)
	fill(a, raggedSentinel)
	fill(s, raggedSentinel)
	fb(a, s, psi, e, fwd, T, K, M)
	checkGuards(t, what+" alpha", abuf)
	checkGuards(t, what+" scale", sbuf)
	// endPsi, endScale: the chains aligned at the end, for the backward pass;
	// startScale: at the start.
	endPsi, endScale, startScale := make([]float64, T*K*M), make([]float64, T*K), make([]float64, T*K)
	fill(startScale, math.NaN()) // rows a skipped step must not read
	for k, L := range lens {
		ps := make([]float64, L*M)
		for tt := range L {
			copy(ps[tt*M:(tt+1)*M], psi[(tt*K+k)*M:])
		}
		wa, ws := make([]float64, L*M), make([]float64, L)
		forwardGeneric(wa, ws, ps, e, L, M)
		for tt := range T {
			w := fmt.Sprintf("%s forward k=%d t=%d", what, k, tt)
			row, sc := a[(tt*K+k)*M:(tt*K+k+1)*M], s[tt*K+k:tt*K+k+1]
			if tt >= L {
				mustHold(t, w+" alpha (past the end)", row)
				mustHold(t, w+" scale (past the end)", sc)
				continue
			}
			check(w+" scale", sc, ws[tt:tt+1], 0)
			check(w+" alpha", row, wa[tt*M:(tt+1)*M], fbAtol)
		}
		P := T - L
		for tt := range L {
			copy(endPsi[((tt+P)*K+k)*M:((tt+P)*K+k+1)*M], ps[tt*M:])
			endScale[(tt+P)*K+k] = ws[tt]
			startScale[tt*K+k] = ws[tt]
		}
		for tt := range P { // rows a skipped step must not read
			copy(endPsi[(tt*K+k)*M:(tt*K+k+1)*M], psi[(tt*K+k)*M:])
			endScale[tt*K+k] = math.NaN()
		}
	}
	bbuf, b := guarded(T*K*M, nil)
	wbuf, work := guarded(K*M, nil)
	fill(b, raggedSentinel)
	bb(b, endScale, endPsi, et, work, bwd, T, K, M)
	checkGuards(t, what+" beta", bbuf)
	checkGuards(t, what+" work", wbuf)
	// chainBeta checks chain k's rows f..f+L−1 of b against Backward on
	// its own rows of ps and scales sc.
	chainBeta := func(w string, ps, sc []float64, k, f, L int) {
		p, s, got := make([]float64, L*M), make([]float64, L), make([]float64, L*M)
		for tt := range L {
			r := (tt+f)*K + k
			copy(p[tt*M:(tt+1)*M], ps[r*M:])
			s[tt] = sc[r]
			copy(got[tt*M:(tt+1)*M], b[r*M:])
		}
		want := make([]float64, L*M)
		backwardGeneric(want, s, p, et, L, M)
		if f32 {
			checkBeta32(t, w, to32(got), want, L, M, fb32Tol)
		} else {
			checkBeta(t, w, got, want, L, M)
		}
	}
	for k, L := range lens {
		P := T - L
		w := fmt.Sprintf("%s backward k=%d", what, k)
		chainBeta(w, endPsi, endScale, k, P, L)
		for tt := range P {
			mustHold(t, fmt.Sprintf("%s t=%d beta (before the start)", w, tt), b[(tt*K+k)*M:(tt*K+k+1)*M])
		}
	}
	// Aligned at the start: a chain ending before T−1 has its last row
	// set to 1 by the caller.
	fill(b, raggedSentinel)
	for k, L := range lens {
		if L < T {
			fill(b[((L-1)*K+k)*M:((L-1)*K+k+1)*M], 1)
		}
	}
	bb(b, startScale, psi, et, work, bws, T, K, M)
	checkGuards(t, what+" beta (start)", bbuf)
	for k, L := range lens {
		w := fmt.Sprintf("%s backward from the start k=%d", what, k)
		chainBeta(w, psi, startScale, k, 0, L)
		for tt := L; tt < T-1; tt++ {
			mustHold(t, fmt.Sprintf("%s t=%d beta (past the end)", w, tt), b[(tt*K+k)*M:(tt*K+k+1)*M])
		}
		if L < T {
			for j, v := range b[((T-1)*K+k)*M : ((T-1)*K+k+1)*M] {
				if v != 1 {
					t.Fatalf("%s: row T−1 [%d] = %v, want 1", w, j, v)
				}
			}
		}
	}
}

func fill(x []float64, v float64) {
	for i := range x {
		x[i] = v
	}
}

// mustHold fails unless every element of x is still raggedSentinel.
func mustHold(t *testing.T, what string, x []float64) {
	t.Helper()
	for i, v := range x {
		if v != raggedSentinel {
			t.Fatalf("%s: [%d] = %v, want it left as %v", what, i, v, raggedSentinel)
		}
	}
}

// TestBatchFromChecked: a from of the wrong length, out of range or not
// monotone panics.
func TestBatchFromChecked(t *testing.T) {
	T, K, M := 4, 2, 2
	x := make([]float64, T*K*M)
	for _, c := range []struct {
		name string
		from []int32
		bwd  bool
	}{
		{"short", []int32{0, 1}, false},
		{"over K", []int32{0, 1, 3, 3}, false},
		{"negative", []int32{0, -1, 0, 0}, false},
		{"decreasing forward", []int32{0, 2, 1, 2}, false},
		{"not monotone backward", []int32{1, 0, 1, 0}, true},
	} {
		mustPanicT(t, c.name, "from", func() {
			if c.bwd {
				BackwardBatch(x, x[:T*K], x, x[:M*M], x[:K*M], c.from, T, K, M)
			} else {
				ForwardBatch(x, x[:T*K], x, x[:M*M], c.from, T, K, M)
			}
		})
	}
	// Monotone and in range: no panic (from[0] forwards and from[T−1]
	// backwards are not used); backwards in either direction.
	ForwardBatch(x, x[:T*K], x, x[:M*M], []int32{2, 0, 1, 1}, T, K, M)
	BackwardBatch(x, x[:T*K], x, x[:M*M], x[:K*M], []int32{2, 1, 0, 2}, T, K, M)
	BackwardBatch(x, x[:T*K], x, x[:M*M], x[:K*M], []int32{0, 1, 1, 0}, T, K, M)
}
