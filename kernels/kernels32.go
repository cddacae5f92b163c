package kernels

// float32 versions of the kernels a CRF layer and a float32 trainer run. Each
// is named after its float64 counterpart with the suffix 32, takes the same
// arguments in float32 (int32 indices unchanged) and computes the same thing;
// float64 stays the reference, and the tests check every float32 tier against
// the float64 generic kernels as well as against the float32 generic ones.
//
// Precision. Every float32 kernel accumulates in float32 (except Dot32, which
// accumulates in float64), so each result carries a relative error of a few
// float32 ulps (eps = 2^-24 ≈ 6e-8) times √M or so: α, β and marginals
// α_t∘β_t come out within about 1e-6 absolute of float64's for M ≤ 1024,
// and each scale_t within about 1e-6 relative. Sums that grow with the
// sequence must be formed by the caller in float64: log Z = Σ_t (mx_t +
// log scale_t), the objective, the gradient over many sequences. Done so,
// log Z's error grows about linearly with T, because the rounding of a
// shifted score to float32 (tr[i][j] − c_j, say) repeats at every position
// that uses it: TestLogZ32Accuracy measures 3.5e-4 nats at T = 1000 with
// scores ±50 (8e-9 relative) and bounds it by 1e-6·T nats; the marginals
// stay within 7e-6 absolute, the transition counts within 2e-7·T.
//
// Range. The probability-domain kernels (Forward32, Backward32,
// Transitions32) work on Ψ = exp(scores − shift) in float32, whose normal
// range ends at exp(ExpMin32) ≈ 1.2e-38: an entry more than ~87 nats below
// its row's maximum flushes to 0. That is harmless for accuracy (its weight
// is below 1e-38 of the row's) as long as the labellings that carry the mass
// keep their entries: a caller that shifts each Ψ row and each column of E by
// its maximum (as package engine does) is safe when the spread of finite
// scores of a position's emissions plus that of a transition column stays
// below about 80 nats (ScaledRange32, the float32 analogue of the engine's
// scaledRange). Beyond it, or when a scale comes out 0 (no labelling, or
// underflow), use the float64 kernels. Viterbi32 and ShiftRows32 work in the
// log domain and have no such limit (beyond float32's ±3.4e38).

import "math"

// ExpMin32 is the smallest x for which Exp32 returns a normal float32 (ln of
// the smallest normal, 2^-126); below it Exp32 returns +0.
const ExpMin32 = -87.33654475055310898657

// ExpMax32 is the largest x for which exp(x) is a finite float32.
const ExpMax32 = 88.72283905206835

// ScaledRange32 is the widest spread (in nats, emissions of one position plus
// one column of the transition scores, after the shifts) for which the
// float32 probability-domain kernels keep every entry that matters; see the
// float32 notes above.
const ScaledRange32 = 80

// Exp32 sets dst[i] = exp(src[i]) for i < len(src), within 2 ulp (float32)
// of the correctly rounded result wherever it is normal; src[i] < ExpMin32
// (and -Inf) gives +0, src[i] > ExpMax32 gives +Inf, NaN stays NaN. dst and
// src may be the same slice.
func Exp32(dst, src []float32) {
	need("Exp32", "dst", len(dst), len(src))
	cur().exp32(dst[:len(src)], src)
}

// Forward32 is Forward in float32: α (T×M), the T scales, Ψ (T×M) and E
// (M×M) as there. A scale of 0 means no labelling survived (impossible, or
// underflow: see the float32 notes); that row of alpha is then NaN.
func Forward32(alpha, scale, psi, e []float32, T, M int) {
	if fbArgs("Forward32", "alpha", "e", len(alpha), len(scale), len(psi), len(e), T, M) {
		cur().forward32(alpha, scale, psi, e, T, M)
	}
}

// Backward32 is Backward in float32 (et = Eᵀ, scales from Forward32).
func Backward32(beta, scale, psi, et []float32, T, M int) {
	if fbArgs("Backward32", "beta", "et", len(beta), len(scale), len(psi), len(et), T, M) {
		cur().backward32(beta, scale, psi, et, T, M)
	}
}

// ForwardBatch32 is ForwardBatch in float32: K sequences of length T in
// lockstep (psi and alpha T×K×M, row t·K+k is sequence k at position t;
// scale T×K). Sequence k's results equal Forward32's on its own rows, up to
// rounding. from as for ForwardBatch.
func ForwardBatch32(alpha, scale, psi, e []float32, from []int32, T, K, M int) {
	if fbArgs("ForwardBatch32", "alpha", "e", len(alpha), len(scale), len(psi), len(e), area("ForwardBatch32", T, K), M) &&
		fromArgs("ForwardBatch32", from, T, K, false) {
		cur().forwardBatch32(alpha, scale, psi, e, from, T, K, M)
	}
}

