package model_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/eval"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
	"github.com/simdcrf/simdcrf/sparse"
)

// The glue between text and a model: names to ids with Encode, labels with a
// Tagger, scores with package eval.
func Example() {
	labels, attrs := sparse.NewDict(3), sparse.NewDict(3)
	for _, l := range []string{"B-NP", "I-NP", "O"} {
		labels.Add(l)
	}
	for _, a := range []string{"w=the", "w=cat", "w=sat"} {
		attrs.Add(a)
	}
	state, _ := sparse.NewDense(3, 3, []float64{
		2, 0, 0, // w=the: B-NP
		0, 2, 0, // w=cat: I-NP
		0, 0, 2, // w=sat: O
	})
	trans, _ := engine.NewTransitions(3, make([]float64, 9), nil, nil)
	m, err := model.New(labels, attrs, state, trans, model.Meta{Spec: format.Spec{Format: "crfsuite"}})
	if err != nil {
		panic(err)
	}
	path := filepath.Join(os.TempDir(), "example.crf")
	defer os.Remove(path)
	if err := m.WriteFile(path); err != nil {
		panic(err)
	}
	if m, err = model.Load(path); err != nil {
		panic(err)
	}

	// One sequence of three items; "w=unknown" is not in the model.
	names := [][]byte{[]byte("w=the"), []byte("w=cat"), []byte("w=unknown"), []byte("w=sat")}
	ptr := []int32{0, 1, 3, 4}
	var b sparse.Builder
	tagger := m.NewTagger()
	var out model.Output
	if err := tagger.Tag(m.Encode(&b, ptr, names, nil), model.Options{Prob: true}, &out); err != nil {
		panic(err)
	}
	pred := make([]string, len(out.Labels))
	for i, y := range out.Labels {
		pred[i] = m.Labels.String(y)
	}
	fmt.Printf("%v p=%.4f\n", pred, out.Prob) // each item: e²/(e²+2)

	e := eval.NewEvaluator(m.LabelNames())
	e.Add([]string{"B-NP", "I-NP", "I-NP"}, pred)
	r := e.Result()
	fmt.Printf("item accuracy %.3f, chunk F1 %.3f\n", r.ItemAccuracy, r.Chunk.F1)
	// Output:
	// [B-NP I-NP O] p=0.4874
	// item accuracy 0.667, chunk F1 0.000
}
