package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteText writes r as CRFsuite's tag -qt does (per-label table, macro
// averages, item and instance accuracy), followed, when the labels mark
// chunks, by conlleval's own summary lines (percentages).
func (r Result) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "Performance by label (#match, #model, #ref) (precision, recall, F1):")
	for _, l := range r.Labels {
		if l.Support == 0 { // as CRFsuite prints a label the data lacks
			fmt.Fprintf(bw, "    %s: (%d, %d, %d) (******, ******, ******)\n", l.Label, l.Correct, l.Predicted, l.Support)
			continue
		}
		fmt.Fprintf(bw, "    %s: (%d, %d, %d) (%.4f, %.4f, %.4f)\n",
			l.Label, l.Correct, l.Predicted, l.Support, l.Precision, l.Recall, l.F1)
	}
	fmt.Fprintf(bw, "Macro-average precision, recall, F1: (%.6f, %.6f, %.6f)\n", r.MacroPrecision, r.MacroRecall, r.MacroF1)
	fmt.Fprintf(bw, "Item accuracy: %d / %d (%.4f)\n", r.CorrectTokens, r.Tokens, r.ItemAccuracy)
	fmt.Fprintf(bw, "Instance accuracy: %d / %d (%.4f)\n", r.CorrectSequences, r.Sequences, r.InstanceAccuracy)
	if c := r.Chunk; c != nil {
		fmt.Fprintf(bw, "Chunk precision, recall, F1: (%.4f, %.4f, %.4f)\n", c.Precision, c.Recall, c.F1)
		fmt.Fprintf(bw, "processed %d tokens with %d phrases; found: %d phrases; correct: %d.\n",
			r.Tokens, c.Gold, c.Predicted, c.Correct)
		fmt.Fprintf(bw, "accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f\n",
			100*r.ItemAccuracy, 100*c.Precision, 100*c.Recall, 100*c.F1)
		for _, t := range c.Types {
			fmt.Fprintf(bw, "%17s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d\n",
				t.Type, 100*t.Precision, 100*t.Recall, 100*t.F1, t.Predicted)
		}
	}
	return bw.Flush()
}

// MarshalJSON encodes r as one object with the keys item_accuracy,
// instance_accuracy, chunk_f1 (null when the labels are not chunks),
// macro_f1 and labels (an object: label → precision, recall, f1, support,
// predicted, correct, in the report's order), plus the counts, the other
// macro averages, chunk_precision, chunk_recall and chunks (counts and per
// type scores, or null). Scores are fractions in [0, 1], not percentages.
func (r Result) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	key := func(k string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
	}
	num := func(k string, v float64) {
		key(k)
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	count := func(k string, v int) {
		key(k)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	count("tokens", r.Tokens)
	count("correct_tokens", r.CorrectTokens)
	count("sequences", r.Sequences)
	count("correct_sequences", r.CorrectSequences)
	num("item_accuracy", r.ItemAccuracy)
	num("instance_accuracy", r.InstanceAccuracy)
	num("macro_precision", r.MacroPrecision)
	num("macro_recall", r.MacroRecall)
	num("macro_f1", r.MacroF1)
	if c := r.Chunk; c != nil {
		num("chunk_precision", c.Precision)
		num("chunk_recall", c.Recall)
		num("chunk_f1", c.F1)
		type typeJSON struct {
			Precision float64 `json:"precision"`
			Recall    float64 `json:"recall"`
			F1        float64 `json:"f1"`
			Gold      int     `json:"gold"`
			Predicted int     `json:"predicted"`
			Correct   int     `json:"correct"`
		}
		types := make(map[string]typeJSON, len(c.Types)) // encoding/json sorts the keys
		for _, t := range c.Types {
			types[t.Type] = typeJSON{t.Precision, t.Recall, t.F1, t.Gold, t.Predicted, t.Correct}
		}
		tj, err := json.Marshal(types)
		if err != nil {
			return nil, err
		}
		key("chunks")
		b = fmt.Appendf(b, `{"gold":%d,"predicted":%d,"correct":%d,"types":%s}`, c.Gold, c.Predicted, c.Correct, tj)
	} else {
		for _, k := range []string{"chunk_precision", "chunk_recall", "chunk_f1", "chunks"} {
			key(k)
			b = append(b, "null"...)
		}
	}
	key("labels")
	b = append(b, '{')
	for i, l := range r.Labels {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(l.Label)
		if err != nil {
			return nil, err
		}
		b = append(b, name...)
		b = append(b, `:{"precision":`...)
		b = strconv.AppendFloat(b, l.Precision, 'g', -1, 64)
		b = append(b, `,"recall":`...)
		b = strconv.AppendFloat(b, l.Recall, 'g', -1, 64)
		b = append(b, `,"f1":`...)
		b = strconv.AppendFloat(b, l.F1, 'g', -1, 64)
		b = fmt.Appendf(b, `,"support":%d,"predicted":%d,"correct":%d}`, l.Support, l.Predicted, l.Correct)
	}
	b = append(b, '}', '}')
	return b, nil
}
