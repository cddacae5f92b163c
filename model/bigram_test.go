package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/sparse"
)

// withRandomBigrams gives m nb bigram attributes with random weights:
// full M×M blocks, or a few label pairs each (some attributes with none).
func withRandomBigrams(t testing.TB, r *rand.Rand, m *Model, nb int, full bool) {
	M := m.Labels.Len()
	attrs := sparse.NewDict(nb)
	b := &Bigrams{Attrs: attrs, Ptr: []int32{0}}
	if !full {
		b.Pairs = []int32{}
	}
	for a := range nb {
		attrs.Add(fmt.Sprintf("B01:tag%d", a))
		switch {
		case full:
			for range M * M {
				b.Weights = append(b.Weights, r.NormFloat64())
			}
		case a%4 != 3:
			for p := range int32(M * M) {
				if r.IntN(3) == 0 {
					b.Pairs = append(b.Pairs, p)
					b.Weights = append(b.Weights, r.NormFloat64())
				}
			}
		}
		b.Ptr = append(b.Ptr, int32(len(b.Weights)))
	}
	m.Bigram = b
	if err := m.check(); err != nil {
		t.Fatal(err)
	}
}

// bigramSeq returns random bigram attributes for T positions (ids < nb,
// also at position 0, where they play no part).
func bigramSeq(r *rand.Rand, nb, T int) sparse.Seq {
	var b sparse.Builder
	b.Reset()
	for range T {
		for range r.IntN(3) {
			b.Add(int32(r.IntN(nb)), 1)
		}
		b.End(sparse.NoLabel)
	}
	return b.Seq()
}

// TestBigramTaggerBruteForce: the tagger's Viterbi labelling, log Z,
// marginals and n-best with observation-dependent transitions against
// enumeration, the bigram scores looked up one by one; and the model
// file keeps them.
func TestBigramTaggerBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, full := range []bool{false, true} {
		m := randomModel(t, r, spec{m: 3, attrs: 15, layout: sparse.SparseRows})
		withRandomBigrams(t, r, m, 6, full)
		var buf bytes.Buffer
		if _, err := m.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := loadBytes(t, buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if back.Bigram == nil || !slices.Equal(back.Bigram.Ptr, m.Bigram.Ptr) || !slices.Equal(back.Bigram.Pairs, m.Bigram.Pairs) ||
			!slices.Equal(back.Bigram.Weights, m.Bigram.Weights) || (back.Bigram.Pairs == nil) != full ||
			!slices.Equal(dictStrings(back.Bigram.Attrs), dictStrings(m.Bigram.Attrs)) {
			t.Fatalf("full=%v: bigram weights not read back", full)
		}
		M := 3
		tg := back.NewTagger()
		var out Output
		for range 25 {
			T := 1 + r.IntN(5)
			seq := randomSeq(r, 15, T, false)
			bs := bigramSeq(r, 6, T)
			if err := tg.TagBigrams(seq, bs, Options{Prob: true, AllMarginals: true, NBest: 3}, &out); err != nil {
				t.Fatal(err)
			}
			emit := make([]float64, T*M)
			m.State.Score(emit, seq)
			score := func(y []int32) float64 {
				s, _ := m.Trans.PathScore(emit, y, nil)
				for p := 1; p < T; p++ {
					pair := int(y[p-1])*M + int(y[p])
					for f := bs.Ptr[p]; f < bs.Ptr[p+1]; f++ {
						a := bs.IDs[f]
						for k := m.Bigram.Ptr[a]; k < m.Bigram.Ptr[a+1]; k++ {
							q := int(k - m.Bigram.Ptr[a])
							if !full {
								q = int(m.Bigram.Pairs[k])
							}
							if q == pair {
								s += m.Bigram.Weights[k]
							}
						}
					}
				}
				return s
			}
			y := make([]int32, T)
			z, best := math.Inf(-1), math.Inf(-1)
			var scores []float64
			marg := make([]float64, T*M)
			for n := 0; n < int(math.Pow(float64(M), float64(T))); n++ {
				for p, k := 0, n; p < T; p, k = p+1, k/M {
					y[p] = int32(k % M)
				}
				s := score(y)
				z = logAdd(z, s)
				best = max(best, s)
				scores = append(scores, s)
			}
			for n, s := range scores {
				for p, k := 0, n; p < T; p, k = p+1, k/M {
					marg[p*M+k%M] += math.Exp(s - z)
				}
			}
			if !near(out.Score, best) || !near(out.LogZ, z) || !near(score(out.Labels), best) {
				t.Fatalf("full=%v: score %v log Z %v, brute force %v %v", full, out.Score, out.LogZ, best, z)
			}
			for k := range marg {
				if !near(out.AllMarginals[k], marg[k]) {
					t.Fatalf("full=%v: marginal %d %v, brute force %v", full, k, out.AllMarginals[k], marg[k])
				}
			}
			slices.Sort(scores)
			slices.Reverse(scores)
			for k, p := range out.NBest {
				if !near(p.Score, scores[k]) || !near(score(p.Labels), scores[k]) {
					t.Fatalf("full=%v: path %d scores %v, want %v", full, k, p.Score, scores[k])
				}
			}
			if pred, sc, err := tg.ViterbiBigrams(nil, seq, bs); err != nil || !near(sc, best) || !slices.Equal(pred, out.Labels) {
				t.Fatalf("ViterbiBigrams: %v %v %v", pred, sc, err)
			}
		}
		// Bigram ids out of range are an error, not a panic.
		bad := bigramSeq(r, 6, 3)
		bad.IDs = append([]int32(nil), bad.IDs...)
		if len(bad.IDs) > 0 {
			bad.IDs[0] = 99
			if err := tg.TagBigrams(randomSeq(r, 15, 3, false), bad, Options{}, &out); err == nil {
				t.Error("bigram id out of range: no error")
			}
		}
		// The dump lists them.
		var d bytes.Buffer
		if err := back.Dump(&d, 5); err != nil || !strings.Contains(d.String(), "OBSERVATION_TRANSITIONS") || !strings.Contains(d.String(), "B01:tag0: ") {
			t.Errorf("dump: %v\n%s", err, d.String())
		}
		// CRFsuite's format cannot hold them.
		if err := back.CRFsuiteCompatible(); err == nil {
			t.Error("CRFsuiteCompatible: no error")
		}
		// Compact keeps them.
		c, err := back.Compact()
		if err != nil || c.Bigram == nil {
			t.Fatalf("Compact: %v, bigram %v", err, c.Bigram)
		}
	}
}

