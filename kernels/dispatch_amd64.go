//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// The amd64 tiers: every kernel of each, in one table per tier. The
// generated kernels are in <family>_amd64.s (stubs in <family>_amd64.go).

func platformImpls() []*impl { return []*impl{avx2Impl, avx512Impl} }

// avx2Impl: POPCNT (the selection kernels' hit counts) comes with every
// AVX2 CPU; it is checked so that an emulator without it cannot pick the
// tier.
var avx2Impl = &impl{
	name:      "avx2",
	available: cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasPOPCNT,
	needs:     "AVX2, FMA and POPCNT",

	exp:                 expAVX2,
	log:                 logAVX2,
	forward:             lagChecked(forwardAVX2),
	backward:            backwardAVX2,
	forwardBatch:        fbBatch(forwardBatchAVX2),
	backwardBatch:       bbBatch(backwardBatchAVX2),
	transitions:         transitionsAVX2,
	backwardTransitions: fused(btMaxAVX2, backwardTransitionsAVX2, backwardTransitionsOf(backwardAVX2, transitionsAVX2)),
	shiftRows:           shiftRowsAVX2,
	logMatVec:           logMatVecAVX2,
	viterbi:             viterbiAVX2,
	viterbiMax:          viterbiMaxAVX2,
	gather:              gatherAVX2,
	scatter:             scatterAVX2,
	dot:                 dotAVX2,
	axpy:                axpyAVX2,
	scale:               scaleAVX2,
	mul:                 mulAVX2,
	axpyWiden:           axpyWidenAVX2,
	spmv:                spmvAVX2,
	gatherMulAdd:        gatherMulAddAVX2,
	maxPlusCSR:          maxPlusCSRAVX2,
	byteMasks:           byteMasksAVX2,
	selectGE:            selectGEAVX2,
	selectSumGE:         selectSumGEAVX2,
	max:                 maxAVX2,

	exp32:                 exp32AVX2,
	forward32:             lagChecked(forward32AVX2),
	forwardBatch32:        fbBatch(forwardBatch32AVX2),
	backwardBatch32:       bbBatch(backwardBatch32AVX2),
	backward32:            backward32AVX2,
	transitions32:         transitions32AVX2,
	backwardTransitions32: fused(btMax, backwardTransitions32AVX2, backwardTransitionsOf(backward32AVX2, transitions32AVX2)),
	shiftRows32:           shiftRows32AVX2,
	viterbi32:             viterbi32AVX2,
	viterbiMax32:          viterbiMax32AVX2,
	gather32:              gather32AVX2,
	scatter32:             scatter32AVX2,
	dot32:                 dot32AVX2,
	axpy32:                axpy32AVX2,
	scale32:               scale32AVX2,
	mul32:                 mul32AVX2,
	selectGE32:            selectGE32AVX2,
	selectSumGE32:         selectSumGE32AVX2,
	max32:                 max32AVX2,

	vectorMaxPlus: true,
	fmaPeak:       fmaPeakAVX2,
	peakFlops:     12 * 4 * 2,
}

