// Package kernels holds the vector primitives that do the O(T·M²) work of a
// linear-chain CRF: elementwise exp and log, the scaled forward and backward
// passes, the log-domain forward step, Viterbi, expected transition counts,
// sparse feature gather and scatter, and the BLAS-1 routines an optimiser
// needs; the O(M) selections of large label sets (SelectGE, SelectSumGE,
// Max: the rows a bounded Viterbi step keeps, the labels pruning keeps);
// and ByteMasks, the byte-class bit masks of package format's CRFsuite
// parser.
//
// Every kernel has a pure-Go reference (the "generic" implementation) and,
// where the CPU allows, assembly implementations generated from ../gen
// ("avx2", "avx512" on amd64, "neon" on arm64). One implementation is chosen at start-up: the purego
// build tag builds no assembly; otherwise the environment variable
// SIMDCRF_KERNELS=generic|avx2|avx512|neon picks one if the CPU has it; otherwise the
// best the CPU supports is used. Use switches at run time (tests, benchmarks).
//
// All matrices are dense, row-major float64 slices. A sequence of T positions
// over M labels is a T×M matrix whose row t is position t. Transition matrices
// are M×M with row = previous label, column = current label.
//
// The kernels work on whole sequences (one call per sequence, not per
// position): a call costs a few nanoseconds, while a step at M=9 is only a few
// dozen multiply-adds.
//
// Wrong lengths are programming errors and panic with a message naming the
// kernel and the argument. The kernels never allocate.
package kernels

import (
	"fmt"
	"math"
	"math/bits"
)

// Exp sets dst[i] = exp(src[i]) for i < len(src).
//
// Results are within 2 ulp of the generic tier (fdlibm's exp, as Go's
// portable math.Exp; Go's amd64 math.Exp is up to ~1.9 ulp off and
// overflows from x ≈ 709.44) wherever the result is normal. Results
// that would be subnormal (src[i] < ExpMin) are flushed to +0, so exp(-Inf)
// is exactly +0; src[i] > ExpMax gives +Inf and NaN stays NaN. dst and src
// may be the same slice.
func Exp(dst, src []float64) {
	need("Exp", "dst", len(dst), len(src))
	cur().exp(dst[:len(src)], src)
}

// Log sets dst[i] = log(src[i]) for i < len(src), within 2 ulp of math.Log
// over its whole range (subnormal inputs included, where the generic tier
// uses Go's portable algorithm: Go's amd64 math.Log mishandles them). log(0) = -Inf,
// log(x<0) = NaN, log(+Inf) = +Inf, NaN stays NaN. dst and src may be the
// same slice.
func Log(dst, src []float64) {
	need("Log", "dst", len(dst), len(src))
	cur().log(dst[:len(src)], src)
}

// ExpMin is the smallest x for which Exp returns a normal number; below it
// Exp returns +0 (subnormal results cost a microcode assist of about 12 ns
// each on the machines we measured, and a CRF never needs them).
const ExpMin = -708.3964185322641

// ExpMax is the largest x for which exp(x) is finite.
const ExpMax = 709.782712893384

// Forward runs the scaled forward pass over a whole sequence in the
// probability domain. psi is the T×M matrix Ψ of exponentiated state scores,
// e the M×M matrix E of exponentiated transition scores. It fills the T×M
// matrix alpha and the T scales:
//
//	α'_0[j] = Ψ_0[j]
//	α'_t[j] = Ψ_t[j] · Σ_i α_{t−1}[i]·E[i][j]
//	scale_t = Σ_j α'_t[j],  α_t = α'_t / scale_t
//
// so that log Z = Σ_t log(scale_t) (plus whatever shifts the caller took out
// of the scores before exponentiating). A scale of 0 means no labelling is
// possible; that row of alpha is then NaN.
func Forward(alpha, scale, psi, e []float64, T, M int) {
	if fbArgs("Forward", "alpha", "e", len(alpha), len(scale), len(psi), len(e), T, M) {
		cur().forward(alpha, scale, psi, e, T, M)
	}
}

