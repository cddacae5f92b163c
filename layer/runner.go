package layer

import (
	"math"
	"sync/atomic"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/lockplan"
)

// pathTally counts which path answered each sequence: the float32 kernels,
// the clamped scores (sentinel.go), the exact float64 engine, or the
// engine's lockstep groups (lockstep.go). The
// fallbacks give the same answers, so only a count tells a test that the
// path it means to check ran. tally is nil outside such tests.
type pathTally struct{ fast32, clamped, exact, lockstep atomic.Int64 }

var tally *pathTally

// runner is the state of one call: a worker pool, per-worker buffers, and
// the call's arguments, which the workers read. A CRF keeps idle runners for
// reuse, so a call allocates nothing once they have grown.
type runner[F float32 | float64] struct {
	pool    *engine.Pool
	fn      func(ws *engine.Workspace, w, i int) error // r.do, made once
	blockFn func(ws *engine.Workspace, w, i int) error // r.doBlock
	blocks  []int                                      // worker w's sequences: blocks[w]..blocks[w+1]-1
	w       []wbuf
	tr      *engine.Transitions // the CRF's, or trMask under constraints
	version int                 // of the CRF's scores
	scores  []float64           // the CRF's float64 scores (M×M, start, end)

	// Constrained transitions, cached by mask and scores version.
	trMask      *engine.Transitions
	maskVersion int
	maskCopy    []bool
	maskScores  []float64

	// The float32 kernels' forms of the scores (nil for float64), and
	// whether this call may use them (no constraints).
	p32  *engine.Scaled[float32]
	fast bool
	// The scores with transition sentinels at −Inf (float64 path), and
	// whether this call may use them (no constraints).
	clamp    *clamp64
	useClamp bool
	lock     lockBufs // the lockstep path's scratch
	plan     lockplan.Plan
	unitFn   func(ws *engine.Workspace, w, u int) error // r.doUnit

	// The call.
	op       int
	M, T, K  int
	lengths  []int32
	em       []F       // emissions
	em64     []float64 // the same when F is float64
	em32     []float32 // or float32
	tags     []int32
	labels   []bool // Constraints.Labels
	perSeq   []float64
	logZ     []float64
	paths    []int32
	scoresF  []F
	outF     []F       // marginals or emission gradient
	out64    []float64 // the same when F is float64
	out32    []float32 // or float32
	scale    float64   // of the emission gradient
	wantT    bool      // transition gradient
	wantS    bool
	wantE    bool
	wantEmit bool
}

const (
	opNLL = iota
	opDecode
	opMarginals
	opNBest
	opPartial
)

// wbuf is one worker's scratch and accumulators, on its own cache lines.
type wbuf struct {
	e, out, out2  []float64 // T×M
	gT, gS, gE    []float64 // gradient sums (M×M, M, M)
	gTA, gSA, gEA []float64 // the restricted chain's, for opPartial
	nll           float64
	opts          engine.ChainOptions
	allowed       [][]int32
	allowedBuf    []int32
	nbPaths       [][]int32
	nbBuf         []int32
	nbScores      []float64
	posts, postsA engine.Posteriors
	grad          engine.Gradient
	cT, cS, cE    []float64 // one sequence's counts on clamped scores
	f32           w32
	_             [64]byte
}

func newRunner[F float32 | float64](threads int) *runner[F] {
	r := &runner[F]{pool: engine.NewPool(threads)}
	r.w = make([]wbuf, r.pool.Threads())
	r.fn = r.do
	r.blockFn = r.doBlock
	r.unitFn = r.doUnit
	r.blocks = make([]int, r.pool.Threads()+1)
	return r
}

// clearRefs drops the references to the caller's slices.
func (r *runner[F]) clearRefs() {
	r.lengths, r.em, r.em64, r.tags, r.labels = nil, nil, nil, nil, nil
	r.perSeq, r.logZ, r.paths, r.scoresF, r.outF, r.out64 = nil, nil, nil, nil, nil, nil
	r.em32, r.out32 = nil, nil
	r.tr, r.scores = nil, nil
	clear(r.lock.emits)
	clear(r.lock.outs)
	clear(r.lock.labels)
}

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n, n+n/4)
	}
	return s[:n]
}

// setBatch points the runner at a batch.
func (r *runner[F]) setBatch(b *Batch[F], M int) {
	r.M, r.T, r.lengths = M, b.T, b.Lengths
	r.em = b.Emissions
	r.em64, _ = as64(b.Emissions)
	r.em32, _ = as32(b.Emissions)
}

// emit returns sequence i's emissions as float64 (widened into wb.e for
// float32).
func (r *runner[F]) emit(wb *wbuf, i int) []float64 {
	off, n := i*r.T*r.M, int(r.lengths[i])*r.M
	if r.em64 != nil {
		return r.em64[off : off+n]
	}
	wb.e = grow(wb.e, n)
	src := r.em[off : off+n]
	for k, v := range src {
		wb.e[k] = float64(v)
	}
	return wb.e
}

