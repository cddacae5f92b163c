package train

import (
	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// reduce adds the workers' losses and gradients into g in worker order
// (transitions, sub-label transitions U, states, sub-labels), adds the L2
// term, holds the fixed parameters at 0, and returns f.
func (o *objective) reduce(theta, g []float64) float64 {
	md := o.md
	// Reduce in worker order; add the L2 term; hold fixed parameters.
	f := 0.0
	for w := range o.workers {
		f += o.workers[w].loss
	}
	nt := md.nParams - md.nState
	gt := g[md.nState:]
	copy(gt, o.workers[0].tg)
	for w := 1; w < len(o.workers); w++ {
		tg := o.workers[w].tg
		for k := range nt {
			gt[k] += tg[k]
		}
	}
	if md.subTrans { // U's gradient: E−O of every bigram, by its parts
		s, m := md.sub, md.m
		gu := g[md.subTransOff():md.subEnd()]
		clear(gu)
		for i := range m {
			pi := s.Of[i*s.N : (i+1)*s.N]
			for j, v := range gt[i*m : (i+1)*m] {
				if v == 0 {
					continue
				}
				pj := s.Of[j*s.N : (j+1)*s.N]
				for k, a := range pi {
					if b := pj[k]; a >= 0 && b >= 0 {
						gu[int(a)*s.NSub+int(b)] += v
					}
				}
			}
		}
	}
	if o.f32 != nil {
		f += o.f32.reduceStates(o, theta, g)
	} else {
		f += o.reduceStates(theta, g)
	}
	c22 := 2 * o.c2
	for k := md.nState; k < md.nParams; k++ {
		if o.c2 > 0 {
			f += o.c2 * theta[k] * theta[k]
			g[k] += c22 * theta[k]
		}
	}
	for _, k := range md.fixedTrans {
		g[k] = 0
	}
	if md.sub != nil {
		nw := md.nParams + len(md.sub.IDs)
		gsub, tsub := g[md.nParams:nw], theta[md.nParams:nw]
		if md.subTrans {
			gu, tu := g[nw:md.subEnd()], theta[nw:md.subEnd()]
			if o.c2 > 0 {
				f += o.c2 * kernels.Dot(tu, tu)
				kernels.Axpy(c22, tu, gu)
			}
		}
		copy(gsub, o.workers[0].sg)
		clear(o.workers[0].sg)
		for w := 1; w < len(o.workers); w++ {
			for k, v := range o.workers[w].sg {
				gsub[k] += v
			}
			clear(o.workers[w].sg)
		}
		if o.c2 > 0 {
			f += o.c2 * kernels.Dot(tsub, tsub)
			kernels.Axpy(c22, tsub, gsub)
		}
	}
	if md.tri != nil { // (held at 0 while the pruner trains)
		gt, tt := g[md.triOff():md.nTotal()], theta[md.triOff():md.nTotal()]
		clear(gt)
		if md.order2() {
			for w := range o.workers {
				for k, v := range o.workers[w].tri {
					gt[k] += v
				}
			}
			if o.c2 > 0 {
				f += o.c2 * kernels.Dot(tt, tt)
				kernels.Axpy(c22, tt, gt)
			}
		}
	}
	return f
}

// reduceStates adds the other workers' state gradients and the L2
// gradient to g[0:nState], zeroing the workers' buffers for the next
// evaluation, in parallel over blocks; it returns C2·‖θ_state‖². The
// blocks are fixed by the thread count, so the sum is deterministic.
func (o *objective) reduceStates(theta, g []float64) float64 {
	W := len(o.workers)
	return o.reduceBlocks(theta, g, func(lo, hi, nh int, gb []float64) {
		if lo < nh { // hot rows: worker 0's are g itself
			h := min(hi, nh)
			for w := 1; w < W; w++ {
				gw := o.workers[w].g[lo:h]
				for k, v := range gw {
					gb[k] += v
				}
				clear(gw)
			}
		}
		for k := max(lo, nh); k < hi; k++ { // cold weights
			j := 2*(k-nh) + 1
			v := o.workers[0].cw[j]
			for w := 1; w < W; w++ {
				v += o.workers[w].cw[j]
			}
			g[k] = v
		}
	})
}

// reduceBlocks runs sum over blocks of the state weights in parallel, sum
// setting g[lo:hi] (gb) to the workers' gradient (nh: the hot entries'
// end), then holds the untrainable entries at 0 and adds the L2 term; it
// returns C2·‖θ_state‖². Shared by the float64 and float32 evaluations.
func (o *objective) reduceBlocks(theta, g []float64, sum func(lo, hi, nh int, gb []float64)) float64 {
	md := o.md
	n := md.nState
	nh := md.hy.hotSize()
	const block = 1 << 14
	nb := (n + block - 1) / block
	parts := make([]float64, nb)
	c2, c22 := o.c2, 2*o.c2
	_ = o.pool.Run(nb, func(_ *engine.Workspace, _, b int) error {
		lo, hi := b*block, min((b+1)*block, n)
		gb := g[lo:hi]
		sum(lo, hi, nh, gb)
		if md.stateMask != nil {
			for k := lo; k < min(hi, nh); k++ {
				if md.stateMask[k/64]&(1<<(k%64)) == 0 {
					g[k] = 0
				}
			}
		}
		if c2 > 0 {
			x := theta[lo:hi]
			parts[b] = c2 * kernels.Dot(x, x)
			kernels.Axpy(c22, x, gb)
		}
		return nil
	})
	f := 0.0
	for _, p := range parts {
		f += p
	}
	return f
}
