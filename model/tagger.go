package model

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// Tagger labels encoded sequences with a model. It is safe for concurrent
// use by any number of goroutines: each call borrows a workspace (emission
// buffer, engine workspace) from a pool and returns it, so that in steady
// state a call allocates nothing.
type Tagger struct {
	m     *Model
	inf   inference         // the engine's calls: first or second order
	pool  sync.Pool         // *work
	hot   *hotRows          // sparse-row models: attribute records, wide rows dense
	phot  *hotRows          // the same for Model.Pruner's weights
	psub  *sparse.SubLabels // Model.Sub with Model.PrunerSub's weights
	p1hot *hotRows          // the same for Model.Pruner1's
	p1sub *sparse.SubLabels // and Model.Sub with its sub-label weights
	names []string          // the label names by id, for TagText
}

// inference is what tagging asks of the engine, of a first-order chain
// (engine.Transitions) or a second-order one (engine.SecondOrder, for
// Model.Trigrams) alike.
type inference interface {
	Viterbi(ws *engine.Workspace, emit []float64, c *engine.ChainOptions, path []int32) (float64, error)
	NBest(ws *engine.Workspace, emit []float64, c *engine.ChainOptions, paths [][]int32, scores []float64) (int, error)
	LogProb(ws *engine.Workspace, emit []float64, labels []int32, c *engine.ChainOptions) (float64, error)
	posteriors(w *work, emit []float64, c *engine.ChainOptions, p *engine.Posteriors) (float64, error)
}

type firstOrder struct{ *engine.Transitions }

func (f firstOrder) posteriors(w *work, emit []float64, c *engine.ChainOptions, p *engine.Posteriors) (float64, error) {
	return f.Posteriors(w.ws, emit, c, p)
}

type secondOrder struct{ *engine.SecondOrder }

func (s secondOrder) posteriors(w *work, emit []float64, c *engine.ChainOptions, p *engine.Posteriors) (float64, error) {
	w.post2.Posteriors = *p
	return s.Posteriors(w.ws, emit, c, &w.post2)
}

// hotRows is how the tagger scores a SparseRows model: a record per
// attribute (attrRec) says where its row is, holding a one-label row (most
// of them: 84 % of CoNLL-2000 chunking's 338k attributes) itself, so that
// scoring a rare attribute costs one cache miss instead of three (row
// bounds, labels, weights); and the wide rows (the hot rows of
// sparse.HotRows, as in training: such as part-of-speech n-grams) are
// copied dense and scored by sparse.GatherHot, a row in a few vector adds,
// instead of one scalar add per label (scoring CoNLL-2000's test file took
// 22 ms that way, most of it in those rows).
type hotRows struct {
	rec  []attrRec
	rows *sparse.HotRows
	w    []float64 // M weights per wide row, 0 outside the pattern
}

// attrRec is one attribute's row: n labels from pair lo of the pattern;
// n = 1: the label y with weight w; n = wideRow: the dense row lo of
// hotRows.w.
type attrRec struct {
	w  float64
	lo int32
	y  uint16
	n  uint16
}

// wideRow marks a wide row's attrRec (a narrow row has fewer than
// ⌈M/4⌉ ≤ MaxSparseLabels/4+1 labels, far below it).
const wideRow = 0xffff

func newHotRows(sp *sparse.Sparse) *hotRows {
	rowPtr, labels := sp.Pattern().CSR()
	w := sp.Params()
	rows := sparse.NewHotRows(sp.Pattern(), sp.Labels(), false)
	nattr := len(rowPtr) - 1
	// 16 bytes a record, in memory advised for huge pages (a tagger reads
	// them at random).
	buf := sparse.MakeBuffer(2 * nattr)
	h := &hotRows{rows: rows}
	if nattr > 0 {
		h.rec = unsafe.Slice((*attrRec)(unsafe.Pointer(unsafe.SliceData(buf))), nattr)
	}
	for a := range h.rec {
		lo, hi := rowPtr[a], rowPtr[a+1]
		r := &h.rec[a]
		switch k := hi - lo; {
		case rows.Row(int32(a)) >= 0:
			*r = attrRec{lo: rows.Row(int32(a)), n: wideRow}
		case k == 1:
			*r = attrRec{w: w[lo], lo: lo, y: labels[lo], n: 1}
		default:
			*r = attrRec{lo: lo, n: uint16(k)}
		}
	}
	h.w = rows.Dense(sp.Pattern(), w)
	return h
}