// resetSums clears the per-worker gradient accumulators.
func (r *runner[F]) resetSums(partial bool) {
	M := r.M
	for w := range r.w {
		wb := &r.w[w]
		wb.nll = 0
		wb.gT, wb.gS, wb.gE = grow(wb.gT, M*M), grow(wb.gS, M), grow(wb.gE, M)
		clear(wb.gT)
		wb.f32.counts.Reset()
		clear(wb.gS)
		clear(wb.gE)
		if partial {
			wb.gTA, wb.gSA, wb.gEA = grow(wb.gTA, M*M), grow(wb.gSA, M), grow(wb.gEA, M)
			clear(wb.gTA)
			clear(wb.gSA)
			clear(wb.gEA)
		}
	}
}

// options returns the chain options of sequence i under Constraints.Labels,
// or nil.
func (r *runner[F]) options(wb *wbuf, i int) *engine.ChainOptions {
	if r.labels == nil {
		return nil
	}
	M, L := r.M, int(r.lengths[i])
	wb.allowed = grow(wb.allowed, L)
	wb.allowedBuf = grow(wb.allowedBuf, L*M)
	any := false
	for t := range L {
		row := r.labels[(i*r.T+t)*M : (i*r.T+t+1)*M]
		set := wb.allowedBuf[t*M : t*M]
		for j, ok := range row {
			if ok {
				set = append(set, int32(j))
			}
		}
		if len(set) == M {
			wb.allowed[t] = nil
		} else {
			wb.allowed[t] = set
			any = true
		}
	}
	if !any {
		return nil
	}
	wb.opts = engine.ChainOptions{Allowed: wb.allowed}
	return &wb.opts
}

// put writes a T×M float64 result of sequence i (n = L·M entries) to the
// output, scaled, with zeros beyond the length.
func (r *runner[F]) put(i int, src []float64, scale float64) {
	off, n, end := i*r.T*r.M, len(src), (i+1)*r.T*r.M
	if r.out64 != nil {
		dst := r.out64[off : off+n]
		if &dst[0] != &src[0] || scale != 1 {
			for k, v := range src {
				dst[k] = v * scale
			}
		}
		clear(r.out64[off+n : end])
		return
	}
	dst := r.outF[off : off+n]
	for k, v := range src {
		dst[k] = F(v * scale)
	}
	clear(r.outF[off+n : end])
}

// direct returns the float64 output slice of sequence i when results can be
// written in place (F is float64), else a worker buffer.
func (r *runner[F]) direct(wb *wbuf, i int, second bool) []float64 {
	n := int(r.lengths[i]) * r.M
	if r.out64 != nil && !second {
		off := i * r.T * r.M
		return r.out64[off : off+n]
	}
	if second {
		wb.out2 = grow(wb.out2, n)
		return wb.out2
	}
	wb.out = grow(wb.out, n)
	return wb.out
}

// setBlocks splits the batch into one contiguous block of sequences per
// worker with about the same number of positions each: the sums a worker
// accumulates are then the same on every run (for a thread count), and
// ragged lengths do not leave a worker idle.
func (r *runner[F]) setBlocks() {
	W := len(r.blocks) - 1
	total := 0
	for _, l := range r.lengths {
		total += int(l)
	}
	acc, b := 0, 0
	r.blocks[0] = 0
	for w := 1; w <= W; w++ {
		target := (total*w + W/2) / W
		for b < len(r.lengths) && acc+int(r.lengths[b])/2 < target {
			acc += int(r.lengths[b])
			b++
		}
		if w == W {
			b = len(r.lengths)
		}
		r.blocks[w] = b
	}
}

