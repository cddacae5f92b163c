// Package format reads sequence-labelling data and turns it into attribute
// sequences: CRFsuite's attribute files, whitespace-separated column files
// (CoNLL-2000 style) and CoNLL-U, the last two with CRF++ feature templates
// or the built-in "pos" feature set.
//
// Readers fill a caller-owned Sequence and reuse its memory and their own
// arenas, so reading a corpus allocates nothing per sequence once the
// buffers have grown: attribute names and labels are views that stay valid
// only until the next Read.
package format

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Sequence is one labelled (or unlabelled) sequence of items, each with a
// list of attributes. Item t has attributes Ptr[t] .. Ptr[t+1]-1 of Names
// and Values.
type Sequence struct {
	File   string
	Line   int       // line of the first item
	Weight float64   // instance weight (CRFsuite "@weight:"), 1 by default
	Lines  []int     // line of each item
	Labels [][]byte  // gold label of each item (nil entries / nil slice when none)
	Ptr    []int32   // T+1 offsets: item t has attributes Ptr[t] .. Ptr[t+1]-1
	Names  [][]byte  // attribute names (views valid until the next Read)
	Values []float64 // attribute values (1 unless the input says otherwise)
	// Words holds each item's word (column 0; FORM in CoNLL-U) for column
	// input, the key of a model's candidate-label lexicon; nil for
	// CRFsuite's attribute format. Views valid until the next Read.
	Words [][]byte
	// BPtr and BNames are the bigram attributes of a template's B lines
	// with %x (observation-dependent transitions): item t has
	// BNames[BPtr[t]:BPtr[t+1]], those of the transition from item t−1
	// to t (none at item 0). BPtr is empty when the template has no such
	// lines (and for other input).
	BPtr   []int32
	BNames [][]byte
}

// Len is the number of items.
func (s *Sequence) Len() int {
	if len(s.Ptr) == 0 {
		return 0
	}
	return len(s.Ptr) - 1
}

// reset empties s, keeping its memory.
func (s *Sequence) reset(file string) {
	s.File = file
	s.Line = 0
	s.Weight = 1
	s.Lines = s.Lines[:0]
	s.Labels = s.Labels[:0]
	s.Ptr = append(s.Ptr[:0], 0)
	s.Names = s.Names[:0]
	s.Values = s.Values[:0]
	s.Words = s.Words[:0]
	s.BPtr = s.BPtr[:0]
	s.BNames = s.BNames[:0]
}

// Reader reads one sequence per call into s, reusing s's memory. It returns
// io.EOF (and leaves s empty) when the input is exhausted. Sequences are never
// empty. Errors are *Error values naming the file and line.
type Reader interface {
	Read(s *Sequence) error
}

// Options selects the input format and the feature extraction.
//
// For CoNLL-U, template column c is CoNLL-U field c+1 (ID is not
// readable): 0 FORM, 1 LEMMA, 2 UPOS, 3 XPOS, 4 FEATS, 5 HEAD, 6 DEPREL,
// 7 DEPS, 8 MISC; a template that reads the label column is an error. The
// "pos" features read column 0 (FORM). Format "" means "crfsuite".
type Options struct {
	Format   string    // "crfsuite", "conll", "conllu"
	Template *Template // conll/conllu: CRF++ template; or
	Features string    // "pos": the built-in feature set
	Label    string    // conllu: "upos" (default) or "xpos"
	Columns  int       // conll: observation columns (0 = every row's last column is the label)
	// Guesser, with Features, adds the attributes of its guesses of
	// each word's labels (a model trained with one stores it).
	Guesser *Guesser
}

// Error is an input error at a place in a file. Line 0 means the whole file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line <= 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// clipLen is how many bytes of a piece of input an error message quotes.
const clipLen = 64

// clip quotes b (a []byte or string from the input) for an error message,
// its first clipLen bytes only when it is longer: a line of a megabyte
// must not make a megabyte of message.
func clip[T ~string | ~[]byte](b T) string {
	if len(b) <= clipLen {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(string(b[:clipLen])), len(b))
}

