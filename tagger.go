package simdcrf

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
)

// A Tagger labels sequences with a Model: the best labelling (Viterbi), the
// probability of a labelling, marginals and the k best labellings. A model
// with candidate labels or pruning tags over its label sets, exactly as
// `simdcrf tag` does. Attributes the model does not know are ignored (they
// have no weights), as in CRFsuite.
//
// A Tagger is safe for concurrent use by many goroutines; a call allocates
// nothing beyond the slices it returns.
type Tagger struct {
	m      *model.Model
	t      *model.Tagger
	labels []string
	tokens *format.Options // how the model reads tokens; nil for attributes
	tokErr error           // why it cannot
	pool   sync.Pool       // *tagWork
}

// Labelling is a labelling of a sequence and its probability.
type Labelling struct {
	Labels []string
	Prob   float64 // p(labels | xseq)
}

type tagWork struct {
	seq format.Sequence
	enc *model.Encoder
	tok *format.Tokens
	out model.Output
	ids []int32
}

func newTagger(m *model.Model) *Tagger {
	g := &Tagger{m: m, t: m.NewTagger(), labels: m.LabelNames()}
	if s := m.Meta.Spec; s.Template != "" || s.Features != "" {
		s.TemplateName = "the model's template"
		o, err := s.Options()
		if err == nil {
			o.Columns = s.Columns
			g.tokens = &o
		}
		g.tokErr = err
	} else {
		g.tokErr = errors.New("the model reads attributes (Tag), not tokens: it has no template or feature set")
	}
	g.pool.New = func() any { return &tagWork{enc: m.NewEncoder()} }
	return g
}

// encode sets w.seq to xseq's attributes.
func (g *Tagger) items(w *tagWork, xseq []Item) error {
	if pos, err := fromItems(&w.seq, xseq, nil); err != nil {
		return seqError(-1, false, pos, err)
	}
	return nil
}

// viterbi labels w.seq.
func (g *Tagger) viterbi(w *tagWork) ([]string, error) {
	e := w.enc.Encode(&w.seq)
	var err error
	w.out.Labels, _, err = g.t.ViterbiWith(w.out.Labels, e.Seq, e.Options(model.Options{}))
	if err != nil {
		return nil, fmt.Errorf("simdcrf: %w", err)
	}
	return g.names(w.out.Labels), nil
}

// names returns the label names of ids.
func (g *Tagger) names(ids []int32) []string {
	out := make([]string, len(ids))
	for t, y := range ids {
		out[t] = g.labels[y]
	}
	return out
}

// Tag returns the most probable labelling of xseq (ties go to the label
// first in Labels order); an empty sequence has an empty one.
func (g *Tagger) Tag(xseq []Item) ([]string, error) {
	w := g.pool.Get().(*tagWork)
	defer g.pool.Put(w)
	if err := g.items(w, xseq); err != nil {
		return nil, err
	}
	return g.viterbi(w)
}

// TagTokens returns the most probable labelling of a sequence of tokens,
// each a row of columns as the model was trained with (AppendTokens, or
// `simdcrf learn` on column files: the word first), from the attributes
// the model's own template or feature set extracts; words of its lexicon
// keep to their candidate labels.
func (g *Tagger) TagTokens(tokens [][]string) ([]string, error) {
	if g.tokens == nil {
		return nil, fmt.Errorf("simdcrf: TagTokens: %w", g.tokErr)
	}
	w := g.pool.Get().(*tagWork)
	defer g.pool.Put(w)
	if w.tok == nil {
		tk, err := format.NewTokens(*g.tokens)
		if err != nil {
			return nil, fmt.Errorf("simdcrf: TagTokens: %w", err)
		}
		w.tok = tk
	}
	if err := w.tok.Sequence(&w.seq, tokens, nil); err != nil {
		return nil, seqError(-1, false, -1, err)
	}
	return g.viterbi(w)
}

// Probability returns p(yseq | xseq), the probability of the labelling
// yseq (0 for one the model's label sets exclude). A label the model does
// not have is an error.
func (g *Tagger) Probability(xseq []Item, yseq []string) (float64, error) {
	if len(yseq) != len(xseq) {
		return 0, seqError(-1, false, -1, fmt.Errorf("%d items but %d labels", len(xseq), len(yseq)))
	}
	w := g.pool.Get().(*tagWork)
	defer g.pool.Put(w)
	if err := g.items(w, xseq); err != nil {
		return 0, err
	}
	w.ids = w.ids[:0]
	for t, l := range yseq {
		y, ok := g.m.Labels.Lookup(l)
		if !ok {
			return 0, seqError(-1, false, t, fmt.Errorf("label %q is not one of the model's", clip(l)))
		}
		w.ids = append(w.ids, y)
	}
	e := w.enc.Encode(&w.seq)
	lp, err := g.t.LogProb(e.Seq, e.Options(model.Options{}), w.ids)
	if err != nil {
		return 0, fmt.Errorf("simdcrf: %w", err)
	}
	return math.Exp(lp), nil
}

// Marginals returns the marginal probability of every label at every
// position: [t][j] is P(y_t = Labels()[j] | xseq).
func (g *Tagger) Marginals(xseq []Item) ([][]float64, error) {
	w := g.pool.Get().(*tagWork)
	defer g.pool.Put(w)
	if err := g.items(w, xseq); err != nil {
		return nil, err
	}
	T, M := len(xseq), len(g.labels)
	if T == 0 {
		return [][]float64{}, nil
	}
	e := w.enc.Encode(&w.seq)
	if err := g.t.Tag(e.Seq, e.Options(model.Options{AllMarginals: true}), &w.out); err != nil {
		return nil, fmt.Errorf("simdcrf: %w", err)
	}
	flat := make([]float64, T*M)
	copy(flat, w.out.AllMarginals)
	out := make([][]float64, T)
	for t := range out {
		out[t] = flat[t*M : (t+1)*M : (t+1)*M]
	}
	return out, nil
}

// NBest returns the k most probable labellings of xseq, best first (fewer
// when fewer are possible), each with its probability.
func (g *Tagger) NBest(xseq []Item, k int) ([]Labelling, error) {
	if k < 1 {
		return nil, fmt.Errorf("simdcrf: NBest: k = %d, want k ≥ 1", k)
	}
	w := g.pool.Get().(*tagWork)
	defer g.pool.Put(w)
	if err := g.items(w, xseq); err != nil {
		return nil, err
	}
	if len(xseq) == 0 {
		return []Labelling{{Labels: []string{}, Prob: 1}}, nil
	}
	e := w.enc.Encode(&w.seq)
	if err := g.t.Tag(e.Seq, e.Options(model.Options{NBest: k}), &w.out); err != nil {
		return nil, fmt.Errorf("simdcrf: %w", err)
	}
	out := make([]Labelling, len(w.out.NBest))
	for i, p := range w.out.NBest {
		out[i] = Labelling{Labels: g.names(p.Labels), Prob: p.Prob}
	}
	return out, nil
}

// clip shortens a long string for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}