// TestBigramDamaged: damaged bigram sections are errors, and a reader
// that does not know them refuses the file (they are marked needed).
func TestBigramDamaged(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	m := randomModel(t, r, spec{m: 3, attrs: 10, layout: sparse.DenseRows})
	withRandomBigrams(t, r, m, 4, false)
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	orig := buf.Bytes()
	le := binary.LittleEndian
	n := int(le.Uint32(orig[24:]))
	entry := func(b []byte, kind uint32) []byte {
		for i := range n {
			e := b[headerSize+entrySize*i:]
			if le.Uint32(e) == kind {
				return e
			}
		}
		t.Fatalf("no section %d", kind)
		return nil
	}
	for _, c := range []struct {
		what string
		edit func(b []byte)
		want string
	}{
		{"pair out of range", func(b []byte) {
			e := entry(b, secBigramPairs)
			le.PutUint32(b[le.Uint64(e[8:]):], 99)
		}, "out of order or range"},
		{"offsets beyond the weights", func(b []byte) {
			e := entry(b, secBigramPtr)
			off := le.Uint64(e[8:])
			le.PutUint32(b[off+4:], 1000)
		}, "bigram weights"},
		{"unknown to an older reader", func(b []byte) {
			le.PutUint32(entry(b, secBigramWeights), 31)
		}, "needs section kind 31"},
		{"no dictionary", func(b []byte) {
			le.PutUint32(entry(b, secBigramEnds), 30)
			le.PutUint32(entry(b, 30)[4:], 0) // (optional: skipped)
		}, "without the bigram attribute dictionary"},
	} {
		b := bytes.Clone(orig)
		c.edit(b)
		fixup(b)
		wantErr(t, b, c.what, c.want)
	}
}
