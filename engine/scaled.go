package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/internal/sentinel"
	"github.com/simdcrf/simdcrf/kernels"
)

// Scaled is a dense transition matrix in the scaled probability domain, in
// precision E, for callers that hold their emissions in E and run many
// chains on one matrix: the CRF layer (package layer) and the float32
// trainer. It runs forward–backward (Forward, AddCounts), lockstep groups
// (Lockstep) and Viterbi on the kernels of E. A chain it cannot hold (the
// checks of Forward) is the caller's to run on a Transitions in float64,
// whose errors name what is wrong.
//
// Its shift rule: one shift g for the whole matrix (its maximum), E =
// exp(S − g), not one per column as Transitions: the middle rows then need
// nothing added to the emissions, so ShiftRows rounds nothing there
// (column shifts added in float32 biased every position the same way: 1e-6
// relative on the transition counts of a long sequence). Scores more than
// sentinel.Gap below g are sentinels: left out of the range, and checked
// by sentinel.Negligible after the forward pass.
//
// A Scaled may be shared by goroutines that do not call Set; each uses its
// own ScaledWork.
type Scaled[E Float] struct {
	m             int
	f             scaledForm[E]
	trans, transT []E // S and Sᵀ (Viterbi)
}

// scaledForm is what the scaled forward pass of a dense chain reads, in
// Transitions' float64 form (column shifts) or Scaled's (one shift).
type scaledForm[E Float] struct {
	e, et []E // E = exp(S − shift) and Eᵀ, M×M
	// What ShiftRows adds to a chain's rows: the first, the middle ones,
	// the last, and the one of a chain of one position.
	start, mid, end, startEnd []E
	g                         float64 // the shift of every position after the first beyond its row maximum
	colRange                  float64 // added to a row's spread in the range test
	minGap                    float64 // the smallest sentinel gap (+Inf: none)
	limit                     float64 // the widest spread the kernels of E hold
}

// fits is the range test of the scaled passes: a position whose scores
// spread wider than limit (or NaN) goes to another path.
func fits(spread, limit float64) bool { return spread <= limit }

// rowFits applies fits to a row of maximum m and smallest finite entry lo
// (a row with no finite entry fails).
func (f *scaledForm[E]) rowFits(m, lo E) bool {
	return !math.IsInf(float64(m), 0) && fits(float64(m-lo)+f.colRange, f.limit)
}

// offsets returns what ShiftRows adds to row t of a chain of L positions.
func (f *scaledForm[E]) offsets(t, L int) []E {
	switch {
	case L == 1:
		return f.startEnd
	case t == 0:
		return f.start
	case t == L-1:
		return f.end
	}
	return f.mid
}

// shiftRows sets psi (L×M) to the emissions em plus the form's offsets,
// each row less its maximum, and mx and lo to the rows' maxima and
// smallest finite entries (kernels.ShiftRows).
func (f *scaledForm[E]) shiftRows(psi, mx, lo, em []E, L, M int) {
	if L == 1 {
		kShiftRows(psi, mx, lo, em, f.startEnd, 1, M)
		return
	}
	kShiftRows(psi, mx, lo, em, f.start, 1, M)
	if L > 2 {
		kShiftRows(psi[M:], mx[1:], lo[1:], em[M:], f.mid, L-2, M)
	}
	last := (L - 1) * M
	kShiftRows(psi[last:], mx[L-1:], lo[L-1:], em[last:], f.end, 1, M)
}

// Set makes p the form of the scores sc (M×M transitions, then M start and
// M end scores, float64).
func (p *Scaled[E]) Set(sc []float64, M int) {
	if p.m != M || len(p.f.e) != M*M {
		*p = Scaled[E]{m: M, trans: make([]E, M*M), transT: make([]E, M*M), f: scaledForm[E]{
			e: make([]E, M*M), et: make([]E, M*M), start: make([]E, M), mid: make([]E, M), end: make([]E, M), startEnd: make([]E, M)}}
	}
	f := &p.f
	f.limit = scaledRange
	if is32[E]() {
		f.limit = kernels.ScaledRange32
	}
	S, st, en := sc[:M*M], sc[M*M:M*M+M], sc[M*M+M:M*M+2*M]
	g := math.Inf(-1)
	for _, v := range S {
		g = max(g, v)
	}
	if math.IsInf(g, -1) {
		g = 0
	}
	f.g = g
	f.colRange, f.minGap = 0, math.Inf(1)
	for i := range M {
		for j := range M {
			v := S[i*M+j]
			if gap := g - v; gap > sentinel.Gap {
				f.minGap = min(f.minGap, gap)
			} else {
				f.colRange = max(f.colRange, gap)
			}
			// exp in float64, rounded once: its rounding repeats at every
			// position.
			e := E(math.Exp(v - g))
			f.e[i*M+j], f.et[j*M+i] = e, e
			p.trans[i*M+j], p.transT[j*M+i] = E(v), E(v)
		}
	}
	for j := range M {
		f.start[j] = E(st[j])
		f.end[j] = E(en[j])
		f.startEnd[j] = E(st[j] + en[j])
	}
}

