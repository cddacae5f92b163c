package layer

import (
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/kernels"
)

// The float32 lockstep path: float32 batches at M ≥ lockstepMin32 (512;
// 96 on AVX-512) run NLL and Marginals over lockstep groups
// (lockplan.Plan) on the engine's float32 batch kernels
// (engine.Scaled.Lockstep), padded as
// engine/lockstep.go explains. A chain the float32 range cannot hold
// (Scaled.Forward's checks) runs alone on the per-sequence path.

// run32 runs the call's units (r.plan) on the pool, in blocks per worker
// so that the sums are the same on every run.
func (r *runner[F]) run32() error {
	W := r.pool.Threads()
	n := r.plan.Make(r.lengths, min(lockplan.Chains, (len(r.lengths)+W-1)/W), W)
	if tally != nil {
		for u := range n {
			if c := r.plan.Unit(u); len(c) > 1 {
				tally.lockstep.Add(int64(len(c)))
			}
		}
	}
	return r.pool.Run(n, r.unitFn)
}

// doUnit runs unit u: a lockstep group, or a chain alone.
func (r *runner[F]) doUnit(ws *engine.Workspace, w, u int) error {
	chains := r.plan.Unit(u)
	if len(chains) > 1 {
		r.group32(&r.w[w], chains)
	}
	for k, c := range chains {
		if len(chains) > 1 {
			if _, ok := r.w[w].f32.ws.GroupChain(k); ok {
				continue
			}
		}
		if err := r.do(ws, w, int(c)); err != nil {
			return err
		}
	}
	return nil
}

// group32 runs a group of chains in lockstep on the engine's float32
// batch kernels (engine.Scaled.Lockstep); chains it cannot take are left
// to the caller to run alone.
func (r *runner[F]) group32(wb *wbuf, chains []int32) {
	M, w := r.M, &wb.f32
	w.emits = w.emits[:0]
	for _, c := range chains {
		off := int(c) * r.T * M
		w.emits = append(w.emits, r.em32[off:off+int(r.lengths[c])*M])
	}
	backward := r.op == opMarginals || r.wantEmit || r.wantT || r.wantS || r.wantE
	var counts *engine.Counts[float32]
	if r.op == opNLL && r.wantT {
		counts = &w.counts
	}
	r.p32.Lockstep(&w.ws, w.emits, backward, counts, wb.gT)
	clear(w.emits)
	for k, c := range chains {
		if z, ok := w.ws.GroupChain(k); ok {
			r.out32Chain(wb, int(c), k, z)
		}
	}
}

// out32Chain writes chain k's (sequence i's) results: NLL, emission
// gradient, start and end counts; or marginals and log Z.
func (r *runner[F]) out32Chain(wb *wbuf, i, k int, logZ float64) {
	M, ws := r.M, &wb.f32.ws
	L := int(r.lengths[i])
	off := i * r.T * M
	if r.op == opMarginals {
		d := r.out32[off : off+r.T*M]
		for t := range L {
			a, b := ws.GroupRow(k, t)
			kernels.Mul32(d[t*M:(t+1)*M], a, b, 1)
		}
		clear(d[L*M:])
		if r.logZ != nil {
			r.logZ[i] = logZ
		}
		return
	}
	em := r.em32[off : off+L*M]
	tags := r.tags[i*r.T : i*r.T+L]
	r.addNLL(wb, i, logZ-goldScore(r.scores, em, tags, M))
	if r.wantEmit {
		d := r.out32[off : off+r.T*M]
		s := float32(r.scale)
		for t := range L {
			a, b := ws.GroupRow(k, t)
			kernels.Mul32(d[t*M:(t+1)*M], a, b, s)
			d[t*M+int(tags[t])] -= s
		}
		clear(d[L*M:])
	}
	if r.wantS {
		a, b := ws.GroupRow(k, 0)
		for j := range M {
			wb.gS[j] += float64(a[j] * b[j])
		}
		wb.gS[tags[0]]--
	}
	if r.wantE {
		a, b := ws.GroupRow(k, L-1)
		for j := range M {
			wb.gE[j] += float64(a[j] * b[j])
		}
		wb.gE[tags[L-1]]--
	}
	if r.wantT {
		for t := 1; t < L; t++ {
			wb.gT[int(tags[t-1])*M+int(tags[t])]--
		}
	}
}