// Transitions32 is Transitions in float32: it adds one sequence's expected
// transition counts E∘(Σ_t α_{t−1}⊗(Ψ_t∘β_t/scale_t)) to g (M×M). The counts
// of one sequence are summed in float32 (each within about 1e-6 relative);
// to sum many sequences accurately, give it a g zeroed per sequence (or per
// few) and add that into a float64 total. work needs T·M elements.
func Transitions32(g, e, alpha, beta, psi, scale, work []float32, T, M int) {
	if transitionsArgs("Transitions32", len(g), len(e), len(alpha), len(beta), len(psi), len(scale), len(work), T, M) {
		cur().transitions32(g, e, alpha, beta, psi, scale, work, T, M)
	}
}

// BackwardTransitions32 is BackwardTransitions in float32: Backward32, then
// Transitions32's counts added to g (see there for summing them).
func BackwardTransitions32(g, e, alpha, beta, psi, scale, et, work []float32, T, M int) {
	if btArgs("BackwardTransitions32", len(g), len(e), len(alpha), len(beta), len(psi), len(scale), len(et), len(work), T, M) {
		cur().backwardTransitions32(g, e, alpha, beta, psi, scale, et, work, T, M)
	}
}

// ShiftRows32 is ShiftRows in float32 (exact: one addition and one
// subtraction per entry, rounded to float32; the same in every tier up to
// the sign of zeros). Sum the mx in float64.
func ShiftRows32(out, mx, lo, in, a []float32, T, M int) {
	if shiftRowsArgs("ShiftRows32", len(out), len(mx), len(lo), len(in), len(a), T, M) {
		cur().shiftRows32(out, mx, lo, in, a, T, M)
	}
}

// Viterbi32 is Viterbi in float32: the same recursion, float32 additions
// and strict comparisons in ascending i, so every tier gives bit-identical
// delta, bp and path. The returned score is δ's float32 maximum, and δ
// accumulates T additions in float32 (relative error up to about T·6e-8 of
// the path's magnitude); a caller wanting the score in float64 adds the
// path's scores itself. Where float64 scores tie or differ by less than
// that rounding, the float32 path may differ from Viterbi's.
func Viterbi32(path []int32, delta []float32, bp []int32, s, tr []float32, T, M int) float32 {
	need("Viterbi32", "bp", len(bp), area("Viterbi32", T, M))
	if !viterbiArgs("Viterbi32", len(path), len(delta), len(s), len(tr), T, M) {
		return 0
	}
	cur().viterbi32(delta, bp, s, tr, T, M)
	return backtrace(path, delta[(T-1)*M:T*M], bp, T, M)
}

// ViterbiMax32 is ViterbiMax in float32: Viterbi32's δ, path and score
// without back-pointers. trT may be nil or tr transposed.
func ViterbiMax32(path []int32, delta []float32, s, tr, trT []float32, T, M int) float32 {
	if !viterbiMaxArgs("ViterbiMax32", len(path), len(delta), len(s), len(tr), trT != nil, len(trT), T, M) {
		return 0
	}
	cur().viterbiMax32(delta, s, tr, T, M)
	return backtraceMax(path, delta, s, tr, trT, T, M)
}

// Gather32 is Gather in float32 (s, w and vals float32; sums in float32).
func Gather32(s, w []float32, ld int, ptr, ids []int32, vals []float32, T, M int) {
	if csrArgs("Gather32", "s", len(s), len(w), ld, ptr, ids, len(vals), T, M) {
		cur().gather32(s, w, ld, ptr, ids, vals, T, M)
	}
}

// Scatter32 is Scatter in float32.
func Scatter32(g []float32, ld int, p []float32, ptr, ids []int32, vals []float32, c float32, T, M int) {
	if csrArgs("Scatter32", "p", len(p), len(g), ld, ptr, ids, len(vals), T, M) {
		cur().scatter32(g, ld, p, ptr, ids, vals, c, T, M)
	}
}

// Dot32 returns Σ x[i]·y[i] over len(x) elements, products and sum in
// float64 (exact products; only the summation order differs between tiers).
func Dot32(x, y []float32) float64 {
	need("Dot32", "y", len(y), len(x))
	return cur().dot32(x, y[:len(x)])
}

// Axpy32 sets y[i] += a·x[i] for i < len(x), in float32.
func Axpy32(a float32, x, y []float32) {
	need("Axpy32", "y", len(y), len(x))
	cur().axpy32(a, x, y[:len(x)])
}

// Scale32 sets x[i] *= a, in float32.
func Scale32(a float32, x []float32) {
	cur().scale32(a, x)
}

// Mul32 is Mul in float32.
func Mul32(dst, x, y []float32, a float32) {
	need("Mul32", "dst", len(dst), len(x))
	need("Mul32", "y", len(y), len(x))
	cur().mul32(dst[:len(x)], x, y[:len(x)], a)
}

// inf32 returns ±Inf as a float32.
func inf32(sign int) float32 { return float32(math.Inf(sign)) }
