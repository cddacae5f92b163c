// Package layer is a linear-chain CRF layer for neural taggers: it takes a
// padded batch of emission scores (B×T×M, float32 or float64, batch-major)
// with the length of each sequence, and returns what a training loop and a
// decoder need: the negative log-likelihood and its gradient with respect to
// the emissions and the CRF's own scores, Viterbi labellings, marginals,
// k-best labellings, constrained decoding and marginals, and the
// partial-label likelihood.
//
// Conventions are pytorch-crf's: Trans[i*M+j] scores label i followed by
// label j ([from][to]); Start and End score the first and last label; a
// labelling scores Start[y₀] + Σₜ Emissions[t][yₜ] + Σₜ Trans[yₜ₋₁][yₜ] +
// End[y_last]. Scores may be −Inf or large finite negatives (−1e4 … −1e9, the
// sentinels callers use for "impossible"); NaN and +Inf are errors.
//
// The math is package engine's (one kernel call per sequence) in float64.
// Float32 batches run package kernels' float32 kernels (forward, backward,
// transition counts, Viterbi: one call per sequence; log Z and the sums over
// sequences in float64); a sequence whose scores spread beyond the float32
// range (kernels.ScaledRange32), that has −Inf or NaN scores, or that runs
// under Constraints is widened to float64 and runs on the engine.
// Float64 batches at M ≥ 256 and float32 ones at M ≥ 512 (both 96 on the
// avx512 kernel tier) without
// Constraints run NLL and Marginals over lockstep groups of sequences of
// similar length (lockstep.go: the engine's batch calls; lockstep32.go:
// the float32 batch kernels), matrix–matrix products instead of
// matrix–vector ones.
// Sequences run in parallel on Threads goroutines. A CRF may be used by
// several goroutines at once as long as none changes its scores; each call
// takes its own workspace from the CRF, so steady-state calls allocate
// nothing.
package layer

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/simdcrf/simdcrf/engine"
)

// CRF is a linear-chain CRF layer over M labels.
type CRF[F float32 | float64] struct {
	Trans      []F // M×M, Trans[i*M+j] scores label i followed by label j ([from][to])
	Start, End []F // M each
	Threads    int // sequences are spread over this many goroutines; 0: all cores

	mu      sync.Mutex
	m       int
	tr      *engine.Transitions    // built from the scores below
	trans   []float64              // the scores tr was built from (M×M, then start, then end)
	version int                    // counts changes of the scores
	free    []*runner[F]           // idle call states
	pools   *poolSet               // their worker pools
	p32     engine.Scaled[float32] // float32 forms of the scores (F = float32)
	clamp   clamp64                // the scores with transition sentinels at −Inf
}

// New returns a CRF over m labels with zero scores.
func New[F float32 | float64](m int) *CRF[F] {
	return &CRF[F]{Trans: make([]F, m*m), Start: make([]F, m), End: make([]F, m), m: m}
}

// Batch is a padded batch of B sequences of at most T positions.
type Batch[F float32 | float64] struct {
	B, T      int
	Emissions []F     // B×T×M, batch-major; position t of sequence b at (b*T+t)*M
	Lengths   []int32 // 1..T; positions at or beyond Lengths[b] are ignored
}

// Grad receives gradients; nil: not wanted; overwritten, not added;
// Emissions is 0 beyond each length.
type Grad[F float32 | float64] struct{ Emissions, Trans, Start, End []F }

// Reduction says how per-sequence values combine into the value NLL returns.
type Reduction int

// The reductions, with pytorch-crf's meanings. ReduceNone returns the sum
// (the per-sequence values go to perSeq).
const (
	ReduceNone Reduction = iota
	ReduceSum
	ReduceMean      // mean over sequences
	ReduceTokenMean // sum divided by the number of positions within the lengths
)

// ErrNoLabelling is wrapped by the error of a sequence that has no labelling
// of non-zero probability (every one uses a −Inf score or a label or
// transition the constraints exclude).
var ErrNoLabelling = engine.ErrNoLabelling

// Constraints restrict the labellings of a batch. Nil fields allow
// everything.
type Constraints struct {
	Trans      []bool // M×M: Trans[i*M+j] allows label i followed by label j
	Start, End []bool // M each: labels allowed first, and last
	// Labels, B×T×M, allows label j at position t of sequence b when
	// Labels[(b*T+t)*M+j] is true (the labels a partial annotation leaves
	// possible; entries beyond each length are ignored).
	Labels []bool
}

// labels returns M, checking the shapes of the scores.
func (c *CRF[F]) labels() (int, error) {
	M := len(c.Start)
	if M == 0 {
		return 0, errors.New("layer: CRF has no labels (use New)")
	}
	if len(c.End) != M || len(c.Trans) != M*M {
		return 0, fmt.Errorf("layer: CRF has %d start, %d end and %d transition scores; want %d, %d and %d", M, len(c.End), len(c.Trans), M, M, M*M)
	}
	return M, nil
}

// check validates a batch against M.
func (b *Batch[F]) check(M int) error {
	if b.B < 0 || b.T < 1 && b.B > 0 {
		return fmt.Errorf("layer: batch of %d sequences of %d positions", b.B, b.T)
	}
	if len(b.Emissions) != b.B*b.T*M {
		return fmt.Errorf("layer: %d emission scores, want B×T×M = %d×%d×%d = %d", len(b.Emissions), b.B, b.T, M, b.B*b.T*M)
	}
	if len(b.Lengths) != b.B {
		return fmt.Errorf("layer: %d lengths for %d sequences", len(b.Lengths), b.B)
	}
	for i, l := range b.Lengths {
		if l < 1 || int(l) > b.T {
			return fmt.Errorf("layer: sequence %d has length %d, want 1..%d", i, l, b.T)
		}
	}
	return nil
}

