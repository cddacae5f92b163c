package sparse

import "fmt"

// SubLabels are state weights on parts of labels (sub-labels), shared by
// every label that has the part: with Czech positional tags ("NNFS1-----A----")
// part k is the tag's k-th character (part of speech, detailed part of
// speech, gender, number, case, …), so that an attribute seen with the
// nominative of one tag adds to the score of every nominative tag, and rare
// full tags share the evidence of their parts. The score of label y at a
// position is that of the (attribute, label) weights plus, for each of
// its N parts, Σ over the position's attributes a of value·W[a, part].
//
// Sub-label ids: Of[y·N+k] is the sub-label of label y's part k (−1: none).
// Attribute a has weights for the sub-labels IDs[Ptr[a]:Ptr[a+1]], W in the
// same order.
type SubLabels struct {
	N      int     // parts per label
	NSub   int     // sub-labels
	Of     []int32 // M×N
	Ptr    []int32 // NumAttrs+1
	IDs    []int32
	W      []float64
	Labels int // M
}

// Check verifies the shapes and ranges for m labels and numAttrs
// attributes, and that the weights are finite.
func (s *SubLabels) Check(m, numAttrs int) error {
	if s.N < 1 || s.NSub < 1 || s.Labels != m || len(s.Of) != m*s.N {
		return fmt.Errorf("sparse: sub-labels: %d parts, %d sub-labels, %d label entries for %d labels", s.N, s.NSub, len(s.Of), m)
	}
	for k, v := range s.Of {
		if v < -1 || int(v) >= s.NSub {
			return fmt.Errorf("sparse: sub-labels: label %d part %d is sub-label %d of %d", k/s.N, k%s.N, v, s.NSub)
		}
	}
	if len(s.Ptr) != numAttrs+1 || s.Ptr[0] != 0 || int(s.Ptr[numAttrs]) != len(s.IDs) || len(s.W) != len(s.IDs) {
		return fmt.Errorf("sparse: sub-labels: %d offsets, %d ids, %d weights for %d attributes", len(s.Ptr), len(s.IDs), len(s.W), numAttrs)
	}
	for a := range numAttrs {
		if s.Ptr[a+1] < s.Ptr[a] {
			return fmt.Errorf("sparse: sub-labels: offsets of attribute %d decrease", a)
		}
	}
	for k, v := range s.IDs {
		if v < 0 || int(v) >= s.NSub {
			return fmt.Errorf("sparse: sub-labels: weight %d is for sub-label %d of %d", k, v, s.NSub)
		}
		if w := s.W[k]; w != w || w-w != 0 {
			return fmt.Errorf("sparse: sub-labels: weight %d is %v", k, w)
		}
	}
	return nil
}

// AddScores adds the sub-label scores of seq (checked against the
// attribute count) to emit (T×M); buf is scratch of at least T·NSub.
func (s *SubLabels) AddScores(emit []float64, seq Seq, buf []float64) {
	T, m, n := seq.Len(), s.Labels, s.N
	for t := range T {
		q := s.subScores(buf, seq, t)
		row := emit[t*m : (t+1)*m]
		for y := range row {
			sum := 0.0
			for _, id := range s.Of[y*n : (y+1)*n] {
				if id >= 0 {
					sum += q[id]
				}
			}
			row[y] += sum
		}
	}
}

// AddScoresSets is AddScores at the labels of each position's set alone
// (sets[t] for position t, as engine.ChainOptions.Allowed): the other
// entries of emit are left as they are.
func (s *SubLabels) AddScoresSets(emit []float64, seq Seq, buf []float64, sets [][]int32) {
	m, n := s.Labels, s.N
	for t, set := range sets[:seq.Len()] {
		q := s.subScores(buf, seq, t)
		row := emit[t*m : (t+1)*m]
		for _, y := range set {
			sum := 0.0
			for _, id := range s.Of[int(y)*n : (int(y)+1)*n] {
				if id >= 0 {
					sum += q[id]
				}
			}
			row[y] += sum
		}
	}
}

