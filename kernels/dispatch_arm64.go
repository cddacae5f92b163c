//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// The arm64 tier: Advanced SIMD (NEON), which every ARMv8-A core has; the
// check is kept so that dispatch can say why it was not used. Its kernels
// are in kernels_arm64.s (stubs in neon_arm64.go).

func platformImpls() []*impl { return []*impl{neonImpl} }

var neonImpl = &impl{
	name:      "neon",
	available: cpu.ARM64.HasASIMD,
	needs:     "ASIMD",

	exp:                 expNEON,
	log:                 logNEON,
	forward:             single(forwardNEON),
	backward:            single(backwardNEON),
	forwardBatch:        strided(forwardNEON),
	backwardBatch:       stridedBack(backwardNEON),
	transitions:         transitionsNEON,
	backwardTransitions: backwardTransitionsOf(single(backwardNEON), transitionsNEON),
	shiftRows:           shiftRowsNEON,
	logMatVec:           logMatVecNEON,
	viterbi:             viterbiNEON,
	viterbiMax:          viterbiMaxNEON,
	gather:              gatherNEON,
	scatter:             scatterNEON,
	dot:                 dotNEON,
	axpy:                axpyNEON,
	scale:               scaleNEON,
	mul:                 mulNEON,
	axpyWiden:           axpyWidenNEON,
	// arm64 has no gather instruction: the generic code (a loop over each
	// row's entries; see MaxPlusCSRVector).
	spmv:         spmvGeneric,
	gatherMulAdd: gatherMulAddGeneric,
	maxPlusCSR:   maxPlusCSRGeneric,
	byteMasks:    byteMasksNEON,
	selectGE:     selectGENEON,
	selectSumGE:  selectSumGENEON,
	max:          maxNEON,

	exp32:                 exp32NEON,
	forward32:             single(forward32NEON),
	forwardBatch32:        strided(forward32NEON),
	backwardBatch32:       stridedBack(backward32NEON),
	backward32:            single(backward32NEON),
	transitions32:         transitions32NEON,
	backwardTransitions32: backwardTransitionsOf(single(backward32NEON), transitions32NEON),
	shiftRows32:           shiftRows32NEON,
	viterbi32:             viterbi32NEON,
	viterbiMax32:          viterbiMax32NEON,
	gather32:              gather32NEON,
	scatter32:             scatter32NEON,
	dot32:                 dot32NEON,
	axpy32:                axpy32NEON,
	scale32:               scale32NEON,
	mul32:                 mul32NEON,
	selectGE32:            selectGE32NEON,
	selectSumGE32:         selectSumGE32NEON,
	max32:                 max32NEON,

	fmaPeak:   fmaPeakNEON,
	peakFlops: 24 * 2 * 2,
}