// score sets emit to the state scores of s (checked): the wide rows by
// sparse.GatherHot over a per-sequence CSR list built in w, the others row
// by row, in feature order before them (the adds come in the order they
// came in before attribute records, so the scores are the same). With
// sets (one per position, none nil: a pruner's) the wide rows are added
// at the labels of sets[t] alone, |K_t| loads each instead of an M-wide
// row (UD Czech pooled, M = 1,208: 8 labels a position), in the same
// order, so those scores are the same too; the other labels keep the
// narrow rows' sums.
func (h *hotRows) score(wk *work, sp *sparse.Sparse, emit []float64, s sparse.Seq, sets [][]int32) {
	m := sp.Labels()
	T := s.Len()
	_, labels := sp.Pattern().CSR()
	w := sp.Params()
	clear(emit[:T*m])
	nf := len(s.IDs)
	wk.hvals = grow(wk.hvals, nf)
	hvals := wk.hvals[:nf]
	wk.hot.Reset(h.rows.Len())
	// The records first, in a pass of their own: their cache misses
	// overlap, instead of each waiting behind the previous row's adds.
	wk.recs = grow(wk.recs, nf)
	recs := wk.recs[:nf]
	for f, a := range s.IDs[:nf] {
		recs[f] = h.rec[a]
	}
	n := int32(0)
	for t := range T {
		row := emit[t*m : (t+1)*m]
		n0 := n
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			v := 1.0
			if s.Vals != nil {
				v = s.Vals[f]
			}
			switch r := &recs[f]; r.n {
			case 1:
				row[r.y] += v * r.w
			case wideRow:
				hvals[n] = v
				if sets == nil {
					wk.hot.Add(r.lo)
				} else {
					wk.wide = append(wk.wide[:n-n0], r.lo)
				}
				n++
			default:
				// (Adding only a set's labels saved nothing: these rows
				// cost their memory traffic, not their adds.)
				lab, wr := labels[r.lo:r.lo+int32(r.n)], w[r.lo:r.lo+int32(r.n)]
				wr = wr[:len(lab)]
				for k, y := range lab {
					row[y] += v * wr[k]
				}
			}
		}
		if sets == nil {
			wk.hot.EndRow()
			continue
		}
		for k, lo := range wk.wide[:n-n0] {
			v, wr := hvals[n0+int32(k)], h.w[int(lo)*h.rows.Stride():][:m]
			for _, y := range sets[t] {
				row[y] += v * wr[y]
			}
		}
	}
	if sets == nil {
		sparse.GatherHot(h.rows, emit, h.w, &wk.hot, hvals, 0)
	}
}

func grow[E any](x []E, n int) []E {
	if cap(x) < n {
		return make([]E, n, n+n/4)
	}
	return x[:n]
}

type work struct {
	ws     *engine.Workspace
	emit   []float64
	marg   []float64
	paths  [][]int32
	scores []float64
	// hot rows' CSR list (see hotRows.score)
	hot   kernels.CSR
	hvals []float64
	recs  []attrRec // the features' attribute records (see hotRows.score)
	wide  []int32   // a position's wide rows, scored at a set's labels
	sbuf  []float64 // sub-label scratch
	// the chain's options: candidate labels (Options.Candidates) and
	// transition deltas (Options.Bigrams)
	co      engine.ChainOptions
	allowed [][]int32
	big     sparse.DeltaWork
	prune   prune.Buf // Model.Prune's sets (prunetag.go)
	pemit   []float64 // Model.Pruner's emission scores
	post    engine.Posteriors
	post2   engine.Posteriors2
	// Model.Pruner1's emission scores, marginals (then their logs),
	// chain options and posteriors, and its sets (pruned1)
	p1emit []float64
	p1marg []float64
	co1    engine.ChainOptions
	post1  engine.Posteriors
	prune1 prune.Buf
}

