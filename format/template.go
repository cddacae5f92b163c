package format

import (
	"io"
	"strconv"
	"strings"
)

// Template is a parsed CRF++ feature template. Each "U" line yields one
// attribute per position: the line's text with every %x[row,col] replaced
// by column col of the item row positions away (CRF++'s padding names
// _B-1, _B-2, … before the sentence and _B+1, _B+2, … after it), so
// "U05:%x[-1,0]/%x[0,0]" gives "U05:He/reckons". A "B" line without %x asks
// for label-bigram (transition) features. A "B" line with %x asks for
// observation-dependent transitions, as CRF++ expands them: at every
// position t ≥ 1 (the transition from t−1 to t) the line's text with the
// macros of position t replaced, "B01:%x[0,1]" giving "B01:NN"; each such
// string is a bigram attribute (Sequence.BNames) with weights for label
// pairs.
type Template struct {
	file   string
	lines  []tmplLine
	blines []tmplLine // B lines with %x
	bigram string     // the bare B line's text, "" when there is none
	maxCol int        // largest column read, -1 when none
	maxRow int        // largest |row|
}

type tmplLine struct {
	line  int // line number in the template file
	text  string
	parts []tmplPart
}

// tmplPart is literal text or a %x reference.
type tmplPart struct {
	x        bool
	lit      string
	row, col int
}

// maxOffset bounds row and column numbers so that arithmetic never
// overflows; CRF++ itself accepts rows -4..4 only.
const maxOffset = 1 << 20

// ParseTemplate reads a CRF++ template. Lines starting with '#' and blank
// lines are ignored; every other line must start with 'U' or 'B'. Errors
// name the template file and line.
func ParseTemplate(r io.Reader, name string) (*Template, error) {
	t := &Template{file: name, maxCol: -1}
	lr := newLineReader(r)
	for {
		raw, ok := lr.next()
		if !ok {
			break
		}
		ln := lr.n
		text := strings.TrimRight(string(raw), " \t\r\v\f")
		if strings.TrimSpace(text) == "" || text[0] == '#' {
			continue
		}
		parts, err := parseTemplateLine(text)
		if err != "" {
			return nil, errorf(name, ln, "%s", err)
		}
		hasX := false
		for _, p := range parts {
			if p.x {
				hasX = true
				t.maxCol = max(t.maxCol, p.col)
				t.maxRow = max(t.maxRow, p.row, -p.row)
			}
		}
		switch text[0] {
		case 'U':
			t.lines = append(t.lines, tmplLine{line: ln, text: text, parts: parts})
		case 'B':
			// A B line without %x expands to the same string at every
			// position: CRF++'s one shared M×M block, the plain label
			// bigrams (more such lines would only repeat it).
			if hasX {
				t.blines = append(t.blines, tmplLine{line: ln, text: text, parts: parts})
			} else if t.bigram == "" {
				t.bigram = text
			}
		default:
			return nil, errorf(name, ln, "%s: a template line must start with U (unigram) or B (bigram)", clip(text))
		}
	}
	if err := lr.failure(name); err != nil {
		return nil, err
	}
	if len(t.lines) == 0 && t.bigram == "" && len(t.blines) == 0 {
		return nil, errorf(name, 0, "the template has no U or B lines")
	}
	return t, nil
}

// parseTemplateLine splits a line into literal text and %x[row,col]
// references, returning a message on malformed input.
func parseTemplateLine(text string) ([]tmplPart, string) {
	var parts []tmplPart
	lit := 0 // start of the pending literal
	for i := 0; i < len(text); i++ {
		if text[i] != '%' {
			continue
		}
		if i > lit {
			parts = append(parts, tmplPart{lit: text[lit:i]})
		}
		j := i + 1
		if j >= len(text) || text[j] != 'x' {
			return nil, "malformed macro at column " + strconv.Itoa(i+1) + ": want %x[row,col] (a literal % cannot be written)"
		}
		j++
		bad := "malformed %x at column " + strconv.Itoa(i+1) + ": want %x[row,col] with integer row and column ≥ 0"
		if j >= len(text) || text[j] != '[' {
			return nil, bad
		}
		j++
		neg := false
		if j < len(text) && text[j] == '-' {
			neg = true
			j++
		}
		row, k := digits(text, j)
		if k == j || row < 0 || k >= len(text) || text[k] != ',' {
			return nil, bad
		}
		j = k + 1
		col, k := digits(text, j)
		if k == j || col < 0 || k >= len(text) || text[k] != ']' {
			return nil, bad
		}
		if neg {
			row = -row
		}
		parts = append(parts, tmplPart{x: true, row: row, col: col})
		lit = k + 1
		i = k
	}
	if lit < len(text) {
		parts = append(parts, tmplPart{lit: text[lit:]})
	}
	return parts, ""
}

