package layer

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/engine"
)

// NLL returns −Σ log p(tags_b | emissions_b) reduced by red (perSeq, if not
// nil, gets each sequence's value) and writes the gradient of the returned
// value into g (if not nil). tags is B×T; entries at or beyond a length are
// ignored.
func (c *CRF[F]) NLL(b Batch[F], tags []int32, red Reduction, perSeq []float64, g *Grad[F]) (float64, error) {
	return c.nll(opNLL, b, tags, nil, red, perSeq, g)
}

// PartialNLL is the negative partial-label log-likelihood
// −Σ log p(y_b ∈ allowed_b | emissions_b) = Σ (log Z_b − log Z_b(allowed)),
// reduced by red, for training from partially labelled data:
// con.Labels (B×T×M, required) gives the labels each position may take (all
// of them where unannotated, one where annotated). con.Trans, Start and End,
// if set, restrict both chains (they are a structural constraint of the
// model, as in DecodeConstrained). perSeq and g are as in NLL.
func (c *CRF[F]) PartialNLL(b Batch[F], con *Constraints, red Reduction, perSeq []float64, g *Grad[F]) (float64, error) {
	if con == nil || con.Labels == nil {
		return 0, fmt.Errorf("layer: PartialNLL needs Constraints.Labels")
	}
	return c.nll(opPartial, b, nil, con, red, perSeq, g)
}

func (c *CRF[F]) nll(op int, b Batch[F], tags []int32, con *Constraints, red Reduction, perSeq []float64, g *Grad[F]) (float64, error) {
	r, M, err := c.acquire()
	if err != nil {
		return 0, err
	}
	defer c.release(r)
	if err := b.check(M); err != nil {
		return 0, err
	}
	if red < ReduceNone || red > ReduceTokenMean {
		return 0, fmt.Errorf("layer: unknown reduction %d", red)
	}
	if err := checkLen("perSeq", len(perSeq), b.B, true); err != nil {
		return 0, err
	}
	if op == opNLL {
		if err := checkTags(tags, &b, M); err != nil {
			return 0, err
		}
	}
	if err := r.constrain(con, &b, M); err != nil {
		return 0, err
	}
	r.setBatch(&b, M)
	r.fast = r.p32 != nil && con == nil && useKernels32
	r.useClamp = con == nil && r.clamp.active()
	r.op, r.tags, r.perSeq = op, tags, perSeq
	r.scale = 1
	switch red {
	case ReduceMean:
		if b.B > 0 {
			r.scale = 1 / float64(b.B)
		}
	case ReduceTokenMean:
		n := 0
		for _, l := range b.Lengths {
			n += int(l)
		}
		if n > 0 {
			r.scale = 1 / float64(n)
		}
	}
	r.wantEmit, r.wantT, r.wantS, r.wantE = false, false, false, false
	if g != nil {
		if err := checkLen("Grad.Emissions", len(g.Emissions), b.B*b.T*M, true); err != nil {
			return 0, err
		}
		if err := checkLen("Grad.Trans", len(g.Trans), M*M, true); err != nil {
			return 0, err
		}
		if err := checkLen("Grad.Start", len(g.Start), M, true); err != nil {
			return 0, err
		}
		if err := checkLen("Grad.End", len(g.End), M, true); err != nil {
			return 0, err
		}
		r.wantEmit, r.wantT, r.wantS, r.wantE = g.Emissions != nil, g.Trans != nil, g.Start != nil, g.End != nil
		r.outF = g.Emissions
		r.out64, _ = as64(g.Emissions)
		r.out32, _ = as32(g.Emissions)
	}
	r.resetSums(op == opPartial)
	switch r.lockMode(con) {
	case lockEngine:
		if r.nllLockstep() {
			return sums(r, g, false) * r.scale, nil
		}
		r.resetSums(false)
	case lock32:
		if err := r.run32(); err != nil {
			return 0, err
		}
		return sums(r, g, false) * r.scale, nil
	}
	// Blocks of sequences per worker: the sums are the same on every run.
	r.setBlocks()
	if err := r.pool.Run(len(r.blocks)-1, r.blockFn); err != nil {
		return 0, err
	}
	return sums(r, g, op == opPartial) * r.scale, nil
}

// checkTags validates the tags within each length.
func checkTags[F float32 | float64](tags []int32, b *Batch[F], M int) error {
	if len(tags) != b.B*b.T {
		return fmt.Errorf("layer: %d tags, want B×T = %d", len(tags), b.B*b.T)
	}
	for i, l := range b.Lengths {
		for t, y := range tags[i*b.T : i*b.T+int(l)] {
			if y < 0 || int(y) >= M {
				return fmt.Errorf("layer: sequence %d position %d has tag %d, want 0..%d", i, t, y, M-1)
			}
		}
	}
	return nil
}

// Decode writes each sequence's Viterbi labelling into paths (B×T, −1 at and
// beyond its length) and its score into scores (len B; may be nil).
func (c *CRF[F]) Decode(b Batch[F], paths []int32, scores []F) error {
	return c.decode(b, nil, paths, scores)
}

// DecodeConstrained is Decode restricted to the labellings con allows
// (nil: Decode): the best labelling among them and its score under the
// CRF's scores.
func (c *CRF[F]) DecodeConstrained(b Batch[F], con *Constraints, paths []int32, scores []F) error {
	return c.decode(b, con, paths, scores)
}

