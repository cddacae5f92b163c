package model

import (
	"math"
	"strconv"
)

// TextOptions selects what AppendText prints for a tagged sequence; each
// field is the simdcrf tag option of the same meaning, which is crfsuite
// tag's (-r, -p, -i, -l) where crfsuite has one.
type TextOptions struct {
	Reference    bool // -r: the reference label and a TAB before each predicted label
	Prob         bool // -p: lines "@score\tS\tL" and "@probability\tP" before the labels
	Marginals    bool // -i: ":M" after each label, M its marginal probability
	AllMarginals bool // -l: "\tLABEL:M" for every label of the model, in id order
	NBest        int  // -n K: the K best labellings, each after a line "@nbest\tRANK\tP"
	// Quiet (-q) prints nothing: Tagger.TagText then only tags.
	Quiet bool
}

// TagOptions returns what Tagger.Tag must compute for AppendText to print
// what o asks for.
func (o TextOptions) TagOptions() Options {
	return Options{Prob: o.Prob, Marginals: o.Marginals, AllMarginals: o.AllMarginals, NBest: o.NBest}
}

// AppendText appends to dst the text simdcrf tag prints for one sequence,
// byte for byte, and returns the extended buffer. out is what Tagger.Tag
// returned for the sequence, computed with o.TagOptions(); labels are the
// model's label names by id (Model.LabelNames); ref holds the sequence's
// reference labels (printed with o.Reference), or nil.
//
// The text is crfsuite tag's: with o.Prob first a line "@score\tS\tL" (S
// the labelling's score, L = log Z) and a line "@probability\tP" (P =
// exp(S − L)); then one line per item,
//
//	[REFERENCE<TAB>]LABEL[:M][<TAB>LABEL_0:M_0<TAB>LABEL_1:M_1…]
//
// (the reference with o.Reference, the marginal M of the chosen label with
// o.Marginals, every label's marginal with o.AllMarginals); then an empty
// line. Numbers are printed as C's printf %f does (six decimals; inf, nan).
// With o.NBest = K each of the (up to) K best labellings prints so, after a
// line "@nbest\tRANK\tP": its rank from 1 and its probability; its @score
// and @probability lines (o.Prob) are its own, the marginals (o.Marginals,
// o.AllMarginals) those of its labels.
//
// AppendText allocates only when dst has to grow, so that a caller that
// reuses dst (a tagging loop, a pipeline stage) prints without allocating.
func AppendText(dst []byte, out *Output, labels []string, ref []string, o TextOptions) []byte {
	if o.NBest > 0 {
		for k := range out.NBest {
			p := &out.NBest[k]
			dst = append(dst, "@nbest\t"...)
			dst = strconv.AppendInt(dst, int64(k+1), 10)
			dst = append(dst, '\t')
			dst = appendC(dst, p.Prob)
			dst = append(dst, '\n')
			dst = appendSeq(dst, out, p.Labels, p.Score, p.Prob, p.Marginals, labels, ref, o)
		}
		return dst
	}
	return appendSeq(dst, out, out.Labels, out.Score, out.Prob, out.Marginals, labels, ref, o)
}

// appendSeq appends one labelling (pred, with its score, probability and
// marginals) as crfsuite tag prints a sequence.
func appendSeq(dst []byte, out *Output, pred []int32, score, prob float64, marg []float64, labels []string, ref []string, o TextOptions) []byte {
	if o.Prob {
		dst = append(dst, "@score\t"...)
		dst = appendC(dst, score)
		dst = append(dst, '\t')
		dst = appendC(dst, out.LogZ)
		dst = append(dst, "\n@probability\t"...)
		dst = appendC(dst, prob)
		dst = append(dst, '\n')
	}
	M := len(labels)
	for t, y := range pred {
		if o.Reference && t < len(ref) {
			dst = append(dst, ref[t]...)
			dst = append(dst, '\t')
		}
		dst = append(dst, labels[y]...)
		if o.Marginals {
			dst = append(dst, ':')
			dst = appendC(dst, marg[t])
		}
		if o.AllMarginals {
			for j, l := range labels {
				dst = append(dst, '\t')
				dst = append(dst, l...)
				dst = append(dst, ':')
				dst = appendC(dst, out.AllMarginals[t*M+j])
			}
		}
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}

// appendC appends x as C's printf("%f", x) prints it with glibc: six
// decimals, correctly rounded (as strconv's), and inf, -inf, nan, -nan for
// the values that are not finite.
func appendC(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		if math.Signbit(x) {
			return append(dst, "-nan"...)
		}
		return append(dst, "nan"...)
	case math.IsInf(x, 1):
		return append(dst, "inf"...)
	case math.IsInf(x, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, x, 'f', 6, 64)
}
