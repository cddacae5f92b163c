package train

import (
	"fmt"
	"slices"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
	"github.com/simdcrf/simdcrf/sparse"
)

// Bigram pair sets (Config.BigramPairs).
const (
	// BigramPairsSeen gives a bigram attribute a weight for the label
	// pairs seen with it in training only (CRFsuite's sparsity, applied to
	// observation-dependent transitions); the others score 0 for it.
	BigramPairsSeen = "seen"
	// BigramPairsAll gives a bigram attribute a full M×M block of weights,
	// as CRF++ does for every expanded B string.
	BigramPairsAll = "all"
)

// bigrams is the parameterisation of observation-dependent transitions
// (CRF++ B template lines with %x): bigram attribute a has the weights
// w[ptr[a]:ptr[a+1]] (w = θ[off:off+n]), weight k for the label pair
// pairs[k] = i·M + j (the transition i → j); with full blocks (pairs nil)
// weight ptr[a] + i·M + j. At position t ≥ 1 of a sequence, the
// transition scores are the shared matrix plus the sum of the weights of
// the bigram attributes active there (engine.ChainOptions.TransDelta).
type bigrams struct {
	m     int
	off   int // θ offset of the weights
	n     int // number of weights
	ptr   []int32
	pairs []int32 // nil: full M×M blocks
}

// newBigrams decides the bigram weights from the training data: with
// full blocks, M² for every attribute seen at least minFreq times (its
// feature values summed); else one for every (attribute, label pair) seen
// at least minFreq times, as feature.minfreq prunes state features.
func newBigrams(d *Data, m int, all bool, minFreq float64) (*bigrams, error) {
	na := d.NumBigramAttrs
	minf := max(minFreq, 1)
	b := &bigrams{m: m, ptr: make([]int32, na+1)}
	M2 := int64(m) * int64(m)
	if all {
		freq := make([]float64, na)
		for i := range d.Bigram.Len() {
			s := d.Bigram.Seq(i)
			for t := 1; t < s.Len(); t++ {
				for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
					freq[s.IDs[f]] += s.Value(int(f))
				}
			}
		}
		n := int64(0)
		for a, f := range freq {
			if f >= minf {
				n += M2
			}
			if n > int64(maxBigramWeights) {
				return nil, fmt.Errorf("train: %d bigram attributes with %d×%d weights each are more than %d weights (feature.bigram_pairs=seen keeps the pairs seen in training only)", na, m, m, maxBigramWeights)
			}
			b.ptr[a+1] = int32(n)
		}
		b.n = int(n)
		return b, nil
	}
	freq := map[uint64]float64{}
	for i := range d.Bigram.Len() {
		s := d.Bigram.Seq(i)
		y := d.Corpus.Seq(i).Labels
		for t := 1; t < s.Len(); t++ {
			p := uint64(y[t-1])*uint64(m) + uint64(y[t])
			for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
				freq[uint64(s.IDs[f])<<32|p] += s.Value(int(f))
			}
		}
	}
	keys := make([]uint64, 0, len(freq))
	for k, f := range freq {
		if f >= minf {
			keys = append(keys, k)
		}
	}
	if len(keys) > maxBigramWeights {
		return nil, fmt.Errorf("train: %d bigram weights, more than %d", len(keys), maxBigramWeights)
	}
	slices.Sort(keys)
	b.pairs = make([]int32, len(keys))
	for k, key := range keys {
		b.pairs[k] = int32(key & (1<<32 - 1))
		b.ptr[key>>32+1]++
	}
	for a := range na {
		b.ptr[a+1] += b.ptr[a]
	}
	b.n = len(keys)
	return b, nil
}

// maxBigramWeights bounds the weights (int32 offsets).
const maxBigramWeights = 1<<31 - 1

// index returns the weight of attribute a for the pair p = i·M + j, or −1.
func (b *bigrams) index(a int32, p int32) int {
	lo, hi := b.ptr[a], b.ptr[a+1]
	if lo == hi {
		return -1
	}
	if b.pairs == nil {
		return int(lo) + int(p)
	}
	row := b.pairs[lo:hi]
	k, ok := slices.BinarySearch(row, p)
	if !ok {
		return -1
	}
	return int(lo) + k
}

// addEdges adds c·value·P(y_{t−1} = i, y_t = j) to the weights' gradient g
// for every active attribute at every position t ≥ 1, from the edge
// marginals edges ((T−1)×M², engine.Posteriors.Edges).
func (b *bigrams) addEdges(g []float64, s sparse.Seq, edges []float64, c float64) {
	M2 := b.m * b.m
	for t := 1; t < s.Len(); t++ {
		e := edges[(t-1)*M2 : t*M2]
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			a := s.IDs[f]
			lo, hi := b.ptr[a], b.ptr[a+1]
			if lo == hi {
				continue
			}
			v := c * s.Value(int(f))
			if b.pairs == nil {
				kernels.Axpy(v, e, g[lo:hi])
				continue
			}
			ga := g[lo:hi]
			for k, p := range b.pairs[lo:hi] {
				ga[k] += v * e[p]
			}
		}
	}
}

// addPath adds c·value to the weights in g of the labelling y's label pairs
// (the observed counts, or a perceptron's update).
func (b *bigrams) addPath(g []float64, s sparse.Seq, y []int32, c float64) {
	m := int32(b.m)
	for t := 1; t < s.Len(); t++ {
		p := y[t-1]*m + y[t]
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			if k := b.index(s.IDs[f], p); k >= 0 {
				g[k] += c * s.Value(int(f))
			}
		}
	}
}

// pathScore returns the bigram part of the score of labelling y under
// the deltas td (from deltas; nil: 0).
func pathDelta(td [][]float64, y []int32, m int) float64 {
	s := 0.0
	for t, d := range td {
		if d != nil {
			s += d[int(y[t-1])*m+int(y[t])]
		}
	}
	return s
}

// bigramBuf is one worker's scratch for observation-dependent
// transitions.
type bigramBuf struct {
	deltas sparse.DeltaWork
	edges  []float64 // (T−1)×M² edge marginals
	opts   engine.ChainOptions
}

func (b *bigrams) newBuf(maxLen int) bigramBuf {
	if b == nil {
		return bigramBuf{}
	}
	bb := bigramBuf{edges: make([]float64, max(maxLen-1, 0)*b.m*b.m)}
	bb.deltas.Grow(maxLen, b.m, len(b.ptr)-1)
	return bb
}

// options returns the chain options for sequence s under the weights w
// (scaled), or nil when the chain has no observation-dependent
// transitions.
func (bb *bigramBuf) options(b *bigrams, w []float64, scale float64, s sparse.Seq) *engine.ChainOptions {
	if b == nil {
		return nil
	}
	td := sparse.TransDeltas(&bb.deltas, b.ptr, b.pairs, w, b.m, scale, s)
	if td == nil {
		return nil
	}
	bb.opts.TransDelta = td
	return &bb.opts
}
