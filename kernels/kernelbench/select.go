package kernelbench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/kernels"
)

// KernelsSelect lists the benchmarks of the selection kernels (run by
// name, as Kernels32): SelectGE, SelectSumGE and Max on T rows of M labels
// of which 1–5 % qualify, as in a trained model's bounded Viterbi and
// pruning, and "prune", pruning's choice of a position's labels (Max, then
// SelectGE, then prune.Rule's cap over the few selected). The float64
// ones have a "loop" baseline, the scalar loop the engine ran before:
// winRows' selection for selectsumge, the rule's one pass over all labels
// for prune, and plain loops for selectge and max.
var KernelsSelect = []string{"selectge", "selectsumge", "max", "prune", "selectge32", "selectsumge32", "max32"}

// LabelsSelect are the label counts of the selection benchmarks: a small
// tag set and large ones (UD Czech CLTT's 304 XPOS, 1,024, the pooled
// Czech data's 1,341).
var LabelsSelect = []int{64, 304, 1024, 1341}

// Loop is the impl name of the scalar baselines.
const Loop = "loop"

// LabelsOf returns the default label counts of kernel's benchmarks.
func LabelsOf(kernel string) []int {
	if slices.Contains(KernelsSelect, kernel) {
		return LabelsSelect
	}
	return Labels
}

// Prune's rule: train's defaults with prune.max=8, on a tagger (no gold
// label); its cut also bounds the selectge rows.
var (
	pruneRule   = prune.Rule{Max: 8, Threshold: 0.01}
	pruneLogTau = math.Log(pruneRule.Threshold)
)

// selectRows returns T rows of m scores of which k (1–5 % of m, at least 1,
// at random places) lie in [hi−4, hi], the first of them at hi, and the
// others below lo.
func selectRows(r *rand.Rand, m int, hi, lo float64) []float64 {
	x := make([]float64, T*m)
	for t := range T {
		row := x[t*m : (t+1)*m]
		for i := range row {
			row[i] = lo - 10*r.Float64()
		}
		k := max(1, m*(1+r.IntN(5))/100)
		for n, i := range r.Perm(m)[:k] {
			row[i] = hi - 4*r.Float64()
			if n == 0 {
				row[i] = hi
			}
		}
	}
	return x
}

// newSelect is New for the selection kernels.
func newSelect(c Case, kernel string, m int, r *rand.Rand) (Case, bool) {
	switch kernel {
	case "selectge", "selectge32", "max", "max32":
		// Pruning's rows: the best at 0, the labels within log τ of it
		// in [−4, 0], the others below −4.7 (the cut at log 0.01 ≈ −4.6).
		x := selectRows(r, m, 0, -4.7)
		bound := pruneLogTau
		c.Setup = func() func() {
			dst := make([]int32, m)
			x32 := to32(x)
			switch kernel {
			case "selectge":
				return func() {
					for t := range T {
						kernels.SelectGE(dst, x[t*m:(t+1)*m], bound)
					}
				}
			case "selectge32":
				return func() {
					for t := range T {
						kernels.SelectGE32(dst, x32[t*m:(t+1)*m], float32(bound))
					}
				}
			case "max":
				return func() {
					for t := range T {
						sink = kernels.Max(x[t*m : (t+1)*m])
					}
				}
			default:
				return func() {
					for t := range T {
						sink = float64(kernels.Max32(x32[t*m : (t+1)*m]))
					}
				}
			}
		}
		switch kernel {
		case "selectge":
			c.Loop = func() func() {
				dst := make([]int32, m)
				return func() {
					for t := range T {
						selectLoop(dst, x[t*m:(t+1)*m], bound)
					}
				}
			}
		case "max":
			c.Loop = func() func() {
				return func() {
					for t := range T {
						sink = maxLoop(x[t*m : (t+1)*m])
					}
				}
			}
		}
	case "prune":
		// The tagger's pruning (prune.Rule.Sets, no gold label) over T
		// positions: with no candidate lists it narrows each row with Max
		// and SelectGE; given every label as a position's candidates, it
		// runs its scalar pass over all M, the loop it had before.
		x := selectRows(r, m, 0, -4.7)
		all := iotaLabels(m)
		every := make([][]int32, T)
		for t := range every {
			every[t] = all
		}
		c.Setup = func() func() {
			var buf, ref prune.Buf
			got, want := pruneRule.Sets(&buf, x, m, nil, nil), pruneRule.Sets(&ref, x, m, every, nil)
			for t := range got {
				if !slices.Equal(got[t], want[t]) {
					panic(fmt.Sprintf("kernelbench: prune M=%d row %d: %v, the scalar pass gives %v", m, t, got[t], want[t]))
				}
			}
			return func() { pruneRule.Sets(&buf, x, m, nil, nil) }
		}
		c.Loop = func() func() {
			var buf prune.Buf
			return func() { pruneRule.Sets(&buf, x, m, every, nil) }
		}
	case "selectsumge", "selectsumge32":
		// winRows' rows: δ with its 1–5 % rows that can win in [−4, 0]
		// and the others below −30, rowHi in [0, 3), the bound (LB) −1.
		prev := selectRows(r, m, 0, -30)
		hi := make([]float64, m)
		for i := range hi {
			hi[i] = 3 * r.Float64()
		}
		const bound = -1.0
		cand := make([]int32, min(m, 64))
		c.Setup = func() func() {
			if kernel == "selectsumge" {
				return func() {
					for t := range T {
						kernels.SelectSumGE(cand, prev[t*m:(t+1)*m], hi, bound)
					}
				}
			}
			p32, h32 := to32(prev), to32(hi)
			return func() {
				for t := range T {
					kernels.SelectSumGE32(cand, p32[t*m:(t+1)*m], h32, bound)
				}
			}
		}
		if kernel == "selectsumge" {
			c.Loop = func() func() {
				return func() {
					for t := range T {
						winRowsLoop(prev[t*m:(t+1)*m], hi, cand, bound)
					}
				}
			}
		}
	default:
		return c, false
	}
	return c, true
}

func iotaLabels(m int) []int32 {
	all := make([]int32, m)
	for i := range all {
		all[i] = int32(i)
	}
	return all
}

// winRowsLoop is the selection loop engine.winRows ran before it called
// SelectSumGE (its bound from ShiftRows left out): the baseline.
func winRowsLoop(prev, rowHi []float64, cand []int32, bound float64) (int, bool) {
	hi := rowHi[:len(prev)]
	nc := 0
	for i, p := range prev {
		if p+hi[i] >= bound {
			if nc == len(cand) {
				return 0, false
			}
			cand[nc] = int32(i)
			nc++
		}
	}
	return nc, true
}

// selectLoop is SelectGE's loop written inline, as a caller would.
func selectLoop(dst []int32, x []float64, bound float64) (int, bool) {
	n := 0
	for i, v := range x {
		if v >= bound {
			if n == len(dst) {
				return n, false
			}
			dst[n] = int32(i)
			n++
		}
	}
	return n, true
}

// maxLoop is the plain loop that Max replaces.
func maxLoop(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}
