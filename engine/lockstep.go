package engine

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/internal/sentinel"
	"github.com/simdcrf/simdcrf/kernels"
)

// Lockstep: with dense transitions, the single-chain forward step is a
// matrix–vector product that streams the whole M×M matrix from memory at
// every position (11.7 MB at M = 1,208). Chains of one length run together
// (kernels.ForwardBatch, BackwardBatch, TransitionsBatch) turn it into a
// matrix–matrix product that reads the matrix once per step for the whole
// group.
//
// Chains of different lengths share a group, padded to its longest, T;
// the batch kernels skip the padding's steps (their from), and each
// chain's rows are those of the chain alone (a row depends only on its own
// chain's rows):
//
//   - forward: chain k's rows are 0..T_k−1; a step takes the chains from
//     the first that has its row (Ψ = 1 on the padded rows, for chains
//     out of order);
//   - backward, the chains in order of length, shortest first (as lockplan
//     groups them): each starts from its own last row, set to β = 1, and
//     takes the steps below it;
//   - otherwise (chains out of order) the chains move down by P_k = T−T_k
//     rows (aligned at the end; the rows in front get Ψ = 0, α = 0, scale
//     1) and each takes the steps from the common last row, β = 1, to its
//     first;
//   - transition counts pair α_{t−1} with Ψ_t∘β_t/scale_t over every row:
//     the padded rows get α = 0, β = 0 and scale 1 first (Ψ = 0 instead
//     of β when moved to the end), so that every pair that touches one
//     adds exactly 0.
//
// TestLockstepPadding checks it against the single-chain path and brute
// force.

// LockstepLabels is the label count from which the batch calls (LogZBatch,
// NLLBatch, MarginalsBatch) and the trainer run dense chains in lockstep.
// Measured by BenchmarkPosteriorsSingle against BenchmarkPosteriorsLockstep
// (full forward–backward with counts, 32 chains of 24, AVX2, one thread,
// medians of 3, load < 1.3): lockstep ×0.80 at M = 9, ×0.82 at 23, ×1.10 at
// 45, ×1.30 at 64, ×1.7 at 128, ×2.8 at 512, ×3.9 at 1,024. Below 64 the
// matrix stays in L1/L2 and the single-chain kernels are as fast or faster.
const LockstepLabels = 64

// lockstepMinLabels is LockstepLabels, lowered by tests to run the batch
// calls' lockstep path at small M.
var lockstepMinLabels = LockstepLabels

// lockGroup holds a lockstep group's buffers in precision E: the
// engine's float64 batch calls and Scaled's groups share its passes.
type lockGroup[E Float] struct {
	psi, alpha, beta, work []E       // T×K×M
	scale                  []E       // T×K
	mx, lo                 []E       // T: one chain's row maxima and minima
	shift, logZ            []float64 // K: a chain's Σ row maxima (and shifts), its log Z (Scaled)
	pad                    []int32   // K: T − the chain's length (T: single path)
	from                   []int32   // 2T: the batch kernels' first chain of each row, forward then backward
	atEnd                  bool      // the backward pass ran on the chains moved to the end
	T, K, M                int       // of the last group (Scaled)
}

// lockBuf is a Workspace's lockstep group, with the batch calls' scratch.
type lockBuf struct {
	lockGroup[float64]
	emits, margs   [][]float64
	z, marg, score []float64 // the batch calls' scratch
}

// grow sizes the buffers a group of K chains of up to T positions needs:
// the forward pass's when it runs in lockstep (usable), the backward
// pass's too when its results are wanted.
func (lb *lockGroup[E]) grow(T, K, M int, usable, backward bool) {
	lb.pad = grow(lb.pad, K)
	if !usable {
		return
	}
	n := T * K * M
	lb.psi = grow(lb.psi, n)
	lb.alpha = grow(lb.alpha, n)
	lb.scale = grow(lb.scale, T*K)
	lb.mx = grow(lb.mx, T)
	lb.lo = grow(lb.lo, T)
	lb.shift = grow(lb.shift, K)
	lb.from = grow(lb.from, 2*T)
	if backward {
		lb.beta = grow(lb.beta, n)
		lb.work = grow(lb.work, n)
	}
}

// lockOut is what a lockstep group computes: logZ[k] always; marg[k]
// (T_k×M) where marg and marg[k] are not nil; the counts summed over the
// group added to trans, start and end where not nil.
type lockOut struct {
	logZ              []float64
	marg              [][]float64
	trans, start, end []float64
}

func (o *lockOut) backward() bool {
	return o.marg != nil || o.trans != nil || o.start != nil || o.end != nil
}