// doBlock runs worker i's block (Pool.Run over W indices gives index i to
// worker i).
func (r *runner[F]) doBlock(ws *engine.Workspace, w, i int) error {
	for k := r.blocks[i]; k < r.blocks[i+1]; k++ {
		if err := r.do(ws, w, k); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner[F]) do(ws *engine.Workspace, w, i int) error {
	wb := &r.w[w]
	if r.fast {
		switch {
		case r.op == opNLL && r.nll32(wb, i),
			r.op == opDecode && r.decode32(wb, i),
			r.op == opMarginals && r.marginals32(wb, i):
			if tally != nil {
				tally.fast32.Add(1)
			}
			return nil
		}
	}
	emit := r.emit(wb, i)
	L := int(r.lengths[i])
	if r.useClamp {
		switch {
		case r.op == opNLL && r.nllClamped(ws, wb, i, emit),
			r.op == opMarginals && r.marginalsClamped(ws, wb, i, emit):
			if tally != nil {
				tally.clamped.Add(1)
			}
			return nil
		}
	}
	if tally != nil {
		tally.exact.Add(1)
	}
	switch r.op {
	case opNLL:
		wb.grad = engine.Gradient{}
		if r.wantT {
			wb.grad.DTrans = wb.gT
		}
		if r.wantS {
			wb.grad.DStart = wb.gS
		}
		if r.wantE {
			wb.grad.DEnd = wb.gE
		}
		var d []float64
		if r.wantEmit {
			d = r.direct(wb, i, false)
			clear(d)
			wb.grad.DEmit = d
		}
		v, err := r.tr.NLL(ws, emit, r.tags[i*r.T:i*r.T+L], nil, &wb.grad)
		if err != nil {
			return seqErr(i, err)
		}
		r.addNLL(wb, i, v)
		if d != nil {
			r.put(i, d, r.scale)
		}
	case opDecode:
		path := r.paths[i*r.T : i*r.T+L]
		v, err := r.tr.Viterbi(ws, emit, r.options(wb, i), path)
		if err != nil {
			return seqErr(i, err)
		}
		for t := L; t < r.T; t++ {
			r.paths[i*r.T+t] = -1
		}
		if r.scoresF != nil {
			r.scoresF[i] = F(v)
		}
	case opMarginals:
		d := r.direct(wb, i, false)
		wb.posts = engine.Posteriors{Marginals: d}
		z, err := r.tr.Posteriors(ws, emit, r.options(wb, i), &wb.posts)
		if err != nil {
			return seqErr(i, err)
		}
		r.put(i, d, 1)
		if r.logZ != nil {
			r.logZ[i] = z
		}
	case opNBest:
		K := r.K
		wb.nbPaths = grow(wb.nbPaths, K)
		wb.nbBuf = grow(wb.nbBuf, K*L)
		wb.nbScores = grow(wb.nbScores, K)
		for k := range K {
			wb.nbPaths[k] = wb.nbBuf[k*L : (k+1)*L]
		}
		n, err := r.tr.NBest(ws, emit, r.options(wb, i), wb.nbPaths, wb.nbScores)
		if err == nil && n == 0 {
			err = engine.ErrNoLabelling
		}
		if err != nil {
			return seqErr(i, err)
		}
		for k := range K {
			dst := r.paths[(i*K+k)*r.T : (i*K+k+1)*r.T]
			if k < n {
				copy(dst, wb.nbPaths[k])
			} else {
				for t := range L {
					dst[t] = -1
				}
			}
			for t := L; t < r.T; t++ {
				dst[t] = -1
			}
			if r.scoresF != nil {
				if k < n {
					r.scoresF[i*K+k] = F(wb.nbScores[k])
				} else {
					r.scoresF[i*K+k] = F(math.Inf(-1))
				}
			}
		}
	case opPartial:
		// −log p(labels ∈ allowed) = log Z − log Z_allowed; its gradient is
		// the marginals minus the restricted chain's marginals.
		var full, restr []float64
		if r.wantEmit {
			full = r.direct(wb, i, false)
			restr = r.direct(wb, i, true)
		}
		wb.posts = engine.Posteriors{Marginals: full}
		wb.postsA = engine.Posteriors{Marginals: restr}
		if r.wantT {
			wb.posts.Transitions, wb.postsA.Transitions = wb.gT, wb.gTA
		}
		if r.wantS {
			wb.posts.Start, wb.postsA.Start = wb.gS, wb.gSA
		}
		if r.wantE {
			wb.posts.End, wb.postsA.End = wb.gE, wb.gEA
		}
		z, err := r.tr.Posteriors(ws, emit, nil, &wb.posts)
		if err != nil {
			return seqErr(i, err)
		}
		za, err := r.tr.Posteriors(ws, emit, r.options(wb, i), &wb.postsA)
		if err != nil {
			return seqErr(i, err)
		}
		r.addNLL(wb, i, z-za)
		if full != nil {
			for k, a := range restr {
				full[k] -= a
			}
			r.put(i, full, r.scale)
		}
	}
	return nil
}

// sums adds the workers' accumulators in worker order (deterministic for a
// fixed number of threads) and writes the scaled gradients to g.
func sums[F float32 | float64](r *runner[F], g *Grad[F], partial bool) float64 {
	total := 0.0
	for w := range r.w {
		total += r.w[w].nll
		flush32(&r.w[w])
	}
	if g == nil {
		return total
	}
	out := func(dst []F, pick func(wb *wbuf) ([]float64, []float64)) {
		if dst == nil {
			return
		}
		for k := range dst {
			s := 0.0
			for w := range r.w {
				a, b := pick(&r.w[w])
				s += a[k]
				if partial {
					s -= b[k]
				}
			}
			dst[k] = F(s * r.scale)
		}
	}
	out(g.Trans, func(wb *wbuf) ([]float64, []float64) { return wb.gT, wb.gTA })
	out(g.Start, func(wb *wbuf) ([]float64, []float64) { return wb.gS, wb.gSA })
	out(g.End, func(wb *wbuf) ([]float64, []float64) { return wb.gE, wb.gEA })
	return total
}
