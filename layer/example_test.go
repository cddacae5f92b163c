package layer_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/simdcrf/simdcrf/layer"
)

// A training loop of a toy tagger: the emission model scores label j of a
// token x as W[x][j] (an embedding table, the simplest "network"), the CRF
// layer turns the scores into a sequence loss, and its gradient flows back
// into both the CRF's scores and W. The task: tag each token with its
// parity, except that a token after a 0 is always labelled 1.
func Example() {
	const V, M, B, T = 6, 2, 16, 8
	r := rand.New(rand.NewPCG(1, 2))
	W := make([]float32, V*M)
	crf := layer.New[float32](M)
	crf.Threads = 1

	tokens := make([]int, B*T)
	tags := make([]int32, B*T)
	lengths := make([]int32, B)
	for b := range B {
		lengths[b] = int32(4 + r.IntN(T-3))
		for t := range T {
			x := r.IntN(V)
			tokens[b*T+t] = x
			tags[b*T+t] = int32(x % 2)
			if t > 0 && tokens[b*T+t-1] == 0 {
				tags[b*T+t] = 1
			}
		}
	}
	batch := layer.Batch[float32]{B: B, T: T, Emissions: make([]float32, B*T*M), Lengths: lengths}
	g := &layer.Grad[float32]{Emissions: make([]float32, B*T*M), Trans: make([]float32, M*M), Start: make([]float32, M), End: make([]float32, M)}

	const lr = 0.5
	for step := range 100 {
		// Forward: the emission model.
		for k, x := range tokens {
			copy(batch.Emissions[k*M:(k+1)*M], W[x*M:(x+1)*M])
		}
		loss, err := crf.NLL(batch, tags, layer.ReduceMean, nil, g)
		if err != nil {
			panic(err)
		}
		if step == 0 || step == 99 {
			fmt.Printf("step %d: loss %.3f\n", step, loss)
		}
		// Backward: the emission gradient into W, then SGD on everything.
		for k, x := range tokens {
			for j := range M {
				W[x*M+j] -= lr * g.Emissions[k*M+j]
			}
		}
		for k := range crf.Trans {
			crf.Trans[k] -= lr * g.Trans[k]
		}
		for j := range M {
			crf.Start[j] -= lr * g.Start[j]
			crf.End[j] -= lr * g.End[j]
		}
	}
	paths := make([]int32, B*T)
	if err := crf.Decode(batch, paths, nil); err != nil {
		panic(err)
	}
	right, n := 0, 0
	for b := range B {
		for t := range int(lengths[b]) {
			if paths[b*T+t] == tags[b*T+t] {
				right++
			}
			n++
		}
	}
	fmt.Printf("accuracy %d/%d\n", right, n)
	// Output:
	// step 0: loss 4.159
	// step 99: loss 0.551
	// accuracy 93/96
}
