package format

import (
	"bytes"
	"io"
)

// sentence holds the observation columns of the rows of one sentence,
// copied out of the line buffer.
type sentence struct {
	text   []byte
	offs   []int // start, end of each field; ncols fields per row
	labs   []int // start, end of each row's label; -1, -1 when none
	ncols  int
	rows   int
	labels bool // some row has a label
}

func (sent *sentence) reset(ncols int) {
	sent.text = sent.text[:0]
	sent.offs = sent.offs[:0]
	sent.labs = sent.labs[:0]
	sent.ncols = ncols
	sent.rows = 0
	sent.labels = false
}

// field is column col of row row.
func (sent *sentence) field(row, col int) []byte {
	k := 2 * (row*sent.ncols + col)
	return sent.text[sent.offs[k]:sent.offs[k+1]]
}

// addField copies one field of the current row.
func (sent *sentence) addField(f []byte) {
	start := len(sent.text)
	sent.text = append(sent.text, f...)
	sent.offs = append(sent.offs, start, len(sent.text))
}

// addLabel copies the label of the current row (nil: none).
func (sent *sentence) addLabel(f []byte) {
	if f == nil {
		sent.labs = append(sent.labs, -1, -1)
		return
	}
	sent.labels = true
	start := len(sent.text)
	sent.text = append(sent.text, f...)
	sent.labs = append(sent.labs, start, len(sent.text))
}

// emit turns the sentence into seq: attributes by fx (bigram attributes
// into bb), labels as views.
func (sent *sentence) emit(seq *Sequence, fx *extractor, b, bb *builder) {
	b.reset()
	fx.prepare(sent)
	for t := 0; t < sent.rows; t++ {
		fx.item(b, sent, t)
		seq.Ptr = append(seq.Ptr, int32(b.count()))
	}
	b.finish(seq, false)
	for t := 0; t < sent.rows; t++ {
		w := sent.field(t, 0)
		seq.Words = append(seq.Words, w[:len(w):len(w)])
	}
	if fx.tmpl != nil && fx.tmpl.ObsBigram() {
		bb.reset()
		seq.BPtr = append(seq.BPtr, 0)
		for t := 0; t < sent.rows; t++ {
			fx.tmpl.expandBigram(bb, sent, t)
			seq.BPtr = append(seq.BPtr, int32(bb.count()))
		}
		seq.BNames = bb.views(seq.BNames)
	}
	if sent.labels {
		for t := 0; t < sent.rows; t++ {
			lo, hi := sent.labs[2*t], sent.labs[2*t+1]
			if lo < 0 {
				seq.Labels = append(seq.Labels, nil)
			} else {
				seq.Labels = append(seq.Labels, sent.text[lo:hi:hi])
			}
		}
	} else {
		seq.Labels = nil
	}
	seq.Line = seq.Lines[0]
}

// sentenceReader is what the column formats share: the lines, the rows of
// the sentence being read, and what turns them into attributes.
type sentenceReader struct {
	lines *lineReader
	file  string
	fx    *extractor
	sent  sentence
	b     builder
	bb    builder // bigram attributes
}

// nextRow returns the next line of the sentence being read: blank lines
// before its first row are skipped; a blank line after it, or the end of
// the input, ends it (ok = false).
func (r *sentenceReader) nextRow() (line []byte, ok bool) {
	for {
		line, ok := r.lines.next()
		if !ok || !blank(line) {
			return line, ok
		}
		if r.sent.rows > 0 {
			return nil, false
		}
	}
}

// end ends a Read: a read error, io.EOF when the input held no more rows,
// else nil with the sentence's attributes and labels in s.
func (r *sentenceReader) end(s *Sequence) error {
	if err := r.lines.failure(r.file); err != nil {
		return err
	}
	if r.sent.rows == 0 {
		return io.EOF
	}
	r.sent.emit(s, r.fx, &r.b, &r.bb)
	r.sent.rows = 0
	return nil
}

// ColumnReader reads whitespace-separated columns (CoNLL-2000 style): one
// item per line, a line of white space only between sentences, the last
// column the label. With Options.Columns = n > 0, rows with n+1 fields
// carry a label and rows with exactly n fields are unlabelled; with 0, the
// first row fixes the column count and every row carries a label. All rows
// of a file must have the same observation columns, and all rows of a
// sentence the same number of fields.
type ColumnReader struct {
	sentenceReader
	columns  int   // observation columns, once known
	known    bool  // columns known (given, or seen in the first row)
	optional bool  // the caller gave the count: rows may lack a label
	fields   []int // field offsets within the current line
}

// Columns is the number of observation columns: the one given in Options,
// or the one seen in the first row (0 before the first Read). A trainer
// stores it in the model so that tagging can tell labelled rows from
// unlabelled ones.
func (r *ColumnReader) Columns() int { return r.columns }