// Backward runs the scaled backward pass that matches Forward. et is the
// transpose of E (M×M, row = current label), scale the scales Forward
// produced. It fills the T×M matrix beta:
//
//	β_{T−1}[i] = 1
//	β_t[i] = (Σ_j Eᵀ[j][i]·(Ψ_{t+1}[j]·β_{t+1}[j])) / scale_{t+1}
//
// so that α_t[j]·β_t[j] is the marginal probability of label j at position t.
func Backward(beta, scale, psi, et []float64, T, M int) {
	if fbArgs("Backward", "beta", "et", len(beta), len(scale), len(psi), len(et), T, M) {
		cur().backward(beta, scale, psi, et, T, M)
	}
}

// ForwardBatch runs Forward on K sequences of the same length T in lockstep,
// which turns each step's matrix–vector product into a matrix–matrix product
// (K×M times M×M). The layouts interleave the sequences by position: psi and
// alpha are T×K×M (row t·K+k is sequence k at position t) and scale is T×K.
// Sequence k's results equal Forward's on its own rows, up to rounding.
//
// Sequences of different lengths share a batch (in order of length,
// shortest first) when from is T long: step t computes row t of sequences
// from[t].. only, the ones before being past their ends, and leaves the
// others' rows as they are. from must not decrease and is at most K;
// from[0] is ignored (row 0 is every sequence's). An empty from runs every
// sequence over all T rows.
func ForwardBatch(alpha, scale, psi, e []float64, from []int32, T, K, M int) {
	if fbArgs("ForwardBatch", "alpha", "e", len(alpha), len(scale), len(psi), len(e), area("ForwardBatch", T, K), M) &&
		fromArgs("ForwardBatch", from, T, K, false) {
		cur().forwardBatch(alpha, scale, psi, e, from, T, K, M)
	}
}

// fromArgs checks a batch kernel's from (see ForwardBatch and
// BackwardBatch): empty, or T long, at most K, monotone over the rows it
// applies to (forwards not decreasing in t; backwards either way).
func fromArgs(kernel string, from []int32, T, K int, backward bool) bool {
	if len(from) == 0 {
		return true
	}
	if len(from) != T {
		panic(fmt.Sprintf("kernels: %s: len(from) = %d, want 0 or T = %d", kernel, len(from), T))
	}
	lo, hi := 1, T // the rows from applies to
	if backward {
		lo, hi = 0, T-1
	}
	up, down := false, false
	for t := lo; t < hi; t++ {
		f := from[t]
		if f < 0 || int(f) > K {
			panic(fmt.Sprintf("kernels: %s: from[%d] = %d, want 0..K = %d", kernel, t, f, K))
		}
		if t > lo {
			up, down = up || f > from[t-1], down || f < from[t-1]
		}
		if down && !backward || up && down {
			panic(fmt.Sprintf("kernels: %s: from[%d] = %d after %d: not monotone", kernel, t, f, from[t-1]))
		}
	}
	return true
}

// Transitions adds a sequence's expected transition counts to g (M×M):
//
//	g[i][j] += E[i][j] · Σ_{t=1}^{T−1} α_{t−1}[i]·(Ψ_t[j]·β_t[j]/scale_t)
//
// from the outputs of Forward and Backward. It forms the sum as one
// matrix product over the whole sequence. work is scratch space of at least
// T·M elements.
func Transitions(g, e, alpha, beta, psi, scale, work []float64, T, M int) {
	if transitionsArgs("Transitions", len(g), len(e), len(alpha), len(beta), len(psi), len(scale), len(work), T, M) {
		cur().transitions(g, e, alpha, beta, psi, scale, work, T, M)
	}
}

// BackwardTransitions runs Backward and then, when T ≥ 2, adds the
// expected transition counts to g as Transitions does, in one call. At
// small M (up to 32 labels on amd64) one kernel adds the counts while the
// backward steps run: they are independent of the chain of steps, whose
// latency bounds Backward there. It sums them over t downwards, so they
// round unlike Transitions'. work needs T·M elements.
func BackwardTransitions(g, e, alpha, beta, psi, scale, et, work []float64, T, M int) {
	if btArgs("BackwardTransitions", len(g), len(e), len(alpha), len(beta), len(psi), len(scale), len(et), len(work), T, M) {
		cur().backwardTransitions(g, e, alpha, beta, psi, scale, et, work, T, M)
	}
}