// lockstepPays reports whether the batch calls use the lockstep path.
func (tr *Transitions) lockstepPays() bool {
	return tr.tied == nil && !tr.logOnly && tr.m >= lockstepMinLabels
}

// lockstep runs the chains emits (no options) through the lockstep kernels
// where it can, and through Posteriors one by one where it cannot (a Tied
// or log-only structure, an empty chain, emissions NaN, ±Inf or spread
// wider than scaledRange, a scale that comes out 0: the single path then
// goes to the log domain or reports the error). It returns the index of
// the chain that failed and its error, or −1.
func (tr *Transitions) lockstep(ws *Workspace, emits [][]float64, o *lockOut) (int, error) {
	M, K := tr.m, len(emits)
	lb := &ws.lock
	T := 0
	for _, e := range emits {
		T = max(T, len(e)/M)
	}
	usable := tr.tied == nil && !tr.logOnly && T > 0
	lb.grow(T, K, M, usable, o.backward())
	if usable {
		tr.dense()
		f := tr.scaledForm(true)
		usable = lb.forward(&f, emits, T, K, M, o.logZ)
		if usable && o.backward() {
			lb.backward(&f, T, K, M, o.trans != nil)
			tr.lockOut(lb, T, K, o)
		}
	} else {
		for k := range lb.pad[:K] {
			lb.pad[k] = int32(T)
		}
	}
	for k, emit := range emits {
		if int(lb.pad[k]) < T {
			continue
		}
		var p *Posteriors
		if o.backward() {
			p = &Posteriors{Transitions: o.trans, Start: o.start, End: o.end}
			if o.marg != nil {
				p.Marginals = o.marg[k]
			}
		}
		z, err := tr.Posteriors(ws, emit, nil, p)
		if err != nil {
			return k, err
		}
		o.logZ[k] = z
	}
	return -1, nil
}

// scaledForm is the scaledForm of tr's dense forms (column shifts), with
// E and Eᵀ when withE (a Tied structure's only after tr.dense()).
func (tr *Transitions) scaledForm(withE bool) scaledForm[float64] {
	f := scaledForm[float64]{start: tr.start, mid: tr.colShift, end: tr.colEnd, startEnd: tr.startEnd,
		minGap: math.Inf(1), limit: scaledRange}
	if withE {
		f.e, f.et = tr.e, tr.et
	}
	return f
}

// forward fills Ψ (chain k's rows 0..T_k−1, then 1s) and runs the
// lockstep forward pass, setting logZ[k] of the chains it takes and pad[k]
// to T−T_k (T for the others). It reports whether any chain ran.
func (lb *lockGroup[E]) forward(f *scaledForm[E], emits [][]E, T, K, M int, logZ []float64) bool {
	n := T * K * M
	psi, alpha, scale := lb.psi[:n], lb.alpha[:n], lb.scale[:T*K]
	any := false
	for k, emit := range emits {
		Tk := len(emit) / M
		ok := Tk > 0 && Tk*M == len(emit) && kDot(emit, emit) <= math.MaxFloat64
		if ok {
			ok = lb.rows(f, psi, emit, Tk, K, k, M)
		}
		from := Tk
		lb.pad[k] = int32(T - Tk)
		if !ok {
			from, lb.pad[k] = 0, int32(T)
		}
		for t := from; t < T; t++ {
			clear(psi[(t*K+k)*M : (t*K+k+1)*M]) // exp(0) = 1
		}
		any = any || ok
	}
	if !any {
		return false
	}
	kExp(psi, psi)
	// Row t of the chains from from[t] on: the first chain with a row t
	// (chains left out have Ψ = 1 throughout and may run or not).
	from := lb.setFrom(lb.from[:T], K, func(P int) (int, int) { return 0, T - P })
	kForwardBatch(alpha, scale, psi, f.e, from, T, K, M)
	for k := range K {
		P := int(lb.pad[k])
		if P == T {
			continue
		}
		ls, ok := sumLogsStrided(scale[k:], T-P, K)
		z := lb.shift[k] + ls
		if !ok || !sentinel.Negligible(z, lb.shift[k], f.minGap, T-P, M) {
			lb.pad[k] = int32(T)
			continue
		}
		logZ[k] = z
	}
	return true
}