// allowed returns each position's candidate labels for the lexicon
// entries cands (one per position, −1: free), or nil when nothing is
// restricted.
func (t *Tagger) allowed(w *work, cands []int32, T int) ([][]int32, error) {
	if cands == nil {
		return nil, nil
	}
	if len(cands) != T {
		return nil, fmt.Errorf("model: %d candidate entries for %d positions", len(cands), T)
	}
	lex := t.m.Lexicon
	if lex == nil {
		return nil, fmt.Errorf("model: candidate entries for a model without a lexicon")
	}
	w.allowed = resize(w.allowed, T)
	any := false
	for i, c := range cands {
		if c >= int32(lex.Len()) {
			return nil, fmt.Errorf("model: candidate entry %d of %d at position %d", c, lex.Len(), i)
		}
		w.allowed[i] = lex.Allowed(c)
		any = any || w.allowed[i] != nil
	}
	if !any {
		return nil, nil
	}
	return w.allowed, nil
}

// prepare checks s and fills the borrowed work's emissions, returning
// them with the chain options of one call: the candidate labels of the
// lexicon entries cands (pruned under Model.Prune) and the transition
// deltas of the bigram attributes bs together, or nil options when
// neither adds anything (the pooled work's, set afresh each call). With a
// pruner (Model.Pruner) the sets come first, from its scores (narrowed by
// the first-order pruner, Model.Pruner1, if the model has one), and the
// model's emissions are scored at their labels alone: the entries outside
// them are left unspecified, as the engine does not read them.
func (t *Tagger) prepare(w *work, s sparse.Seq, cands []int32, bs sparse.Seq) ([]float64, *engine.ChainOptions, error) {
	s.Labels = nil // gold labels (perhaps unknown to the model) play no part
	M := t.m.State.Labels()
	if err := s.Validate(t.m.State.NumAttrs(), M); err != nil {
		return nil, nil, err
	}
	T := s.Len()
	n := T * M
	if cap(w.emit) < n {
		w.emit = make([]float64, n+n/4)
	}
	emit := w.emit[:n]
	allowed, err := t.allowed(w, cands, T)
	if err != nil {
		return nil, nil, err
	}
	if t.m.Pruner != nil {
		t.scorePruner(w, s)
		allowed = t.pruned(w, w.pemit[:n], allowed)
		if t.m.Pruner1 != nil {
			if allowed, err = t.pruned1(w, s, allowed); err != nil {
				return nil, nil, err
			}
		}
		t.scoreSets(w, emit, s, allowed)
	} else {
		t.scoreSets(w, emit, s, nil)
		allowed = t.pruned(w, emit, allowed)
	}
	deltas, err := t.m.Bigram.deltas(&w.big, bs, T, M)
	if err != nil {
		return nil, nil, err
	}
	if allowed == nil && deltas == nil {
		return emit, nil, nil
	}
	w.co = engine.ChainOptions{Allowed: allowed, TransDelta: deltas}
	return emit, &w.co, nil
}

// NewTagger returns a tagger for m. With sparse rows it copies the model's
// one-label rows into records and its wide rows into a dense block (see
// hotRows): weights changed after NewTagger are not all seen; make a new
// Tagger then.
func (m *Model) NewTagger() *Tagger {
	t := &Tagger{m: m, names: m.LabelNames(), inf: firstOrder{m.Trans}}
	if m.Trigrams != nil {
		// (the labels agree: checked when the model was made or read)
		so, _ := engine.NewSecondOrder(m.Trans, m.Trigrams)
		t.inf = secondOrder{so}
	}
	if sp, ok := m.State.(*sparse.Sparse); ok {
		t.hot = newHotRows(sp)
		if p, ok := m.Pruner.(*sparse.Sparse); ok {
			t.phot = newHotRows(p)
		}
	}
	if m.Pruner != nil && m.Sub != nil {
		s := *m.Sub
		s.W = m.PrunerSub
		t.psub = &s
	}
	if p := m.Pruner1; p != nil {
		if sp, ok := p.State.(*sparse.Sparse); ok {
			t.p1hot = newHotRows(sp)
		}
		if m.Sub != nil {
			s := *m.Sub
			s.W = p.Sub
			t.p1sub = &s
		}
	}
	t.pool.New = func() any { return &work{ws: engine.NewWorkspace()} }
	return t
}

// Model returns the tagger's model.
func (t *Tagger) Model() *Model { return t.m }

