package model

import (
	"fmt"
	"math"
	"sync"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// Tagger labels encoded sequences with a model. It is safe for concurrent
// use by any number of goroutines: each call borrows a workspace (emission
// buffer, engine workspace) from a pool and returns it, so that in steady
// state a call allocates nothing.
type Tagger struct {
	m    *Model
	pool sync.Pool // *work
}

type work struct {
	ws     *engine.Workspace
	emit   []float64
	marg   []float64
	paths  [][]int32
	scores []float64
}

// NewTagger returns a tagger for m.
func (m *Model) NewTagger() *Tagger {
	t := &Tagger{m: m}
	t.pool.New = func() any { return &work{ws: engine.NewWorkspace()} }
	return t
}

// Model returns the tagger's model.
func (t *Tagger) Model() *Model { return t.m }

// score checks s and fills the borrowed work's emissions.
func (t *Tagger) score(w *work, s sparse.Seq) ([]float64, error) {
	s.Labels = nil // gold labels (perhaps unknown to the model) play no part
	if err := s.Validate(t.m.State.NumAttrs(), t.m.State.Labels()); err != nil {
		return nil, err
	}
	n := s.Len() * t.m.State.Labels()
	if cap(w.emit) < n {
		w.emit = make([]float64, n+n/4)
	}
	emit := w.emit[:n]
	t.m.State.Score(emit, s)
	return emit, nil
}

// Viterbi writes the most probable labelling of s to dst (grown if needed;
// the result is returned) and returns its score (emissions plus
// transitions, unnormalised). Ties go to the lowest label id.
func (t *Tagger) Viterbi(dst []int32, s sparse.Seq) ([]int32, float64, error) {
	w := t.pool.Get().(*work)
	defer t.pool.Put(w)
	emit, err := t.score(w, s)
	if err != nil {
		return dst[:0], 0, err
	}
	dst = resize(dst, s.Len())
	sc, err := t.m.Trans.Viterbi(w.ws, emit, nil, dst)
	return dst, sc, err
}

// Options selects what Tag computes besides the best labelling.
type Options struct {
	Prob      bool // the probability of the labelling (crfsuite tag -p)
	Marginals bool // the marginal probability of each chosen label (-i)
	NBest     int  // the k best labellings with their probabilities (-n K); 0 for none
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

	// NBest holds up to k labellings in order of decreasing score, the
	// first equal to Labels (fewer when fewer are possible).
	NBest []Path
}

// Path is one labelling with its score and probability.
type Path struct {
	Labels []int32
	Score  float64
	Prob   float64
}

// Tag labels s and computes what o asks for into out.
func (t *Tagger) Tag(s sparse.Seq, o Options, out *Output) error {
	if o.NBest < 0 {
		return fmt.Errorf("model: n-best count %d is negative", o.NBest)
	}
	w := t.pool.Get().(*work)
	defer t.pool.Put(w)
	emit, err := t.score(w, s)
	if err != nil {
		return err
	}
	T, M := s.Len(), t.m.State.Labels()
	tr := t.m.Trans
	out.Labels = resize(out.Labels, T)
	if out.Score, err = tr.Viterbi(w.ws, emit, nil, out.Labels); err != nil {
		return err
	}
	out.LogZ, out.Prob, out.Marginals, out.NBest = 0, 0, out.Marginals[:0], out.NBest[:0]
	if !o.Prob && !o.Marginals && o.NBest == 0 {
		return nil
	}
	var post engine.Posteriors
	if o.Marginals {
		w.marg = resize(w.marg, T*M)
		post.Marginals = w.marg
	}
	if out.LogZ, err = tr.Posteriors(w.ws, emit, nil, &post); err != nil {
		return err
	}
	out.Prob = math.Exp(out.Score - out.LogZ)
	if o.Marginals {
		out.Marginals = resize(out.Marginals, T)
		for i, y := range out.Labels {
			out.Marginals[i] = w.marg[i*M+int(y)]
		}
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
		got, err := tr.NBest(w.ws, emit, nil, w.paths[:k], w.scores)
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
		}
	}
	return nil
}

// resize returns s with length n, reusing its memory when it has room.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
