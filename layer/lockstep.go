package layer

import (
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// Lockstep: with dense transitions at M ≥ engine.LockstepLabels, a
// sequence run alone streams the M×M matrix at every position. Unconstrained
// NLL and Marginals calls then hand the whole batch to the engine's batch
// calls (NLLBatchEach, MarginalsBatch), which group sequences of similar
// length and run each group with the matrix–matrix kernels, on the
// runner's pool. A call the engine fails (a sequence with no labelling, NaN
// scores) runs again on the per-sequence path, whose errors name the
// sequence as the layer's do.

// useLockstep turns the lockstep path on; tests turn it off to compare.
var useLockstep = true

// lockstepMin64 is the label count from which float64 batches take the
// lockstep path; it depends on the CPU (lockstepMin64For).
var lockstepMin64 = lockstepMin64For(kernels.Impl())

// lockstepMin64For is lockstepMin64 on kernel tier impl. The engine's own
// threshold (engine.LockstepLabels = 64, chains of 24) is too low for the
// layer's batches (B = 32, lengths 25–50, NLL with every gradient).
// BenchmarkNLL and BenchmarkMarginals, float64-lockstep against
// float64-single, one thread, CPU time (cpu-ns/op):
//   - before the batch kernels skipped padding and read E in place
//     (medians of 5 runs in alternating order, load 5–8): NLL ×0.96 at
//     M = 128, ×1.06 at 192, ×1.25 at 256, ×1.74 at 512; Marginals ×0.97,
//     ×1.05, ×1.20, ×2.21;
//   - after, Intel Xeon, least of 3 (-layer.labels 64,96,128,192): avx512
//     NLL ×0.87 at M = 64, ×1.30 at 96, ×1.32 at 128, ×1.43 at 192;
//     Marginals ×0.88, ×1.57, ×1.66, ×1.80. Its avx2 tier (SIMDCRF_KERNELS
//     =avx2): NLL ×1.12 at 96, ×1.15 at 128, ×1.16 at 192; Marginals
//     ×1.29, ×1.33, ×1.41. AVX2 keeps 256 until measured on the AMD EPYC,
//     where the earlier figures came from.
func lockstepMin64For(impl string) int {
	if impl == "avx512" {
		return 96
	}
	return 256
}

// lockstepMin32 is the label count from which float32 batches run in
// lockstep on the float32 batch kernels (lockstep32.go) instead of the
// float32 kernels one sequence at a time; it depends on the CPU
// (lockstepMin32For).
var lockstepMin32 = lockstepMin32For(kernels.Impl())

// lockstepMin32For is lockstepMin32 on kernel tier impl. float32-lockstep
// against float32-single (BenchmarkNLL, BenchmarkMarginals), one thread,
// CPU time:
//   - AVX2, AMD EPYC, medians of 5 (3 at 1,024) in alternating order, load
//     2.2–2.6: NLL ×0.88 at M = 64, ×0.96 at 128, ×0.98 at 256, ×1.35 at
//     512, ×1.36 at 1,024; Marginals ×0.62, ×0.89, ×0.99, ×1.28, ×1.73.
//     (The engine's float64 lockstep on widened float32 scores lost to the
//     float32 kernels alone: ×0.70–0.86 at 512 and 1,024.)
//   - AVX-512, Intel Xeon, best of 4 (the machine shared and noisy): NLL
//     ×0.88 at M = 64, ×0.90 at 96, ×1.36 at 128, ×1.27 at 192, ×1.25 at
//     256; Marginals ×0.86, ×0.88, ×1.47, ×1.49, ×1.43. There a sequence
//     alone streams E (64 KiB at M = 128) from L2 at every position, more
//     slowly than the AMD did. Since the batch kernels skip padding and
//     read E in place, least of 4 (-layer.labels 64,96): NLL ×1.02 at 64,
//     ×1.04 at 96; Marginals ×1.00, ×1.08.
func lockstepMin32For(impl string) int {
	if impl == "avx512" {
		return 96
	}
	return 512
}

// lockBufs is a runner's scratch for the lockstep path.
type lockBufs struct {
	emits, outs [][]float64
	labels      [][]int32
	e64, o64    []float64 // widened float32 emissions and float64 outputs
	z           []float64
}

// The lockstep modes of a call.
const (
	lockNone   = iota
	lockEngine // float64 (or widened float32) through the engine's batch calls
	lock32     // float32 batch kernels (lockstep32.go)
)

// lockMode says whether the call runs on a lockstep path: NLL or
// Marginals, no constraints, M large enough, two sequences or more; the
// float64 one not with clamped sentinels (the clamped path keeps those
// chains in the scaled domain; float32 checks them per chain).
func (r *runner[F]) lockMode(con *Constraints) int {
	if !useLockstep || con != nil || len(r.lengths) < 2 || r.op != opNLL && r.op != opMarginals {
		return lockNone
	}
	if r.p32 != nil && useKernels32 {
		if r.M >= lockstepMin32 {
			return lock32
		}
		return lockNone
	}
	if r.M >= lockstepMin64 && !r.useClamp {
		return lockEngine
	}
	return lockNone
}

// lockSetup points the per-sequence slices at the batch: emissions (widened
// for float32) and, when out is set, output buffers cleared (in place for
// float64).
func (r *runner[F]) lockSetup(out bool) {
	lb := &r.lock
	B, M := len(r.lengths), r.M
	lb.emits = grow(lb.emits, B)
	n := 0
	for _, l := range r.lengths {
		n += int(l) * M
	}
	if r.em64 == nil {
		lb.e64 = grow(lb.e64, n)
	}
	if out && r.out64 == nil {
		lb.o64 = grow(lb.o64, n)
	}
	if out {
		lb.outs = grow(lb.outs, B)
	}
	at := 0
	for i, l := range r.lengths {
		off, L := i*r.T*M, int(l)*M
		if r.em64 != nil {
			lb.emits[i] = r.em64[off : off+L]
		} else {
			e := lb.e64[at : at+L]
			for k, v := range r.em[off : off+L] {
				e[k] = float64(v)
			}
			lb.emits[i] = e
		}
		if out {
			if r.out64 != nil {
				lb.outs[i] = r.out64[off : off+L]
			} else {
				lb.outs[i] = lb.o64[at : at+L]
			}
			clear(lb.outs[i])
		}
		at += L
	}
}

// nllLockstep runs an NLL call over lockstep groups; false: run it again
// per sequence.
func (r *runner[F]) nllLockstep() bool {
	lb := &r.lock
	r.lockSetup(r.wantEmit)
	B := len(r.lengths)
	lb.labels = grow(lb.labels, B)
	for i, l := range r.lengths {
		lb.labels[i] = r.tags[i*r.T : i*r.T+int(l)]
	}
	wb := &r.w[0]
	var g engine.Gradient
	if r.wantT {
		g.DTrans = wb.gT
	}
	if r.wantS {
		g.DStart = wb.gS
	}
	if r.wantE {
		g.DEnd = wb.gE
	}
	var dEmit [][]float64
	if r.wantEmit {
		dEmit = lb.outs
	}
	v, err := r.tr.NLLBatchEach(r.pool, lb.emits, lb.labels, nil, dEmit, &g, r.perSeq)
	if err != nil {
		return false
	}
	wb.nll = v
	if r.wantEmit {
		for i, d := range lb.outs[:B] {
			r.put(i, d, r.scale)
		}
	}
	r.counted(B)
	return true
}

// marginalsLockstep runs a Marginals call over lockstep groups; false: run
// it again per sequence.
func (r *runner[F]) marginalsLockstep() bool {
	lb := &r.lock
	r.lockSetup(true)
	B := len(r.lengths)
	z := r.logZ
	if z == nil {
		lb.z = grow(lb.z, B)
		z = lb.z
	}
	if err := r.tr.MarginalsBatch(r.pool, lb.emits, nil, lb.outs[:B], z); err != nil {
		return false
	}
	for i, d := range lb.outs[:B] {
		r.put(i, d, 1) // float64: in place, zeros beyond the length
	}
	r.counted(B)
	return true
}

func (r *runner[F]) counted(n int) {
	if tally != nil {
		tally.lockstep.Add(int64(n))
	}
}