// scorePruner fills w.pemit with the pruner's emission scores of s
// (checked), every label's.
func (t *Tagger) scorePruner(w *work, s sparse.Seq) {
	p := t.m.Pruner
	w.pemit = resize(w.pemit, s.Len()*t.m.State.Labels())
	if t.phot != nil {
		t.phot.score(w, p.(*sparse.Sparse), w.pemit, s, nil)
	} else {
		p.Score(w.pemit, s)
	}
	if t.psub != nil {
		w.sbuf = resize(w.sbuf, s.Len()*t.psub.NSub)
		t.psub.AddScores(w.pemit, s, w.sbuf)
	}
}

// scoreSets fills emit with the model's emission scores of s (checked):
// at every label, or with sets (one per position, none nil) at the labels
// of sets[t] alone where that is cheaper (the others unspecified).
func (t *Tagger) scoreSets(w *work, emit []float64, s sparse.Seq, sets [][]int32) {
	if t.hot != nil {
		t.hot.score(w, t.m.State.(*sparse.Sparse), emit, s, sets)
	} else {
		t.m.State.Score(emit, s)
	}
	if sub := t.m.Sub; sub != nil {
		w.sbuf = resize(w.sbuf, s.Len()*sub.NSub)
		if sets != nil {
			sub.AddScoresSets(emit, s, w.sbuf, sets)
		} else {
			sub.AddScores(emit, s, w.sbuf)
		}
	}
}

// Viterbi writes the most probable labelling of s to dst (grown if needed;
// the result is returned) and returns its score (emissions plus
// transitions, unnormalised). Ties go to the lowest label id.
func (t *Tagger) Viterbi(dst []int32, s sparse.Seq) ([]int32, float64, error) {
	return t.ViterbiWith(dst, s, Options{})
}

// ViterbiCandidates is Viterbi with the positions restricted to their
// candidate labels: cands holds each position's lexicon entry (from
// Model.Candidates, −1: free), or is nil for none.
func (t *Tagger) ViterbiCandidates(dst []int32, s sparse.Seq, cands []int32) ([]int32, float64, error) {
	return t.ViterbiWith(dst, s, Options{Candidates: cands})
}

// ViterbiBigrams is Viterbi with the bigram attributes bs of s (see
// TagBigrams).
func (t *Tagger) ViterbiBigrams(dst []int32, s, bs sparse.Seq) ([]int32, float64, error) {
	return t.ViterbiWith(dst, s, Options{Bigrams: bs})
}

// ViterbiWith is Viterbi under o's Candidates and Bigrams (see Options;
// its other fields are Tag's and ignored here).
func (t *Tagger) ViterbiWith(dst []int32, s sparse.Seq, o Options) ([]int32, float64, error) {
	w := t.pool.Get().(*work)
	defer t.pool.Put(w)
	emit, c, err := t.prepare(w, s, o.Candidates, o.Bigrams)
	if err != nil {
		return dst[:0], 0, err
	}
	dst = resize(dst, s.Len())
	sc, err := t.inf.Viterbi(w.ws, emit, c, dst)
	return dst, sc, err
}

// Options selects what Tag computes besides the best labelling.
type Options struct {
	Prob      bool // the probability of the labelling (crfsuite tag -p)
	Marginals bool // the marginal probability of each chosen label (-i)
	NBest     int  // the k best labellings with their probabilities (-n K); 0 for none
	// AllMarginals asks for the marginal probability of every label at
	// every position (-l).
	AllMarginals bool
	// Candidates, if not nil, restricts each position to the labels of
	// its lexicon entry (Model.Candidates; −1: free): probabilities are
	// then those of the constrained chain, as in training.
	Candidates []int32
	// Bigrams holds the bigram attributes of s (Model.EncodeBigrams; an
	// empty Seq for none): the transition scores into position t are the
	// shared ones plus the model's Bigram weights of its attributes at t.
	Bigrams sparse.Seq
}

// Output is what Tag found. Reuse one Output across calls: its slices are
// overwritten and regrown only when too short.
type Output struct {
	Labels []int32 // the best labelling
	Score  float64 // its unnormalised score
	LogZ   float64 // log partition function (if Prob, Marginals or NBest)
	Prob   float64 // p(Labels | s) = exp(Score − LogZ) (if Prob, Marginals or NBest)

	// Marginals[t] = P(y_t = Labels[t] | s) (if Marginals).
	Marginals []float64

	// AllMarginals[t·M+j] = P(y_t = j | s), M the number of labels (if
	// AllMarginals).
	AllMarginals []float64

	// NBest holds up to k labellings in order of decreasing score, the
	// first equal to Labels (fewer when fewer are possible).
	NBest []Path
}

