package layer

import (
	"math"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// The float32 lockstep path: float32 batches at M ≥ lockstepMin32 (512) run
// NLL and Marginals over the engine's lockstep groups (engine.LockstepPlan)
// with the float32 batch kernels (ForwardBatch32, BackwardBatch32,
// TransitionsBatch32), padded as engine/lockstep.go explains. A chain the
// float32 range cannot hold (forward32's checks) runs alone on the
// per-sequence path.

// l32 is a worker's float32 lockstep scratch.
type l32 struct {
	psi, alpha, beta, work []float32 // T×K×M
	scale                  []float32 // T×K
	mx, lo                 []float32 // T
	shift, logZ            []float64 // K
	pad                    []int32   // K: rows in front after alignment (T: alone)
}

// run32 runs the call's units (r.plan) on the pool, in blocks per worker
// so that the sums are the same on every run.
func (r *runner[F]) run32() error {
	W := r.pool.Threads()
	n := r.plan.Make(r.lengths, min(engine.LockstepChains, (len(r.lengths)+W-1)/W), W)
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
		if len(chains) > 1 && int(r.w[w].l32.pad[k]) < maxLen(r.lengths, chains) {
			continue
		}
		if err := r.do(ws, w, int(c)); err != nil {
			return err
		}
	}
	return nil
}

func maxLen(lengths []int32, chains []int32) int {
	T := 0
	for _, c := range chains {
		T = max(T, int(lengths[c]))
	}
	return T
}

// group32 runs a group of chains in lockstep; chains it cannot take get
// pad = T (the caller runs them alone).
func (r *runner[F]) group32(wb *wbuf, chains []int32) {
	M, K, T := r.M, len(chains), maxLen(r.lengths, chains)
	p, lw := r.p32, &wb.l32
	n := T * K * M
	lw.psi, lw.alpha, lw.beta = grow(lw.psi, n), grow(lw.alpha, n), grow(lw.beta, n)
	lw.work = grow(lw.work, max(((T-1)*K+1)*M, K*M))
	lw.scale, lw.mx, lw.lo = grow(lw.scale, T*K), grow(lw.mx, T), grow(lw.lo, T)
	lw.shift, lw.logZ, lw.pad = grow(lw.shift, K), grow(lw.logZ, K), grow(lw.pad, K)
	psi, alpha, beta, scale := lw.psi[:n], lw.alpha[:n], lw.beta[:n], lw.scale[:T*K]
	for k, c := range chains {
		L := int(r.lengths[c])
		em := r.em32[int(c)*r.T*M : (int(c)*r.T+L)*M]
		ok := kernels.Dot32(em, em) <= math.MaxFloat64
		shift := float64(L-1) * p.shift
		for t := 0; ok && t < L; t++ {
			a := p.zeros
			switch {
			case L == 1:
				a = p.startEnd
			case t == 0:
				a = p.start
			case t == L-1:
				a = p.colEnd
			}
			row := (t*K + k) * M
			kernels.ShiftRows32(psi[row:row+M], lw.mx[t:t+1], lw.lo[t:t+1], em[t*M:(t+1)*M], a, 1, M)
			m := lw.mx[t]
			ok = float64(m-lw.lo[t])+p.colRange < kernels.ScaledRange32 && !math.IsInf(float64(m), 0)
			shift += float64(m)
		}
		from := L
		lw.pad[k], lw.shift[k] = int32(T-L), shift
		if !ok {
			from, lw.pad[k] = 0, int32(T)
		}
		for t := from; t < T; t++ {
			clear(psi[(t*K+k)*M : (t*K+k+1)*M]) // exp(0) = 1
		}
	}
	kernels.Exp32(psi, psi)
	kernels.ForwardBatch32(alpha, scale, psi, p.e, T, K, M)
	for k := range K {
		P := int(lw.pad[k])
		if P == T {
			continue
		}
		L := T - P
		z := lw.shift[k]
		for t := range L {
			s := scale[t*K+k]
			if !(s > 0) {
				z = math.NaN()
				break
			}
			z += math.Log(float64(s))
		}
		// forward32's bound on the labellings through sentinels.
		if math.IsNaN(z) || !math.IsInf(p.minGap, 1) && z < lw.shift[k]-p.minGap+float64(L)*math.Log(float64(M))+40 {
			lw.pad[k] = int32(T)
			continue
		}
		lw.logZ[k] = z
	}
	backward := r.op == opMarginals || r.wantEmit || r.wantT || r.wantS || r.wantE
	if backward {
		kernels.AlignBatchEnd(psi, alpha, scale, lw.pad[:K], T, K, M)
		kernels.BackwardBatch32(beta, scale, psi, p.et, lw.work[:K*M], T, K, M)
	}
	if r.op == opNLL && r.wantT && T > 1 {
		r.counts32(wb, T, K)
	}
	for k, c := range chains {
		P := int(lw.pad[k])
		if P == T {
			continue
		}
		r.out32Chain(wb, int(c), k, P, T, K)
	}
}

