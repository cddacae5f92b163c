package format

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// refReader is the plain CRFsuite reader the fast one is checked against:
// the reader as it was before the single-pass parser (one field at a time,
// byte by byte, names copied into a builder).
type refReader struct {
	lines *lineReader
	file  string
	b     builder
	labs  []byte
	loffs []int
}

func newRefReader(r io.Reader, name string) *refReader {
	return &refReader{lines: newLineReader(r), file: name}
}

func (r *refReader) Read(s *Sequence) error {
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
			s.Weight = 1
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

func (r *refReader) parseLine(s *Sequence, line []byte, vals []float64) ([]float64, error) {
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
			r.labs, i, value, hasValue = refUnescape(r.labs, line, i)
			name := r.labs[start:]
			if len(name) > 0 && name[0] == '@' {
				if string(name) != "@weight" {
					return vals, errorf(r.file, ln, "unrecognized declaration %s", clip(name))
				}
				if !hasValue || len(value) == 0 {
					return vals, errorf(r.file, ln, "@weight needs a value (@weight:W)")
				}
				w, err := strconv.ParseFloat(string(value), 64)
				if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
					return vals, errorf(r.file, ln, "bad instance weight %s (want a finite number ≥ 0)", clip(value))
				}
				s.Weight = w
				r.labs = r.labs[:start]
				continue
			}
			if len(name) == 0 {
				return vals, errorf(r.file, ln, "empty label")
			}
			haveLabel = true
			r.loffs = append(r.loffs, start, len(r.labs))
			s.Lines = append(s.Lines, ln)
			continue
		}
		start := len(r.b.arena)
		var value []byte
		var hasValue bool
		r.b.arena, i, value, hasValue = refUnescape(r.b.arena, line, i)
		if len(r.b.arena) == start {
			return vals, errorf(r.file, ln, "empty attribute name")
		}
		r.b.mark(start)
		v := 1.0
		if hasValue && len(value) > 0 {
			var err error
			v, err = strconv.ParseFloat(string(value), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return vals, errorf(r.file, ln, "attribute %s: bad value %s (want a finite number)", clip(r.b.arena[start:]), clip(value))
			}
		}
		vals = append(vals, v)
	}
	if haveLabel {
		s.Ptr = append(s.Ptr, int32(r.b.count()))
	}
	return vals, nil
}

