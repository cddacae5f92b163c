package sparse

// Dataset is a labelled training (or holdout) set over attribute ids: what
// package corpus makes of text and package train trains on (train.Data).
type Dataset struct {
	Corpus   *Corpus   // labelled sequences
	Weights  []float64 // per-sequence instance weights, or nil for all 1
	NumAttrs int
	Labels   int // M

	// Words, for candidate labels (train.Config.Candidates, Lexicon): each
	// position's word as an id in Vocab (−1: none), per sequence; nil when
	// the input has no words (CRFsuite's attribute format).
	Words [][]int32
	Vocab *Dict
	// Lexicon, if not nil, restricts the words it holds to its labels (ids
	// of this data's labels), with the words seen train.Config.Candidates times.
	Lexicon *Lexicon
	// LabelNames are the labels' names (label id order), for sub-label
	// weights (train.Config.SubLabels).
	LabelNames []string
	// Bigram, if not nil, holds the bigram attributes of every sequence
	// (CRF++ B template lines with %x): sequence i of Bigram has the length
	// of sequence i of Corpus, and its position t ≥ 1 the attributes of the
	// transition from t−1 to t, ids in [0, NumBigramAttrs).
	Bigram         *Corpus
	NumBigramAttrs int
}

// Weight returns the instance weight of sequence i (1 without Weights).
func (d *Dataset) Weight(i int) float64 {
	if d.Weights == nil {
		return 1
	}
	return d.Weights[i]
}