// avx512Impl: F for the zmm arithmetic, DQ for KMOVB, VL for the ymm forms
// of EVEX instructions, BMI2 for the BZHI that builds tail masks, POPCNT as
// in the AVX2 tier. A CPU (or emulator: qemu-x86_64 -cpu Haswell in CI)
// without them never runs any of its kernels.
var avx512Impl = &impl{
	name: "avx512",
	available: cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT &&
		cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL,
	needs: "AVX-512F/DQ/VL, BMI2 and POPCNT",

	exp: expAVX512,
	log: logAVX512,
	// Below fbNarrow labels a step is all latency, and the 4-lane kernels
	// measured faster (M=9: 26 against 33 ns a position).
	forward: narrow(fbNarrow, lagChecked(forwardAVX2), lagChecked(forwardAVX512)),
	// Backward: AVX2 up to bwNarrow labels. go test -bench Narrow
	// -count 5 ./kernels (one thread, an Intel Xeon, T = 32), ns a
	// position, AVX2 / AVX-512, least of 5: float64 M = 4 9.1 / 14.7,
	// 8 10.3 / 11.5, 9 13.4 / 13.1, 13 22.9 / 19.0; float32 M = 4
	// 9.0 / 9.6, 8 10.2 / 11.4, 9 11.1 / 12.7, 13 17.5 / 16.3.
	backward:     narrow(bwNarrow, backwardAVX2, backwardAVX512),
	forwardBatch: narrowBatch(fbBatch(forwardBatchAVX2), fbBatch(forwardBatchAVX512)),
	// BackwardBatch (checked by TestAVX512F32Direct) at every M: no
	// narrow switch was measured for it.
	backwardBatch:       bbBatch(backwardBatchAVX512),
	transitions:         transitionsAVX512,
	backwardTransitions: fused(btMax, backwardTransitionsAVX512, backwardTransitionsOf(narrow(bwNarrow, backwardAVX2, backwardAVX512), transitionsAVX512)),
	shiftRows:           shiftRowsAVX512,
	logMatVec:           logMatVecAVX512,
	viterbi:             viterbiAVX512,
	viterbiMax:          viterbiMaxAVX512,
	gather:              gatherAVX512,
	scatter:             scatterAVX512,
	dot:                 dotAVX512,
	axpy:                axpyAVX512,
	scale:               scaleAVX512,
	mul:                 mulAVX512,
	axpyWiden:           axpyWidenAVX512,
	spmv:                spmvAVX512,
	gatherMulAdd:        gatherMulAddAVX512,
	maxPlusCSR:          maxPlusCSRAVX512,
	// The AVX-512 version compares bytes into opmasks (AVX512BW), which
	// the tier does not require; without BW it runs the AVX2 version.
	byteMasks: choose(cpu.X86.HasAVX512BW, byteMasksAVX512, byteMasksAVX2),
	// The AVX-512 selection kernels (VPCOMPRESSD) were written on a
	// machine without AVX-512; they run since TestAVX512SelectDirect
	// passed on an Intel Xeon (AVX-512 F/DQ/VL/BW).
	selectGE:    selectGEAVX512,
	selectSumGE: selectSumGEAVX512,
	max:         maxAVX512,

	// float32: the AVX-512 kernels TestAVX512F32Direct has checked on an
	// AVX-512 machine (Xeon, AVX-512 F/DQ/VL; this code was written on one
	// without). Forward32 runs AVX2 up to fbNarrow32 labels (two ymm rows
	// against one zmm; the run quoted at Backward: M = 9 16.1 / 19.5,
	// 13 17.7 / 18.1, 16 15.1 / 18.6, 17 24.2 / 20.8, 24 24.6 / 22.5);
	// ForwardBatch32 keeps the float64 switch at fbNarrow, not measured in
	// float32.
	exp32:                 exp32AVX512,
	forward32:             narrow(fbNarrow32, lagChecked(forward32AVX2), lagChecked(forward32AVX512)),
	forwardBatch32:        narrowBatch(fbBatch(forwardBatch32AVX2), fbBatch(forwardBatch32AVX512)),
	backwardBatch32:       bbBatch(backwardBatch32AVX512),
	backward32:            narrow(bwNarrow, backward32AVX2, backward32AVX512),
	transitions32:         transitions32AVX512,
	backwardTransitions32: fused(btMax, backwardTransitions32AVX512, backwardTransitionsOf(narrow(bwNarrow, backward32AVX2, backward32AVX512), transitions32AVX512)),
	viterbi32:             viterbi32AVX512,
	gather32:              gather32AVX512,
	scatter32:             scatter32AVX512,
	dot32:                 dot32AVX512,
	axpy32:                axpy32AVX512,
	scale32:               scale32AVX512,
	mul32:                 mul32AVX512,
	// Checked by TestAVX512F32Direct and TestAVX512SelectDirect on the
	// same Xeon in a later run.
	shiftRows32:   shiftRows32AVX512,
	viterbiMax32:  viterbiMax32AVX512,
	selectGE32:    selectGE32AVX512,
	selectSumGE32: selectSumGE32AVX512,
	max32:         max32AVX512,

	vectorMaxPlus: true,
	fmaPeak:       fmaPeakAVX512,
	peakFlops:     16 * 8 * 2,
}

// fbRows is how many rows of E ForwardBatch's product takes at a time (the
// assembly caps it at 64): a block of 64 rows × 32 columns stays in L1
// while every sequence uses it (AVX2 packs it into a panel when M has a
// tail; the others read E in place).
func fbRows(M int) int { return 64 }

// fbNarrow is the largest M for which the AVX-512 tier runs the AVX2
// Forward and ForwardBatch kernels.
const fbNarrow = 12

// fbNarrow32 is fbNarrow for Forward32.
const fbNarrow32 = 16

// bwNarrow is the largest M for which the AVX-512 tier runs the AVX2
// Backward and Backward32 kernels.
const bwNarrow = 8

