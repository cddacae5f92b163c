package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/simdcrf/simdcrf/bench/enginebench"
	"github.com/simdcrf/simdcrf/engine"
)

// BenchmarkTagViterbi/M=<labels>/<precision> times what the tagger's
// decoding costs per sentence: Viterbi (float64) against Viterbi32
// (float32), dense, one workspace, on enginebench's sentences (T tokens,
// Seqs of them) and transitions, on the best kernel tier; tokens/s is
// reported. M = 22 is CoNLL-2000 chunking's label count, 50 EWT's XPOS.
func BenchmarkTagViterbi(b *testing.B) {
	T, seqs := enginebench.T, enginebench.Seqs
	for _, m := range []int{9, 22, 45, 50, 128} {
		tr, err := enginebench.Transitions("dense", m)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(m), 7))
		emits := make([][]float64, seqs)
		for i := range emits {
			emits[i] = make([]float64, T*m)
			for k := range emits[i] {
				emits[i][k] = 2 * r.NormFloat64()
			}
		}
		path := make([]int32, T)
		for _, prec := range []string{"float64", "float32"} {
			decode := tr.Viterbi
			if prec == "float32" {
				decode = tr.Viterbi32
			}
			b.Run(fmt.Sprintf("M=%d/%s", m, prec), func(b *testing.B) {
				ws := engine.NewWorkspace()
				for _, e := range emits { // warm the workspace
					if _, err := decode(ws, e, nil, path); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					for _, e := range emits {
						decode(ws, e, nil, path)
					}
				}
				b.ReportMetric(float64(T*seqs)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}
