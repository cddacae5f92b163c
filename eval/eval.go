// Package eval scores predicted label sequences against gold ones: item
// (token) and instance (sequence) accuracy, per-label precision, recall and
// F1 with their macro averages, and, when the labels mark chunks (IOB1,
// IOB2/BIO, IOE, BIOES/IOBES, BILOU), chunk precision, recall and F1 counted
// exactly as the CoNLL-2000 script conlleval does.
//
// Every token counts: a gold label the model never saw in training is simply
// a label no prediction matches, so it lowers accuracy and recall (CRFsuite's
// own evaluation drops sentences that hold one).
package eval

import (
	"fmt"
	"strings"
)

// Evaluator accumulates gold and predicted labellings one sequence at a
// time. The zero value is ready to use; NewEvaluator fixes the order in
// which labels are reported. An Evaluator is not safe for concurrent use.
type Evaluator struct {
	index map[string]int32 // label → row of counts
	names []string
	tags  []tag // names split for chunking
	tab   []labelCounts

	tokens, correctTokens int
	seqs, correctSeqs     int

	notChunks bool // some label is neither O nor prefix-TYPE
	chunk     chunkCounts
	types     map[string]*chunkCounts

	gold, pred []int32 // per-sequence scratch: label indexes
}

type labelCounts struct{ correct, predicted, support int }

type chunkCounts struct{ gold, predicted, correct int }

// tag is a label split conlleval's way, at its first hyphen: prefix "B"
// and type "NP" for "B-NP".
type tag struct {
	prefix byte // 'B', 'I', 'E', 'S', 'O' (L and U mapped to E and S); 0 if not a chunk tag
	typ    string
}

// NewEvaluator returns an Evaluator that reports the given labels first, in
// this order (a model's labels, say); other labels follow in order of first
// appearance. The given labels also take part in deciding whether the labels
// mark chunks.
func NewEvaluator(labels []string) *Evaluator {
	e := &Evaluator{}
	for _, l := range labels {
		e.label(l)
	}
	return e
}

// label returns the index of l, adding it if new.
func (e *Evaluator) label(l string) int32 {
	if i, ok := e.index[l]; ok {
		return i
	}
	return e.add(l)
}

// labelBytes is label for a byte slice (no allocation for known labels).
func (e *Evaluator) labelBytes(l []byte) int32 {
	if i, ok := e.index[string(l)]; ok {
		return i
	}
	return e.add(string(l))
}

func (e *Evaluator) add(l string) int32 {
	if e.index == nil {
		e.index = make(map[string]int32)
		e.types = make(map[string]*chunkCounts)
	}
	i := int32(len(e.names))
	l = strings.Clone(l) // the caller's string may share a larger buffer
	e.index[l] = i
	e.names = append(e.names, l)
	e.tab = append(e.tab, labelCounts{})
	t, ok := split(l)
	if !ok {
		e.notChunks = true
	}
	e.tags = append(e.tags, t)
	return i
}

// Add counts one sequence. gold and pred must have the same length (a
// mismatch is a programming error and panics).
func (e *Evaluator) Add(gold, pred []string) {
	if len(gold) != len(pred) {
		panic(fmt.Sprintf("eval: %d gold labels but %d predicted", len(gold), len(pred)))
	}
	e.gold, e.pred = e.gold[:0], e.pred[:0]
	for t := range gold {
		e.gold = append(e.gold, e.label(gold[t]))
		e.pred = append(e.pred, e.label(pred[t]))
	}
	e.count()
}

// AddBytes is Add for gold labels as byte slices (as a reader returns
// them); it allocates only for labels it has not seen before.
func (e *Evaluator) AddBytes(gold [][]byte, pred []string) {
	if len(gold) != len(pred) {
		panic(fmt.Sprintf("eval: %d gold labels but %d predicted", len(gold), len(pred)))
	}
	e.gold, e.pred = e.gold[:0], e.pred[:0]
	for t := range gold {
		e.gold = append(e.gold, e.labelBytes(gold[t]))
		e.pred = append(e.pred, e.label(pred[t]))
	}
	e.count()
}

// count adds the sequence in e.gold and e.pred.
func (e *Evaluator) count() {
	e.seqs++
	allRight := true
	for t, g := range e.gold {
		p := e.pred[t]
		e.tab[g].support++
		e.tab[p].predicted++
		if g == p {
			e.tab[g].correct++
			e.correctTokens++
		} else {
			allRight = false
		}
	}
	e.tokens += len(e.gold)
	if allRight {
		e.correctSeqs++
	}
	if !e.notChunks {
		e.countChunks(e.gold, e.pred)
	}
}

