package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// withBigrams adds random bigram attributes (ids < nb) to d: a few per
// position, values 1 or not, also at position 0 (which CRF++ never fills,
// and which must play no part).
func withBigrams(t testing.TB, d *Data, seed uint64, nb int) *Data {
	r := rand.New(rand.NewPCG(seed, 2))
	c := sparse.NewCorpus()
	var b sparse.Builder
	for i := range d.Corpus.Len() {
		b.Reset()
		for range d.Corpus.Seq(i).Len() {
			for range r.IntN(3) {
				v := 1.0
				if r.IntN(4) == 0 {
					v = 0.5 + r.Float64()
				}
				b.Add(int32(r.IntN(nb)), v)
			}
			b.End(sparse.NoLabel)
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
	}
	d.Bigram, d.NumBigramAttrs = c, nb
	return d
}

// bruteScore is the score of labelling y from a Result alone: start, end,
// state, shared transition and bigram weights, each looked up directly.
func bruteScore(res *Result, s, bs sparse.Seq, y []int32) float64 {
	m := res.Trans.Labels()
	T := len(y)
	emit := make([]float64, T*m)
	res.State.Score(emit, s)
	sc := res.Trans.Start(int(y[0])) + res.Trans.End(int(y[T-1]))
	for t := range T {
		sc += emit[t*m+int(y[t])]
		if t == 0 {
			continue
		}
		sc += res.Trans.Score(int(y[t-1]), int(y[t]))
		p := y[t-1]*int32(m) + y[t]
		for f := bs.Ptr[t]; f < bs.Ptr[t+1]; f++ {
			a := bs.IDs[f]
			lo, hi := res.BigramPtr[a], res.BigramPtr[a+1]
			for k := lo; k < hi; k++ {
				pk := k - lo
				if res.BigramPairs != nil {
					pk = res.BigramPairs[k]
				}
				if pk == p {
					sc += bs.Value(int(f)) * res.BigramWeights[k]
				}
			}
		}
	}
	return sc
}

// TestBigramGradient checks the gradient with observation-dependent
// transitions against finite differences, and the objective against
// brute-force enumeration of every labelling.
func TestBigramGradient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trans   string
		pairs   string
		weights bool
		minfreq float64
	}{
		{"seen", "dense", BigramPairsSeen, false, 0},
		{"all", "dense", BigramPairsAll, false, 0},
		{"seen-weighted", "dense", BigramPairsSeen, true, 0},
		{"all-weighted", "auto", BigramPairsAll, true, 0},
		{"only-obs", "none", BigramPairsSeen, false, 0}, // B lines with %x only
		{"minfreq", "dense", BigramPairsSeen, false, 2},
		{"minfreq-all", "dense", BigramPairsAll, false, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := withBigrams(t, randomData(t, 17, 30, 8, 3, tc.weights, false), 5, 6)
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.BigramPairs, cfg.MinFreq = tc.trans, tc.pairs, tc.minfreq
			cfg.C2 = 0.2
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.big == nil || md.big.n == 0 {
				t.Fatal("no bigram weights")
			}
			if tc.pairs == BigramPairsAll && tc.minfreq == 0 && md.big.n != 6*9 {
				t.Errorf("%d bigram weights, want 6×9", md.big.n)
			}
			if tc.minfreq > 0 {
				cfg0 := cfg
				cfg0.MinFreq = 0
				md0, _ := newParamSpace(d, &cfg0)
				if md.big.n >= md0.big.n {
					t.Errorf("feature.minfreq=%v keeps %d bigram weights of %d", tc.minfreq, md.big.n, md0.big.n)
				}
			}
			pool := engine.NewPool(2)
			defer pool.Close()
			o := newObjective(md, d, cfg.C2, pool)
			r := rand.New(rand.NewPCG(9, 4))
			theta := make([]float64, md.nParams)
			for k := range theta {
				if md.trainable(k) {
					theta[k] = r.NormFloat64() * 0.5
				}
			}
			g := make([]float64, md.nParams)
			f0, err := o.eval(theta, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			gtmp := make([]float64, md.nParams)
			for k := range theta {
				if !md.trainable(k) {
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
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("parameter %d of %d (bigram from %d): gradient %.8g, finite difference %.8g", k, md.nParams, md.bigOff, g[k], fd)
				}
			}

			// Brute force: Σ c·(log Σ_y exp score(y) − score(gold)) + c2‖θ‖²,
			// the scores from the exported Result.
			res := exportResult(t, md, theta)
			want := 0.0
			for _, v := range theta {
				want += cfg.C2 * v * v
			}
			m := d.Labels
			for i := range d.Corpus.Len() {
				s, bs := d.Corpus.Seq(i), d.Bigram.Seq(i)
				T := s.Len()
				y := make([]int32, T)
				logZ := math.Inf(-1)
				for n := 0; n < pow(m, T); n++ {
					for t, k := 0, n; t < T; t, k = t+1, k/m {
						y[t] = int32(k % m)
					}
					logZ = logAdd(logZ, bruteScore(res, s, bs, y))
				}
				want += d.Weight(i) * (logZ - bruteScore(res, s, bs, s.Labels))
			}
			if math.Abs(want-f0) > 1e-9*math.Abs(want) {
				t.Errorf("objective %.12g, brute force %.12g", f0, want)
			}
		})
	}
}