// ShiftRows prepares rows of scores for Forward's Ψ: for each row t < T of
// the T×M matrices in and out, with v = in[t] + a (a has M entries),
//
//	mx[t] = max_j v[j],  lo[t] = the smallest finite v[j] (+Inf if none),
//	out[t][j] = v[j] − mx[t]  (NaN when mx[t] = −Inf),
//
// so that Exp(out) is Ψ up to a factor exp(mx[t]) per row, and mx[t] − lo[t]
// says how widely the row spreads. in must hold no NaN or +Inf and a no NaN
// or +Inf (−Inf entries are fine: forbidden labels); otherwise the results
// are unspecified. The sign of a zero in mx and out may differ between
// tiers. out may be in.
func ShiftRows(out, mx, lo, in, a []float64, T, M int) {
	if shiftRowsArgs("ShiftRows", len(out), len(mx), len(lo), len(in), len(a), T, M) {
		cur().shiftRows(out, mx, lo, in, a, T, M)
	}
}

// LogMatVec is the log-domain forward step, a log-sum-exp matrix–vector
// product with a max shift:
//
//	out[j] = m_j + log Σ_i exp(a[i] + tr[i][j] − m_j),  m_j = max_i (a[i] + tr[i][j])
//
// tr is M×M. A column whose terms are all -Inf gives -Inf; m_j = +Inf gives
// +Inf; a NaN term otherwise gives NaN. out must not overlap a or tr.
func LogMatVec(out, a, tr []float64, M int) {
	need("LogMatVec", "out", len(out), M)
	need("LogMatVec", "a", len(a), M)
	need("LogMatVec", "tr", len(tr), area("LogMatVec", M, M))
	if M == 0 {
		return
	}
	cur().logMatVec(out, a, tr, M)
}

// Viterbi finds the best labelling of a sequence with state scores s (T×M)
// and transition scores tr (M×M), both in the log domain:
//
//	δ_0[j] = s_0[j]
//	δ_t[j] = s_t[j] + max_i (δ_{t−1}[i] + tr[i][j]),  bp_t[j] = argmax_i
//
// Ties go to the lowest index. The candidates are compared in ascending i
// with strict comparisons starting from i = 0's, so a NaN candidate never
// wins (and a NaN first candidate is never replaced). Every implementation
// gives bit-identical delta and bp (only NaN payloads may differ). It fills
// delta (T×M), the back-pointers bp (T×M; row 0 is unused and left
// unchanged), and path (T), and returns the best score max_j δ_{T−1}[j].
// With T == 0 it returns 0. ViterbiMax gives the same δ, path and score
// without back-pointers (about half the work per step for larger M).
func Viterbi(path []int32, delta []float64, bp []int32, s, tr []float64, T, M int) float64 {
	need("Viterbi", "bp", len(bp), area("Viterbi", T, M))
	if !viterbiArgs("Viterbi", len(path), len(delta), len(s), len(tr), T, M) {
		return 0
	}
	cur().viterbi(delta, bp, s, tr, T, M)
	return backtrace(path, delta[(T-1)*M:T*M], bp, T, M)
}

// Backtrace picks the best last label from last (the final δ row; ties to the
// lowest index), follows the back-pointers bp (T×M) and writes the labelling
// to path. It returns the best score.
func Backtrace(path []int32, last []float64, bp []int32, T, M int) float64 {
	return backtrace(path, last, bp, T, M)
}

// float is the element type of the kernels: float64, the reference, or
// float32.
type float interface{ float32 | float64 }

func backtrace[F float](path []int32, last []F, bp []int32, T, M int) F {
	best, arg := last[0], 0
	for j := 1; j < M; j++ {
		if last[j] > best {
			best, arg = last[j], j
		}
	}
	path[T-1] = int32(arg)
	for t := T - 1; t > 0; t-- {
		arg = int(bp[t*M+arg])
		path[t-1] = int32(arg)
	}
	return best
}

