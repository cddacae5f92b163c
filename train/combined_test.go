package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestCandidatesSubLabelsBigrams checks issue 14's and issue 19's
// parameters in one θ: candidate labels (the constrained chain), sub-label
// state and transition weights, and observation-dependent transitions
// together. The layout is state, transitions, bigram weights, sub-label
// weights; the objective is checked against enumeration of the allowed
// labellings with every score computed from its definition, and every
// trainable parameter's gradient against finite differences.
func TestCandidatesSubLabelsBigrams(t *testing.T) {
	for _, pairs := range []string{BigramPairsSeen, BigramPairsAll} {
		t.Run(pairs, func(t *testing.T) {
			d := withBigrams(t, wordData(t, 21, 24, 5, 8), 7, 5)
			d.LabelNames = []string{"NA1", "NB2", "VA", "NA2", "VB1"}
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2, cfg.Candidates, cfg.SubLabels, cfg.BigramPairs = "dense", 0.2, 3, 3, pairs
			// As Train sets the model up.
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.lex, md.allowed, err = candidates(d, cfg.Candidates); err != nil {
				t.Fatal(err)
			}
			if md.sub, err = sparse.NewSubLabels(d.LabelNames, cfg.subParts(), d.Corpus, d.NumAttrs); err != nil {
				t.Fatal(err)
			}
			md.subTrans = !md.tied && !md.noTrans
			m, s := md.m, md.sub
			if md.big == nil || md.big.n == 0 || !md.subTrans || len(s.IDs) == 0 {
				t.Fatalf("bigram weights %v, sub-label transitions %v, sub-label weights %d", md.big, md.subTrans, len(s.IDs))
			}
			if md.bigOff != md.nState+m*m+2*m || md.big.off != md.bigOff || md.nParams != md.bigOff+md.big.n ||
				md.nTotal() != md.nParams+len(s.IDs)+s.NSub*s.NSub {
				t.Fatalf("layout: state %d, bigrams at %d (%d), parameters %d, sub-labels %d + %d², total %d",
					md.nState, md.bigOff, md.big.n, md.nParams, len(s.IDs), s.NSub, md.nTotal())
			}
			restricted := 0
			for _, a := range md.allowed {
				for _, set := range a {
					if set != nil {
						restricted++
					}
				}
			}
			if restricted == 0 {
				t.Fatal("no position restricted")
			}
			pool := engine.NewPool(2)
			defer pool.Close()
			o := newObjective(md, d, cfg.C2, pool)
			r := rand.New(rand.NewPCG(13, 14))
			theta := make([]float64, md.nTotal())
			trainable := func(k int) bool { return k >= md.nParams || md.trainable(k) }
			for k := range theta {
				if trainable(k) {
					theta[k] = r.NormFloat64() * 0.5
				}
			}
			g := make([]float64, len(theta))
			f, err := o.eval(theta, g, nil)
			if err != nil {
				t.Fatal(err)
			}

			// The definition, from θ's blocks alone.
			subW := theta[md.nParams : md.nParams+len(s.IDs)]
			u := theta[md.nParams+len(s.IDs):]
			bw := theta[md.bigOff:md.nParams]
			sc := md.hy.split(d.Corpus)
			want := 0.0
			for i := range d.Corpus.Len() {
				seq, bs := d.Corpus.Seq(i), d.Bigram.Seq(i)
				y := sc.labels[i]
				T := len(y)
				emit := make([]float64, T*m)
				md.hy.score(theta, emit, sc, i)
				for pos := range T {
					for f := seq.Ptr[pos]; f < seq.Ptr[pos+1]; f++ {
						a := seq.IDs[f]
						for k := s.Ptr[a]; k < s.Ptr[a+1]; k++ {
							for lab := range m {
								if slices.Contains(s.Of[lab*s.N:(lab+1)*s.N], s.IDs[k]) {
									emit[pos*m+lab] += seq.Value(int(f)) * subW[k]
								}
							}
						}
					}
				}
				score := func(y []int32) float64 {
					v := theta[md.startOff()+int(y[0])] + theta[md.endOff()+int(y[T-1])]
					for k := range T {
						v += emit[k*m+int(y[k])]
						if k == 0 {
							continue
						}
						a, b := y[k-1], y[k]
						v += md.transScore(theta, a, b)
						for p := range s.N {
							if pa, pb := s.Of[int(a)*s.N+p], s.Of[int(b)*s.N+p]; pa >= 0 && pb >= 0 {
								v += u[int(pa)*s.NSub+int(pb)]
							}
						}
						for f := bs.Ptr[k]; f < bs.Ptr[k+1]; f++ {
							if w := md.big.index(bs.IDs[f], a*int32(m)+b); w >= 0 {
								v += bs.Value(int(f)) * bw[w]
							}
						}
					}
					return v
				}
				allowed := md.allowed[i]
				lab := make([]int32, T)
				logZ := math.Inf(-1)
				for n := 0; n < pow(m, T); n++ {
					ok := true
					for t, k := 0, n; t < T; t, k = t+1, k/m {
						lab[t] = int32(k % m)
						if allowed[t] != nil && !slices.Contains(allowed[t], lab[t]) {
							ok = false
						}
					}
					if ok {
						logZ = logAdd(logZ, score(lab))
					}
				}
				want += d.Weight(i) * (logZ - score(y))
			}
			for _, v := range theta {
				want += cfg.C2 * v * v
			}
			if math.Abs(f-want) > 1e-9*math.Abs(want) {
				t.Errorf("objective %.12g, enumeration %.12g", f, want)
			}

			gtmp := make([]float64, len(theta))
			for k := range theta {
				if !trainable(k) {
					if g[k] != 0 {
						t.Errorf("fixed parameter %d has gradient %v", k, g[k])
					}
					continue
				}
				const h = 1e-5
				x := theta[k]
				theta[k] = x + h
				fp, _ := o.eval(theta, gtmp, nil)
				theta[k] = x - h
				fm, _ := o.eval(theta, gtmp, nil)
				theta[k] = x
				if fd := (fp - fm) / (2 * h); math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("parameter %d (bigrams from %d, sub-labels from %d): gradient %.8g, finite difference %.8g", k, md.bigOff, md.nParams, g[k], fd)
				}
			}
		})
	}
}

