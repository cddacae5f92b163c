package format

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/simdcrf/simdcrf/kernels"
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
	tabs  []uint64 // bit i: buf[i] is a TAB (parseLine)
	specs []uint64 // bit i: buf[i] is ':' or '\\'
}

// linePad supplies what follows each line in the arena: TABs (a TAB ends
// the last field like a TAB within the line) up to the end of a block of 64
// bytes and at least 8, so that the parser reads whole blocks and words
// anywhere in the line without bounds tests.
const linePad = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t" +
	"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"

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
// The line is copied into the arena (one memmove) and parsed there. Two bit
// masks mark its TABs and its ':' and '\\' bytes (kernels.ByteMasks, one
// call per line): the parser visits the TABs one by one and jumps within a
// field from one ':' or '\\' to the next. (Scanning each field for its next
// special byte, eight bytes at a time, took 1.8 times as long on CoNLL-2000
// attributes, most of it in the scan.)
//
// Names are unescaped in place. A name without escapes is used where it
// lies. The first escape of a name moves the bytes before it one place
// right (the name then starts one byte later): CRF++-style names
// (`U00\:word`) have one escape after a few bytes, so that is a single
// masked word store (simpleAttrs); anything else goes to field.
func (r *crfsuiteReader) parseLine(s *Sequence, line []byte) error {
	n := len(line)
	nb := n/64 + 1 // blocks of 64 bytes up to the TAB after the line
	pad := max(64*nb, n+8) - n
	if cap(r.arena)-len(r.arena) < n+pad {
		r.arena = make([]byte, 0, max(2*cap(r.arena), n+pad, 1<<12))
	}
	base := len(r.arena)
	r.arena = append(r.arena, line...)
	r.arena = append(r.arena, linePad[:pad]...)
	buf := r.arena[base:len(r.arena):len(r.arena)]
	r.arena = r.arena[:base+n] // the next line overwrites the pad

	if cap(r.tabs) < nb+1 {
		r.tabs = make([]uint64, nb+1+nb/4)
		r.specs = make([]uint64, nb+1+nb/4)
	}
	tm, sm := r.tabs[:nb+1], r.specs[:nb+1]
	kernels.ByteMasks(tm, sm, buf[:64*nb], '\t', ':', '\\')
	tm[nb], sm[nb] = 0, 0 // for nextBit
	sm[nb-1] |= 1 << 63   // past the end of the line: every search stops

	// The label, after any declarations.
	ln := r.lines.n
	fs := 0
	for {
		for fs < n && buf[fs] == '\t' {
			fs++
		}
		if fs >= n || buf[fs] == '#' {
			r.arena = r.arena[:base] // no item: nothing on the line is kept
			return nil
		}
		fe := nextBit(tm, fs)
		ns, ne, value := field(buf, sm, fs, fe)
		name := buf[ns:ne:ne]
		fs = fe + 1
		if len(name) == 0 || name[0] != '@' {
			if len(name) == 0 {
				return errorf(r.file, ln, "empty label")
			}
			// CRFsuite reads a label like an attribute and ignores its value.
			s.Labels = append(s.Labels, name)
			s.Lines = append(s.Lines, ln)
			break
		}
		if string(name) != "@weight" {
			return errorf(r.file, ln, "unrecognized declaration %s", clip(name))
		}
		if len(value) == 0 {
			return errorf(r.file, ln, "@weight needs a value (@weight:W)")
		}
		w, err := strconv.ParseFloat(string(value), 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return errorf(r.file, ln, "bad instance weight %s (want a finite number ≥ 0)", clip(value))
		}
		s.Weight = w
	}

	// The attributes: plain and one-escape names in simpleAttrs, any other
	// field here.
	names, vals := s.Names, s.Values
	for fs <= n {
		before := len(names)
		var fe int
		var end bool
		names, fs, fe, end = simpleAttrs(buf, tm, sm, fs, n, names)
		if k := len(names) - before; k > 0 {
			vals = slices.Grow(vals, k)
			for range k {
				vals = append(vals, 1)
			}
		}
		if end {
			break
		}
		ns, ne, value := field(buf, sm, fs, fe)
		if ns == ne {
			return errorf(r.file, ln, "empty attribute name")
		}
		v := 1.0
		if len(value) > 0 {
			var err error
			if v, err = parseValue(value); err != nil {
				return errorf(r.file, ln, "attribute %s: bad value %s (want a finite number)", clip(buf[ns:ne]), clip(value))
			}
		}
		names = append(names, buf[ns:ne:ne])
		vals = append(vals, v)
		fs = fe + 1
	}
	s.Names, s.Values = names, vals
	s.Ptr = append(s.Ptr, int32(len(names)))
	return nil
}