// Gather adds weighted weight rows to each position's scores, for a sequence
// whose features are given in CSR form: position t has the features
// ptr[t] ≤ f < ptr[t+1], each an attribute id ids[f] with value vals[f].
//
//	s[t][0:M] += Σ_f vals[f] · w[ids[f]·ld : ids[f]·ld+M]
//
// s is T×M, w has rows of stride ld ≥ M. Ids are checked against w (an
// O(features) scan; a caller scoring the same features many times checks
// them once in a CSR instead).
func Gather(s, w []float64, ld int, ptr, ids []int32, vals []float64, T, M int) {
	if csrArgs("Gather", "s", len(s), len(w), ld, ptr, ids, len(vals), T, M) {
		cur().gather(s, w, ld, ptr, ids, vals, T, M)
	}
}

// Scatter is the gradient's counterpart of Gather: for every feature f of
// position t,
//
//	g[ids[f]·ld : ids[f]·ld+M] += (c·vals[f]) · p[t][0:M]
//
// p is T×M (typically the marginals), g has rows of stride ld ≥ M.
func Scatter(g []float64, ld int, p []float64, ptr, ids []int32, vals []float64, c float64, T, M int) {
	if csrArgs("Scatter", "p", len(p), len(g), ld, ptr, ids, len(vals), T, M) {
		cur().scatter(g, ld, p, ptr, ids, vals, c, T, M)
	}
}

// Dot returns Σ x[i]·y[i] over len(x) elements.
func Dot(x, y []float64) float64 {
	need("Dot", "y", len(y), len(x))
	return cur().dot(x, y[:len(x)])
}

// Axpy sets y[i] += a·x[i] for i < len(x).
func Axpy(a float64, x, y []float64) {
	need("Axpy", "y", len(y), len(x))
	cur().axpy(a, x, y[:len(x)])
}

// Scale sets x[i] *= a.
func Scale(a float64, x []float64) {
	cur().scale(a, x)
}

// Mul sets dst[i] = x[i]·y[i]·a for i < len(x), the two products rounded
// in that order (every tier gives the same bits); dst may be x or y.
func Mul(dst, x, y []float64, a float64) {
	need("Mul", "dst", len(dst), len(x))
	need("Mul", "y", len(y), len(x))
	cur().mul(dst[:len(x)], x, y[:len(x)], a)
}

// AxpyWiden sets y[i] += a·float64(x[i]) for i < len(x): float32 values
// (counts summed in float32, say) added into float64 totals. The product
// and the sum are rounded apart, as Go rounds them on amd64, so the amd64
// tiers give the generic kernel's bits (arm64 Go fuses them).
func AxpyWiden(a float64, x []float32, y []float64) {
	need("AxpyWiden", "y", len(y), len(x))
	cur().axpyWiden(a, x, y[:len(x)])
}

func need(kernel, arg string, have, want int) {
	if have < want {
		panic(fmt.Sprintf("kernels: %s: len(%s) = %d, need at least %d", kernel, arg, have, want))
	}
}

// area returns a·b for sizes a, b, panicking when either is negative or
// the product overflows (a wrapped product would pass the length checks).
func area(kernel string, a, b int) int {
	if uint(a)|uint(b) >= 1<<31 { // rare: the product may overflow
		return bigArea(kernel, a, b)
	}
	return a * b
}

func bigArea(kernel string, a, b int) int {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if a < 0 || b < 0 || hi != 0 || lo > math.MaxInt {
		panic(fmt.Sprintf("kernels: %s: bad size %d×%d", kernel, a, b))
	}
	return int(lo)
}

func checkSeq(kernel string, T, M int, a string, la int, b string, lb int) {
	n := area(kernel, T, M)
	need(kernel, a, la, n)
	need(kernel, b, lb, n)
}

// fbArgs checks the arguments of Forward and Backward (out is alpha or
// beta, mat e or et; T is T·K for the batch forms) and reports whether
// there is anything to do.
func fbArgs(kernel, out, mat string, lout, lscale, lpsi, lmat, T, M int) bool {
	checkSeq(kernel, T, M, out, lout, "psi", lpsi)
	need(kernel, "scale", lscale, T)
	need(kernel, mat, lmat, area(kernel, M, M))
	return T > 0 && M > 0
}

