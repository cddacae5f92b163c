package simdcrf_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simdcrf/simdcrf"
)

// words turns a sentence into items: each word's attributes are the word
// itself, the previous one and its shape.
func words(sentence string) []simdcrf.Item {
	ws := strings.Fields(sentence)
	xseq := make([]simdcrf.Item, len(ws))
	for t, w := range ws {
		prev := "BOS"
		if t > 0 {
			prev = ws[t-1]
		}
		shape := "lower"
		if strings.ToUpper(w[:1]) == w[:1] {
			shape = "upper"
		}
		xseq[t] = simdcrf.Binary("w="+strings.ToLower(w), "w[-1]="+strings.ToLower(prev), "shape="+shape)
	}
	return xseq
}

// trainToy trains a part-of-speech tagger on a few sentences.
func trainToy() *simdcrf.Model {
	tr, err := simdcrf.NewTrainer(simdcrf.Options{Params: map[string]string{"c2": "0.1"}})
	if err != nil {
		panic(err)
	}
	for _, s := range []struct{ text, tags string }{
		{"the dog runs", "DT NN VBZ"},
		{"a cat sleeps", "DT NN VBZ"},
		{"the cat runs fast", "DT NN VBZ RB"},
		{"Rex sleeps", "NNP VBZ"},
		{"a dog barks loudly", "DT NN VBZ RB"},
	} {
		if err := tr.Append(words(s.text), strings.Fields(s.tags)); err != nil {
			panic(err)
		}
	}
	m, err := tr.Train(context.Background())
	if err != nil {
		panic(err)
	}
	return m
}

// Train a tagger on labelled sequences, then tag a new one.
func Example() {
	m := trainToy()
	tags, err := m.Tagger().Tag(words("Rex runs fast"))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Labels())
	fmt.Println(tags)
	// Output:
	// [DT NN VBZ RB NNP]
	// [NNP VBZ RB]
}

// The probability of a labelling, and each label's marginal probability.
func ExampleTagger_Marginals() {
	m := trainToy()
	g := m.Tagger()
	xseq := words("the dog sleeps")
	p, err := g.Probability(xseq, []string{"DT", "NN", "VBZ"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("p(DT NN VBZ) = %.2f\n", p)
	marg, err := g.Marginals(xseq)
	if err != nil {
		panic(err)
	}
	for j, label := range m.Labels() {
		fmt.Printf("P(y_1 = %s) = %.2f\n", label, marg[1][j])
	}
	// Output:
	// p(DT NN VBZ) = 0.85
	// P(y_1 = DT) = 0.01
	// P(y_1 = NN) = 0.94
	// P(y_1 = VBZ) = 0.02
	// P(y_1 = RB) = 0.01
	// P(y_1 = NNP) = 0.02
}

// The k best labellings, best first.
func ExampleTagger_NBest() {
	m := trainToy()
	best, err := m.Tagger().NBest(words("a dog"), 3)
	if err != nil {
		panic(err)
	}
	for _, l := range best {
		fmt.Printf("%.2f %v\n", l.Prob, l.Labels)
	}
	// Output:
	// 0.61 [DT NN]
	// 0.09 [DT VBZ]
	// 0.07 [DT RB]
}

// Tokens with a CRF++ template: the model extracts its attributes from
// the columns itself, in training and in tagging.
func ExampleTrainer_AppendTokens() {
	tr, err := simdcrf.NewTrainer(simdcrf.Options{
		Template: "U00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[0,1]\nB\n", // the word, the previous word, the POS tag
	})
	if err != nil {
		panic(err)
	}
	data := []struct {
		tokens [][]string // word, part of speech
		chunks []string
	}{
		{[][]string{{"He", "PRP"}, {"reckons", "VBZ"}, {"the", "DT"}, {"deficit", "NN"}}, []string{"B-NP", "B-VP", "B-NP", "I-NP"}},
		{[][]string{{"the", "DT"}, {"market", "NN"}, {"fell", "VBD"}}, []string{"B-NP", "I-NP", "B-VP"}},
		{[][]string{{"She", "PRP"}, {"sold", "VBD"}, {"the", "DT"}, {"shares", "NNS"}}, []string{"B-NP", "B-VP", "B-NP", "I-NP"}},
	}
	for _, d := range data {
		if err := tr.AppendTokens(d.tokens, d.chunks); err != nil {
			panic(err)
		}
	}
	m, err := tr.Train(context.Background())
	if err != nil {
		panic(err)
	}
	chunks, err := m.Tagger().TagTokens([][]string{{"He", "PRP"}, {"sold", "VBD"}, {"the", "DT"}, {"market", "NN"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(chunks)
	// Output:
	// [B-NP B-VP B-NP I-NP]
}

// Save a model that python-crfsuite, sklearn-crfsuite and crfsuite load
// (CRFsuite's format has no start and end weights: train without them).
func ExampleModel_SaveCRFsuite() {
	tr, err := simdcrf.NewTrainer(simdcrf.Options{ModelFormat: "crfsuite"})
	if err != nil {
		panic(err)
	}
	tr.Append(words("the dog runs"), []string{"DT", "NN", "VBZ"})
	tr.Append(words("a cat sleeps"), []string{"DT", "NN", "VBZ"})
	m, err := tr.Train(context.Background())
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "simdcrf-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pos.crfsuite") // pycrfsuite.Tagger().open(path)
	if err := m.SaveCRFsuite(path); err != nil {
		panic(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", b[:4]) // CRFsuite's magic number
	back, err := simdcrf.Load(path)
	if err != nil {
		panic(err)
	}
	tags, err := back.Tagger().Tag(words("a dog sleeps"))
	if err != nil {
		panic(err)
	}
	fmt.Println(tags)
	// Output:
	// "lCRF"
	// [DT NN VBZ]
}