// NewReader returns a reader of r in the format o.Format; name is used in
// error messages and Sequence.File. Column formats need a template, the
// "pos" features or both; the CRFsuite format carries its own attributes and
// takes neither.
func NewReader(r io.Reader, name string, o Options) (Reader, error) {
	switch strings.ToLower(o.Format) {
	case "crfsuite", "":
		if o.Template != nil || o.Features != "" {
			return nil, errorf(name, 0, "the crfsuite format holds its own attributes: no template or feature set applies")
		}
		return &crfsuiteReader{lines: newLineReader(r), file: name}, nil
	case "conll":
		if o.Columns < 0 {
			return nil, errorf(name, 0, "negative column count %d", o.Columns)
		}
		if o.Label != "" {
			return nil, errorf(name, 0, "--label applies to conllu input only (conll's label is the last column)")
		}
		fx, err := newExtractor(o, name)
		if err != nil {
			return nil, err
		}
		cr := &ColumnReader{sentenceReader: sentenceReader{lines: newLineReader(r), file: name, fx: fx}, columns: o.Columns, known: o.Columns > 0, optional: o.Columns > 0}
		if cr.known {
			if err := fx.check(cr.columns, name, 0); err != nil {
				return nil, err
			}
		}
		return cr, nil
	case "conllu":
		label := 3 // field index of UPOS in the 10-field line (XPOS: 4)
		switch strings.ToLower(o.Label) {
		case "", "upos":
		case "xpos":
			label = 4
		default:
			return nil, errorf(name, 0, "unknown label column %q (want upos or xpos)", o.Label)
		}
		if o.Columns != 0 && o.Columns != conlluColumns {
			return nil, errorf(name, 0, "conllu input has %d observation columns, not %d", conlluColumns, o.Columns)
		}
		fx, err := newExtractor(o, name)
		if err != nil {
			return nil, err
		}
		if err := fx.check(conlluColumns, name, 0); err != nil {
			return nil, err
		}
		if fx.tmpl != nil {
			for _, l := range fx.tmpl.allLines() {
				for _, p := range l.parts {
					if p.x && p.col == label-1 {
						return nil, errorf(fx.tmpl.file, l.line, "%%x[%d,%d] reads %s, the label column: it would leak the answer",
							p.row, p.col, conlluNames[p.col])
					}
				}
			}
		}
		return &conlluReader{sentenceReader: sentenceReader{lines: newLineReader(r), file: name, fx: fx}, label: label}, nil
	}
	return nil, errorf(name, 0, "unknown format %q (want crfsuite, conll or conllu)", o.Format)
}

// lineReader yields lines without their end-of-line bytes ("\n" or "\r\n"),
// counting them. A returned line is valid until the next call.
type lineReader struct {
	br   *bufio.Reader
	long []byte // holds lines longer than br's buffer
	n    int    // number of the line last returned (1-based)
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next line, or ok=false at the end of the input or on a
// read error (kept in lr.err; io.EOF is not an error).
func (lr *lineReader) next() (line []byte, ok bool) {
	if lr.err != nil {
		return nil, false
	}
	b, err := readLine(lr.br, &lr.long)
	if err != nil {
		if err != io.EOF {
			lr.err = err
			return nil, false
		}
		if len(b) == 0 {
			lr.err = io.EOF
			return nil, false
		}
	}
	lr.n++
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, true
}

// readLine reads a line with its end from br: a view of br's buffer, or of
// *long (reused) for a line longer than the buffer.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		*long = append((*long)[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = br.ReadSlice('\n')
			*long = append(*long, line...)
		}
		line = *long
	}
	return line, err
}

// failure turns a read error (not EOF) into an *Error.
func (lr *lineReader) failure(file string) error {
	if lr.err == nil || errors.Is(lr.err, io.EOF) {
		return nil
	}
	return errorf(file, lr.n+1, "read error: %v", lr.err)
}

// blank reports whether a line holds only ASCII white space.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f' {
			return false
		}
	}
	return true
}

// builder accumulates attribute names in an arena as (start, end) offsets and
// turns them into views once the sequence is complete (the arena may move
// while it grows).
type builder struct {
	arena []byte
	offs  []int // start, end per name
	ones  []float64
}

func (b *builder) reset() {
	b.arena = b.arena[:0]
	b.offs = b.offs[:0]
}

// put starts a name with the text s and returns its start, for mark.
func (b *builder) put(s string) int {
	start := len(b.arena)
	b.arena = append(b.arena, s...)
	return start
}

// mark records the name that starts at arena offset start and ends at the
// arena's current end.
func (b *builder) mark(start int) {
	b.offs = append(b.offs, start, len(b.arena))
}

func (b *builder) count() int { return len(b.offs) / 2 }

// views returns names (regrown if short) pointing at the arena's names.
func (b *builder) views(names [][]byte) [][]byte {
	n := b.count()
	if cap(names) < n {
		names = make([][]byte, 0, n+n/4)
	}
	names = names[:n]
	for i := range n {
		lo, hi := b.offs[2*i], b.offs[2*i+1]
		names[i] = b.arena[lo:hi:hi]
	}
	return names
}

// finish points s.Names at the arena and, when values is nil, fills s.Values
// with ones.
func (b *builder) finish(s *Sequence, values bool) {
	s.Names = b.views(s.Names)
	n := b.count()
	if !values {
		if cap(s.Values) < n {
			s.Values = make([]float64, n, n+n/4)
		}
		s.Values = s.Values[:n]
		for i := range s.Values {
			s.Values[i] = 1
		}
	}
}
