package model

import "strconv"

// TextOptions selects what AppendText prints for a tagged sequence; each
// field is the simdcrf tag option of the same meaning.
type TextOptions struct {
	Prob      bool // -p: the labelling's probability, on a line before its labels
	Marginals bool // -i: ":M" after each label, M its marginal probability
	NBest     int  // -n K: the K best labellings, each after a line "@nbest\tRANK\tP"
}

// TagOptions returns what Tagger.Tag must compute for AppendText to print
// what o asks for.
func (o TextOptions) TagOptions() Options {
	return Options{Prob: o.Prob, Marginals: o.Marginals, NBest: o.NBest}
}

// AppendText appends to dst the text simdcrf tag prints for one sequence,
// byte for byte, and returns the extended buffer: out is what Tagger.Tag
// returned for the sequence, computed with o.TagOptions(); labels are the
// model's label names by id (Model.LabelNames); ref holds the sequence's
// reference labels, or nil. Without NBest that is one line per item
// holding its label, then an empty line. AppendText allocates only when dst
// has to grow, so that a caller that reuses dst (a tagging loop, a pipeline
// stage) prints without allocating. It lets other programs print exactly
// what simdcrf tag prints.
func AppendText(dst []byte, out *Output, labels []string, ref []string, o TextOptions) []byte {
	if o.Prob && o.NBest == 0 {
		dst = append(dst, "@probability\t"...)
		dst = strconv.AppendFloat(dst, out.Prob, 'f', 6, 64)
		dst = append(dst, '\n')
	}
	if o.NBest > 0 {
		for k := range out.NBest {
			p := &out.NBest[k]
			dst = append(dst, "@nbest\t"...)
			dst = strconv.AppendInt(dst, int64(k+1), 10)
			dst = append(dst, '\t')
			dst = strconv.AppendFloat(dst, p.Prob, 'f', 6, 64)
			dst = append(dst, '\n')
			dst = appendItems(dst, p.Labels, p.Marginals, labels, o)
		}
		return dst
	}
	return appendItems(dst, out.Labels, out.Marginals, labels, o)
}

// appendItems appends one line per item and an empty line.
func appendItems(dst []byte, pred []int32, marg []float64, labels []string, o TextOptions) []byte {
	for t, y := range pred {
		dst = append(dst, labels[y]...)
		if o.Marginals {
			dst = append(dst, ':')
			dst = strconv.AppendFloat(dst, marg[t], 'f', 6, 64)
		}
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}
