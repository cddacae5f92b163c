package layer

import (
	"math"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/sentinel"
)

// clamp64 is the float64 counterpart of engine.Scaled's sentinel handling:
// a transition matrix with finite sentinels (scores more than sentinel.Gap
// below their column's maximum: −1e4 … −1e9) sends every chain of the
// engine to the log domain (about 10× slower), because its column range
// exceeds what the scaled pass accepts. clamp64 holds the same scores with
// the sentinels at −Inf, which the scaled pass takes; a chain run on it is
// kept only when the labellings through sentinels weigh under e^-40 of Z.
type clamp64 struct {
	tr       *engine.Transitions // nil: no finite sentinels
	scores   []float64           // M×M, start, end with sentinels at −Inf
	colShift []float64           // column maxima (0 for an all −Inf column)
	minGap   float64
}

// build derives the clamped scores from sc (M×M, start, end).
func (k *clamp64) build(sc []float64, M int) error {
	k.minGap = math.Inf(1)
	k.scores = grow(k.scores, len(sc))
	k.colShift = grow(k.colShift, M)
	copy(k.scores, sc)
	for j := range M {
		c := math.Inf(-1)
		for i := range M {
			c = max(c, sc[i*M+j])
		}
		if math.IsInf(c, -1) {
			c = 0
		}
		k.colShift[j] = c
		for i := range M {
			if v := sc[i*M+j]; !math.IsInf(v, -1) && c-v > sentinel.Gap {
				k.minGap = min(k.minGap, c-v)
				k.scores[i*M+j] = math.Inf(-1)
			}
		}
	}
	if math.IsInf(k.minGap, 1) {
		return nil // nothing to clamp; k.tr is unused
	}
	s, st, en := k.scores[:M*M], k.scores[M*M:M*M+M], k.scores[M*M+M:]
	if k.tr == nil {
		var err error
		k.tr, err = engine.NewTransitionsWith(M, s, st, en, engine.Options{Structure: engine.Dense})
		return err
	}
	return k.tr.SetScores(s, st, en)
}

// active reports whether chains should try the clamped scores.
func (k *clamp64) active() bool { return k != nil && k.tr != nil && !math.IsInf(k.minGap, 1) }

// trusted reports whether log Z of the clamped chain emit (L×M) leaves out
// labellings of negligible weight: each scores at most shift − minGap,
// where shift bounds every labelling's score, and there are at most M^L.
func (k *clamp64) trusted(sc, emit []float64, L, M int, logZ float64) bool {
	shift := 0.0
	for t := range L {
		m := math.Inf(-1)
		for j, v := range emit[t*M : (t+1)*M] {
			if t == 0 {
				v += sc[M*M+j]
			} else {
				v += k.colShift[j]
			}
			if t == L-1 {
				v += sc[M*M+M+j]
			}
			m = max(m, v)
		}
		shift += m
	}
	return sentinel.Negligible(logZ, shift, k.minGap, L, M)
}

// nllClamped is NLL of sequence i on the clamped scores, with the gold
// score from the exact ones; false: run the exact path (nothing was
// accumulated).
func (r *runner[F]) nllClamped(ws *engine.Workspace, wb *wbuf, i int, emit []float64) bool {
	M, L := r.M, int(r.lengths[i])
	k := r.clamp
	var d []float64
	if r.wantEmit {
		d = r.direct(wb, i, false)
	}
	wb.cT, wb.cS, wb.cE = grow(wb.cT, M*M), grow(wb.cS, M), grow(wb.cE, M)
	clear(wb.cT)
	clear(wb.cS)
	clear(wb.cE)
	wb.posts = engine.Posteriors{Marginals: d}
	if r.wantT {
		wb.posts.Transitions = wb.cT
	}
	if r.wantS {
		wb.posts.Start = wb.cS
	}
	if r.wantE {
		wb.posts.End = wb.cE
	}
	logZ, err := k.tr.Posteriors(ws, emit, nil, &wb.posts)
	if err != nil || !k.trusted(r.scores, emit, L, M, logZ) {
		return false
	}
	tags := r.tags[i*r.T : i*r.T+L]
	r.addNLL(wb, i, logZ-goldScore(r.scores, emit, tags, M))
	if d != nil {
		for t, y := range tags {
			d[t*M+int(y)]--
		}
		r.put(i, d, r.scale)
	}
	if r.wantT {
		for t := 1; t < L; t++ {
			wb.cT[int(tags[t-1])*M+int(tags[t])]--
		}
		for k, c := range wb.cT {
			wb.gT[k] += c
		}
	}
	if r.wantS {
		wb.cS[tags[0]]--
		for k, c := range wb.cS {
			wb.gS[k] += c
		}
	}
	if r.wantE {
		wb.cE[tags[L-1]]--
		for k, c := range wb.cE {
			wb.gE[k] += c
		}
	}
	return true
}

// marginalsClamped is Marginals of sequence i on the clamped scores.
func (r *runner[F]) marginalsClamped(ws *engine.Workspace, wb *wbuf, i int, emit []float64) bool {
	M, L := r.M, int(r.lengths[i])
	d := r.direct(wb, i, false)
	wb.posts = engine.Posteriors{Marginals: d}
	logZ, err := r.clamp.tr.Posteriors(ws, emit, nil, &wb.posts)
	if err != nil || !r.clamp.trusted(r.scores, emit, L, M, logZ) {
		return false
	}
	r.put(i, d, 1)
	if r.logZ != nil {
		r.logZ[i] = logZ
	}
	return true
}
