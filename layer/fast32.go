package layer

import (
	"math"
	"unsafe"

	"github.com/simdcrf/simdcrf/kernels"
)

// prep32 holds the float32 forms of a CRF's scores that the float32 kernels
// read: E = exp(S − column maximum), computed in float64 and rounded, and
// its transpose; the scores and their transpose for Viterbi; the vectors
// ShiftRows32 adds to the first, middle (zeros) and last rows.
type prep32 struct {
	e, et, trans, transT []float32 // M×M
	start, zeros         []float32 // M (zeros: what the middle rows add)
	colEnd, startEnd     []float32 // M
	colRange             float64   // spread of the finite scores below their maximum, sentinels left out
	// minGap is the smallest shift − S_ij of the sentinels (entries more
	// than sentinelGap below the maximum; +Inf if none).
	minGap float64
	shift  float64 // the maximum score g: E = exp(S − g)
}

// sentinelGap is how far below the largest transition score one
// must be to count as a sentinel ("impossible", as −1e4 … −1e9 are meant):
// E = exp(S − g) is 0 for it in float32 anyway, so leaving it out of the
// range keeps such matrices on the float32 path; forward32 then
// checks that the labellings it drops weigh nothing (e^-40 of Z).
const sentinelGap = 1000

// countChunk is how many transitions' expected counts are summed in
// float32 before they are added to the float64 total.
const countChunk = 64

// maxOnly32 is the label count from which Decode runs ViterbiMax32 (no
// back-pointers), as the engine does in float64 (engine.maxOnlyLabels).
const maxOnly32 = 32

// as32 returns s as a []float32 when F is float32 (no copy).
func as32[F float32 | float64](s []F) ([]float32, bool) {
	var z F
	if unsafe.Sizeof(z) != 4 || s == nil {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), true
}

// build fills p from the float64 scores (M×M, start, end).
func (p *prep32) build(sc []float64, M int) {
	if len(p.e) != M*M {
		*p = prep32{e: make([]float32, M*M), et: make([]float32, M*M), trans: make([]float32, M*M), transT: make([]float32, M*M),
			start: make([]float32, M), zeros: make([]float32, M), colEnd: make([]float32, M), startEnd: make([]float32, M)}
	}
	S, st, en := sc[:M*M], sc[M*M:M*M+M], sc[M*M+M:]
	// One shift g for the whole matrix (its maximum), not one per column:
	// the middle rows then need nothing added to the emissions, so
	// ShiftRows32 rounds nothing there (column shifts added in float32
	// biased every position the same way: 1e-6 relative on the transition
	// counts of a long sequence).
	g := math.Inf(-1)
	for _, v := range S {
		g = max(g, v)
	}
	if math.IsInf(g, -1) {
		g = 0
	}
	p.shift = g
	p.colRange, p.minGap = 0, math.Inf(1)
	for i := range M {
		for j := range M {
			v := S[i*M+j]
			if gap := g - v; gap > sentinelGap {
				p.minGap = min(p.minGap, gap)
			} else {
				p.colRange = max(p.colRange, gap)
			}
			e := float32(math.Exp(v - g))
			p.e[i*M+j], p.et[j*M+i] = e, e
			p.trans[i*M+j], p.transT[j*M+i] = float32(v), float32(v)
		}
	}
	for j := range M {
		p.start[j] = float32(st[j])
		p.colEnd[j] = float32(en[j])
		p.startEnd[j] = float32(st[j] + en[j])
	}
}

// w32 is a worker's float32 scratch.
type w32 struct {
	psi, alpha, beta, work, s []float32 // T×M
	scale, mx, lo             []float32 // T
	g                         []float32 // M×M transition counts not yet in wbuf.gT
	gN                        int       // the transitions counted in g
	ones                      []float32 // M×M ones, for g's sum
	bp                        []int32   // T×M
}

// flush32 adds a worker's float32 transition counts into its float64 sums.
// The pair marginals of each transition sum to exactly 1, so the counts are
// rescaled to gN in all: float32 forward and backward bias the mass of every
// position alike (TestFloat32Long logs what remains).
func flush32(wb *wbuf) {
	w := &wb.f32
	if w.gN == 0 {
		return
	}
	if len(w.ones) != len(w.g) {
		w.ones = grow(w.ones, len(w.g))
		for k := range w.ones {
			w.ones[k] = 1
		}
	}
	tot := kernels.Dot32(w.g, w.ones) // summed in float64
	f := 1.0
	if tot > 0 {
		f = float64(w.gN) / tot
	}
	for k, v := range w.g {
		wb.gT[k] += float64(v) * f
	}
	clear(w.g)
	w.gN = 0
}