func (r *ColumnReader) Read(s *Sequence) error {
	s.reset(r.file)
	r.sent.rows = 0 // after an error, start afresh
	nf := 0         // fields per row in this sentence
	firstLn := 0    // line of the sentence's first row
	for {
		line, ok := r.nextRow()
		if !ok {
			break
		}
		ln := r.lines.n
		r.fields = splitFields(r.fields[:0], line)
		n := len(r.fields) / 2
		if !r.known {
			if n < 2 {
				return errorf(r.file, ln, "found %d column(s): need at least one observation column and the label", n)
			}
			r.columns = n - 1
			r.known = true
			if err := r.fx.check(r.columns, r.file, ln); err != nil {
				return err
			}
		}
		if n != r.columns+1 && (!r.optional || n != r.columns) {
			if r.optional {
				return errorf(r.file, ln, "expected %d columns (or %d without a label), found %d", r.columns+1, r.columns, n)
			}
			return errorf(r.file, ln, "expected %d columns, found %d", r.columns+1, n)
		}
		if r.sent.rows == 0 {
			r.sent.reset(r.columns)
			nf = n
			firstLn = ln
		} else if n != nf {
			return errorf(r.file, ln, "expected %d columns like line %d of this sentence, found %d", nf, firstLn, n)
		}
		for c := 0; c < r.columns; c++ {
			r.sent.addField(line[r.fields[2*c]:r.fields[2*c+1]])
		}
		if n > r.columns {
			r.sent.addLabel(line[r.fields[2*r.columns]:r.fields[2*r.columns+1]])
		} else {
			r.sent.addLabel(nil)
		}
		r.sent.rows++
		s.Lines = append(s.Lines, ln)
	}
	return r.end(s)
}

// splitFields appends the (start, end) offsets of the space- or
// TAB-separated fields of line.
func splitFields(dst []int, line []byte) []int {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return dst
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		dst = append(dst, i, j)
		i = j
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// conlluColumns is the number of observation columns of CoNLL-U: every
// field but ID. Template column c is field c+1: 0 FORM, 1 LEMMA, 2 UPOS,
// 3 XPOS, 4 FEATS, 5 HEAD, 6 DEPREL, 7 DEPS, 8 MISC.
const conlluColumns = 9

var conlluNames = [conlluColumns]string{"FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC"}

// conlluReader reads CoNLL-U: '#' comment lines, multiword-token ranges
// (ID with '-') and empty nodes (ID with '.') are skipped; every other line
// must hold 10 TAB-separated fields with an integer ID. The label is UPOS or
// XPOS; "_" there means no label.
type conlluReader struct {
	sentenceReader
	label  int // field index of the label: 3 UPOS, 4 XPOS
	fields [20]int
}

func (r *conlluReader) Read(s *Sequence) error {
	s.reset(r.file)
	r.sent.reset(conlluColumns)
	for {
		line, ok := r.nextRow()
		if !ok {
			break
		}
		if line[0] == '#' {
			continue
		}
		ln := r.lines.n
		n := 0
		for start := 0; ; n++ {
			end := bytes.IndexByte(line[start:], '\t')
			if end < 0 {
				end = len(line)
			} else {
				end += start
			}
			if n < 10 {
				r.fields[2*n], r.fields[2*n+1] = start, end
			}
			if end == len(line) {
				n++
				break
			}
			start = end + 1
		}
		if n != 10 {
			return errorf(r.file, ln, "expected 10 TAB-separated fields, found %d", n)
		}
		id := line[r.fields[0]:r.fields[1]]
		if bytes.IndexByte(id, '-') >= 0 || bytes.IndexByte(id, '.') >= 0 {
			continue // a multiword token or an empty node
		}
		if !allDigits(id) {
			return errorf(r.file, ln, "bad ID %s (want an integer, a range n-m or an empty node n.k)", clip(id))
		}
		for f := 1; f < 10; f++ {
			if r.fields[2*f] == r.fields[2*f+1] {
				return errorf(r.file, ln, "field %d (%s) is empty (CoNLL-U writes _ for none)", f+1, conlluNames[f-1])
			}
		}
		for f := 1; f < 10; f++ {
			r.sent.addField(line[r.fields[2*f]:r.fields[2*f+1]])
		}
		lab := line[r.fields[2*r.label]:r.fields[2*r.label+1]]
		if len(lab) == 1 && lab[0] == '_' {
			lab = nil
		}
		r.sent.addLabel(lab)
		r.sent.rows++
		s.Lines = append(s.Lines, ln)
	}
	return r.end(s)
}

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// extractor turns the columns of a sentence into attributes: the
// template's, then the pos feature set's.
type extractor struct {
	tmpl *Template
	pos  *posFeatures
}

func newExtractor(o Options, name string) (*extractor, error) {
	fx := &extractor{tmpl: o.Template}
	switch o.Features {
	case "":
	case "pos":
		fx.pos = &posFeatures{guess: o.Guesser}
	case "morph":
		fx.pos = &posFeatures{morph: true, guess: o.Guesser}
	default:
		return nil, errorf(name, 0, "unknown feature set %q (want pos or morph)", o.Features)
	}
	if o.Guesser != nil && fx.pos == nil {
		return nil, errorf(name, 0, "a guesser adds to a built-in feature set (pos or morph), not to a template alone")
	}
	if fx.tmpl == nil && fx.pos == nil {
		return nil, errorf(name, 0, "%s input needs a feature template or a feature set (pos)", o.Format)
	}
	return fx, nil
}

// check reports features that read beyond the data's columns.
func (fx *extractor) check(columns int, file string, line int) error {
	if fx.tmpl != nil {
		if err := fx.tmpl.check(columns, file, line); err != nil {
			return err
		}
	}
	return nil
}

func (fx *extractor) prepare(sent *sentence) {
	if fx.pos != nil {
		fx.pos.prepare(sent)
	}
}

func (fx *extractor) item(b *builder, sent *sentence, t int) {
	if fx.tmpl != nil {
		fx.tmpl.expand(b, sent, t)
	}
	if fx.pos != nil {
		fx.pos.item(b, sent, t)
	}
}