func (c *CRF[F]) decode(b Batch[F], con *Constraints, paths []int32, scores []F) error {
	r, M, err := c.acquire()
	if err != nil {
		return err
	}
	defer c.release(r)
	if err := b.check(M); err != nil {
		return err
	}
	if err := checkLen("paths", len(paths), b.B*b.T, false); err != nil {
		return err
	}
	if err := checkLen("scores", len(scores), b.B, true); err != nil {
		return err
	}
	if err := r.constrain(con, &b, M); err != nil {
		return err
	}
	r.setBatch(&b, M)
	r.fast = r.p32 != nil && con == nil && useKernels32
	r.useClamp = con == nil && r.clamp.active()
	r.op, r.paths, r.scoresF = opDecode, paths, scores
	return r.pool.RunBalanced(b.B, r.fn)
}

// Marginals writes P(y_t = j) into marg (B×T×M, 0 beyond each length) and
// log Z into logZ (len B; may be nil).
func (c *CRF[F]) Marginals(b Batch[F], marg []F, logZ []float64) error {
	return c.marginals(b, nil, marg, logZ)
}

// MarginalsConstrained is Marginals of the CRF conditioned on con (nil:
// Marginals): P(y_t = j | y allowed), and the log Z of the allowed
// labellings.
func (c *CRF[F]) MarginalsConstrained(b Batch[F], con *Constraints, marg []F, logZ []float64) error {
	return c.marginals(b, con, marg, logZ)
}

func (c *CRF[F]) marginals(b Batch[F], con *Constraints, marg []F, logZ []float64) error {
	r, M, err := c.acquire()
	if err != nil {
		return err
	}
	defer c.release(r)
	if err := b.check(M); err != nil {
		return err
	}
	if err := checkLen("marg", len(marg), b.B*b.T*M, false); err != nil {
		return err
	}
	if err := checkLen("logZ", len(logZ), b.B, true); err != nil {
		return err
	}
	if err := r.constrain(con, &b, M); err != nil {
		return err
	}
	r.setBatch(&b, M)
	r.fast = r.p32 != nil && con == nil && useKernels32
	r.useClamp = con == nil && r.clamp.active()
	r.op, r.logZ, r.outF = opMarginals, logZ, marg
	r.out64, _ = as64(marg)
	r.out32, _ = as32(marg)
	switch r.lockMode(con) {
	case lockEngine:
		if r.marginalsLockstep() {
			return nil
		}
	case lock32:
		return r.run32()
	}
	return r.pool.RunBalanced(b.B, r.fn)
}

// NBest writes the k best labellings of each sequence (restricted by con if
// not nil), best first, into paths (B×k×T: labelling r of sequence b at
// (b*k+r)*T, −1 at and beyond its length) and their scores into scores
// (B×k; may be nil). Ties come in a fixed order, and the first labelling is
// Decode's. A sequence with fewer than k labellings gets −1 paths and −Inf
// scores for the missing ones.
func (c *CRF[F]) NBest(b Batch[F], k int, con *Constraints, paths []int32, scores []F) error {
	r, M, err := c.acquire()
	if err != nil {
		return err
	}
	defer c.release(r)
	if err := b.check(M); err != nil {
		return err
	}
	if k < 1 {
		return fmt.Errorf("layer: NBest of %d labellings", k)
	}
	if err := checkLen("paths", len(paths), b.B*k*b.T, false); err != nil {
		return err
	}
	if err := checkLen("scores", len(scores), b.B*k, true); err != nil {
		return err
	}
	if err := r.constrain(con, &b, M); err != nil {
		return err
	}
	r.setBatch(&b, M)
	r.fast = r.p32 != nil && con == nil && useKernels32
	r.useClamp = con == nil && r.clamp.active()
	r.op, r.K, r.paths, r.scoresF = opNBest, k, paths, scores
	return r.pool.RunBalanced(b.B, r.fn)
}

// constrain checks con and sets the runner's transitions and label sets:
// the CRF's own, or scores with −Inf where con forbids a transition, a first
// or a last label (built once per mask and kept while neither changes).
func (r *runner[F]) constrain(con *Constraints, b *Batch[F], M int) error {
	r.labels = nil
	if con == nil {
		return nil
	}
	if err := checkLen("Constraints.Trans", len(con.Trans), M*M, true); err != nil {
		return err
	}
	if err := checkLen("Constraints.Start", len(con.Start), M, true); err != nil {
		return err
	}
	if err := checkLen("Constraints.End", len(con.End), M, true); err != nil {
		return err
	}
	if err := checkLen("Constraints.Labels", len(con.Labels), b.B*b.T*M, true); err != nil {
		return err
	}
	r.labels = con.Labels
	if con.Trans == nil && con.Start == nil && con.End == nil {
		return nil
	}
	n := M*M + 2*M
	same := r.trMask != nil && r.maskVersion == r.version && len(r.maskCopy) == n
	r.maskCopy = grow(r.maskCopy, n)
	for k := range n {
		ok := true
		switch {
		case k < M*M:
			ok = con.Trans == nil || con.Trans[k]
		case k < M*M+M:
			ok = con.Start == nil || con.Start[k-M*M]
		default:
			ok = con.End == nil || con.End[k-M*M-M]
		}
		if r.maskCopy[k] != ok {
			same = false
			r.maskCopy[k] = ok
		}
	}
	if !same {
		r.maskScores = grow(r.maskScores, n)
		for k, v := range r.scores {
			if !r.maskCopy[k] {
				v = math.Inf(-1)
			}
			r.maskScores[k] = v
		}
		s, st, en := r.maskScores[:M*M], r.maskScores[M*M:M*M+M], r.maskScores[M*M+M:]
		var err error
		if r.trMask == nil || r.trMask.Labels() != M {
			r.trMask, err = engine.NewTransitionsWith(M, s, st, en, engine.Options{Structure: engine.Dense})
		} else {
			err = r.trMask.SetScores(s, st, en)
		}
		if err != nil {
			r.trMask = nil
			return fmt.Errorf("layer: %w", err)
		}
		r.maskVersion = r.version
	}
	r.tr = r.trMask
	return nil
}