// btMax is the most labels the fused BackwardTransitions kernels take
// (gen/fb's fusedVecs): 32, and 24 for the AVX2 float64 one (Backward's
// packed rows). Each tier runs its fused kernel at every M it takes: go
// test -bench BackwardTransitions -count 3 ./kernels (Intel Xeon, T = 32,
// least of 3), fused over Backward then Transitions, AVX-512 float64: M =
// 3 0.62, 9 0.75, 16 0.88, 22 1.05, 23 0.89, 32 0.80; float32: 0.78,
// 0.76, 0.95, 1.02, 0.96, 0.92; AVX2 float64 0.68, 0.94, 0.68, 0.93,
// 0.90; float32 0.57, 0.86, 0.95, 1.00, 1.04, 0.87. The small M gain; at
// M ≈ 22 the two are even, within noise.
const (
	btMax     = 32
	btMaxAVX2 = 24
)

// fused returns a tier's BackwardTransitions: its fused kernel k up to
// upto labels, bt (Backward then Transitions) above.
func fused[F float](upto int, k func(g, e, alpha, beta, psi, scale, et []F, T, M int), bt func(g, e, alpha, beta, psi, scale, et, work []F, T, M int)) func(g, e, alpha, beta, psi, scale, et, work []F, T, M int) {
	return func(g, e, alpha, beta, psi, scale, et, work []F, T, M int) {
		if M <= upto {
			k(g, e, alpha, beta, psi, scale, et, T, M)
			return
		}
		bt(g, e, alpha, beta, psi, scale, et, work, T, M)
	}
}

// narrow runs small for M ≤ upto, wide above (Forward's and Backward's
// signatures alike).
func narrow[F float](upto int, small, wide func(alpha, scale, psi, e []F, T, M int)) func(alpha, scale, psi, e []F, T, M int) {
	return func(alpha, scale, psi, e []F, T, M int) {
		if M <= upto {
			small(alpha, scale, psi, e, T, M)
			return
		}
		wide(alpha, scale, psi, e, T, M)
	}
}

// lagChecked wraps a generated Forward whose steps, over a row that fits in
// registers, multiply their product by the previous scale's inverse at the
// end instead of dividing α_{t−1} first: the division is then off the chain
// of dependent steps (M = 23: 52 against 30 ns a position on an Intel
// Xeon). That product is c_{t−1} times Forward's, so it matches Forward
// only while the scales stay near 1: when one the lag used, c_1 … c_{T−2},
// is outside lagSafe's range (or NaN), the generic kernel runs the
// sequence again.
func lagChecked[F float](f func(alpha, scale, psi, e []F, T, M int)) func(alpha, scale, psi, e []F, T, M int) {
	return func(alpha, scale, psi, e []F, T, M int) {
		f(alpha, scale, psi, e, T, M)
		if T > 2 && !lagSafe(scale[1:T-1]) {
			forwardGeneric(alpha, scale, psi, e, T, M)
		}
	}
}

// narrowBatch is narrow for ForwardBatch.
func narrowBatch[F float](small, wide func(alpha, scale, psi, e []F, from []int32, T, K, M int)) func(alpha, scale, psi, e []F, from []int32, T, K, M int) {
	return func(alpha, scale, psi, e []F, from []int32, T, K, M int) {
		if M <= fbNarrow {
			small(alpha, scale, psi, e, from, T, K, M)
			return
		}
		wide(alpha, scale, psi, e, from, T, K, M)
	}
}

// fbBatch and bbBatch run a lockstep kernel with fbRows(M) rows of E (Eᵀ)
// a block.
func fbBatch[F float](k func(alpha, scale, psi, e []F, from []int32, T, K, M, ib int)) func(alpha, scale, psi, e []F, from []int32, T, K, M int) {
	return func(alpha, scale, psi, e []F, from []int32, T, K, M int) {
		k(alpha, scale, psi, e, from, T, K, M, fbRows(M))
	}
}

func bbBatch[F float](k func(beta, scale, psi, et, work []F, from []int32, T, K, M, ib int)) func(beta, scale, psi, et, work []F, from []int32, T, K, M int) {
	return func(beta, scale, psi, et, work []F, from []int32, T, K, M int) {
		k(beta, scale, psi, et, work, from, T, K, M, fbRows(M))
	}
}

func choose[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// Prefetching is not dispatched: every amd64 CPU has PREFETCHT0.

func prefetchLines(base uintptr, offs []int32, scale int) { prefetchLinesAsm(base, offs, scale) }

func prefetchRows(base uintptr, ids []int32, ld, size int) { prefetchRowsAsm(base, ids, ld, size) }