// digits parses decimal digits at s[i:], returning the value (-1 when it
// exceeds maxOffset) and the index after them.
func digits(s string, i int) (int, int) {
	v := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v >= 0 {
			v = 10*v + int(s[i]-'0')
			if v > maxOffset {
				v = -1
			}
		}
	}
	return v, i
}

// Bigram reports whether the template asks for plain label-bigram
// features (a B line without %x).
func (t *Template) Bigram() bool { return t.bigram != "" }

// ObsBigram reports whether the template has B lines with %x
// (observation-dependent transitions).
func (t *Template) ObsBigram() bool { return len(t.blines) > 0 }

// Columns is the number of observation columns the template needs (the
// largest column it reads plus one).
func (t *Template) Columns() int { return t.maxCol + 1 }

// String is the template's canonical text: its U lines in order, then its
// bare B line, then its B lines with %x in order, without comments or blank
// lines. Parsing it again gives the same
// attributes (a model stores it).
func (t *Template) String() string {
	var b strings.Builder
	for _, l := range t.lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	if t.bigram != "" {
		b.WriteString(t.bigram)
		b.WriteByte('\n')
	}
	for _, l := range t.blines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// check reports a template column beyond the data's observation columns.
func (t *Template) check(columns int, data string, dataLine int) error {
	if t.maxCol < columns {
		return nil
	}
	where := data
	if dataLine > 0 {
		where += ":" + strconv.Itoa(dataLine)
	}
	for _, l := range t.allLines() {
		for _, p := range l.parts {
			if p.x && p.col >= columns {
				return errorf(t.file, l.line, "%%x[%d,%d] reads column %d but %s has %d observation column(s) (0..%d)",
					p.row, p.col, p.col, where, columns, columns-1)
			}
		}
	}
	return nil
}

// allLines returns the U lines and the B lines with %x.
func (t *Template) allLines() []tmplLine {
	if len(t.blines) == 0 {
		return t.lines
	}
	return append(append([]tmplLine(nil), t.lines...), t.blines...)
}

// padding returns CRF++'s name for the position idx outside a sentence of
// length n: _B-1 for the one before the start, _B+1 for the one after the
// end, and so on.
func padding(dst []byte, idx, n int) []byte {
	if idx < 0 {
		dst = append(dst, "_B-"...)
		return strconv.AppendInt(dst, int64(-idx), 10)
	}
	dst = append(dst, "_B+"...)
	return strconv.AppendInt(dst, int64(idx-n+1), 10)
}

// expand appends the template's attributes for position t of sent to b.
func (t *Template) expand(b *builder, sent *sentence, pos int) {
	expandLines(t.lines, b, sent, pos)
}

// expandBigram appends the bigram attributes of the transition into
// position pos (≥ 1; CRF++ has none at 0) to b.
func (t *Template) expandBigram(b *builder, sent *sentence, pos int) {
	if pos > 0 {
		expandLines(t.blines, b, sent, pos)
	}
}

func expandLines(lines []tmplLine, b *builder, sent *sentence, pos int) {
	n := sent.rows
	for li := range lines {
		l := &lines[li]
		start := len(b.arena)
		for _, p := range l.parts {
			if !p.x {
				b.arena = append(b.arena, p.lit...)
				continue
			}
			idx := pos + p.row
			if idx < 0 || idx >= n {
				b.arena = padding(b.arena, idx, n)
			} else {
				b.arena = append(b.arena, sent.field(idx, p.col)...)
			}
		}
		b.mark(start)
	}
}