// refUnescape appends the name of the field at line[i] to dst (`\:` → ':',
// `\\` → '\') and returns where the field ends and its value.
func refUnescape(dst, line []byte, i int) (out []byte, end int, value []byte, hasValue bool) {
	for i < len(line) {
		c := line[i]
		switch {
		case c == '\t':
			return dst, i, nil, false
		case c == ':':
			k := i + 1
			for k < len(line) && line[k] != '\t' {
				k++
			}
			return dst, k, line[i+1 : k], true
		case c == '\\' && i+1 < len(line) && (line[i+1] == ':' || line[i+1] == '\\'):
			dst = append(dst, line[i+1])
			i += 2
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst, i, nil, false
}

// readBoth reads in with the fast reader and with refReader and fails on
// any difference: sequences (names, labels, values, lines, weights) and the
// error that ends the input.
func readBoth(t *testing.T, in string) []Sequence {
	t.Helper()
	fast, err := NewReader(strings.NewReader(in), "in.txt", Options{Format: "crfsuite"})
	if err != nil {
		t.Fatal(err)
	}
	ref := newRefReader(strings.NewReader(in), "in.txt")
	var a, b Sequence
	var out []Sequence
	for k := 0; ; k++ {
		ea, eb := fast.Read(&a), ref.Read(&b)
		if fmt.Sprint(ea) != fmt.Sprint(eb) {
			t.Fatalf("input %q, sequence %d: error %v, want %v", in, k, ea, eb)
		}
		if ea != nil {
			return out
		}
		ca, cb := copySeq(&a), copySeq(&b)
		if !reflect.DeepEqual(ca, cb) {
			t.Fatalf("input %q, sequence %d:\n got %+v\nwant %+v", in, k, ca, cb)
		}
		for i, n := range a.Names {
			if cap(n) != len(n) {
				t.Fatalf("name %d %q has spare capacity", i, n)
			}
		}
		out = append(out, ca)
	}
}

func FuzzCRFsuiteRef(f *testing.F) {
	f.Add("B-NP\tU00\\:w\tU01\\:\\\\x\\:y:2\n@weight:3\nO\tx\\:y\\\\:0.5\n\nA\t#c\n")
	f.Add("a\\\tb\\\\\\:c\\d\\\n\\:\t\\\\:1\r\n\n")
	f.Add("L\t0123456\\:x\t01234567\\:x\t012345678\\:x\t\\:\\:\\:\\:\\:\\:\\:\\:\\:x\n")
	f.Fuzz(func(t *testing.T, in string) { readBoth(t, in) })
}

// Names with escapes at every offset around word boundaries, several
// escapes, lone and trailing backslashes, values, comments, CRLF, lines
// longer than the read buffer, and sequences that outgrow the arena.
func TestCRFsuiteEscapes(t *testing.T) {
	var sb strings.Builder
	for p := range 20 {
		pre := strings.Repeat("p", p)
		for _, esc := range []string{`\:`, `\\`, `\`, `\:\:`, `\\\:`, `\\\\`} {
			for q := range 12 {
				post := strings.Repeat("q", q)
				sb.WriteString("L\t" + pre + esc + post + "\t" + pre + esc + post + ":1.5\t" + esc + pre + "\n")
				sb.WriteString("M\t" + pre + esc + "\t" + pre + `\\:` + "\n") // at the end of the line
			}
		}
		sb.WriteString("\n")
	}
	seqs := readBoth(t, sb.String())
	if len(seqs) != 20 || len(seqs[0].Names) != 6*12*5 {
		t.Fatalf("%d sequences, %d names in the first", len(seqs), len(seqs[0].Names))
	}
	// Spot checks against hand-made answers (the reference could be wrong).
	got := readBoth(t, "L\tU00\\:w\t01234567\\:\\\\x\\:y:2\ta\\b\\\tc\\\\:3\t\\:\r\n\nM\tx\t#\\:y\n")
	want := []string{"U00:w", `01234567:\x:y`, `a\b\`, `c\`, ":"}
	if len(got) != 2 || fmt.Sprintf("%q", got[0].Names) != fmt.Sprintf("%q", want) ||
		!reflect.DeepEqual(got[0].Values, []float64{1, 2, 1, 3, 1}) || len(got[1].Names) != 1 {
		t.Fatalf("got %+v", got)
	}

	// One sequence far bigger than the arena's first size, long lines.
	sb.Reset()
	long := strings.Repeat(`ab\:c`, 20000)
	for i := range 3000 {
		fmt.Fprintf(&sb, "L%d\tU%d\\:w%d\tx\\\\y:%d\n", i%7, i, i, i)
		if i%1000 == 0 {
			sb.WriteString("L\t" + long + "\t" + long[:1000] + ":4\n")
		}
	}
	seqs = readBoth(t, sb.String())
	if len(seqs) != 1 || len(seqs[0].Names) != 6006 || string(seqs[0].Names[2]) != strings.ReplaceAll(long, `\:`, ":") {
		t.Fatalf("%d sequences", len(seqs))
	}

	// Fields and escapes across the 64-byte blocks of the masks, fields of
	// about 64 bytes (the fast path's window).
	sb.Reset()
	for lead := 40; lead < 80; lead++ {
		for _, f := range []string{`ab\:cd`, `\:`, `x\\`, `a\\:1`, strings.Repeat("y", 58) + `\:z`, strings.Repeat("y", 60) + `\:zzz`, `U00\:` + strings.Repeat("w", 62)} {
			sb.WriteString("L\t" + strings.Repeat("p", lead) + "\t" + f + "\t" + f + "\n")
		}
	}
	readBoth(t, sb.String())

	// Random lines over the bytes that matter.
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab\t\t::\\\\\\#@1.\r\n\n "
	for range 3000 {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		readBoth(t, string(b))
	}
}
