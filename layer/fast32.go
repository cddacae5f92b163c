package layer

import (
	"unsafe"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// as32 returns s as a []float32 when F is float32 (no copy).
func as32[F float32 | float64](s []F) ([]float32, bool) {
	var z F
	if unsafe.Sizeof(z) != 4 || s == nil {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), true
}

// w32 is a worker's float32 scratch: the engine's, and the transition
// counts not yet in wbuf.gT.
type w32 struct {
	ws     engine.ScaledWork[float32]
	counts engine.Counts[float32]
	emits  [][]float32 // a lockstep group's chains
}

// flush32 adds a worker's float32 transition counts into its float64 sums.
func flush32(wb *wbuf) { wb.f32.counts.Flush(wb.gT, 1) }

// nll32 is the float32 path of NLL for sequence i; false: use float64.
func (r *runner[F]) nll32(wb *wbuf, i int) bool {
	M, L := r.M, int(r.lengths[i])
	off := i * r.T * M
	em := r.em32[off : off+L*M]
	p, w := r.p32, &wb.f32
	wantBeta := r.wantEmit || r.wantT || r.wantS || r.wantE
	var logZ float64
	var ok bool
	if r.wantT && L > 1 {
		// Counts in float32, carried from sequence to sequence and summed
		// into float64 every few transitions (engine.Counts).
		logZ, ok = p.ForwardCounts(&w.ws, em, &w.counts, wb.gT, 1)
	} else {
		logZ, ok = p.Forward(&w.ws, em, wantBeta)
	}
	if !ok {
		return false
	}
	tags := r.tags[i*r.T : i*r.T+L]
	r.addNLL(wb, i, logZ-goldScore(r.scores, em, tags, M))
	if !wantBeta {
		return true
	}
	alpha, beta := w.ws.Alpha(), w.ws.Beta()
	if r.wantEmit {
		d := r.out32[off : off+r.T*M]
		s := float32(r.scale)
		kernels.Mul32(d, alpha, beta, s)
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
	logZ, ok := r.p32.Forward(&wb.f32.ws, r.em32[off:off+L*M], true)
	if !ok {
		return false
	}
	d := r.out32[off : off+r.T*M]
	kernels.Mul32(d, wb.f32.ws.Alpha(), wb.f32.ws.Beta(), 1)
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
	path := r.paths[i*r.T : i*r.T+L]
	best, ok := r.p32.Viterbi(&wb.f32.ws, path, r.em32[off:off+L*M])
	if !ok {
		return false // NaN, +Inf or no labelling: the float64 path names it
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
