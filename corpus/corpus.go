// Package corpus turns text data into what the trainer and the tagger work
// on: it reads files through package format (plain or gzip-compressed, or
// standard input), builds the attribute and label dictionaries, and encodes
// sequences as attribute ids in a sparse.Corpus.
package corpus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

// File is an open input: a format.Reader over a file, decompressed if its
// name ends in .gz, or over standard input for "-".
type File struct {
	format.Reader
	Name  string
	Size  int64 // bytes on disk, or -1 when unknown
	count *countingReader
	close func() error
}

// Offset returns how many bytes of the file have been read so far (of the
// compressed file, for .gz), for a progress bar.
func (f *File) Offset() int64 { return f.count.n }

// Close closes the file.
func (f *File) Close() error { return f.close() }

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Open opens path ("-" for standard input) for reading with the Spec.
func Open(path string, s format.Spec) (*File, error) {
	s = s.Resolve(path)
	o, err := s.Options()
	if err != nil {
		return nil, err
	}
	var (
		src   io.Reader
		close = func() error { return nil }
		size  = int64(-1)
		name  = path
	)
	if path == "-" {
		src, name = os.Stdin, "stdin"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		src, close = f, f.Close
	}
	f, err := newFile(bufio.NewReaderSize(src, 1<<16), path, name, size, o)
	if err != nil {
		close()
		return nil, err
	}
	f.close = close
	return f, nil
}

// OpenBytes reads data held in memory (an embedded file), gunzipping it when
// name ends in .gz.
func OpenBytes(data []byte, name string, s format.Spec) (*File, error) {
	s = s.Resolve(name)
	o, err := s.Options()
	if err != nil {
		return nil, err
	}
	return newFile(bytes.NewReader(data), name, name, int64(len(data)), o)
}

// newFile counts the bytes read from src (for a progress bar), gunzips them
// when path ends in .gz, and reads them with o.
func newFile(src io.Reader, path, name string, size int64, o format.Options) (*File, error) {
	count := &countingReader{r: src}
	var r io.Reader = count
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		r = zr
	}
	fr, err := format.NewReader(r, name, o)
	if err != nil {
		return nil, err
	}
	return &File{Reader: fr, Name: name, Size: size, count: count, close: func() error { return nil }}, nil
}

// Training is labelled data encoded for the trainer, with its dictionaries.
type Training struct {
	Attrs *sparse.Dict // attribute names, most frequent first
	// BAttrs names the bigram attributes (CRF++ B lines with %x), most
	// frequent first; nil when the data has none (Data.Bigram is then nil).
	BAttrs  *sparse.Dict
	Labels  *sparse.Dict // label names, in order of first appearance
	Data    sparse.Dataset
	Items   int64 // items read (positions)
	Seqs    int   // sequences read
	Columns int   // observation columns of column input (0 otherwise)
}

// Loader reads labelled training data into a Training: Add each file, then
// Finish.
type Loader struct {
	// MinFreq drops attributes seen in fewer than MinFreq items (CRF++'s
	// -f; CRFsuite's feature.minfreq, which counts (attribute, label)
	// pairs, is the trainer's).
	MinFreq int64
	// Progress, if set, is called now and then with the file being read.
	Progress func(f *File)

	attrs, labels *sparse.Dict
	vocab         *sparse.Dict // words (column input)
	words         [][]int32    // each sequence's word ids, while all have words
	noWords       bool         // some sequence had none (CRFsuite's format)
	c             *sparse.Corpus
	battrs        *sparse.Dict   // bigram attributes
	bc            *sparse.Corpus // and their sequences, parallel to c
	bb            sparse.Builder
	weights       []float64
	weighed       bool
	b             sparse.Builder
	seq           format.Sequence
	items         int64
	seqs          int
	columns       int
	files         []string // the files added, for the error when they hold nothing
}