// counts32 adds the group's transition counts into the worker's float32
// counts, a few rows at a time (countChunk transitions or so per sum, as
// nll32 does), with the number of real transitions for flush32.
func (r *runner[F]) counts32(wb *wbuf, T, K int) {
	M, lw, w := r.M, &wb.l32, &wb.f32
	if len(w.g) != M*M {
		w.g, w.gN = grow(w.g, M*M), 0
		clear(w.g)
	}
	step := max(1, countChunk/K) // transitions per chain per call
	for a := 0; a < T-1; a += step {
		n := min(step, T-1-a) + 1 // rows a..a+n−1
		kernels.TransitionsBatch32(w.g, r.p32.e, lw.alpha[a*K*M:(a+n)*K*M], lw.beta[a*K*M:(a+n)*K*M], lw.psi[a*K*M:(a+n)*K*M],
			lw.scale[a*K:(a+n)*K], lw.work[:((n-1)*K+1)*M], n, K, M)
		for k := range K {
			// chain k's transitions into rows t with P_k < t, a < t ≤ a+n−1
			P := int(lw.pad[k])
			if lo := max(a+1, P+1); lo <= a+n-1 && P < T {
				w.gN += a + n - lo
			}
		}
		if w.gN >= countChunk {
			flush32(wb)
		}
	}
}

// out32Chain writes chain k's (sequence i's) results: NLL, emission
// gradient, start and end counts; or marginals and log Z.
func (r *runner[F]) out32Chain(wb *wbuf, i, k, P, T, K int) {
	M, lw := r.M, &wb.l32
	L := T - P
	off := i * r.T * M
	row := func(t int) int { return ((t+P)*K + k) * M }
	if r.op == opMarginals {
		d := r.out32[off : off+r.T*M]
		for t := range L {
			a, b, o := lw.alpha[row(t):row(t)+M], lw.beta[row(t):row(t)+M], d[t*M:(t+1)*M]
			for j := range o {
				o[j] = a[j] * b[j]
			}
		}
		clear(d[L*M:])
		if r.logZ != nil {
			r.logZ[i] = lw.logZ[k]
		}
		return
	}
	em := r.em32[off : off+L*M]
	tags := r.tags[i*r.T : i*r.T+L]
	r.addNLL(wb, i, lw.logZ[k]-goldScore(r.scores, em, tags, M))
	if r.wantEmit {
		d := r.out32[off : off+r.T*M]
		s := float32(r.scale)
		for t := range L {
			a, b, o := lw.alpha[row(t):row(t)+M], lw.beta[row(t):row(t)+M], d[t*M:(t+1)*M]
			for j := range o {
				o[j] = a[j] * b[j] * s
			}
			o[tags[t]] -= s
		}
		clear(d[L*M:])
	}
	if r.wantS {
		a, b := lw.alpha[row(0):row(0)+M], lw.beta[row(0):row(0)+M]
		for j := range M {
			wb.gS[j] += float64(a[j] * b[j])
		}
		wb.gS[tags[0]]--
	}
	if r.wantE {
		a, b := lw.alpha[row(L-1):row(L-1)+M], lw.beta[row(L-1):row(L-1)+M]
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