func checkLen(what string, n, want int, optional bool) error {
	if optional && n == 0 {
		return nil
	}
	if n != want {
		return fmt.Errorf("layer: %s has %d entries, want %d", what, n, want)
	}
	return nil
}

// as64 returns s as a []float64 when F is float64 (no copy).
func as64[F float32 | float64](s []F) ([]float64, bool) {
	var z F
	if unsafe.Sizeof(z) != 8 || s == nil {
		return nil, false
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), true
}

// acquire brings the engine's Transitions up to date with the scores and
// returns an idle runner for one call; release gives it back.
func (c *CRF[F]) acquire() (*runner[F], int, error) {
	M, err := c.labels()
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != M || c.tr == nil || c.changed(M) {
		if err := c.rebuild(M); err != nil {
			return nil, 0, err
		}
	}
	threads := c.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	for n := len(c.free); n > 0; n = len(c.free) {
		r := c.free[n-1]
		c.free = c.free[:n-1]
		if r.pool.Threads() == threads {
			r.tr, r.version, r.scores = c.tr, c.version, c.trans
			r.p32, r.clamp = c.prep(), &c.clamp
			return r, M, nil
		}
		c.pools.remove(r.pool)
	}
	if c.pools == nil {
		c.pools = &poolSet{}
		// The pools' goroutines end when the CRF is collected.
		runtime.AddCleanup(c, func(s *poolSet) { s.closeAll() }, c.pools)
	}
	r := newRunner[F](threads)
	c.pools.add(r.pool)
	r.tr, r.version, r.scores = c.tr, c.version, c.trans
	r.p32, r.clamp = c.prep(), &c.clamp
	return r, M, nil
}

// poolSet holds the worker pools of a CRF's runners, to close them when the
// CRF is collected (it must not refer to the CRF).
type poolSet struct {
	mu    sync.Mutex
	pools []*engine.Pool
}

func (s *poolSet) add(p *engine.Pool) {
	s.mu.Lock()
	s.pools = append(s.pools, p)
	s.mu.Unlock()
}

// remove closes p and forgets it.
func (s *poolSet) remove(p *engine.Pool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, q := range s.pools {
		if q == p {
			s.pools = append(s.pools[:k], s.pools[k+1:]...)
			p.Close()
			return
		}
	}
}

func (s *poolSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pools {
		p.Close()
	}
	s.pools = nil
}

func (c *CRF[F]) release(r *runner[F]) {
	r.clearRefs()
	c.mu.Lock()
	c.free = append(c.free, r)
	c.mu.Unlock()
}

// changed reports whether the scores differ from those tr was built from.
func (c *CRF[F]) changed(M int) bool {
	t := c.trans
	for k, v := range c.Trans {
		if float64(v) != t[k] {
			return true
		}
	}
	for k, v := range c.Start {
		if float64(v) != t[M*M+k] {
			return true
		}
	}
	for k, v := range c.End {
		if float64(v) != t[M*M+M+k] {
			return true
		}
	}
	return false
}

// rebuild copies the scores and remakes the engine's Transitions; c.mu is
// held.
func (c *CRF[F]) rebuild(M int) error {
	if c.m != M || len(c.trans) != M*M+2*M {
		c.trans = make([]float64, M*M+2*M)
		c.tr = nil
	}
	for k, v := range c.Trans {
		c.trans[k] = float64(v)
	}
	for k, v := range c.Start {
		c.trans[M*M+k] = float64(v)
	}
	for k, v := range c.End {
		c.trans[M*M+M+k] = float64(v)
	}
	s, st, en := c.trans[:M*M], c.trans[M*M:M*M+M], c.trans[M*M+M:]
	var err error
	if c.tr == nil {
		c.tr, err = engine.NewTransitionsWith(M, s, st, en, engine.Options{Structure: engine.Dense})
	} else {
		// In place: no call runs while the scores change (the contract).
		err = c.tr.SetScores(s, st, en)
	}
	if err != nil {
		c.tr = nil
		return fmt.Errorf("layer: %w", err)
	}
	if _, ok := as32(c.Trans); ok {
		c.p32.Set(c.trans, M)
	}
	if c.m != M {
		c.clamp = clamp64{}
	}
	if err := c.clamp.build(c.trans, M); err != nil {
		c.tr = nil
		return fmt.Errorf("layer: %w", err)
	}
	c.m = M
	c.version++
	return nil
}

// seqErr names the sequence a failure belongs to.
func seqErr(i int, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, engine.ErrNoLabelling) {
		return fmt.Errorf("layer: sequence %d has no possible labelling: %w", i, err)
	}
	return fmt.Errorf("layer: sequence %d: %w", i, err)
}

var negInf = math.Inf(-1)

// prep returns the float32 forms of the scores, or nil for float64.
func (c *CRF[F]) prep() *engine.Scaled[float32] {
	if _, ok := as32(c.Trans); !ok {
		return nil
	}
	return &c.p32
}

// useKernels32 turns on the float32 kernels' path for float32 batches;
// tests turn it off to compare with the float64 one. Every tier has float32
// kernels, so the path runs on the tier the float64 one runs on
// (BENCHMARKS.md's CRF layer table times both types).
var useKernels32 = true