// Load opens, reads and closes each path, and finishes.
func (l *Loader) Load(paths []string, s format.Spec) (*Training, error) {
	for _, p := range paths {
		f, err := Open(p, s)
		if err != nil {
			return nil, err
		}
		err = l.Add(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return l.Finish()
}

// Add reads every sequence of f.
func (l *Loader) Add(f *File) error {
	l.init()
	l.files = append(l.files, f.Name)
	seq := &l.seq
	for n := 0; ; n++ {
		err := f.Read(seq)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n&255 == 0 && l.Progress != nil {
			l.Progress(f)
		}
		if err := l.add(seq); err != nil {
			return err
		}
	}
	if l.Progress != nil {
		l.Progress(f)
	}
	if cr, ok := f.Reader.(*format.ColumnReader); ok {
		if l.columns != 0 && cr.Columns() != l.columns {
			return fmt.Errorf("%s: %d observation columns, but the files before it have %d", f.Name, cr.Columns(), l.columns)
		}
		l.columns = cr.Columns()
	}
	return nil
}

// AddSequence adds one labelled sequence held in memory (read from no
// file: seq.File and seq.Lines name its items in errors); columns is its
// number of observation columns (0 for attributes).
func (l *Loader) AddSequence(seq *format.Sequence, columns int) error {
	l.init()
	if seq.Len() == 0 {
		return nil
	}
	if columns != l.columns && l.seqs > 0 {
		return fmt.Errorf("%d observation columns, but the sequences before have %d", columns, l.columns)
	}
	l.columns = columns
	if len(l.files) == 0 {
		l.files = append(l.files, "the sequences given")
	}
	return l.add(seq)
}

func (l *Loader) init() {
	if l.attrs == nil {
		l.attrs, l.labels, l.c = sparse.NewDict(1<<16), sparse.NewDict(64), sparse.NewCorpus()
		l.vocab = sparse.NewDict(1 << 12)
		l.battrs, l.bc = sparse.NewDict(64), sparse.NewCorpus()
	}
}

// add adds one sequence (none if it is empty).
func (l *Loader) add(seq *format.Sequence) error {
	if seq.Len() == 0 {
		return nil
	}
	l.b.Reset()
	for t := 0; t < seq.Len(); t++ {
		if seq.Labels == nil || len(seq.Labels[t]) == 0 {
			return &format.Error{File: seq.File, Line: seq.Lines[t], Msg: "item has no label (training data must be labelled)"}
		}
		for k := seq.Ptr[t]; k < seq.Ptr[t+1]; k++ {
			id, _ := l.attrs.AddBytes(seq.Names[k])
			l.b.Add(id, seq.Values[k])
		}
		y, _ := l.labels.AddBytes(seq.Labels[t])
		l.b.End(y)
	}
	if err := l.c.Append(l.b.Seq()); err != nil {
		return fmt.Errorf("%s:%d: %v", seq.File, seq.Line, err)
	}
	l.addWords(seq)
	if err := l.bc.Append(bigramSeq(&l.bb, seq, l.battrs.AddBytes)); err != nil {
		return fmt.Errorf("%s:%d: %v", seq.File, seq.Line, err)
	}
	l.weights = append(l.weights, seq.Weight)
	l.weighed = l.weighed || seq.Weight != 1
	l.items += int64(seq.Len())
	l.seqs++
	return nil
}

// addWords records the words of seq (for candidate labels).
func (l *Loader) addWords(seq *format.Sequence) {
	if l.noWords || len(seq.Words) != seq.Len() {
		l.noWords, l.words = true, nil
		return
	}
	ids := make([]int32, len(seq.Words))
	for t, w := range seq.Words {
		ids[t], _ = l.vocab.AddBytes(w)
	}
	l.words = append(l.words, ids)
}

// Finish orders the attributes by frequency, drops the rare ones, and
// returns the training data.
func (l *Loader) Finish() (*Training, error) {
	if l.seqs == 0 {
		if len(l.files) == 0 {
			return nil, errors.New("no training data")
		}
		return nil, fmt.Errorf("%s: no sequences to train on", strings.Join(l.files, ", "))
	}
	// Most frequent attributes first, so that their weight rows share cache
	// lines; attributes below the minimum frequency are dropped.
	order := sparse.FrequencyOrder(l.c.AttrCounts(l.attrs.Len()), max(l.MinFreq, 1))
	attrs, remap, err := l.attrs.Reorder(order)
	if err != nil {
		return nil, err
	}
	if err := l.c.Remap(remap); err != nil {
		return nil, err
	}
	w := l.weights
	if !l.weighed {
		w = nil
	}
	tr := &Training{Attrs: attrs, Labels: l.labels, Items: l.items, Seqs: l.seqs, Columns: l.columns,
		Data: sparse.Dataset{Corpus: l.c, Weights: w, NumAttrs: attrs.Len(), Labels: l.labels.Len()}}
	if !l.noWords {
		tr.Data.Words, tr.Data.Vocab = l.words, l.vocab
	}
	for y := range int32(l.labels.Len()) {
		tr.Data.LabelNames = append(tr.Data.LabelNames, l.labels.String(y))
	}
	if l.battrs.Len() > 0 {
		// The bigram attributes likewise (CRF++'s -f counts every
		// feature string).
		order := sparse.FrequencyOrder(l.bc.AttrCounts(l.battrs.Len()), max(l.MinFreq, 1))
		battrs, remap, err := l.battrs.Reorder(order)
		if err != nil {
			return nil, err
		}
		if err := l.bc.Remap(remap); err != nil {
			return nil, err
		}
		tr.BAttrs = battrs
		tr.Data.Bigram, tr.Data.NumBigramAttrs = l.bc, battrs.Len()
	}
	*l = Loader{MinFreq: l.MinFreq, Progress: l.Progress}
	return tr, nil
}

// bigramSeq encodes the bigram attributes of seq (none when it has no
// BPtr) as a sequence of its length, ids from id (names it does not know,
// id reports with ok false, are left out).
func bigramSeq(b *sparse.Builder, seq *format.Sequence, id func([]byte) (int32, bool)) sparse.Seq {
	b.Reset()
	for t := 0; t < seq.Len(); t++ {
		if len(seq.BPtr) > t+1 {
			for k := seq.BPtr[t]; k < seq.BPtr[t+1]; k++ {
				if a, _ := id(seq.BNames[k]); a >= 0 {
					b.Add(a, 1)
				}
			}
		}
		b.End(sparse.NoLabel)
	}
	return b.Seq()
}

// LoadHoldout reads labelled data to evaluate during training, with the
// training data's dictionaries: attributes they do not know are left out,
// and gold labels they do not know are sparse.NoLabel, which no prediction
// matches (the token still counts).
func LoadHoldout(path string, s format.Spec, tr *Training) (*sparse.Dataset, error) {
	f, err := Open(path, s)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := tr.Holdout()
	var seq format.Sequence
	for {
		err := f.Read(&seq)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := h.Add(&seq); err != nil {
			return nil, err
		}
	}
	if h.c.Len() == 0 {
		return nil, fmt.Errorf("%s: no sequences", f.Name)
	}
	return h.Data(), nil
}

// A Holdout encodes labelled sequences to evaluate during training with a
// Training's dictionaries (see LoadHoldout).
type Holdout struct {
	tr      *Training
	b, bb   sparse.Builder
	c, bc   *sparse.Corpus
	vocab   *sparse.Dict
	words   [][]int32
	noWords bool
}

// Holdout returns an empty Holdout for tr's dictionaries.
func (tr *Training) Holdout() *Holdout {
	return &Holdout{tr: tr, c: sparse.NewCorpus(), bc: sparse.NewCorpus(), vocab: sparse.NewDict(1 << 12)}
}

// Add encodes one labelled sequence (none if it is empty).
func (h *Holdout) Add(seq *format.Sequence) error {
	if seq.Len() == 0 {
		return nil
	}
	tr, b := h.tr, &h.b
	b.Reset()
	for t := 0; t < seq.Len(); t++ {
		if seq.Labels == nil || len(seq.Labels[t]) == 0 {
			return &format.Error{File: seq.File, Line: seq.Lines[t], Msg: "item has no label (holdout data must be labelled)"}
		}
		for k := seq.Ptr[t]; k < seq.Ptr[t+1]; k++ {
			if id, ok := tr.Attrs.LookupBytes(seq.Names[k]); ok {
				b.Add(id, seq.Values[k])
			}
		}
		y, ok := tr.Labels.LookupBytes(seq.Labels[t])
		if !ok {
			y = sparse.NoLabel
		}
		b.End(y)
	}
	s := b.Seq()
	if s.Labels == nil { // every label unknown
		s.Labels = make([]int32, s.Len())
		for i := range s.Labels {
			s.Labels[i] = sparse.NoLabel
		}
	}
	if err := h.c.Append(s); err != nil {
		return fmt.Errorf("%s:%d: %v", seq.File, seq.Line, err)
	}
	if h.noWords = h.noWords || len(seq.Words) != seq.Len(); !h.noWords {
		ids := make([]int32, len(seq.Words))
		for t, w := range seq.Words {
			ids[t], _ = h.vocab.AddBytes(w)
		}
		h.words = append(h.words, ids)
	}
	lookup := func(name []byte) (int32, bool) {
		if tr.BAttrs == nil {
			return -1, false
		}
		id, ok := tr.BAttrs.LookupBytes(name)
		if !ok {
			id = -1
		}
		return id, ok
	}
	if err := h.bc.Append(bigramSeq(&h.bb, seq, lookup)); err != nil {
		return fmt.Errorf("%s:%d: %v", seq.File, seq.Line, err)
	}
	return nil
}

// Len returns the number of sequences added.
func (h *Holdout) Len() int { return h.c.Len() }

// Data returns the holdout data for the trainer.
func (h *Holdout) Data() *sparse.Dataset {
	tr := h.tr
	d := &sparse.Dataset{Corpus: h.c, NumAttrs: tr.Attrs.Len(), Labels: tr.Labels.Len()}
	if !h.noWords {
		d.Words, d.Vocab = h.words, h.vocab
	}
	if tr.BAttrs != nil {
		d.Bigram, d.NumBigramAttrs = h.bc, tr.BAttrs.Len()
	}
	return d
}