// Path is one labelling with its score and probability.
type Path struct {
	Labels []int32
	Score  float64
	Prob   float64
	// Marginals[t] = P(y_t = Labels[t] | s) (if Options.Marginals).
	Marginals []float64
}

// Tag labels s and computes what o asks for into out, under o's
// candidate labels and bigram attributes.
func (t *Tagger) Tag(s sparse.Seq, o Options, out *Output) error {
	if o.NBest < 0 {
		return fmt.Errorf("model: n-best count %d is negative", o.NBest)
	}
	w := t.pool.Get().(*work)
	defer t.pool.Put(w)
	emit, c, err := t.prepare(w, s, o.Candidates, o.Bigrams)
	if err != nil {
		return err
	}
	T, M := s.Len(), t.m.State.Labels()
	tr := t.inf
	out.Labels = resize(out.Labels, T)
	if out.Score, err = tr.Viterbi(w.ws, emit, c, out.Labels); err != nil {
		return err
	}
	out.LogZ, out.Prob, out.Marginals, out.AllMarginals, out.NBest = 0, 0, out.Marginals[:0], out.AllMarginals[:0], out.NBest[:0]
	if !o.Prob && !o.Marginals && !o.AllMarginals && o.NBest == 0 {
		return nil
	}
	post := &w.post // (in the work: through the interface it would escape)
	*post = engine.Posteriors{}
	switch {
	case o.AllMarginals:
		out.AllMarginals = resize(out.AllMarginals, T*M)
		post.Marginals = out.AllMarginals
	case o.Marginals:
		w.marg = resize(w.marg, T*M)
		post.Marginals = w.marg
	}
	if out.LogZ, err = tr.posteriors(w, emit, c, post); err != nil {
		return err
	}
	out.Prob = math.Exp(out.Score - out.LogZ)
	if o.Marginals {
		out.Marginals = labelMarginals(out.Marginals, post.Marginals, out.Labels, M)
	}
	if o.NBest > 0 {
		k := o.NBest
		for len(w.paths) < k {
			w.paths = append(w.paths, nil)
		}
		for i := range k {
			w.paths[i] = resize(w.paths[i], T)
		}
		w.scores = resize(w.scores, k)
		got, err := tr.NBest(w.ws, emit, c, w.paths[:k], w.scores)
		if err != nil {
			return err
		}
		nb := out.NBest[:cap(out.NBest)] // keep earlier paths' label buffers
		if len(nb) < got {
			nb = append(nb, make([]Path, got-len(nb))...)
		}
		out.NBest = nb[:got]
		for i := range got {
			p := &out.NBest[i]
			p.Labels = append(resize(p.Labels, 0), w.paths[i]...)
			p.Score = w.scores[i]
			p.Prob = math.Exp(w.scores[i] - out.LogZ)
			p.Marginals = p.Marginals[:0]
			if o.Marginals {
				p.Marginals = labelMarginals(p.Marginals, post.Marginals, p.Labels, M)
			}
		}
	}
	return nil
}

// TagBigrams is Tag with o.Bigrams set to bs.
func (t *Tagger) TagBigrams(s, bs sparse.Seq, o Options, out *Output) error {
	o.Bigrams = bs
	return t.Tag(s, o, out)
}

// labelMarginals returns dst (regrown if short) holding, for each position
// t, the marginal marg[t·M+labels[t]] of the label labels[t].
func labelMarginals(dst, marg []float64, labels []int32, M int) []float64 {
	dst = resize(dst, len(labels))
	for t, y := range labels {
		dst[t] = marg[t*M+int(y)]
	}
	return dst
}

// resize returns s with length n, reusing its memory when it has room.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// LogProb returns log p(labels | s) under o's Candidates and Bigrams (and
// the model's pruning, as Tag tags): −Inf for a labelling they exclude.
func (t *Tagger) LogProb(s sparse.Seq, o Options, labels []int32) (float64, error) {
	w := t.pool.Get().(*work)
	defer t.pool.Put(w)
	emit, c, err := t.prepare(w, s, o.Candidates, o.Bigrams)
	if err != nil {
		return 0, err
	}
	return t.inf.LogProb(w.ws, emit, labels, c)
}