func transitionsArgs(kernel string, lg, le, lalpha, lbeta, lpsi, lscale, lwork, T, M int) bool {
	checkSeq(kernel, T, M, "alpha", lalpha, "beta", lbeta)
	n, mm := T*M, area(kernel, M, M)
	need(kernel, "psi", lpsi, n)
	need(kernel, "scale", lscale, T)
	need(kernel, "g", lg, mm)
	need(kernel, "e", le, mm)
	need(kernel, "work", lwork, n)
	return T >= 2 && M > 0
}

// btArgs checks the arguments of BackwardTransitions: Backward's and
// Transitions'. Backward runs at T = 1 too.
func btArgs(kernel string, lg, le, lalpha, lbeta, lpsi, lscale, let, lwork, T, M int) bool {
	ok := fbArgs(kernel, "beta", "et", lbeta, lscale, lpsi, let, T, M)
	transitionsArgs(kernel, lg, le, lalpha, lbeta, lpsi, lscale, lwork, T, M)
	return ok
}

func shiftRowsArgs(kernel string, lout, lmx, llo, lin, la, T, M int) bool {
	checkSeq(kernel, T, M, "out", lout, "in", lin)
	need(kernel, "mx", lmx, T)
	need(kernel, "lo", llo, T)
	need(kernel, "a", la, M)
	return T > 0 && M > 0
}

// viterbiArgs checks the arguments Viterbi and ViterbiMax share and
// reports whether there is anything to do (T > 0).
func viterbiArgs(kernel string, lpath, ldelta, ls, ltr, T, M int) bool {
	checkSeq(kernel, T, M, "delta", ldelta, "s", ls)
	need(kernel, "path", lpath, T)
	need(kernel, "tr", ltr, area(kernel, M, M))
	if T > 0 && M == 0 {
		panic("kernels: " + kernel + ": M must be positive when T > 0")
	}
	return T > 0
}

// csrArgs checks the arguments of Gather and Scatter (dense: s or p, T×M)
// and reports whether there is anything to do.
func csrArgs(kernel, dense string, ldense, lw, ld int, ptr, ids []int32, lvals, T, M int) bool {
	need(kernel, dense, ldense, area(kernel, T, M))
	checkCSR(kernel, lw, ld, ptr, ids, lvals, T, M)
	return T > 0 && M > 0
}

func checkCSR(kernel string, lw, ld int, ptr, ids []int32, lvals, T, M int) {
	if T < 0 || M < 0 || ld < M {
		panic(fmt.Sprintf("kernels: %s: bad sizes T=%d M=%d ld=%d", kernel, T, M, ld))
	}
	if T == 0 {
		return
	}
	need(kernel, "ptr", len(ptr), T+1)
	if ptr[0] < 0 {
		panic(fmt.Sprintf("kernels: %s: ptr[0] = %d is negative", kernel, ptr[0]))
	}
	for t := 0; t < T; t++ {
		if ptr[t+1] < ptr[t] {
			panic(fmt.Sprintf("kernels: %s: ptr not ascending at %d", kernel, t))
		}
	}
	n := int(ptr[T])
	need(kernel, "ids", len(ids), n)
	need(kernel, "vals", lvals, n)
	var hi int32 = -1
	lo := int32(0)
	for _, id := range ids[ptr[0]:n] {
		hi = max(hi, id)
		lo = min(lo, id)
	}
	if lo < 0 || int(hi) >= rowsOf(lw, ld, M) {
		panic(fmt.Sprintf("kernels: %s: attribute id out of range [0,%d)", kernel, rowsOf(lw, ld, M)))
	}
}

// rowsOf returns how many rows of M elements at stride ld ≥ M a slice of n
// elements holds (the last row may end at its end).
func rowsOf(n, ld, M int) int {
	switch {
	case n < M:
		return 0
	case ld == 0: // M = 0: any row fits
		return math.MaxInt
	}
	return (n-M)/ld + 1
}
