package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
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
	m, err := New(labels, attrs, state, tr, Meta{Spec: format.Spec{Format: "conll"}})
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

// BenchmarkLoadSparse measures Load of a model shaped like pooled UD Czech
// (1 341 labels, tied transitions): 500 000 attributes in the sparse layout
// with 3 labels each on average, 30 000 transition exceptions.
func BenchmarkLoadSparse(b *testing.B) {
	const A, M = 500_000, 1341
	r := rand.New(rand.NewPCG(3, 3))
	labels, attrs := sparse.NewDict(M), sparse.NewDict(A)
	for j := range M {
		labels.Add(fmt.Sprintf("NNMS1-----A---%d", j))
	}
	for a := range A {
		attrs.Add(fmt.Sprintf("w[%d]=tok%d", a%5-2, a))
	}
	pb, err := sparse.NewPatternBuilder(A, M)
	if err != nil {
		b.Fatal(err)
	}
	for a := range A {
		for range 1 + r.IntN(5) {
			pb.Add(int32(a), int32(r.IntN(M)))
		}
	}
	pat, err := pb.Build()
	if err != nil {
		b.Fatal(err)
	}
	p := sparse.MakeParams(pat.NumPairs())
	for k := range p {
		p[k] = r.NormFloat64()
	}
	state, err := sparse.NewSparse(pat, p)
	if err != nil {
		b.Fatal(err)
	}
	seen := map[[2]int32]bool{}
	var exc []engine.Exception
	for len(exc) < 30_000 {
		e := engine.Exception{From: int32(r.IntN(M)), To: int32(r.IntN(M)), Score: r.NormFloat64()}
		if !seen[[2]int32{e.From, e.To}] {
			seen[[2]int32{e.From, e.To}] = true
			exc = append(exc, e)
		}
	}
	tr, err := engine.NewTied(M, -1, exc, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(labels, attrs, state, tr, Meta{Spec: format.Spec{Format: "conllu", Label: "xpos"}})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "czech.crf")
	if err := m.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.ResetTimer()
	for range b.N {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	b.ReportMetric(float64(pat.NumPairs()), "weights")
}

// crfsuiteChunkingModel is a CRFsuite model file the size of CRFsuite's
// CoNLL-2000 chunking model (28 MB: 338 551 attributes, 456 323 state
// features, 22 labels): attribute names like the template's, 1 to 2
// labels each.
func crfsuiteChunkingModel(b *testing.B) string {
	const A, M = 338_551, 22
	r := rand.New(rand.NewPCG(3, 3))
	labels, attrs := sparse.NewDict(M), sparse.NewDict(A)
	for j := range M {
		labels.Add(fmt.Sprintf("X-%d", j))
	}
	pb, err := sparse.NewPatternBuilder(A, M)
	if err != nil {
		b.Fatal(err)
	}
	for a := range A {
		attrs.Add(fmt.Sprintf("U%02d:tok%d/w%d", a%20, a, r.IntN(1000)))
		for range 1 + r.IntN(2) {
			pb.Add(int32(a), int32(r.IntN(M)))
		}
	}
	pat, err := pb.Build()
	if err != nil {
		b.Fatal(err)
	}
	p := sparse.MakeParams(pat.NumPairs())
	for k := range p {
		p[k] = r.NormFloat64()
	}
	state, err := sparse.NewSparse(pat, p)
	if err != nil {
		b.Fatal(err)
	}
	score := make([]float64, M*M)
	for k := range score {
		score[k] = r.NormFloat64()
	}
	tr, err := engine.NewTransitions(M, score, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(labels, attrs, state, tr, Meta{Spec: format.Spec{Format: "crfsuite"}})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "chunking.crfsuite")
	if err := m.WriteCRFsuiteFile(path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoadCRFsuite reads (Load) and maps (Map) a CRFsuite model the
// size of CoNLL-2000 chunking's from the page cache: the goal is a few
// tens of milliseconds.
func BenchmarkLoadCRFsuite(b *testing.B) {
	path := crfsuiteChunkingModel(b)
	st, _ := os.Stat(path)
	b.Run("Load", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	})
	b.Run("Map", func(b *testing.B) {
		for b.Loop() {
			_, unmap, err := Map(path)
			if err != nil {
				b.Fatal(err)
			}
			unmap()
		}
		b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	})
}

// BenchmarkLookupCRFsuite looks up every attribute of a CRFsuite model the
// size of CoNLL-2000 chunking's (and as many names it lacks), in a random
// order, in batches as Encode does: the dictionary lookups that take half
// of a tagging run of such a model.
func BenchmarkLookupCRFsuite(b *testing.B) {
	m, err := Load(crfsuiteChunkingModel(b))
	if err != nil {
		b.Fatal(err)
	}
	n := m.Attrs.Len()
	r := rand.New(rand.NewPCG(5, 5))
	keys := make([][]byte, 0, 2*n)
	for a := range n {
		keys = append(keys, []byte(m.Attrs.String(int32(a))), []byte(fmt.Sprintf("U%02d:unseen%d", a%20, a)))
	}
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	ids := make([]int32, 64)
	b.ResetTimer()
	for b.Loop() {
		for i := 0; i < len(keys); i += 64 {
			k := keys[i:min(i+64, len(keys))]
			m.Attrs.LookupBytesAll(ids, k)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(keys)), "ns/key")
}