// rows writes chain k's shifted scores into its rows of psi (as the
// single-chain forward passes do: the form's offsets added, each row less
// its maximum) and its shift into lb.shift[k]; it reports false when a
// row fails the range test.
func (lb *lockGroup[E]) rows(f *scaledForm[E], psi, emit []E, Tk, K, k, M int) bool {
	mx, lo := lb.mx[:Tk], lb.lo[:Tk]
	for t := range Tk {
		r := (t*K + k) * M
		kShiftRows(psi[r:r+M], mx[t:t+1], lo[t:t+1], emit[t*M:(t+1)*M], f.offsets(t, Tk), 1, M)
	}
	shift := float64(Tk-1) * f.g
	for t, m := range mx {
		if !f.rowFits(m, lo[t]) {
			return false
		}
		shift += float64(m)
	}
	lb.shift[k] = shift
	return true
}

// backward runs the lockstep backward pass, on the chains where forward
// left them if they are in order of length, else moved to the end; with
// counts, the padded rows are then cleared for the transition counts.
func (lb *lockGroup[E]) backward(f *scaledForm[E], T, K, M int, counts bool) {
	n := T * K * M
	psi, alpha, beta, scale := lb.psi[:n], lb.alpha[:n], lb.beta[:n], lb.scale[:T*K]
	lb.atEnd = false
	last := T
	for _, P := range lb.pad[:K] {
		if P < int32(T) {
			lb.atEnd = lb.atEnd || int(P) > last
			last = int(P)
		}
	}
	var from []int32
	if lb.atEnd {
		kernels.AlignBatchEnd(psi, alpha, scale, lb.pad[:K], T, K, M)
		from = lb.setFrom(lb.from[T:2*T], K, func(P int) (int, int) { return P, T })
	} else {
		// Each chain from its own last row, β = 1, down.
		from = lb.setFrom(lb.from[T:2*T], K, func(P int) (int, int) { return 0, T - P - 1 })
		for k, P := range lb.pad[:K] {
			if L := T - int(P); L > 0 {
				fill(beta[((L-1)*K+k)*M:((L-1)*K+k+1)*M], 1)
			}
		}
	}
	kBackwardBatch(beta, scale, psi, f.et, lb.work[:K*M], from, T, K, M)
	if !counts {
		return
	}
	for k, P := range lb.pad[:K] {
		for t := range T {
			r := (t*K + k) * M
			switch {
			case lb.atEnd && (P == int32(T) || t < int(P)):
				if int(from[t]) > k {
					clear(beta[r : r+M]) // not computed (AlignBatchEnd did the rest)
				}
			case !lb.atEnd && (P == int32(T) || t >= T-int(P)):
				clear(alpha[r : r+M])
				clear(beta[r : r+M])
				scale[t*K+k] = 1
			}
		}
	}
}

// setFrom sets from[t] (T long) to the first of the chains that ran whose
// rows lo..hi−1 (rows(P), P the chain's padding) hold t, K where none
// does, and returns it: a batch kernel's from.
func (lb *lockGroup[E]) setFrom(from []int32, K int, rows func(P int) (lo, hi int)) []int32 {
	for t := range from {
		from[t] = int32(K)
	}
	for k := K - 1; k >= 0; k-- {
		if P := int(lb.pad[k]); P < len(from) {
			lo, hi := rows(P)
			for t := lo; t < hi; t++ {
				from[t] = int32(k)
			}
		}
	}
	return from
}

// first returns the row of chain k's first position after backward.
func (lb *lockGroup[E]) first(k int) int {
	if lb.atEnd {
		return int(lb.pad[k])
	}
	return 0
}

// lockCounts is how many transitions (all chains') a lockstep group counts
// in one call of TransitionsBatch: each call reads and writes the M×M
// counts, so fewer, longer calls pay (float32 NLL, B = 32, M = 128,
// lengths 25–50: from 64, ×0.95), and the sum in E is flushed after each
// one (float32: within 3.7e-7 of float64 there, TestFloat32Counts).
const lockCounts = 256

// countsChunked adds the group's transition counts into c a few rows at a
// time (lockCounts transitions or so per call, or c's flush interval if
// longer), with the number of real transitions, flushing into dst.
func (lb *lockGroup[E]) countsChunked(e []E, c *Counts[E], dst []float64, T, K, M int) {
	step := max(1, max(lockCounts, c.every())/K) // transitions per chain per call
	for a := 0; a < T-1; a += step {
		n := min(step, T-1-a) + 1 // rows a..a+n−1
		kTransitionsBatch(c.g, e, lb.alpha[a*K*M:(a+n)*K*M], lb.beta[a*K*M:(a+n)*K*M], lb.psi[a*K*M:(a+n)*K*M],
			lb.scale[a*K:(a+n)*K], lb.work[:((n-1)*K+1)*M], n, K, M)
		for k := range K {
			// chain k's transitions into its rows f+1..f+T_k−1 within
			// a+1..a+n−1 (f: its first row)
			P := int(lb.pad[k])
			if P == T {
				continue
			}
			f := lb.first(k)
			if lo, hi := max(a+1, f+1), min(a+n-1, f+T-P-1); lo <= hi {
				c.n += hi - lo + 1
			}
		}
		if c.full() {
			c.Flush(dst, 1)
		}
	}
}