func (w *w32) grow(L, M int) {
	n := L * M
	w.psi, w.alpha, w.beta, w.work = grow(w.psi, n), grow(w.alpha, n), grow(w.beta, n), grow(w.work, n)
	w.scale, w.mx, w.lo = grow(w.scale, L), grow(w.mx, L), grow(w.lo, L)
}

// forward32 runs the scaled forward pass (and the backward pass if asked)
// of a sequence's float32 emissions em (L×M). It reports false when the
// float32 range does not suffice or the input needs the float64 path's
// checks (NaN, ±Inf emissions, no labelling); the caller then runs that.
func (p *prep32) forward32(w *w32, em []float32, L, M int, backward bool) (float64, bool) {
	w.grow(L, M)
	if !(kernels.Dot32(em, em) <= math.MaxFloat64) {
		return 0, false
	}
	psi, mx, lo := w.psi[:L*M], w.mx[:L], w.lo[:L]
	if L == 1 {
		kernels.ShiftRows32(psi, mx, lo, em, p.startEnd, 1, M)
	} else {
		kernels.ShiftRows32(psi, mx, lo, em, p.start, 1, M)
		if L > 2 {
			kernels.ShiftRows32(psi[M:], mx[1:], lo[1:], em[M:], p.zeros, L-2, M)
		}
		last := (L - 1) * M
		kernels.ShiftRows32(psi[last:], mx[L-1:], lo[L-1:], em[last:], p.colEnd, 1, M)
	}
	shift := float64(L-1) * p.shift
	for t, m := range mx {
		if !(float64(m-lo[t])+p.colRange < kernels.ScaledRange32) || math.IsInf(float64(m), 0) {
			return 0, false
		}
		shift += float64(m)
	}
	kernels.Exp32(psi, psi)
	alpha, scale := w.alpha[:L*M], w.scale[:L]
	kernels.Forward32(alpha, scale, psi, p.e, L, M)
	logZ := shift
	for _, s := range scale {
		if !(s > 0) {
			return 0, false
		}
		logZ += math.Log(float64(s))
	}
	// Every labelling scores at most shift (S_ij ≤ g), one through a
	// sentinel at most shift − minGap, and there are at most M^L of them:
	// they may be left out when that bound is far below log Z. (−Inf
	// entries have an infinite gap: nothing to check.)
	if !math.IsInf(p.minGap, 1) && logZ < shift-p.minGap+float64(L)*math.Log(float64(M))+40 {
		return 0, false
	}
	if backward {
		kernels.Backward32(w.beta[:L*M], scale, psi, p.et, L, M)
	}
	return logZ, true
}

