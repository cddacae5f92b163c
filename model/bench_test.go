package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// chunkingModel is a model the size of CoNLL-2000 chunking with
// chunking.tpl: about 300 000 attributes × 22 labels, dense rows.
func chunkingModel(b testing.TB) *Model {
	const A, M = 300_000, 22
	r := rand.New(rand.NewPCG(1, 1))
	labels, attrs := sparse.NewDict(M), sparse.NewDict(A)
	for j := range M {
		labels.Add(fmt.Sprintf("X-%d", j))
	}
	for a := range A {
		attrs.Add(fmt.Sprintf("U%02d:w[%d]=tok%d", a%20, a%5-2, a))
	}
	p := sparse.MakeParams(A * M)
	for k := range p {
		p[k] = r.NormFloat64()
	}
	state, err := sparse.NewDense(A, M, p)
	if err != nil {
		b.Fatal(err)
	}
	score := make([]float64, M*M)
	for k := range score {
		score[k] = r.NormFloat64()
	}
	tr, err := engine.NewTransitionsWith(M, score, nil, nil, engine.Options{Structure: engine.Dense})
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(labels, attrs, state, tr, Meta{Format: "conll"})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkLoad measures Load of a chunking-sized model (from the page
// cache) and reports the file size.
func BenchmarkLoad(b *testing.B) {
	m := chunkingModel(b)
	path := filepath.Join(b.TempDir(), "chunking.crf")
	t0 := time.Now()
	if err := m.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	b.Logf("WriteFile %v", time.Since(t0))
	st, _ := os.Stat(path)
	b.ResetTimer()
	for range b.N {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
}

// BenchmarkViterbi tags 30-token sequences of 20 features per token with
// the chunking-sized model.
func BenchmarkViterbi(b *testing.B) {
	m := chunkingModel(b)
	tg := m.NewTagger()
	r := rand.New(rand.NewPCG(2, 2))
	seqs := make([]sparse.Seq, 256)
	for i := range seqs {
		var bl sparse.Builder
		for range 30 {
			for range 20 {
				bl.Add(int32(r.IntN(300_000)), 1)
			}
			bl.End(sparse.NoLabel)
		}
		s := bl.Seq()
		seqs[i] = sparse.Seq{Ptr: s.Ptr, IDs: s.IDs}
	}
	var dst []int32
	b.ResetTimer()
	for i := range b.N {
		dst, _, _ = tg.Viterbi(dst, seqs[i%len(seqs)])
	}
	b.ReportMetric(float64(b.N*30)/b.Elapsed().Seconds(), "tokens/s")
}
