package roofline

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/train"
)

// Machine is what bounds the phases here: the float64 FMA peak of one
// core, the latency of a dependent FMA, the bandwidth against the working
// set's size (Curve, sizes increasing) and the memory levels (Measure)
// with the cache sizes of sysfs, for the report.
type Machine struct {
	PeakGFLOPs   float64 // float64, one core (kernels.FMAProbe, the active tier)
	FMALatencyNs float64 // one float64 FMA waiting for the previous one
	Curve        []Point
	Levels       []Level // L1, L2, L3, memory
	Sizes        [3]int64
}

// Point is the bandwidth measured over one working set.
type Point struct {
	Bytes           int64
	ReadGBs, RMWGBs float64
}

// Traffic is bytes moved over a working set of Set bytes.
type Traffic struct{ Set, Bytes float64 }

// Work is what a phase does in one L-BFGS iteration.
type Work struct {
	Flops   float64
	Traffic []Traffic
	// Chain is the longest run of FMAs each waiting for the last (the
	// latency a phase cannot overlap).
	Chain float64
}

// Bounds.
const (
	Flops     = "flops"
	Bandwidth = "bandwidth"
	Latency   = "latency"
)

// Limit returns the least time, in ms, work can take on mc, and what sets
// it: the flops at the FMA peak, the bytes at the bandwidth of their
// working set (summed), or the dependent FMAs at their latency, whichever
// is longest. Each is a lower bound, so their maximum is one.
func (mc Machine) Limit(w Work) (float64, string) {
	fl := w.Flops / mc.PeakGFLOPs * 1e-6
	bw := 0.0
	for _, t := range w.Traffic {
		if t.Bytes > 0 {
			bw += t.Bytes / mc.Bandwidth(t.Set) * 1e-6
		}
	}
	lat := w.Chain * mc.FMALatencyNs * 1e-6
	switch {
	case lat > fl && lat > bw:
		return lat, Latency
	case bw > fl:
		return bw, Bandwidth
	}
	return fl, Flops
}

// Bandwidth returns the bandwidth in GB/s that bounds traffic over a
// working set of set bytes: the better of streaming reads and
// read-modify-writes measured on the largest working set no larger (the
// smallest measured, for smaller sets), or on any larger one if better.
// Bandwidth cannot grow with the set, so a larger set measured faster
// shows a dip of the machine's noise, and the bound takes the faster
// figure: erring high, as a bound must, the structure is taken to stay in
// the fastest level it fits, its reuse within the phase perfect.
func (mc Machine) Bandwidth(set float64) float64 {
	k := 0
	for i, q := range mc.Curve {
		if float64(q.Bytes) <= set {
			k = i
		}
	}
	bw := 0.0
	for _, q := range mc.Curve[k:] {
		bw = max(bw, q.ReadGBs, q.RMWGBs)
	}
	return bw
}

// The phases of an iteration, in the order of train.PhaseTimes and
// trainbench.PhaseResult.
var Phases = []string{"scoring", "forward-backward", "scattering", "optimiser", "setup"}

// PhaseWork returns the work of each phase (Phases' order) in one
// L-BFGS iteration of a float64 training of shape sh, one thread, with
// evals evaluations per iteration and history pairs valid pairs in the
// iteration's update and direction (min(k, m) at iteration k). It counts
// the passes as train implements them (docs/roofline.md says how):
//
//   - scoring: a hot feature adds its M-wide row (M FMAs, 8·M bytes of
//     weights over the hot rows); a cold one its few weights (one FMA and
//     8 bytes each, over the cold weights beside their gradient); the
//     features stream (4 bytes a hot id; 4 a cold one's weights' offset,
//     2 a cold label; 8 a value; long sequences at large M also stream 4
//     bytes a cold feature's position, not counted: a lower bound); the
//     emissions are written in L1;
//   - forward–backward: 3·M² FMAs a position (forward, backward, the
//     expected transition counts), each reading its transition score from
//     L1; emissions read and marginals written in L1; one position after
//     another, ⌈log₂ M⌉+1 dependent FMAs a direction at least;
//   - scattering: scoring's FMAs with the weights' gradient read and
//     written instead of the weights read;
//   - setup: clearing the hot rows' gradient, copying the cold weights
//     beside their gradient, the L2 term and the reduction: 32 bytes a hot
//     weight and 56 a cold one, over θ;
//   - optimiser: the history update reads x, x', g, g' and the valid
//     pairs and writes the new pair (4+2c vectors), the direction reads
//     the gradient and the pairs and writes d (2+2c), each evaluation's
//     step and directional derivative 5: over the 2m+5 vectors.
func PhaseWork(sh train.Shape, evals, pairs float64, mc Machine) []Work {
	M, N := float64(sh.Labels), float64(sh.Tokens)
	H, C, L := float64(sh.HotFeatures), float64(sh.ColdFeatures), float64(sh.ColdLabels)
	nh := float64(sh.HotRows) * float64(max(sh.HotStride, sh.Labels))
	nc := float64(sh.StateParams) - nh
	n := float64(sh.Params)
	feat := 4*H + 4*C + 2*L
	if sh.Values {
		feat += 8 * (H + C)
	}
	// Per-sequence buffers (emissions, marginals) stay in L1: the set
	// of the first point of the curve.
	small := float64(mc.Curve[0].Bytes)
	var score, fb, scatter, setup, opt Work
	score.Flops = evals * 2 * (H*M + L)
	score.Traffic = []Traffic{{8 * nh, evals * 8 * H * M}, {16 * nc, evals * 8 * L}, {feat, evals * feat}, {small, evals * 8 * N * M}}

	fb.Flops = evals * 6 * M * M * N
	fb.Traffic = []Traffic{{small, evals * (3*8*M*M*N + 16*N*M)}}
	if !sh.Lockstep {
		fb.Chain = evals * 2 * N * (math.Ceil(math.Log2(max(M, 1))) + 1)
	}

	scatter.Flops = score.Flops
	scatter.Traffic = []Traffic{{8 * nh, evals * 16 * H * M}, {16 * nc, evals * 16 * L}, {feat, evals * feat}, {small, evals * 8 * N * M}}

	setup.Flops = evals * 2 * (nh + nc)
	setup.Traffic = []Traffic{{8 * n, evals * (32*nh + 56*nc)}}

	m := float64(max(sh.Memories, 1))
	opt.Flops = 2 * n * ((5*pairs + 3) + (2*pairs + 2) + 2*evals)
	opt.Traffic = []Traffic{{8 * n * (2*m + 5), 8 * n * ((4 + 2*pairs) + (2 + 2*pairs) + 5*evals)}}
	return []Work{score, fb, scatter, opt, setup}
}

// Ratio formats a limit's ratio: how many times its limit a phase took.
func Ratio(ms, limit float64) string {
	if limit <= 0 {
		return "–"
	}
	return fmt.Sprintf("×%.1f", ms/limit)
}