// simpleAttrs appends to names the attributes of the line buf[:n] from fs
// on while they are simple: no value and no escape, or one escape (`\:` or
// `\\`) within their first nine bytes, as in CRF++-style names. It returns
// at the end of the line or at a comment (end), or at the first other
// field, buf[fs:fe]. tm and sm are the masks of buf (see parseLine).
func simpleAttrs(buf []byte, tm, sm []uint64, fs, n int, names [][]byte) (_ [][]byte, _, _ int, end bool) {
	k := fs >> 6
	t := tm[k] &^ (1<<(fs&63) - 1)
	for {
		for t == 0 {
			k++
			t = tm[k]
		}
		fe := k<<6 + bits.TrailingZeros64(t)
		t &= t - 1
		if fe > fs { // else an empty field in a run of TABs
			if buf[fs] == '#' {
				return names, fs, fe, true // a comment runs to the end of the line
			}
			if fe-fs >= 64 {
				return names, fs, fe, false
			}
			// The ':' and '\\' of the field.
			ns, o := fs, uint(fs&63)
			x := (sm[fs>>6]>>o | sm[fs>>6+1]<<1<<(63-o)) & (1<<((fe-fs)&63) - 1) // (shifts < 64 need no guard)
			if x != 0 {
				q := bits.TrailingZeros64(x)
				if q >= 8 || x != 3<<q || buf[fs+q] != '\\' {
					return names, fs, fe, false
				}
				// Move the bytes before the escape one place right.
				y := binary.LittleEndian.Uint64(buf[fs:])
				m := ^uint64(0) >> ((56 - 8*q) & 63)
				binary.LittleEndian.PutUint64(buf[fs:], (y<<8)&m|y&^m)
				ns = fs + 1
			}
			names = append(names, buf[ns:fe:fe])
		}
		if fe >= n {
			return names, fe, fe, true
		}
		fs = fe + 1
	}
}

// parseValue reads an attribute value.
func parseValue(b []byte) (float64, error) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = strconv.ErrRange
	}
	return v, err
}

// field reads the field buf[fs:fe] (fe < len(buf)): it unescapes the name
// in place and returns where it lies, buf[ns:ne], and the value (what
// follows the first unescaped ':'), nil if none. sm marks the ':' and '\\'
// bytes of buf and one beyond fe.
func field(buf []byte, sm []uint64, fs, fe int) (ns, ne int, value []byte) {
	// The name is buf[ns:w] once it is read; bytes from run up to the end
	// of the name still have to move down to w.
	ns, ne = fs, fe
	w, run := fs, fs
	for p := nextBit(sm, fs); p < fe; {
		if buf[p] == ':' {
			ne, value = p, buf[p+1:fe]
			break
		}
		if d := buf[p+1]; d != ':' && d != '\\' {
			p = nextBit(sm, p+1) // a lone backslash is kept
			continue
		}
		// An escape at p (p+1 < fe).
		if ns == fs {
			copy(buf[fs+1:p+1], buf[fs:p])
			ns, w, run = fs+1, p+1, p+1
		} else {
			if run != w {
				copy(buf[w:], buf[run:p])
			}
			w += p - run
			run = p + 1
		}
		p = nextBit(sm, p+2)
	}
	if run != w {
		copy(buf[w:], buf[run:ne])
	}
	return ns, w + ne - run, value
}

// nextBit returns the position of the first set bit at or after bit i of
// m (there must be one, and a word after it). It looks at the next 64 bits
// at once, across a word boundary, so that only gaps of 64 bits or more
// take the loop.
func nextBit(m []uint64, i int) int {
	k, o := i>>6, uint(i&63)
	if x := m[k]>>o | m[k+1]<<1<<(63-o); x != 0 {
		return i + bits.TrailingZeros64(x)
	}
	for {
		k++
		if m[k] != 0 {
			return k<<6 + bits.TrailingZeros64(m[k])
		}
	}
}

// WriteCRFsuite writes s in CRFsuite's attribute format: a "@weight:W" line
// when the weight is not 1, one line per item (the label, then each
// attribute with ':' and '\' escaped and ":value" when the value is not 1),
// and a blank line after the sequence. Every item needs a label (CRFsuite
// has no unlabelled items; write a dummy one for tagging). Names that the
// format cannot hold are errors: empty names, names containing TAB, CR or
// LF, names starting with '#' (a comment) and labels starting with '@' (a
// declaration). Bigram attributes (Sequence.BNames) are an error too:
// CRFsuite's attributes are unigram ones.
func WriteCRFsuite(w io.Writer, s *Sequence) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriter(w)
	}
	if len(s.BNames) > 0 {
		return errorf(s.File, s.Line, "bigram attributes (a template's B lines with %%x) cannot be written in CRFsuite's attribute format")
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
			return errorf(f, l, "label %s cannot be written in crfsuite format", clip(lab))
		}
		if err := writeEscaped(bw, lab); err != nil {
			f, l := where(i)
			return errorf(f, l, "label %s: %v", clip(lab), err.Msg)
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
				return errorf(f, l, "attribute %s: %v", clip(s.Names[k]), err.Msg)
			}
			if len(s.Values) != 0 && s.Values[k] != 1 {
				v := s.Values[k]
				if math.IsNaN(v) || math.IsInf(v, 0) {
					f, l := where(i)
					return errorf(f, l, "attribute %s: value %v", clip(s.Names[k]), v)
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