// Labels returns M.
func (p *Scaled[E]) Labels() int { return p.m }

// ScaledWork is one goroutine's scratch for a Scaled: the last chain's
// forward–backward, a lockstep group's, Viterbi's. The zero value is ready.
type ScaledWork[E Float] struct {
	psi, alpha, beta, work, s []E // T×M
	scale, mx, lo             []E // T
	bp                        []int32
	ones                      []E // 1s, for noNaNPosInf's sum
	n                         int // T×M of the last Forward
	lock                      lockGroup[E]
}

func (w *ScaledWork[E]) grow(L, M int) {
	n := L * M
	w.psi, w.alpha, w.beta, w.work = grow(w.psi, n), grow(w.alpha, n), grow(w.beta, n), grow(w.work, n)
	w.scale, w.mx, w.lo = grow(w.scale, L), grow(w.mx, L), grow(w.lo, L)
	w.n = n
}

// Alpha and Beta return the scaled α and β (T×M) of the last Forward: the
// marginals are α∘β, the start counts α_0∘β_0, the end counts those of the
// last row.
func (w *ScaledWork[E]) Alpha() []E { return w.alpha[:w.n] }

// Beta: see Alpha (valid when Forward ran the backward pass).
func (w *ScaledWork[E]) Beta() []E { return w.beta[:w.n] }

// Forward runs the scaled forward pass over the emissions em (T×M, T ≥ 1),
// and the backward pass if asked, and returns log Z (summed in float64).
// It reports false when the chain needs the float64 path of a Transitions:
// NaN or ±Inf emissions, a spread beyond the range of E, a scale of 0 (no
// labelling, or underflow), or sentinels whose labellings may weigh.
func (p *Scaled[E]) Forward(w *ScaledWork[E], em []E, backward bool) (float64, bool) {
	return p.forward(w, em, backward, nil, nil, 0)
}

// ForwardCounts is Forward with the backward pass, followed by AddCounts
// (c, dst, weight), in fewer passes: a chain of up to countChunk
// transitions gets its counts from the backward pass itself
// (kernels.BackwardTransitions). Nothing is added when it reports false.
func (p *Scaled[E]) ForwardCounts(w *ScaledWork[E], em []E, c *Counts[E], dst []float64, weight float64) (float64, bool) {
	return p.forward(w, em, true, c, dst, weight)
}

func (p *Scaled[E]) forward(w *ScaledWork[E], em []E, backward bool, c *Counts[E], dst []float64, weight float64) (float64, bool) {
	M := p.m
	L := len(em) / M
	w.grow(L, M)
	if !(kDot(em, em) <= math.MaxFloat64) {
		return 0, false
	}
	f := &p.f
	psi, mx, lo := w.psi[:L*M], w.mx[:L], w.lo[:L]
	f.shiftRows(psi, mx, lo, em, L, M)
	shift := float64(L-1) * f.g
	for t, m := range mx {
		if !f.rowFits(m, lo[t]) {
			return 0, false
		}
		shift += float64(m)
	}
	kExp(psi, psi)
	alpha, scale := w.alpha[:L*M], w.scale[:L]
	kForward(alpha, scale, psi, f.e, L, M)
	ls, ok := sumLogs(scale)
	if !ok {
		return 0, false
	}
	logZ := shift + ls
	// Every labelling scores at most shift (S_ij ≤ g), one through a
	// sentinel at most shift − minGap.
	if !sentinel.Negligible(logZ, shift, f.minGap, L, M) {
		return 0, false
	}
	switch {
	case c != nil && L > 1 && L-1 <= countChunk:
		c.size(M)
		kBackwardTransitions(c.g, f.e, alpha, w.beta[:L*M], psi, scale, f.et, w.work[:L*M], L, M)
		if c.n += L - 1; c.full() {
			c.Flush(dst, weight)
		}
	case backward:
		kBackward(w.beta[:L*M], scale, psi, f.et, L, M)
		if c != nil {
			p.AddCounts(w, c, dst, weight)
		}
	}
	return logZ, true
}

// countChunk is how many transitions' expected counts are summed in E
// before they are added to the float64 total (Counts.Flush): one float32
// sum over many drifts, and a float64 pass over M×M per sequence cost as
// much as the counts themselves at M = 45.
const countChunk = 64

// Counts is a running sum of expected transition counts (M×M) in precision
// E, carried from chain to chain and added into a float64 total every
// Every transitions or so (0: countChunk).
type Counts[E Float] struct {
	// Every is the caller's trade of accuracy for speed: the float32
	// trainer flushes every 256 transitions (a flush costs M² float64
	// adds: at 64, 2% of an evaluation on CoNLL-2000), the CRF layer every
	// countChunk.
	Every   int
	g, ones []E
	n       int // the transitions counted in g
}

// full reports whether c holds enough transitions to flush.
func (c *Counts[E]) full() bool { return c.n >= c.every() }

// every is how many transitions c sums before a flush.
func (c *Counts[E]) every() int {
	if c.Every > 0 {
		return c.Every
	}
	return countChunk
}

