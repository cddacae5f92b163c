package model

import (
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

// An Encoder turns sequences read by package format into what a Tagger
// tags: the attribute ids the model knows (Encode), the bigram attributes
// of observation-dependent transitions (EncodeBigrams) and each position's
// candidate labels (Candidates). simdcrf tag, the Beam pipeline and package
// simdcrf all encode through it, so that each tags a sequence alike. An
// Encoder reuses its memory: it is not for concurrent use, and once its
// buffers have grown it does not allocate.
type Encoder struct {
	m     *Model
	b, bb sparse.Builder
	cands []int32
}

// NewEncoder returns an Encoder for m.
func (m *Model) NewEncoder() *Encoder { return &Encoder{m: m} }

// Encoded is an encoded sequence: views of the Encoder's memory, valid
// until its next Encode.
type Encoded struct {
	Seq        sparse.Seq // attribute ids (no gold labels)
	Bigrams    sparse.Seq // bigram attributes; empty when the model has none
	Candidates []int32    // each position's lexicon entry (−1: free); nil without a lexicon
}

// Options returns the tagging options for e (its candidates and bigram
// attributes) with what o asks for besides.
func (e Encoded) Options(o Options) Options {
	o.Candidates, o.Bigrams = e.Candidates, e.Bigrams
	return o
}

// Encode encodes seq.
func (e *Encoder) Encode(seq *format.Sequence) Encoded {
	m := e.m
	r := Encoded{Seq: m.Encode(&e.b, seq.Ptr, seq.Names, seq.Values)}
	e.cands = m.Candidates(e.cands[:0], seq.Words, seq.Len())
	r.Candidates = e.cands
	if m.Bigram != nil {
		r.Bigrams = m.EncodeBigrams(&e.bb, seq.Len(), seq.BPtr, seq.BNames)
	}
	return r
}

// TagText tags an encoded sequence as o asks and appends to dst what
// simdcrf tag prints for it (AppendText; nothing with o.Quiet), returning
// the extended buffer. The best labelling is in out.Labels afterwards; ref
// holds the reference labels (for o.Reference) or is nil. Only the best
// labelling is computed (Viterbi) unless o asks for probabilities,
// marginals or n-best lists.
func (t *Tagger) TagText(dst []byte, out *Output, e Encoded, ref []string, o TextOptions) ([]byte, error) {
	opt := e.Options(o.TagOptions())
	if !opt.Prob && !opt.Marginals && !opt.AllMarginals && opt.NBest == 0 {
		var err error
		out.Labels, out.Score, err = t.ViterbiWith(out.Labels, e.Seq, opt)
		if err != nil {
			return dst, err
		}
		out.LogZ, out.Prob, out.Marginals, out.AllMarginals, out.NBest = 0, 0, out.Marginals[:0], out.AllMarginals[:0], out.NBest[:0]
	} else if err := t.Tag(e.Seq, opt, out); err != nil {
		return dst, err
	}
	if o.Quiet {
		return dst, nil
	}
	return AppendText(dst, out, t.names, ref, o), nil
}