// subScores returns position t's sub-label scores (in buf's row t).
func (s *SubLabels) subScores(buf []float64, seq Seq, t int) []float64 {
	q := buf[t*s.NSub : (t+1)*s.NSub]
	clear(q)
	for f := seq.Ptr[t]; f < seq.Ptr[t+1]; f++ {
		a := seq.IDs[f]
		v := 1.0
		if seq.Vals != nil {
			v = seq.Vals[f]
		}
		lo, hi := s.Ptr[a], s.Ptr[a+1]
		ids, w := s.IDs[lo:hi], s.W[lo:hi]
		w = w[:len(ids)]
		for k, id := range ids {
			q[id] += v * w[k]
		}
	}
	return q
}

// AddGradient adds c·value·Σ_{y has sub-label s} p[t·M+y] to g[k] for every
// weight k (attribute a, sub-label s) of an attribute a of seq at position t:
// with p the marginals minus the gold indicators, the gradient of the
// negative log-likelihood. buf is scratch of at least T·NSub.
func (s *SubLabels) AddGradient(g []float64, seq Seq, p []float64, c float64, buf []float64) {
	T, m, n := seq.Len(), s.Labels, s.N
	for t := range T {
		q := buf[t*s.NSub : (t+1)*s.NSub]
		clear(q)
		for y, py := range p[t*m : (t+1)*m] {
			if py == 0 {
				continue
			}
			for _, id := range s.Of[y*n : (y+1)*n] {
				if id >= 0 {
					q[id] += py
				}
			}
		}
		for f := seq.Ptr[t]; f < seq.Ptr[t+1]; f++ {
			a := seq.IDs[f]
			v := c
			if seq.Vals != nil {
				v *= seq.Vals[f]
			}
			lo, hi := s.Ptr[a], s.Ptr[a+1]
			ids, gw := s.IDs[lo:hi], g[lo:hi]
			gw = gw[:len(ids)]
			for k, id := range ids {
				gw[k] += v * q[id]
			}
		}
	}
}

// Positions returns the parts [k, k+1) for k < n: a label's first n bytes,
// one part each.
func Positions(n int) [][2]int {
	p := make([][2]int, n)
	for k := range p {
		p[k] = [2]int{k, k + 1}
	}
	return p
}

// NewSubLabels returns the sub-label structure of the given parts for
// labels (part [i, j) of a label: its bytes i to j; labels shorter have
// none), with weights (0) for the (attribute, sub-label) pairs the
// labelled corpus c has.
func NewSubLabels(labels []string, parts [][2]int, c *Corpus, numAttrs int) (*SubLabels, error) {
	m, n := len(labels), len(parts)
	if n < 1 {
		return nil, fmt.Errorf("sparse: %d label parts", n)
	}
	for _, p := range parts {
		if p[0] < 0 || p[1] <= p[0] {
			return nil, fmt.Errorf("sparse: label part [%d, %d)", p[0], p[1])
		}
	}
	s := &SubLabels{N: n, Labels: m, Of: make([]int32, m*n)}
	type key struct {
		part int
		val  string
	}
	ids := map[key]int32{}
	for y, l := range labels {
		for k, p := range parts {
			if p[1] > len(l) {
				s.Of[y*n+k] = -1
				continue
			}
			kv := key{k, l[p[0]:p[1]]}
			id, ok := ids[kv]
			if !ok {
				id = int32(len(ids))
				ids[kv] = id
			}
			s.Of[y*n+k] = id
		}
	}
	s.NSub = max(len(ids), 1)
	// The pairs seen: per attribute, a bitset over the sub-labels.
	words := (s.NSub + 63) / 64
	seen := make([]uint64, numAttrs*words)
	for i := range c.Len() {
		seq := c.Seq(i)
		if seq.Labels == nil {
			return nil, fmt.Errorf("sparse: sub-labels need labelled data")
		}
		for t := range seq.Len() {
			y := seq.Labels[t]
			for f := seq.Ptr[t]; f < seq.Ptr[t+1]; f++ {
				row := seen[int(seq.IDs[f])*words:]
				for _, id := range s.Of[int(y)*n : (int(y)+1)*n] {
					if id >= 0 {
						row[id/64] |= 1 << (id % 64)
					}
				}
			}
		}
	}
	s.Ptr = make([]int32, numAttrs+1)
	for a := range numAttrs {
		row := seen[a*words : (a+1)*words]
		for id := range int32(s.NSub) {
			if row[id/64]&(1<<(id%64)) != 0 {
				s.IDs = append(s.IDs, id)
			}
		}
		s.Ptr[a+1] = int32(len(s.IDs))
	}
	s.W = make([]float64, len(s.IDs))
	return s, nil
}
