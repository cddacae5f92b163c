package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/sparse"
)

// TestLexiconSubLabelsBigramsModel: a model with a lexicon (sections
// 16–18), sub-label weights (19) and observation-dependent transitions
// (24–29) keeps all three through WriteFile and Load, and the tagger
// applies candidate labels and bigram attributes together (one chain's
// options): labelling, score, log Z, marginals and n-best against
// enumeration of the allowed labellings, every score from its definition.
// Calls with one of the two only (the tagger's pooled options reused)
// give that one's results.
func TestLexiconSubLabelsBigramsModel(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 14))
	for _, full := range []bool{false, true} {
		const M, nAttrs, nb = 4, 20, 6
		m0 := randomModel(t, r, spec{m: M, attrs: nAttrs, layout: sparse.SparseRows})
		var lb sparse.LexiconBuilder
		lb.Add([]byte("v0"), 3)
		lb.Add([]byte("v0"), 1)
		lb.Add([]byte("v1"), 0)
		lb.Add([]byte("v1"), 2)
		lb.Add([]byte("v2"), 2)
		m0.Lexicon = lb.Build()
		c := sparse.NewCorpus()
		var b sparse.Builder
		for range 20 {
			b.Reset()
			for range 5 {
				b.Add(int32(r.IntN(nAttrs)), 1)
				b.End(int32(r.IntN(M)))
			}
			if err := c.Append(b.Seq()); err != nil {
				t.Fatal(err)
			}
		}
		sub, err := sparse.NewSubLabels(m0.LabelNames(), sparse.Positions(4), c, nAttrs)
		if err != nil {
			t.Fatal(err)
		}
		for k := range sub.W {
			sub.W[k] = r.NormFloat64()
		}
		m0.Sub = sub
		withRandomBigrams(t, r, m0, nb, full)

		path := filepath.Join(t.TempDir(), "all.model")
		if err := m0.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if m.Lexicon == nil || !slices.Equal(m.Lexicon.Labels, m0.Lexicon.Labels) || m.Sub == nil || !slices.Equal(m.Sub.W, sub.W) ||
			m.Bigram == nil || !slices.Equal(m.Bigram.Weights, m0.Bigram.Weights) || !slices.Equal(m.Bigram.Pairs, m0.Bigram.Pairs) {
			t.Fatalf("full=%v: lexicon, sub-labels or bigrams not read back", full)
		}

		tg := m.NewTagger()
		var out Output
		restricted, withBig := 0, 0
		for range 30 {
			T := 1 + r.IntN(4)
			seq := randomSeq(r, nAttrs, T, false)
			bs := bigramSeq(r, nb, T)
			words := make([][]byte, T)
			for k := range words {
				words[k] = fmt.Appendf(nil, "v%d", r.IntN(5))
			}
			cands := m.Candidates(nil, words, len(words))
			emit := make([]float64, T*M)
			m.State.Score(emit, seq)
			for p := range T {
				for f := seq.Ptr[p]; f < seq.Ptr[p+1]; f++ {
					a := seq.IDs[f]
					for k := sub.Ptr[a]; k < sub.Ptr[a+1]; k++ {
						for y := range M {
							if slices.Contains(sub.Of[y*sub.N:(y+1)*sub.N], sub.IDs[k]) {
								emit[p*M+y] += seq.Value(int(f)) * sub.W[k]
							}
						}
					}
				}
			}
			score := func(y []int32, useBig bool) float64 {
				s, _ := m.Trans.PathScore(emit, y, nil)
				for p := 1; useBig && p < T; p++ {
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
			// check compares out with the enumeration of the labellings
			// the candidates admit (useCands), scored with or without the
			// bigram attributes.
			check := func(what string, useCands, useBig bool) {
				t.Helper()
				best, logZ := math.Inf(-1), math.Inf(-1)
				var bestY []int32
				var scores []float64
				var paths [][]int32
				y := make([]int32, T)
				var rec func(k int)
				rec = func(k int) {
					if k == T {
						s := score(y, useBig)
						paths, scores = append(paths, slices.Clone(y)), append(scores, s)
						logZ = logAdd(logZ, s)
						if s > best {
							best, bestY = s, slices.Clone(y)
						}
						return
					}
					for j := range int32(M) {
						if set := m.Lexicon.Allowed(cands[k]); useCands && set != nil && !slices.Contains(set, j) {
							continue
						}
						y[k] = j
						rec(k + 1)
					}
				}
				rec(0)
				if !slices.Equal(out.Labels, bestY) || !near(out.Score, best) || !near(out.LogZ, logZ) {
					t.Fatalf("full=%v %s: labels %v score %v log Z %v, want %v %v %v", full, what, out.Labels, out.Score, out.LogZ, bestY, best, logZ)
				}
				marg := make([]float64, T*M)
				for p, ys := range paths {
					for k, j := range ys {
						marg[k*M+int(j)] += math.Exp(scores[p] - logZ)
					}
				}
				for k := range marg {
					if math.Abs(marg[k]-out.AllMarginals[k]) > 1e-9 {
						t.Fatalf("full=%v %s: marginal [%d][%d] %v, want %v", full, what, k/M, k%M, out.AllMarginals[k], marg[k])
					}
				}
				slices.Sort(scores)
				slices.Reverse(scores)
				for k, p := range out.NBest {
					if !near(p.Score, scores[k]) || !near(score(p.Labels, useBig), scores[k]) {
						t.Fatalf("full=%v %s: path %d scores %v, want %v", full, what, k, p.Score, scores[k])
					}
				}
			}
			all := Options{Prob: true, AllMarginals: true, NBest: 3}
			o := all
			o.Candidates, o.Bigrams = cands, bs
			if err := tg.Tag(seq, o, &out); err != nil {
				t.Fatal(err)
			}
			check("candidates and bigrams", true, true)
			vit, sc, err := tg.ViterbiWith(nil, seq, o)
			if err != nil || !slices.Equal(vit, out.Labels) || !near(sc, out.Score) {
				t.Fatalf("ViterbiWith %v %v (%v), Tag %v %v", vit, sc, err, out.Labels, out.Score)
			}
			for k, c := range cands {
				if c >= 0 {
					restricted++
					if !slices.Contains(m.Lexicon.Allowed(c), out.Labels[k]) {
						t.Fatalf("position %d (%s) labelled %d outside %v", k, words[k], out.Labels[k], m.Lexicon.Allowed(c))
					}
				}
			}
			if bs.NumFeatures() > 0 {
				withBig++
			}
			// One of the two, after both: nothing of the other stays.
			o = all
			o.Candidates = cands
			if err := tg.Tag(seq, o, &out); err != nil {
				t.Fatal(err)
			}
			check("candidates only", true, false)
			if vit, _, err := tg.ViterbiCandidates(nil, seq, cands); err != nil || !slices.Equal(vit, out.Labels) {
				t.Fatalf("ViterbiCandidates %v (%v), Tag %v", vit, err, out.Labels)
			}
			if err := tg.TagBigrams(seq, bs, all, &out); err != nil {
				t.Fatal(err)
			}
			check("bigrams only", false, true)
			if vit, _, err := tg.ViterbiBigrams(nil, seq, bs); err != nil || !slices.Equal(vit, out.Labels) {
				t.Fatalf("ViterbiBigrams %v (%v), Tag %v", vit, err, out.Labels)
			}
		}
		if restricted == 0 || withBig == 0 {
			t.Fatalf("%d positions restricted, %d sequences with bigram attributes", restricted, withBig)
		}
	}
}
