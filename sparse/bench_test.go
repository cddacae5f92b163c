package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sort"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// Benchmarks are named Benchmark<Name>/M=<labels>/<impl>; they report
// ns/position. The data: 2 000 sequences of 24 positions with F = 30
// attributes each, drawn Zipf(1) over benchAttrs attribute ids in frequency
// order (id 0 the most frequent, as FrequencyOrder arranges). Dense rows
// hold a weight for every label; sparse rows give the attribute of rank r
// k(r) = min(M, ⌈M/√(r+1)⌉) labels (the most frequent attributes co-occur
// with every label, rare ones with one or two), about 2M√N pairs for N
// attributes. Dense rows at M = 1024 would take 4 GB for 500 000
// attributes, so that case uses 100 000 (0.8 GB); sparse rows always use
// 500 000.

const (
	benchAttrs = 500_000
	benchSeqs  = 2000
	benchT     = 24
	benchF     = 30
)

var benchCorpora = map[[2]int]*Corpus{}

// zipfCorpus returns the benchmark corpus over numAttrs attributes (Zipf
// exponent 1, ids in frequency order if !shuffled, else permuted).
func zipfCorpus(numAttrs int, shuffled bool) *Corpus {
	key := [2]int{numAttrs, 0}
	if shuffled {
		key[1] = 1
	}
	if c := benchCorpora[key]; c != nil {
		return c
	}
	r := rand.New(rand.NewPCG(11, 12))
	cdf := make([]float64, numAttrs)
	sum := 0.0
	for i := range cdf {
		sum += 1 / float64(i+1)
		cdf[i] = sum
	}
	var perm []int
	if shuffled {
		perm = r.Perm(numAttrs)
	}
	c := NewCorpus()
	var b Builder
	for range benchSeqs {
		b.Reset()
		for range benchT {
			for range benchF {
				a := sort.SearchFloat64s(cdf, r.Float64()*sum)
				a = min(a, numAttrs-1)
				if perm != nil {
					a = perm[a]
				}
				b.Add(int32(a), 1)
			}
			b.End(NoLabel)
		}
		if err := c.Append(b.Seq()); err != nil {
			panic(err)
		}
	}
	benchCorpora[key] = c
	return c
}

// benchPattern gives attribute a (of frequency rank a) k(a) labels spread
// evenly over [0, M); k(r) = min(M, ⌈M/√(r+1)⌉), or a constant k > 0.
func benchPattern(numAttrs, m, k int) *Pattern {
	rowPtr := make([]int32, numAttrs+1)
	var labels []int32
	var row []int32
	for a := range numAttrs {
		n := k
		if k <= 0 {
			n = min(m, int(math.Ceil(float64(m)/math.Sqrt(float64(a+1)))))
		}
		row = row[:0]
		off := a % max(m/n, 1)
		for i := range n {
			row = append(row, int32((off+i*m/n)%m))
		}
		sort.Slice(row, func(i, j int) bool { return row[i] < row[j] })
		labels = append(labels, row...)
		rowPtr[a+1] = int32(len(labels))
	}
	p, err := NewPattern(m, rowPtr, labels)
	if err != nil {
		panic(err)
	}
	return p
}

func fillRand(x []float64, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range x {
		x[i] = r.Float64() - 0.5
	}
}

// runWeights times Score (grad false) or AddGradient (grad true) of w over
// the corpus, in the kernel tiers impls (nil: the active one).
func runWeights(b *testing.B, w Weights, c *Corpus, grad bool, impls []string) {
	M := w.Labels()
	emit := make([]float64, c.MaxLen()*M)
	fillRand(emit, 3)
	var g []float64
	if grad {
		g = MakeParams(w.NumParams())
	}
	run := func(b *testing.B) {
		i, pos := 0, 0
		for b.Loop() {
			s := c.Seq(i)
			if grad {
				w.AddGradient(g, s, emit, 0.5)
			} else {
				w.Score(emit, s)
			}
			pos += s.Len()
			if i++; i == c.Len() {
				i = 0
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pos), "ns/position")
		b.ReportMetric(float64(8*w.NumParams())/1e6, "MB")
	}
	if impls == nil {
		run(b)
		return
	}
	for _, name := range impls {
		b.Run(name, func(b *testing.B) {
			restore, err := kernels.Use(name)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			run(b)
		})
	}
}

var benchLabels = []int{9, 45, 256, 1024}

func benchDense(b *testing.B, grad bool) {
	for _, m := range benchLabels {
		numAttrs := benchAttrs
		if m == 1024 {
			numAttrs = 100_000
		}
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			params := MakeParams(numAttrs * m)
			fillRand(params, 1)
			w, _ := NewDense(numAttrs, m, params)
			runWeights(b, w, zipfCorpus(numAttrs, false), grad, kernels.Impls())
			params = nil
			debug.FreeOSMemory()
		})
	}
}

func benchSparse(b *testing.B, grad bool) {
	for _, m := range benchLabels {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			p := benchPattern(benchAttrs, m, 0)
			params := MakeParams(p.NumPairs())
			fillRand(params, 1)
			w, _ := NewSparse(p, params)
			b.Run("scalar", func(b *testing.B) {
				runWeights(b, w, zipfCorpus(benchAttrs, false), grad, nil)
			})
		})
	}
}

