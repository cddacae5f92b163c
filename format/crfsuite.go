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
	// arena holds copies of the lines of the sequence, unescaped in place;
	// names and labels are views into it. It never moves while a sequence
	// is read: when full, a bigger one replaces it and the old one stays
	// alive through the views (no copy, no offsets to convert at the end).
	arena []byte
}

// linePad is what follows each line in the arena: a TAB ends the last field
// like a TAB within the line, and eight bytes let the parser load whole
// words anywhere in the line without bounds tests.
const linePad = "\t\t\t\t\t\t\t\t"

func (r *crfsuiteReader) Read(s *Sequence) error {
	s.reset(r.file)
	r.arena = r.arena[:0]
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
		if err := r.parseLine(s, line); err != nil {
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
	s.Line = s.Lines[0]
	return nil
}

// parseLine adds the item on line (if it has a label) to s.
//
// The line is copied into the arena (one memmove) and parsed there in one
// pass that finds TABs, ':' and '\' eight bytes at a time. A name without
// escapes is used where it lies. The first escape of a name moves the
// bytes before it one place right (the name then starts one byte later):
// CRF++-style names ("U00\:word") have one escape after a few bytes, so
// that is a single masked word store. Further escapes compact the rest of
// the name leftwards.
func (r *crfsuiteReader) parseLine(s *Sequence, line []byte) error {
	n := len(line)
	if cap(r.arena)-len(r.arena) < n+len(linePad) {
		r.arena = make([]byte, 0, max(2*cap(r.arena), n+len(linePad), 1<<12))
	}
	base := len(r.arena)
	r.arena = append(r.arena, line...)
	r.arena = append(r.arena, linePad...)
	buf := r.arena[base:len(r.arena):len(r.arena)]
	r.arena = r.arena[:base+n] // the next line overwrites the pad

	ln := r.lines.n
	haveLabel := false
	i := 0
	for {
		for i < n && buf[i] == '\t' {
			i++
		}
		if i == n || buf[i] == '#' {
			break
		}
		// The name is buf[ns:w] once the field is read; bytes from run up
		// to the scan position still have to move down to w.
		fs := i
		ns, w, run := fs, fs, fs
		j := fs
		for {
			j = nextSpecial(buf, j)
			if buf[j] != '\\' {
				break
			}
			if d := buf[j+1]; d != ':' && d != '\\' { // a lone backslash is kept
				j++
				continue
			}
			// An escape at j (j+1 < n: the pad holds no ':' or '\\').
			if ns == fs {
				if p := j - fs; p < 8 {
					x := binary.LittleEndian.Uint64(buf[fs:])
					m := uint64(1)<<(8*(p+1)) - 1
					binary.LittleEndian.PutUint64(buf[fs:], (x<<8)&m|x&^m)
				} else {
					copy(buf[fs+1:j+1], buf[fs:j])
				}
				ns, w, run = fs+1, j+1, j+1
			} else {
				if run != w {
					copy(buf[w:], buf[run:j])
				}
				w += j - run
				run = j + 1
			}
			j += 2
		}
		if run != w {
			copy(buf[w:], buf[run:j])
		}
		w += j - run
		name := buf[ns:w:w]
		var value []byte
		hasValue := false
		if j < n && buf[j] == ':' {
			k := nextTab(buf, j+1)
			value, hasValue = buf[j+1:k], true
			j = k
		}
		i = j

		if !haveLabel {
			if len(name) > 0 && name[0] == '@' {
				if string(name) != "@weight" {
					return errorf(r.file, ln, "unrecognized declaration %q", name)
				}
				if !hasValue || len(value) == 0 {
					return errorf(r.file, ln, "@weight needs a value (@weight:W)")
				}
				wt, err := strconv.ParseFloat(string(value), 64)
				if err != nil || math.IsNaN(wt) || math.IsInf(wt, 0) || wt < 0 {
					return errorf(r.file, ln, "bad instance weight %q (want a finite number ≥ 0)", value)
				}
				s.Weight = wt
				continue
			}
			if len(name) == 0 {
				return errorf(r.file, ln, "empty label")
			}
			// CRFsuite reads a label like an attribute and ignores its value.
			haveLabel = true
			s.Labels = append(s.Labels, name)
			s.Lines = append(s.Lines, ln)
			continue
		}
		if len(name) == 0 {
			return errorf(r.file, ln, "empty attribute name")
		}
		v := 1.0
		if len(value) > 0 {
			var err error
			v, err = strconv.ParseFloat(string(value), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return errorf(r.file, ln, "attribute %q: bad value %q (want a finite number)", name, value)
			}
		}
		s.Names = append(s.Names, name)
		s.Values = append(s.Values, v)
	}
	if haveLabel {
		s.Ptr = append(s.Ptr, int32(len(s.Names)))
	} else {
		r.arena = r.arena[:base] // nothing on the line is kept
	}
	return nil
}

// nextSpecial returns the position of the first TAB, ':' or '\\' at or
// after buf[j]. There must be one within the last eight bytes of buf.
func nextSpecial(buf []byte, j int) int {
	for {
		x := binary.LittleEndian.Uint64(buf[j:])
		if m := zeroBytes(x^tabs) | zeroBytes(x^colons) | zeroBytes(x^backslashes); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		j += 8
	}
}

// nextTab is nextSpecial for TABs only.
func nextTab(buf []byte, j int) int {
	for {
		x := binary.LittleEndian.Uint64(buf[j:])
		if m := zeroBytes(x ^ tabs); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		j += 8
	}
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
