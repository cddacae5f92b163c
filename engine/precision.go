package engine

import (
	"math"
	"unsafe"

	"github.com/simdcrf/simdcrf/kernels"
)

// Float is the element type of the engine's generic paths: the scaled
// forward–backward, its lockstep groups and Viterbi run in float64 or in
// float32 (the CRF layer's and the float32 trainer's precision).
type Float interface{ float32 | float64 }

// is32 reports whether E is float32 (a constant per instantiation, so the
// branches below compile to one call).
func is32[E Float]() bool {
	var z E
	return unsafe.Sizeof(z) == 4
}

func as32[E Float](s []E) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func as64[E Float](s []E) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// The kernels of package kernels, by element type.

func kDot[E Float](x, y []E) float64 {
	if is32[E]() {
		return kernels.Dot32(as32(x), as32(y))
	}
	return kernels.Dot(as64(x), as64(y))
}

// kAxpyWiden sets y[i] += a·float64(x[i]): one vector pass (AxpyWiden) for
// float32; for float64 the loop rounds a·x apart from the sum as before
// (Axpy fuses them), keeping float64 results bit for bit.
func kAxpyWiden[E Float](a float64, x []E, y []float64) {
	if is32[E]() {
		kernels.AxpyWiden(a, as32(x), y)
		return
	}
	y = y[:len(x)]
	for k, v := range x {
		y[k] += float64(v) * a
	}
}

// onesOf returns n 1s from *buf, growing it as needed: kDot(x, 1s) is
// Σ x in vector lanes.
func onesOf[E Float](buf *[]E, n int) []E {
	if len(*buf) < n {
		*buf = grow(*buf, n)
		fill(*buf, 1)
	}
	return (*buf)[:n]
}

// noNaNPosInf reports whether x holds no NaN and no +Inf (−Inf, a
// forbidden label, is allowed). One vector sum decides in the common case:
// NaN and +Inf propagate through it, so a sum ≤ MaxFloat64 proves x clean;
// only a sum that is not (overflow, or a bad value) costs the scalar scan.
// ones is the 1s buffer of onesOf.
func noNaNPosInf[E Float](x []E, ones *[]E) bool {
	if kDot(x, onesOf(ones, len(x))) <= math.MaxFloat64 {
		return true
	}
	for _, v := range x {
		if !(float64(v) <= math.MaxFloat64) {
			return false
		}
	}
	return true
}

func kExp[E Float](dst, src []E) {
	if is32[E]() {
		kernels.Exp32(as32(dst), as32(src))
		return
	}
	kernels.Exp(as64(dst), as64(src))
}

func kShiftRows[E Float](out, mx, lo, in, a []E, T, M int) {
	if is32[E]() {
		kernels.ShiftRows32(as32(out), as32(mx), as32(lo), as32(in), as32(a), T, M)
		return
	}
	kernels.ShiftRows(as64(out), as64(mx), as64(lo), as64(in), as64(a), T, M)
}

func kForward[E Float](alpha, scale, psi, e []E, T, M int) {
	if is32[E]() {
		kernels.Forward32(as32(alpha), as32(scale), as32(psi), as32(e), T, M)
		return
	}
	kernels.Forward(as64(alpha), as64(scale), as64(psi), as64(e), T, M)
}

func kBackward[E Float](beta, scale, psi, et []E, T, M int) {
	if is32[E]() {
		kernels.Backward32(as32(beta), as32(scale), as32(psi), as32(et), T, M)
		return
	}
	kernels.Backward(as64(beta), as64(scale), as64(psi), as64(et), T, M)
}

func kBackwardTransitions[E Float](g, e, alpha, beta, psi, scale, et, work []E, T, M int) {
	if is32[E]() {
		kernels.BackwardTransitions32(as32(g), as32(e), as32(alpha), as32(beta), as32(psi), as32(scale), as32(et), as32(work), T, M)
		return
	}
	kernels.BackwardTransitions(as64(g), as64(e), as64(alpha), as64(beta), as64(psi), as64(scale), as64(et), as64(work), T, M)
}

func kTransitions[E Float](g, e, alpha, beta, psi, scale, work []E, T, M int) {
	if is32[E]() {
		kernels.Transitions32(as32(g), as32(e), as32(alpha), as32(beta), as32(psi), as32(scale), as32(work), T, M)
		return
	}
	kernels.Transitions(as64(g), as64(e), as64(alpha), as64(beta), as64(psi), as64(scale), as64(work), T, M)
}

func kForwardBatch[E Float](alpha, scale, psi, e []E, from []int32, T, K, M int) {
	if is32[E]() {
		kernels.ForwardBatch32(as32(alpha), as32(scale), as32(psi), as32(e), from, T, K, M)
		return
	}
	kernels.ForwardBatch(as64(alpha), as64(scale), as64(psi), as64(e), from, T, K, M)
}

func kBackwardBatch[E Float](beta, scale, psi, et, work []E, from []int32, T, K, M int) {
	if is32[E]() {
		kernels.BackwardBatch32(as32(beta), as32(scale), as32(psi), as32(et), as32(work), from, T, K, M)
		return
	}
	kernels.BackwardBatch(as64(beta), as64(scale), as64(psi), as64(et), as64(work), from, T, K, M)
}

func kTransitionsBatch[E Float](g, e, alpha, beta, psi, scale, work []E, T, K, M int) {
	if is32[E]() {
		kernels.TransitionsBatch32(as32(g), as32(e), as32(alpha), as32(beta), as32(psi), as32(scale), as32(work), T, K, M)
		return
	}
	kernels.TransitionsBatch(as64(g), as64(e), as64(alpha), as64(beta), as64(psi), as64(scale), as64(work), T, K, M)
}

func kViterbi[E Float](path []int32, delta []E, bp []int32, s, tr []E, T, M int) float64 {
	if is32[E]() {
		return float64(kernels.Viterbi32(path, as32(delta), bp, as32(s), as32(tr), T, M))
	}
	return kernels.Viterbi(path, as64(delta), bp, as64(s), as64(tr), T, M)
}

func kViterbiMax[E Float](path []int32, delta, s, tr, trT []E, T, M int) float64 {
	if is32[E]() {
		return float64(kernels.ViterbiMax32(path, as32(delta), as32(s), as32(tr), as32(trT), T, M))
	}
	return kernels.ViterbiMax(path, as64(delta), as64(s), as64(tr), as64(trT), T, M)
}