// exportResult makes the Result that Train would return for θ.
func exportResult(t *testing.T, md *paramSpace, theta []float64) *Result {
	tr, err := md.transitions(theta, make([]engine.Exception, len(md.excs)))
	if err != nil {
		t.Fatal(err)
	}
	nOut := md.pattern.NumPairs()
	if md.layout == sparse.DenseRows {
		nOut = md.pattern.NumAttrs() * md.m
	}
	params := sparse.MakeParams(nOut + md.nParams - md.nState)
	st, err := sparse.New(md.layout, md.pattern, params)
	if err != nil {
		t.Fatal(err)
	}
	md.hy.export(theta, md.pattern, st)
	copy(params[nOut:], theta[md.nState:])
	return &Result{State: st, Trans: tr, BigramPtr: md.big.ptr, BigramPairs: md.big.pairs, BigramWeights: params[nOut+md.bigOff-md.nState:]}
}

func pow(m, t int) int {
	n := 1
	for range t {
		n *= m
	}
	return n
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	hi, lo := max(a, b), min(a, b)
	return hi + math.Log1p(math.Exp(lo-hi))
}

// TestBigramMarginals checks the label and edge marginals of a chain with
// observation-dependent transitions (the deltas the trainer builds, on the
// engine's path) against brute-force enumeration.
func TestBigramMarginals(t *testing.T) {
	d := withBigrams(t, randomData(t, 21, 12, 8, 3, false, false), 6, 5)
	for _, pairs := range []string{BigramPairsSeen, BigramPairsAll} {
		cfg, _ := Defaults("lbfgs")
		cfg.Transitions, cfg.BigramPairs = "dense", pairs
		md, err := newParamSpace(d, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		theta := make([]float64, md.nParams)
		for k := range theta {
			theta[k] = r.NormFloat64()
		}
		res := exportResult(t, md, theta)
		bb := md.big.newBuf(d.Corpus.MaxLen())
		ws := engine.NewWorkspace()
		m := d.Labels
		for i := range d.Corpus.Len() {
			s, bs := d.Corpus.Seq(i), d.Bigram.Seq(i)
			T := s.Len()
			emit := make([]float64, T*m)
			res.State.Score(emit, s)
			opts := bb.options(md.big, md.bigramParams(theta), 1, bs)
			p := engine.Posteriors{Marginals: make([]float64, T*m), Edges: make([]float64, (T-1)*m*m)}
			logZ, err := res.Trans.Posteriors(ws, emit, opts, &p)
			if err != nil {
				t.Fatal(err)
			}
			bz := math.Inf(-1)
			marg := make([]float64, T*m)
			edges := make([]float64, (T-1)*m*m)
			y := make([]int32, T)
			for pass := range 2 {
				for n := 0; n < pow(m, T); n++ {
					for t, k := 0, n; t < T; t, k = t+1, k/m {
						y[t] = int32(k % m)
					}
					sc := bruteScore(res, s, bs, y)
					if pass == 0 {
						bz = logAdd(bz, sc)
						continue
					}
					pr := math.Exp(sc - bz)
					for t := range T {
						marg[t*m+int(y[t])] += pr
						if t > 0 {
							edges[((t-1)*m+int(y[t-1]))*m+int(y[t])] += pr
						}
					}
				}
			}
			if math.Abs(logZ-bz) > 1e-9*math.Max(1, math.Abs(bz)) {
				t.Errorf("%s seq %d: log Z %.12g, brute force %.12g", pairs, i, logZ, bz)
			}
			for k := range marg {
				if math.Abs(marg[k]-p.Marginals[k]) > 1e-9 {
					t.Errorf("%s seq %d: marginal %d = %.12g, brute force %.12g", pairs, i, k, p.Marginals[k], marg[k])
				}
			}
			for k := range edges {
				if math.Abs(edges[k]-p.Edges[k]) > 1e-9 {
					t.Errorf("%s seq %d: edge marginal %d = %.12g, brute force %.12g", pairs, i, k, p.Edges[k], edges[k])
				}
			}
		}
	}
}

// obsTransitionData makes sequences whose labels follow the observations
// of the transitions only: y_0 = 0, y_t = (y_{t−1} + b_t) mod 3 with b_t
// the position's one bigram attribute (0, 1 or 2), the state attributes
// noise. Without bigram weights the labels are a random walk.
func obsTransitionData(t testing.TB, nSeq int) *Data {
	r := rand.New(rand.NewPCG(4, 4))
	c, bc := sparse.NewCorpus(), sparse.NewCorpus()
	var b, bb sparse.Builder
	for range nSeq {
		b.Reset()
		bb.Reset()
		T := 2 + r.IntN(8)
		y := int32(0)
		for k := range T {
			b.Add(int32(r.IntN(5)), 1)
			if k == 0 {
				b.Add(5, 1) // "first"
			} else {
				s := int32(r.IntN(3))
				bb.Add(s, 1)
				y = (y + s) % 3
			}
			b.End(y)
			bb.End(sparse.NoLabel)
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
		if err := bc.Append(bb.Seq()); err != nil {
			t.Fatal(err)
		}
	}
	return &Data{Corpus: c, NumAttrs: 6, Labels: 3, Bigram: bc, NumBigramAttrs: 3}
}

// TestBigramAlgorithms: every algorithm learns labels that only the
// observation-dependent transitions predict, and does worse without them.
func TestBigramAlgorithms(t *testing.T) {
	d := obsTransitionData(t, 150)
	nob := *d
	nob.Bigram, nob.NumBigramAttrs = nil, 0
	accuracy := func(res *Result, d *Data) float64 {
		ws := engine.NewWorkspace()
		correct, total := 0, 0
		for i := range d.Corpus.Len() {
			s := d.Corpus.Seq(i)
			T := s.Len()
			emit := make([]float64, T*d.Labels)
			res.State.Score(emit, s)
			var opts *engine.ChainOptions
			if d.Bigram != nil {
				b := &bigrams{m: d.Labels, ptr: res.BigramPtr, pairs: res.BigramPairs}
				bb := b.newBuf(T)
				opts = bb.options(b, res.BigramWeights, 1, d.Bigram.Seq(i))
			}
			path := make([]int32, T)
			if _, err := res.Trans.Viterbi(ws, emit, opts, path); err != nil {
				t.Fatal(err)
			}
			for k, y := range s.Labels {
				if path[k] == y {
					correct++
				}
				total++
			}
		}
		return float64(correct) / float64(total)
	}
	for _, algo := range []string{"lbfgs", "l1", "sgd", "ap"} {
		for _, pairs := range []string{BigramPairsSeen, BigramPairsAll} {
			cfg, _ := Defaults(algo)
			cfg.BigramPairs = pairs
			cfg.Threads = 2
			if algo == "lbfgs" || algo == "l1" {
				cfg.MaxIterations = 100
			} else {
				cfg.MaxIterations = 20
			}
			res, err := Train(context.Background(), d, cfg)
			if err != nil {
				t.Fatalf("%s: %v", algo, err)
			}
			if res.BigramWeights == nil {
				t.Fatalf("%s: no bigram weights", algo)
			}
			with := accuracy(res, d)
			res0, err := Train(context.Background(), &nob, cfg)
			if err != nil {
				t.Fatal(err)
			}
			without := accuracy(res0, &nob)
			if with < 0.99 || without > 0.8 {
				t.Errorf("%s %s: training accuracy %.3f with bigram weights, %.3f without", algo, pairs, with, without)
			}
		}
	}
}

// TestBigramHoldout: holdout accuracy during training uses the bigram
// weights.
func TestBigramHoldout(t *testing.T) {
	d := obsTransitionData(t, 100)
	cfg, _ := Defaults("lbfgs")
	cfg.MaxIterations = 60
	cfg.Holdout = d
	last := -1.0
	cfg.Progress = func(p Progress) { last = p.Holdout }
	if _, err := Train(context.Background(), d, cfg); err != nil {
		t.Fatal(err)
	}
	if last < 0.99 {
		t.Errorf("holdout accuracy %.3f", last)
	}
	bad := *d
	bad.NumBigramAttrs = 2 // ids up to 2 are out of range
	if _, err := Train(context.Background(), &bad, cfg); err == nil {
		t.Error("bigram ids out of range: no error")
	}
	cfg.Transitions = "tied"
	cfg.Holdout = nil
	if _, err := Train(context.Background(), d, cfg); err == nil {
		t.Error("tied transitions with bigram weights: no error")
	}
}