// TestTrainCandidatesSubLabelsBigrams: Train with all three returns the
// lexicon, the sub-label weights and the bigram weights, none all zero,
// and its training-set labelling respects the candidate labels.
func TestTrainCandidatesSubLabelsBigrams(t *testing.T) {
	d := withBigrams(t, wordData(t, 22, 40, 5, 8), 8, 5)
	d.LabelNames = []string{"NA1", "NB2", "VA", "NA2", "VB1"}
	cfg, _ := Defaults("lbfgs")
	cfg.Transitions, cfg.Candidates, cfg.SubLabels, cfg.MaxIterations, cfg.Threads = "dense", 3, 3, 30, 2
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lexicon == nil || res.Sub == nil || res.BigramWeights == nil {
		t.Fatalf("lexicon %v, sub-labels %v, bigram weights %d", res.Lexicon, res.Sub, len(res.BigramWeights))
	}
	nonzero := func(w []float64) bool { return slices.ContainsFunc(w, func(v float64) bool { return v != 0 }) }
	if !nonzero(res.Sub.W) || !nonzero(res.BigramWeights) {
		t.Errorf("sub-label weights non-zero %v, bigram weights non-zero %v", nonzero(res.Sub.W), nonzero(res.BigramWeights))
	}
	if res.TransParams != d.Labels*d.Labels+2*d.Labels {
		t.Errorf("TransParams %d, want %d", res.TransParams, d.Labels*d.Labels+2*d.Labels)
	}
}