// Merge adds what o has counted to e, as if e had also been given o's
// sequences after its own, so that evaluators filled separately (by
// goroutines, or by the shards of a pipeline, each with its own Evaluator)
// combine into one whose Result is that of a single Evaluator given every
// sequence. Labels new to e follow its own, in o's order. o is unchanged.
func (e *Evaluator) Merge(o *Evaluator) {
	for i, name := range o.names {
		k := e.label(name)
		c := &e.tab[k]
		c.correct += o.tab[i].correct
		c.predicted += o.tab[i].predicted
		c.support += o.tab[i].support
	}
	e.tokens += o.tokens
	e.correctTokens += o.correctTokens
	e.seqs += o.seqs
	e.correctSeqs += o.correctSeqs
	e.notChunks = e.notChunks || o.notChunks
	e.chunk.add(o.chunk)
	if len(o.types) > 0 && e.types == nil {
		e.types = make(map[string]*chunkCounts)
	}
	for typ, c := range o.types {
		e.typeCounts(typ).add(*c)
	}
}

func (c *chunkCounts) add(o chunkCounts) {
	c.gold += o.gold
	c.predicted += o.predicted
	c.correct += o.correct
}

// split parses a label as conlleval does and reports whether it is a chunk
// label: "O", or one of the prefixes B I E S L U, a hyphen and a non-empty
// type. (Suffix style, "NP-B", is not recognised: conlleval splits it into
// prefix "NP" and type "B".)
func split(l string) (tag, bool) {
	if l == "O" {
		return tag{prefix: 'O'}, true
	}
	if len(l) >= 3 && l[1] == '-' {
		p := l[0]
		switch p {
		case 'L':
			p = 'E'
		case 'U':
			p = 'S'
		}
		if strings.IndexByte("BIES", p) >= 0 {
			return tag{prefix: p, typ: l[2:]}, true
		}
	}
	return tag{}, false
}

// Result is what an Evaluator has counted.
type Result struct {
	Tokens, CorrectTokens       int
	Sequences, CorrectSequences int
	ItemAccuracy                float64 // CorrectTokens / Tokens
	InstanceAccuracy            float64 // CorrectSequences / Sequences

	// Labels holds every label that occurs in the gold or the predicted
	// labels, in the Evaluator's order.
	Labels []LabelResult

	// The macro averages are over Labels, that is over the labels with
	// support or predictions (as scikit-learn's average="macro"): a label
	// only predicted has F1 0 and is counted, so false positives of a
	// label absent from the data lower the average; a label that occurs
	// nowhere cannot be measured and is left out rather than counted as 0
	// (CRFsuite counts it as 0, which makes the average depend on labels
	// the test data does not have).
	MacroPrecision, MacroRecall, MacroF1 float64

	// Chunk is nil when the labels do not mark chunks (some label is not O
	// or prefix-TYPE).
	Chunk *ChunkResult
}

// LabelResult holds the scores of one label. Precision (Recall) is 0 when
// the label is never predicted (has no support); F1 is 0 when both are.
type LabelResult struct {
	Label                       string
	Correct, Predicted, Support int
	Precision, Recall, F1       float64
}

// ChunkResult holds conlleval's chunk counts and scores, overall and per
// chunk type (sorted by type).
type ChunkResult struct {
	Gold, Predicted, Correct int
	Precision, Recall, F1    float64
	Types                    []ChunkTypeResult
}

// ChunkTypeResult is ChunkResult for one chunk type.
type ChunkTypeResult struct {
	Type                     string
	Gold, Predicted, Correct int
	Precision, Recall, F1    float64
}

// Result returns the scores of what was added so far.
func (e *Evaluator) Result() Result {
	r := Result{
		Tokens: e.tokens, CorrectTokens: e.correctTokens,
		Sequences: e.seqs, CorrectSequences: e.correctSeqs,
		ItemAccuracy:     ratio(e.correctTokens, e.tokens),
		InstanceAccuracy: ratio(e.correctSeqs, e.seqs),
	}
	for i, c := range e.tab {
		if c.support == 0 && c.predicted == 0 {
			continue
		}
		lr := LabelResult{Label: e.names[i], Correct: c.correct, Predicted: c.predicted, Support: c.support}
		lr.Precision, lr.Recall, lr.F1 = prf(c.correct, c.predicted, c.support)
		r.Labels = append(r.Labels, lr)
		r.MacroPrecision += lr.Precision
		r.MacroRecall += lr.Recall
		r.MacroF1 += lr.F1
	}
	if n := float64(len(r.Labels)); n > 0 {
		r.MacroPrecision /= n
		r.MacroRecall /= n
		r.MacroF1 /= n
	}
	if !e.notChunks && e.tokens > 0 {
		c := &ChunkResult{Gold: e.chunk.gold, Predicted: e.chunk.predicted, Correct: e.chunk.correct}
		c.Precision, c.Recall, c.F1 = prf(c.Correct, c.Predicted, c.Gold)
		for _, typ := range sortedKeys(e.types) {
			k := e.types[typ]
			tr := ChunkTypeResult{Type: typ, Gold: k.gold, Predicted: k.predicted, Correct: k.correct}
			tr.Precision, tr.Recall, tr.F1 = prf(k.correct, k.predicted, k.gold)
			c.Types = append(c.Types, tr)
		}
		r.Chunk = c
	}
	return r
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// prf returns precision, recall and F1 from the counts of correct,
// predicted and gold items, each 0 when undefined.
func prf(correct, predicted, gold int) (p, r, f float64) {
	p, r = ratio(correct, predicted), ratio(correct, gold)
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return p, r, f
}
