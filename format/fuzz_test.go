package format

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// drain reads everything, checking the Sequence invariants; it must never
// panic, and every error must be a *Error.
func drain(t *testing.T, r Reader) []Sequence {
	var out []Sequence
	var s Sequence
	for range 1 << 16 {
		err := r.Read(&s)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *format.Error", err)
			}
			return out
		}
		n := s.Len()
		if n == 0 || len(s.Ptr) != n+1 || len(s.Lines) != n || int(s.Ptr[n]) != len(s.Names) || len(s.Values) != len(s.Names) {
			t.Fatalf("malformed sequence: T=%d Ptr=%v Lines=%v names=%d values=%d", n, s.Ptr, s.Lines, len(s.Names), len(s.Values))
		}
		if s.Labels != nil && len(s.Labels) != n {
			t.Fatalf("%d labels for %d items", len(s.Labels), n)
		}
		for i := range n {
			if s.Ptr[i] > s.Ptr[i+1] {
				t.Fatalf("Ptr decreases: %v", s.Ptr)
			}
		}
		if len(s.BPtr) > 0 { // bigram attributes: none at item 0
			if len(s.BPtr) != n+1 || s.BPtr[0] != 0 || s.BPtr[1] != 0 || int(s.BPtr[n]) != len(s.BNames) {
				t.Fatalf("malformed bigram attributes: T=%d BPtr=%v names=%d", n, s.BPtr, len(s.BNames))
			}
			for i := range n {
				if s.BPtr[i] > s.BPtr[i+1] {
					t.Fatalf("BPtr decreases: %v", s.BPtr)
				}
			}
		}
		out = append(out, copySeq(&s))
	}
	t.Fatal("too many sequences")
	return nil
}

func copySeq(s *Sequence) Sequence {
	c := Sequence{File: s.File, Line: s.Line, Weight: s.Weight, Lines: append([]int(nil), s.Lines...),
		Ptr: append([]int32(nil), s.Ptr...), Values: append([]float64(nil), s.Values...)}
	for _, l := range s.Labels {
		c.Labels = append(c.Labels, bytes.Clone(l))
	}
	for _, n := range s.Names {
		c.Names = append(c.Names, bytes.Clone(n))
	}
	return c
}

func FuzzCRFsuite(f *testing.F) {
	f.Add("B-NP\tw=He\tpos=PRP:2.5\n@weight:3\nO\tx\\:y\\\\:0.5\n\nA\t#c\n")
	f.Add("# c\n\t\nlab\\:el:1\tc:\n\n\n@weight:0.25\tO\tq\r\n")
	f.Add("@foo\nA\t:2\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := NewReader(strings.NewReader(in), "f", Options{Format: "crfsuite"})
		if err != nil {
			t.Fatal(err)
		}
		seqs := drain(t, r)
		// What was read writes back and reads the same (unless the writer
		// refuses a name the format cannot hold).
		var buf bytes.Buffer
		for i := range seqs {
			if err := WriteCRFsuite(&buf, &seqs[i]); err != nil {
				return
			}
		}
		r2, _ := NewReader(&buf, "f", Options{Format: "crfsuite"})
		again := drain(t, r2)
		if len(again) != len(seqs) {
			t.Fatalf("round trip: %d sequences, want %d\n%q", len(again), len(seqs), buf.String())
		}
		for i := range seqs {
			a, b := seqs[i], again[i]
			if a.Weight != b.Weight || !reflect.DeepEqual(a.Labels, b.Labels) || !reflect.DeepEqual(a.Ptr, b.Ptr) ||
				!reflect.DeepEqual(a.Names, b.Names) || !reflect.DeepEqual(a.Values, b.Values) {
				t.Fatalf("round trip differs in sequence %d:\n%+v\n%+v", i, a, b)
			}
		}
	})
}

func FuzzColumn(f *testing.F) {
	f.Add("He PRP B-NP\nreckons VBZ B-VP\n\t\nso RB O\n", "U00:%x[-2,0]\nU01:%x[-1,0]/%x[0,1]\nB\n", 0)
	f.Add("a A\nb B\n\nc C z\n", "U0:%x[0,1]\n", 2)
	f.Add("É-1 x\n", "U:%x[3,0]\n", 0)
	f.Add("He PRP B-NP\nreckons VBZ B-VP\nso RB O\n", "U00:%x[0,0]\nB\nB01:%x[0,1]\nB02:%x[-1,1]/%x[2,0]\n", 0)
	f.Fuzz(func(t *testing.T, in, tpl string, cols int) {
		tp, err := ParseTemplate(strings.NewReader(tpl), "t")
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("template error %v is not a *format.Error", err)
			}
			tp = nil
		}
		for _, o := range []Options{
			{Format: "conll", Template: tp, Columns: cols % 8},
			{Format: "conll", Features: "pos", Columns: cols % 8},
		} {
			if o.Template == nil && o.Features == "" {
				continue
			}
			r, err := NewReader(strings.NewReader(in), "f", o)
			if err != nil {
				continue
			}
			drain(t, r)
		}
	})
}

func FuzzCoNLLU(f *testing.F) {
	f.Add("# c\n1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2-3\tx\t_\t_\t_\t_\t_\t_\t_\t_\n\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n", "U0:%x[0,0]\nU1:%x[-1,4]\n")
	f.Add("1.1\ta\tb\tc\td\te\tf\tg\th\ti\n", "B\n")
	f.Fuzz(func(t *testing.T, in, tpl string) {
		tp, _ := ParseTemplate(strings.NewReader(tpl), "t")
		for _, o := range []Options{
			{Format: "conllu", Template: tp, Label: "xpos"},
			{Format: "conllu", Features: "pos"},
		} {
			if o.Template == nil && o.Features == "" {
				continue
			}
			r, err := NewReader(strings.NewReader(in), "f", o)
			if err != nil {
				continue
			}
			drain(t, r)
		}
	})
}

func FuzzTemplate(f *testing.F) {
	f.Add("U00:%x[-2,0]\nU01:%x[-1,0]/%x[0,0]\n# c\n\nB\n")
	f.Add("U%x[1,1]%x[0,0]\nB01\n")
	f.Add("B01:%x[0,1]\nU0:%x[0,0]\nB\nB02:%x[-1,0]/%x[0,0]\n")
	f.Fuzz(func(t *testing.T, text string) {
		tp, err := ParseTemplate(strings.NewReader(text), "t")
		if err != nil {
			return
		}
		// The canonical text parses to the same template.
		again, err := ParseTemplate(strings.NewReader(tp.String()), "t")
		if err != nil {
			t.Fatalf("String() %q does not parse: %v", tp.String(), err)
		}
		if again.String() != tp.String() || again.Bigram() != tp.Bigram() || again.ObsBigram() != tp.ObsBigram() || again.Columns() != tp.Columns() {
			t.Fatalf("String() is not canonical: %q vs %q", tp.String(), again.String())
		}
	})
}