// lockOut adds the transition counts of the float64 group (after
// backward) to o.trans and reads out the marginals and the start and end
// counts.
func (tr *Transitions) lockOut(lb *lockBuf, T, K int, o *lockOut) {
	M := tr.m
	n := T * K * M
	psi, alpha, beta, scale := lb.psi[:n], lb.alpha[:n], lb.beta[:n], lb.scale[:T*K]
	if o.trans != nil && T > 1 {
		kernels.TransitionsBatch(o.trans, tr.e, alpha, beta, psi, scale, lb.work[:((T-1)*K+1)*M], T, K, M)
	}
	for k := range K {
		P := int(lb.pad[k])
		if P == T {
			continue
		}
		L, f := T-P, lb.first(k)
		if o.marg != nil && o.marg[k] != nil {
			mg := o.marg[k][:L*M]
			for t := range L {
				r := ((t+f)*K + k) * M
				a, b, out := alpha[r:r+M], beta[r:r+M], mg[t*M:(t+1)*M]
				for j := range out {
					out[j] = a[j] * b[j]
				}
			}
		}
		if o.start != nil {
			r := (f*K + k) * M
			a, b := alpha[r:r+M], beta[r:r+M]
			for j := range o.start[:M] {
				o.start[j] += a[j] * b[j]
			}
		}
		if o.end != nil {
			r := ((f+L-1)*K + k) * M
			a, b := alpha[r:r+M], beta[r:r+M]
			for j := range o.end[:M] {
				o.end[j] += a[j] * b[j]
			}
		}
	}
}

// posteriorsLockstep runs forward–backward over a group of chains without
// options (emits[k], T_k×M each) at once. For each chain it computes what
// Posteriors(ws, emits[k], nil, p) does: logZ[k], and the marginals into
// marg[k] (T_k×M) if marg is not nil and marg[k] is not nil; the expected
// transition, start and end counts summed over the chains are ADDED to
// sum.Transitions, sum.Start and sum.End (sum and each field may be nil;
// its other fields must be). On a Dense structure whose scores fit the
// scaled domain the chains run in lockstep (the matrix–matrix kernels),
// padded to the longest one; the others, and any chain the scaled domain
// cannot hold, run one by one as Posteriors would. The results equal
// Posteriors' up to rounding. Group chains of similar lengths
// (lockplan.Groups): padding costs as much as real positions. On error it
// returns the index of the chain that failed and its error, else −1.
func (tr *Transitions) posteriorsLockstep(ws *Workspace, emits, marg [][]float64, logZ []float64, sum *Posteriors) (int, error) {
	M := tr.m
	if len(logZ) != len(emits) || (marg != nil && len(marg) != len(emits)) {
		return -1, fmt.Errorf("engine: lockstep: %d chains, %d log Z, %d marginals", len(emits), len(logZ), len(marg))
	}
	o := lockOut{logZ: logZ, marg: marg}
	if sum != nil {
		if sum.Marginals != nil || sum.Edges != nil || sum.Tied != nil {
			return -1, fmt.Errorf("engine: lockstep sums transition, start and end counts only")
		}
		if err := sum.check(tr, 0, M); err != nil {
			return -1, err
		}
		o.trans, o.start, o.end = sum.Transitions, sum.Start, sum.End
	}
	for k, e := range emits {
		if len(e)%M != 0 {
			return k, fmt.Errorf("engine: %d emission scores is not a multiple of %d labels", len(e), M)
		}
		if marg != nil && marg[k] != nil && len(marg[k]) != len(e) {
			return k, fmt.Errorf("engine: Posteriors.Marginals has %d entries, want %d", len(marg[k]), len(e))
		}
	}
	return tr.lockstep(ws, emits, &o)
}

// The trainer's access to posteriorsLockstep (internal/lockplan.Posteriors):
// training policy, not part of the engine's API.
func init() {
	lockplan.RegisterPosteriors(func(tr *Transitions, ws *Workspace, emits, marg [][]float64, logZ, trans, start, end []float64) (int, error) {
		var sum *Posteriors
		if trans != nil || start != nil || end != nil {
			sum = &Posteriors{Transitions: trans, Start: start, End: end}
		}
		return tr.posteriorsLockstep(ws, emits, marg, logZ, sum)
	})
}