// BenchmarkScoreDense times Dense.Score (kernels.Gather) per position.
func BenchmarkScoreDense(b *testing.B) { benchDense(b, false) }

// BenchmarkGradientDense times Dense.AddGradient (kernels.Scatter).
func BenchmarkGradientDense(b *testing.B) { benchDense(b, true) }

// BenchmarkScoreSparse times Sparse.Score (scalar Go; no kernel tiers).
func BenchmarkScoreSparse(b *testing.B) { benchSparse(b, false) }

// BenchmarkGradientSparse times Sparse.AddGradient.
func BenchmarkGradientSparse(b *testing.B) { benchSparse(b, true) }

// BenchmarkScoreShuffled is BenchmarkScoreDense at M = 45 with the
// attribute ids in random order instead of frequency order: what
// FrequencyOrder is worth.
func BenchmarkScoreShuffled(b *testing.B) {
	const m = 45
	params := MakeParams(benchAttrs * m)
	fillRand(params, 1)
	w, _ := NewDense(benchAttrs, m, params)
	for _, shuffled := range []bool{false, true} {
		b.Run(fmt.Sprintf("M=%d/shuffled=%v", m, shuffled), func(b *testing.B) {
			runWeights(b, w, zipfCorpus(benchAttrs, shuffled), false, nil)
		})
	}
}

// BenchmarkLayouts calibrates ChooseLayout: Score + AddGradient per
// position in both layouts for sparse rows of k labels per attribute (the
// same k for every attribute), over 500 000 attributes (200 000 for
// M ≥ 128), Zipf ids, the active kernel tier.
func BenchmarkLayouts(b *testing.B) {
	for _, m := range []int{9, 16, 32, 64, 128, 256} {
		numAttrs := benchAttrs
		if m >= 128 {
			numAttrs = 200_000
		}
		c := zipfCorpus(numAttrs, false)
		dparams := MakeParams(numAttrs * m)
		fillRand(dparams, 1)
		dense, _ := NewDense(numAttrs, m, dparams)
		dg := MakeParams(len(dparams))
		b.Run(fmt.Sprintf("M=%d/dense", m), func(b *testing.B) {
			benchBoth(b, dense, dg, c)
		})
		for _, k := range []int{1, 2, 4, 8, 16, 32, 64} {
			if k > m/2 {
				break
			}
			p := benchPattern(numAttrs, m, k)
			sparams := MakeParams(p.NumPairs())
			fillRand(sparams, 1)
			sp, _ := NewSparse(p, sparams)
			sg := MakeParams(len(sparams))
			b.Run(fmt.Sprintf("M=%d/sparse-k=%d", m, k), func(b *testing.B) {
				benchBoth(b, sp, sg, c)
			})
		}
		dparams, dg, dense = nil, nil, nil
		debug.FreeOSMemory()
	}
}

func benchBoth(b *testing.B, w Weights, g []float64, c *Corpus) {
	M := w.Labels()
	emit := make([]float64, c.MaxLen()*M)
	i, pos := 0, 0
	for b.Loop() {
		s := c.Seq(i)
		w.Score(emit, s)
		w.AddGradient(g, s, emit, 1e-3)
		pos += s.Len()
		if i++; i == c.Len() {
			i = 0
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pos), "ns/position")
}

// BenchmarkTouchPass measures what the touch pass of dense rows is worth:
// Score + AddGradient per position with it on and off (prefetchRows), in
// the active kernel tier. Once a tier's gather and scatter keep enough
// misses in flight by themselves, the pass can go.
func BenchmarkTouchPass(b *testing.B) {
	for _, m := range []int{9, 45, 256} {
		params := MakeParams(benchAttrs * m)
		fillRand(params, 1)
		g := MakeParams(benchAttrs * m)
		w, _ := NewDense(benchAttrs, m, params)
		c := zipfCorpus(benchAttrs, false)
		for _, on := range []bool{true, false} {
			b.Run(fmt.Sprintf("M=%d/touch=%v", m, on), func(b *testing.B) {
				defer func(old bool) { prefetchRows = old }(prefetchRows)
				prefetchRows = on
				benchBoth(b, w, g, c)
			})
		}
		params, g = nil, nil
		debug.FreeOSMemory()
	}
}

// BenchmarkStride compares rows of stride M with rows padded to a multiple
// of 8 (whole, aligned cache lines) for Score + AddGradient per position.
func BenchmarkStride(b *testing.B) {
	for _, m := range []int{9, 45} {
		for _, ld := range []int{m, (m + 7) &^ 7} {
			params := MakeParams(benchAttrs * ld)
			fillRand(params, 1)
			g := MakeParams(benchAttrs * ld)
			w, _ := NewDenseStride(benchAttrs, m, ld, params)
			b.Run(fmt.Sprintf("M=%d/ld=%d", m, ld), func(b *testing.B) {
				benchBoth(b, w, g, zipfCorpus(benchAttrs, false))
			})
			params, g = nil, nil
			debug.FreeOSMemory()
		}
	}
}
