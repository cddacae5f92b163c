//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// The arm64 tier: Advanced SIMD (NEON), which every ARMv8-A core has; the
// check is kept so that dispatch can say why it was not used.
var neonImpl = &impl{
	name:         "neon",
	available:    cpu.ARM64.HasASIMD,
	dot:          dotNEON,
	axpy:         axpyNEON,
	scale:        scaleNEON,
	forward:      forwardNEON1,
	forwardBatch: forwardBatchNEON,
	backward:     backwardNEON1,
	viterbi:      viterbiNEON,
	viterbiMax:   viterbiMaxNEON,
	exp:          expNEON,
	log:          logNEON,
	gather:       gatherNEON,
	transitions:  transitionsNEON,
	shiftRows:    shiftRowsNEON,
	logMatVec:    logMatVecNEON,
	scatter:      scatterNEON,
	byteMasks:    byteMasksNEON,
}

func platformImpls() []*impl { return []*impl{neonImpl} }
