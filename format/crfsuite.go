package format

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"strconv"
)

// crfsuiteReader reads CRFsuite's attribute format, following the rules of
// CRFsuite's own reader (frontend/iwa.c and reader.c):
//
//   - one item per line: LABEL<TAB>ATTR[:VALUE]<TAB>…; fields are separated
//     by TABs only (runs of TABs count as one; spaces belong to names);
//   - an empty line ends a sequence;
//   - in a name, `\:` stands for ':' and `\\` for '\'; the first unescaped
//     ':' starts the value; an empty value means 1;
//   - a field that starts with '#' starts a comment that runs to the end of
//     the line; a line with no label (a comment line, a TAB-only line)
//     adds no item;
//   - a first field "@weight:W" sets the instance weight of the sequence
//     being read (the next field, if any, is then the label); any other
//     "@" declaration is an error.
//
// Where CRFsuite would silently accept nonsense this reader reports it
// instead: a value that is not a finite number (CRFsuite's atof reads
// "1x" as 1 and "x" as 0), a negative or non-finite weight, an empty label.
// A trailing '\r' is dropped from every line (CRFsuite would read a DOS
// blank line as an item labelled "\r").
type crfsuiteReader struct {
	lines *lineReader
	file  string
	b     builder
	labs  []byte // labels of the sequence
	loffs []int  // start, end of each label in labs
}

func (r *crfsuiteReader) Read(s *Sequence) error {
	s.reset(r.file)
	r.b.reset()
	r.labs = r.labs[:0]
	r.loffs = r.loffs[:0]
	vals := s.Values[:0]
	for {
		line, ok := r.lines.next()
		if !ok {
			break
		}
		if len(line) == 0 {
			if len(s.Lines) > 0 {
				break
			}
			s.Weight = 1 // CRFsuite resets the weight at every boundary
			continue
		}
		var err error
		vals, err = r.parseLine(s, line, vals)
		if err != nil {
			return err
		}
	}
	if err := r.lines.failure(r.file); err != nil {
		return err
	}
	if len(s.Lines) == 0 {
		s.reset(r.file)
		return io.EOF
	}
	s.Values = vals
	r.b.finish(s, true)
	s.Labels = s.Labels[:0]
	for i := 0; i < len(r.loffs); i += 2 {
		s.Labels = append(s.Labels, r.labs[r.loffs[i]:r.loffs[i+1]:r.loffs[i+1]])
	}
	s.Line = s.Lines[0]
	return nil
}

// parseLine adds the item on line (if it has a label) to s.
func (r *crfsuiteReader) parseLine(s *Sequence, line []byte, vals []float64) ([]float64, error) {
	ln := r.lines.n
	haveLabel := false
	i := 0
	for {
		for i < len(line) && line[i] == '\t' {
			i++
		}
		if i == len(line) || line[i] == '#' {
			break
		}
		if !haveLabel {
			start := len(r.labs)
			var value []byte
			var hasValue bool
			r.labs, i, value, hasValue = unescapeField(r.labs, line, i)
			name := r.labs[start:]
			if len(name) > 0 && name[0] == '@' {
				if string(name) != "@weight" {
					return vals, errorf(r.file, ln, "unrecognized declaration %q", name)
				}
				if !hasValue || len(value) == 0 {
					return vals, errorf(r.file, ln, "@weight needs a value (@weight:W)")
				}
				w, err := strconv.ParseFloat(string(value), 64)
				if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
					return vals, errorf(r.file, ln, "bad instance weight %q (want a finite number ≥ 0)", value)
				}
				s.Weight = w
				r.labs = r.labs[:start]
				continue
			}
			if len(name) == 0 {
				return vals, errorf(r.file, ln, "empty label")
			}
			// CRFsuite reads a label like an attribute and ignores its value.
			haveLabel = true
			r.loffs = append(r.loffs, start, len(r.labs))
			s.Lines = append(s.Lines, ln)
			continue
		}
		start := len(r.b.arena)
		var value []byte
		var hasValue bool
		r.b.arena, i, value, hasValue = unescapeField(r.b.arena, line, i)
		if len(r.b.arena) == start {
			return vals, errorf(r.file, ln, "empty attribute name")
		}
		r.b.mark(start)
		v := 1.0
		if hasValue && len(value) > 0 {
			var err error
			v, err = strconv.ParseFloat(string(value), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return vals, errorf(r.file, ln, "attribute %q: bad value %q (want a finite number)", r.b.arena[start:], value)
			}
		}
		vals = append(vals, v)
	}
	if haveLabel {
		s.Ptr = append(s.Ptr, int32(r.b.count()))
	}
	return vals, nil
}

