package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// wordData is randomData with a word at every position (word w takes
// label w%m or (w+1)%m, so that candidate sets are small) and a
// vocabulary of nWords words "w0", "w1", ….
func wordData(t testing.TB, seed uint64, nSeq, m, nWords int) *Data {
	r := rand.New(rand.NewPCG(seed, 2))
	c := sparse.NewCorpus()
	var b sparse.Builder
	vocab := sparse.NewDict(16)
	for w := range nWords {
		vocab.Add(fmt.Sprintf("w%d", w))
	}
	var words [][]int32
	for range nSeq {
		b.Reset()
		T := 1 + r.IntN(6)
		ws := make([]int32, T)
		for k := range T {
			w := int32(r.IntN(nWords))
			ws[k] = w
			b.Add(w, 1)
			b.Add(int32(nWords+r.IntN(5)), 1)
			b.End((w + int32(r.IntN(2))) % int32(m))
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
		words = append(words, ws)
	}
	return &Data{Corpus: c, NumAttrs: nWords + 5, Labels: m, Words: words, Vocab: vocab}
}

// bruteLogZ returns log Σ exp(score) over the labellings the allowed sets
// admit (nil: any label), scores from md's parameters theta.
func bruteLogZ(md *paramSpace, theta, emit []float64, allowed [][]int32, T int) float64 {
	m := md.m
	y := make([]int32, T)
	logZ := math.Inf(-1)
	var rec func(t int)
	rec = func(t int) {
		if t == T {
			s := theta[md.startOff()+int(y[0])] + theta[md.endOff()+int(y[T-1])]
			for k := range T {
				s += emit[k*m+int(y[k])]
				if k > 0 {
					s += md.transScore(theta, y[k-1], y[k])
				}
			}
			hi, lo := max(logZ, s), min(logZ, s)
			logZ = hi + math.Log1p(math.Exp(lo-hi))
			return
		}
		for j := range int32(m) {
			if allowed != nil && allowed[t] != nil && !slices.Contains(allowed[t], j) {
				continue
			}
			y[t] = j
			rec(t + 1)
		}
	}
	rec(0)
	return logZ
}

// TestCandidatesLikelihood: with candidate labels, the objective is the
// constrained chain's −log p(gold) summed over sequences (checked against
// enumeration of the allowed labellings), and its gradient matches finite
// differences, for dense, tied and no transitions.
func TestCandidatesLikelihood(t *testing.T) {
	for _, trans := range []string{"dense", "tied", "none"} {
		t.Run(trans, func(t *testing.T) {
			d := wordData(t, 5, 30, 5, 8)
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2, cfg.Candidates = trans, 0.2, 3
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.lex, md.allowed, err = candidates(d, cfg.Candidates); err != nil {
				t.Fatal(err)
			}
			restricted := 0
			for _, a := range md.allowed {
				for _, s := range a {
					if s != nil {
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
			r := rand.New(rand.NewPCG(3, 4))
			theta := make([]float64, md.nParams)
			for k := range theta {
				if md.trainable(k) {
					theta[k] = r.NormFloat64() * 0.7
				}
			}
			g := make([]float64, md.nParams)
			f, err := o.eval(theta, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, free := 0.0, 0.0
			sc := md.hy.split(d.Corpus)
			for i := range d.Corpus.Len() {
				y := sc.labels[i]
				T := len(y)
				emit := make([]float64, T*md.m)
				md.hy.score(theta, emit, sc, i)
				logZ := bruteLogZ(md, theta, emit, md.allowed[i], T)
				s := theta[md.startOff()+int(y[0])] + theta[md.endOff()+int(y[T-1])]
				for k := range T {
					s += emit[k*md.m+int(y[k])]
					if k > 0 {
						s += md.transScore(theta, y[k-1], y[k])
					}
				}
				want += logZ - s
				free += bruteLogZ(md, theta, emit, nil, T) - s
			}
			for _, v := range theta {
				want += cfg.C2 * v * v
				free += cfg.C2 * v * v
			}
			if math.Abs(f-want) > 1e-9*math.Abs(want) {
				t.Errorf("objective %v, constrained enumeration %v (unconstrained %v)", f, want, free)
			}
			if !(free > want+1e-6) {
				t.Errorf("constrained objective %v not below the unconstrained %v", want, free)
			}
			gtmp := make([]float64, md.nParams)
			for k := range theta {
				if !md.trainable(k) {
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
					t.Errorf("parameter %d: gradient %.8g, finite difference %.8g", k, g[k], fd)
				}
			}
		})
	}
}

// TestCandidatesLexicon: the lexicon holds the words seen K times with
// their labels; rarer words, and words whose gold label a lexicon file's
// entry lacks, are free; a file's entries join the learnt ones; training
// with it predicts only allowed labels on the training data's restricted
// positions.
func TestCandidatesLexicon(t *testing.T) {
	d := wordData(t, 9, 60, 6, 10)
	// Make w9 rare: one position.
	count := map[int32]int{}
	for _, ws := range d.Words {
		for _, w := range ws {
			count[w]++
		}
	}
	const K = 4
	var fb sparse.LexiconBuilder
	fb.Add([]byte("w0"), 5) // a label w0 never has: its positions stay free
	fb.Add([]byte("zz"), 2) // a word the data lacks
	d.Lexicon = fb.Build()
	lex, allowed, err := candidates(d, K)
	if err != nil {
		t.Fatal(err)
	}
	for v := range int32(d.Vocab.Len()) {
		word := d.Vocab.String(v)
		id, ok := lex.Words.Lookup(word)
		if count[v] < K {
			if ok && word != "w0" {
				t.Errorf("%s seen %d times (< %d) has candidates %v", word, count[v], K, lex.Allowed(id))
			}
			continue
		}
		if !ok {
			t.Errorf("%s seen %d times has no candidates", word, count[v])
			continue
		}
		want := []int32{v % 6, (v + 1) % 6}
		got := lex.Allowed(id)
		for _, y := range got {
			if !slices.Contains(want, y) && !(word == "w0" && y == 5) {
				t.Errorf("%s: candidates %v, want a subset of %v", word, got, want)
			}
		}
	}
	if id, ok := lex.Words.Lookup("zz"); !ok || !slices.Equal(lex.Allowed(id), []int32{2}) {
		t.Errorf("lexicon file entry zz: %v, %v", ok, lex.Allowed(id))
	}
	for i, ws := range d.Words {
		y := d.Corpus.Seq(i).Labels
		for k, w := range ws {
			id, ok := lex.Words.Lookup(d.Vocab.String(w))
			set := allowed[i][k]
			switch {
			case !ok:
				if set != nil {
					t.Errorf("sequence %d position %d: word outside the lexicon restricted to %v", i, k, set)
				}
			case !slices.Contains(lex.Allowed(id), y[k]):
				t.Errorf("sequence %d position %d: gold %d outside its word's set", i, k, y[k])
			case set == nil || !slices.Contains(set, y[k]):
				t.Errorf("sequence %d position %d: set %v", i, k, set)
			}
		}
	}

	// Trained: the lexicon comes back in the Result, and holdout tagging
	// under it never leaves a restricted position's set.
	cfg, _ := Defaults("lbfgs")
	cfg.Candidates, cfg.Threads, cfg.MaxIterations = K, 2, 30
	cfg.Holdout = d
	var acc float64
	cfg.Progress = func(p Progress) { acc = p.Holdout }
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lexicon == nil || res.Lexicon.Len() != lex.Len() {
		t.Fatalf("result lexicon %v, want %d words", res.Lexicon, lex.Len())
	}
	if acc <= 0 {
		t.Errorf("holdout accuracy %v", acc)
	}
}

func TestCandidatesNeedWords(t *testing.T) {
	d := randomData(t, 1, 5, 4, 3, false, false)
	cfg, _ := Defaults("lbfgs")
	cfg.Candidates = 1
	if _, err := Train(context.Background(), d, cfg); err == nil {
		t.Error("candidates without words: no error")
	}
	if err := cfg.Set("feature.candidates", "-1"); err == nil {
		t.Error("feature.candidates=-1 accepted")
	}
	if err := cfg.Set("feature.candidates", "3"); err != nil || cfg.Candidates != 3 {
		t.Errorf("feature.candidates=3: %v, %d", err, cfg.Candidates)
	}
}