// nll32 is the float32 path of NLL for sequence i; false: use float64.
func (r *runner[F]) nll32(wb *wbuf, i int) bool {
	M, L := r.M, int(r.lengths[i])
	off := i * r.T * M
	em := r.em32[off : off+L*M]
	p, w := r.p32, &wb.f32
	wantBeta := r.wantEmit || r.wantT || r.wantS || r.wantE
	logZ, ok := p.forward32(w, em, L, M, wantBeta)
	if !ok {
		return false
	}
	tags := r.tags[i*r.T : i*r.T+L]
	r.addNLL(wb, i, logZ-goldScore(r.scores, em, tags, M))
	if !wantBeta {
		return true
	}
	alpha, beta := w.alpha[:L*M], w.beta[:L*M]
	if r.wantEmit {
		d := r.out32[off : off+r.T*M]
		s := float32(r.scale)
		dd, bb := d[:len(alpha)], beta[:len(alpha)] // no bounds checks in the loop
		for k, a := range alpha {
			dd[k] = a * bb[k] * s
		}
		for t, y := range tags {
			d[t*M+int(y)] -= s
		}
		clear(d[L*M:])
	}
	if r.wantS {
		for j := range M {
			wb.gS[j] += float64(alpha[j] * beta[j])
		}
		wb.gS[tags[0]]--
	}
	if r.wantE {
		last := (L - 1) * M
		for j := range M {
			wb.gE[j] += float64(alpha[last+j] * beta[last+j])
		}
		wb.gE[tags[L-1]]--
	}
	if r.wantT && L > 1 {
		// Counts in float32, carried from sequence to sequence and summed
		// into float64 every countChunk transitions (flush32): one float32
		// sum over many drifts, and a float64 pass over M×M per sequence
		// cost as much as the counts themselves at M = 45.
		if len(w.g) != M*M {
			w.g, w.gN = grow(w.g, M*M), 0
			clear(w.g)
		}
		psi, scale, work := w.psi[:L*M], w.scale[:L], w.work[:L*M]
		for a := 0; a < L-1; a += countChunk {
			n := min(countChunk, L-1-a) + 1 // positions a..a+n−1: n−1 transitions
			kernels.Transitions32(w.g, p.e, alpha[a*M:(a+n)*M], beta[a*M:(a+n)*M], psi[a*M:(a+n)*M], scale[a:a+n], work[:n*M], n, M)
			if w.gN += n - 1; w.gN >= countChunk {
				flush32(wb)
			}
		}
		for t := 1; t < L; t++ {
			wb.gT[int(tags[t-1])*M+int(tags[t])]--
		}
	}
	return true
}

// marginals32 is the float32 path of Marginals for sequence i.
func (r *runner[F]) marginals32(wb *wbuf, i int) bool {
	M, L := r.M, int(r.lengths[i])
	off := i * r.T * M
	logZ, ok := r.p32.forward32(&wb.f32, r.em32[off:off+L*M], L, M, true)
	if !ok {
		return false
	}
	d := r.out32[off : off+r.T*M]
	alpha := wb.f32.alpha[:L*M]
	dd, beta := d[:len(alpha)], wb.f32.beta[:len(alpha)]
	for k, a := range alpha {
		dd[k] = a * beta[k]
	}
	clear(d[L*M:])
	if r.logZ != nil {
		r.logZ[i] = logZ
	}
	return true
}

// decode32 is the float32 path of Decode for sequence i.
func (r *runner[F]) decode32(wb *wbuf, i int) bool {
	M, L := r.M, int(r.lengths[i])
	off := i * r.T * M
	p, w := r.p32, &wb.f32
	w.s = grow(w.s, L*M)
	w.alpha = grow(w.alpha, L*M) // δ
	s := w.s[:L*M]
	for k, v := range r.em32[off : off+L*M] {
		if !(v <= math.MaxFloat32) { // NaN or +Inf: the float64 path's error
			return false
		}
		s[k] = v
	}
	for j := range M {
		s[j] += p.start[j]
		s[(L-1)*M+j] += float32(r.scores[M*M+M+j])
	}
	path := r.paths[i*r.T : i*r.T+L]
	var best float32
	if M >= maxOnly32 {
		best = kernels.ViterbiMax32(path, w.alpha[:L*M], s, p.trans, p.transT, L, M)
	} else {
		w.bp = grow(w.bp, L*M)
		best = kernels.Viterbi32(path, w.alpha[:L*M], w.bp, s, p.trans, L, M)
	}
	if math.IsInf(float64(best), -1) {
		return false // no labelling: the float64 path names it
	}
	for t := L; t < r.T; t++ {
		r.paths[i*r.T+t] = -1
	}
	if r.scoresF != nil {
		r.scoresF[i] = F(best)
	}
	return true
}

// goldScore returns the score of the labelling tags under the scores sc
// (M×M transitions, then start and end) and the emissions em (L×M).
func goldScore[E float32 | float64](sc []float64, em []E, tags []int32, M int) float64 {
	L := len(tags)
	score := sc[M*M+int(tags[0])] + sc[M*M+M+int(tags[L-1])]
	for t, y := range tags {
		score += float64(em[t*M+int(y)])
		if t > 0 {
			score += sc[int(tags[t-1])*M+int(y)]
		}
	}
	return score
}

// addNLL adds sequence i's NLL v to worker wb's sum and to perSeq.
func (r *runner[F]) addNLL(wb *wbuf, i int, v float64) {
	wb.nll += v
	if r.perSeq != nil {
		r.perSeq[i] = v
	}
}