func (c *Counts[E]) size(M int) {
	if len(c.g) != M*M {
		c.g, c.n = grow(c.g, M*M), 0
		clear(c.g)
	}
}

// Reset drops what c holds.
func (c *Counts[E]) Reset() {
	clear(c.g)
	c.n = 0
}

// Flush adds weight times the counts into dst (M×M) and clears them. The
// pair marginals of each transition sum to exactly 1, so the counts are
// rescaled to the number of transitions in all: float32 forward and
// backward bias the mass of every position alike.
func (c *Counts[E]) Flush(dst []float64, weight float64) {
	if c.n == 0 {
		return
	}
	tot := kDot(c.g, onesOf(&c.ones, len(c.g))) // summed in float64
	f := weight
	if tot > 0 {
		f *= float64(c.n) / tot
	}
	kAxpyWiden(f, c.g, dst)
	c.Reset()
}

// AddCounts adds the expected transition counts of the chain of the last
// Forward (with the backward pass) into c, countChunk transitions per
// kernel call, flushing c into dst (× weight) whenever it is full
// (Counts.Every).
func (p *Scaled[E]) AddCounts(w *ScaledWork[E], c *Counts[E], dst []float64, weight float64) {
	M := p.m
	L := w.n / M
	c.size(M)
	alpha, beta, psi, scale, work := w.alpha, w.beta, w.psi, w.scale, w.work
	for a := 0; a < L-1; a += countChunk {
		n := min(countChunk, L-1-a) + 1 // positions a..a+n−1: n−1 transitions
		kTransitions(c.g, p.f.e, alpha[a*M:(a+n)*M], beta[a*M:(a+n)*M], psi[a*M:(a+n)*M], scale[a:a+n], work[:n*M], n, M)
		if c.n += n - 1; c.full() {
			c.Flush(dst, weight)
		}
	}
}

// maxOnlyScaled is the label count from which Scaled.Viterbi runs
// ViterbiMax (no back-pointers), as Transitions.Viterbi does (maxOnlyLabels).
const maxOnlyScaled = maxOnlyLabels

// Viterbi writes the best labelling of the emissions em (T×M) to path and
// returns its score; false (path unset) when an emission is NaN or +Inf or
// no labelling is possible: the float64 path names those.
func (p *Scaled[E]) Viterbi(w *ScaledWork[E], path []int32, em []E) (float64, bool) {
	M := p.m
	L := len(em) / M
	w.s = grow(w.s, L*M)
	w.alpha = grow(w.alpha, L*M) // δ
	s := w.s[:L*M]
	if !noNaNPosInf(em, &w.ones) {
		return 0, false
	}
	copy(s, em)
	for j := range M {
		s[j] += p.f.start[j]
		s[(L-1)*M+j] += p.f.end[j]
	}
	var best float64
	if M >= maxOnlyScaled {
		best = kViterbiMax(path, w.alpha[:L*M], s, p.trans, p.transT, L, M)
	} else {
		w.bp = grow(w.bp, L*M)
		best = kViterbi(path, w.alpha[:L*M], w.bp, s, p.trans, L, M)
	}
	if math.IsInf(best, -1) {
		return 0, false
	}
	return best, true
}

// Lockstep runs the chains emits (T_k×M each, T_k ≥ 1) as one lockstep
// group: the forward pass, and the backward pass if asked; with c not nil
// the group's transition counts go into c (flushed into dst as AddCounts
// does). A chain the group cannot hold (Forward's checks) is left out:
// GroupChain reports it, and the caller runs it alone.
func (p *Scaled[E]) Lockstep(w *ScaledWork[E], emits [][]E, backward bool, c *Counts[E], dst []float64) {
	M, K := p.m, len(emits)
	T := 0
	for _, e := range emits {
		T = max(T, len(e)/M)
	}
	lb := &w.lock
	lb.grow(T, K, M, true, backward)
	lb.logZ = grow(lb.logZ, K)
	lb.T, lb.K, lb.M = T, K, M
	if !lb.forward(&p.f, emits, T, K, M, lb.logZ) || !backward {
		return
	}
	lb.backward(&p.f, T, K, M, c != nil)
	if c != nil && T > 1 {
		c.size(M)
		lb.countsChunked(p.f.e, c, dst, T, K, M)
	}
}

// GroupChain reports whether chain k of the last Lockstep ran, and its log
// Z.
func (w *ScaledWork[E]) GroupChain(k int) (logZ float64, ok bool) {
	lb := &w.lock
	if int(lb.pad[k]) >= lb.T {
		return 0, false
	}
	return lb.logZ[k], true
}

// GroupRow returns α and β (M each) of position t of chain k of the last
// Lockstep (with the backward pass; a chain that ran).
func (w *ScaledWork[E]) GroupRow(k, t int) (alpha, beta []E) {
	lb := &w.lock
	r := ((t+lb.first(k))*lb.K + k) * lb.M
	return lb.alpha[r : r+lb.M], lb.beta[r : r+lb.M]
}