// unescapeField reads the field that starts at line[i] (it ends at a TAB
// or the end of the line). It appends the field's name to dst, turning `\:`
// into ':' and `\\` into '\' (any other backslash is kept as it is), and
// returns where the field ends and what follows its first unescaped ':' as
// the value. One pass, copying runs between escapes: CRF++-style
// attributes ("U00:word", written "U00\:word") all have one.
func unescapeField(dst, line []byte, i int) (out []byte, end int, value []byte, hasValue bool) {
	run, j := i, i
	for j < len(line) {
		// Skip ordinary bytes eight at a time.
		for j+8 <= len(line) {
			x := binary.LittleEndian.Uint64(line[j:])
			m := zeroBytes(x^tabs) | zeroBytes(x^colons) | zeroBytes(x^backslashes)
			if m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		if j == len(line) {
			break
		}
		c := line[j]
		if !fieldSpecial[c] {
			j++
			continue
		}
		switch c {
		case '\t':
			return append(dst, line[run:j]...), j, nil, false
		case ':':
			dst = append(dst, line[run:j]...)
			k := j + 1
			for k < len(line) && line[k] != '\t' {
				k++
			}
			return dst, k, line[j+1 : k], true
		default: // '\\'
			if j+1 < len(line) && (line[j+1] == ':' || line[j+1] == '\\') {
				dst = append(dst, line[run:j]...)
				run = j + 1 // the escaped byte starts the next run
				j += 2
				continue
			}
			j++
		}
	}
	return append(dst, line[run:j]...), j, nil, false
}

const (
	tabs        = 0x0909090909090909
	colons      = 0x3a3a3a3a3a3a3a3a
	backslashes = 0x5c5c5c5c5c5c5c5c
	low7        = 0x7f7f7f7f7f7f7f7f
)

// zeroBytes returns x with the top bit of each zero byte set and all other
// bits clear (exact: no false positives from borrows).
func zeroBytes(x uint64) uint64 {
	return ^((x&low7 + low7) | x | low7)
}

// fieldSpecial marks the bytes unescapeField stops at.
var fieldSpecial = [256]bool{'\t': true, ':': true, '\\': true}

// WriteCRFsuite writes s in CRFsuite's attribute format: a "@weight:W" line
// when the weight is not 1, one line per item (the label, then each
// attribute with ':' and '\' escaped and ":value" when the value is not 1),
// and a blank line after the sequence. Every item needs a label (CRFsuite
// has no unlabelled items; write a dummy one for tagging). Names that the
// format cannot hold are errors: empty names, names containing TAB, CR or
// LF, names starting with '#' (a comment) and labels starting with '@' (a
// declaration).
func WriteCRFsuite(w io.Writer, s *Sequence) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriter(w)
	}
	t := s.Len()
	where := func(i int) (string, int) {
		if i < len(s.Lines) {
			return s.File, s.Lines[i]
		}
		return s.File, s.Line
	}
	if len(s.Labels) != t {
		f, l := where(0)
		return errorf(f, l, "crfsuite output needs a label for each of the %d items", t)
	}
	if len(s.Ptr) != t+1 || int(s.Ptr[t]) > len(s.Names) || (len(s.Values) != 0 && len(s.Values) != len(s.Names)) {
		f, l := where(0)
		return errorf(f, l, "malformed sequence (Ptr, Names and Values disagree)")
	}
	var num []byte
	if s.Weight != 1 {
		if math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.Weight < 0 {
			f, l := where(0)
			return errorf(f, l, "bad instance weight %v", s.Weight)
		}
		bw.WriteString("@weight:")
		num = strconv.AppendFloat(num[:0], s.Weight, 'g', -1, 64)
		bw.Write(num)
		bw.WriteByte('\n')
	}
	for i := range t {
		lab := s.Labels[i]
		if len(lab) == 0 || lab[0] == '@' {
			f, l := where(i)
			return errorf(f, l, "label %q cannot be written in crfsuite format", lab)
		}
		if err := writeEscaped(bw, lab); err != nil {
			f, l := where(i)
			return errorf(f, l, "label %q: %v", lab, err.Msg)
		}
		lo, hi := s.Ptr[i], s.Ptr[i+1]
		if lo > hi || lo < 0 {
			f, l := where(i)
			return errorf(f, l, "malformed sequence (Ptr decreases)")
		}
		for k := lo; k < hi; k++ {
			bw.WriteByte('\t')
			if err := writeEscaped(bw, s.Names[k]); err != nil {
				f, l := where(i)
				return errorf(f, l, "attribute %q: %v", s.Names[k], err.Msg)
			}
			if len(s.Values) != 0 && s.Values[k] != 1 {
				v := s.Values[k]
				if math.IsNaN(v) || math.IsInf(v, 0) {
					f, l := where(i)
					return errorf(f, l, "attribute %q: value %v", s.Names[k], v)
				}
				bw.WriteByte(':')
				num = strconv.AppendFloat(num[:0], v, 'g', -1, 64)
				bw.Write(num)
			}
		}
		bw.WriteByte('\n')
	}
	bw.WriteByte('\n')
	if !ok {
		return bw.Flush()
	}
	return nil
}

// writeEscaped writes a name with ':' and '\' escaped.
func writeEscaped(bw *bufio.Writer, name []byte) *Error {
	if len(name) == 0 {
		return &Error{Msg: "empty name"}
	}
	if name[0] == '#' {
		return &Error{Msg: "a name starting with '#' reads as a comment"}
	}
	if bytes.IndexAny(name, "\t\r\n") >= 0 {
		return &Error{Msg: "TAB, CR and LF cannot be written"}
	}
	if bytes.IndexAny(name, ":\\") < 0 {
		bw.Write(name)
		return nil
	}
	for _, c := range name {
		if c == ':' || c == '\\' {
			bw.WriteByte('\\')
		}
		bw.WriteByte(c)
	}
	return nil
}
