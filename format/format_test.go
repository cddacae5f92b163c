package format

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// readAll reads every sequence, copying names and labels out of the views.
type item struct {
	label string
	names []string
	vals  []float64
}

type seq struct {
	line   int
	weight float64
	lines  []int
	items  []item
	nolab  bool
}

func readAll(t *testing.T, input string, o Options) ([]seq, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(input), "in.txt", o)
	if err != nil {
		return nil, err
	}
	var out []seq
	var s Sequence
	for {
		err := r.Read(&s)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		q := seq{line: s.Line, weight: s.Weight, lines: append([]int(nil), s.Lines...), nolab: s.Labels == nil}
		if s.File != "in.txt" {
			t.Errorf("File = %q", s.File)
		}
		for i := 0; i < s.Len(); i++ {
			var it item
			if s.Labels != nil {
				it.label = string(s.Labels[i])
			}
			for k := s.Ptr[i]; k < s.Ptr[i+1]; k++ {
				it.names = append(it.names, string(s.Names[k]))
				it.vals = append(it.vals, s.Values[k])
			}
			q.items = append(q.items, it)
		}
		out = append(out, q)
	}
}

func mustTemplate(t *testing.T, text string) *Template {
	t.Helper()
	tp, err := ParseTemplate(strings.NewReader(text), "t.tpl")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *format.Error", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestErrorString(t *testing.T) {
	e := &Error{File: "train.txt", Line: 1042, Msg: "expected 3 columns, found 2"}
	if got := e.Error(); got != "train.txt:1042: expected 3 columns, found 2" {
		t.Fatal(got)
	}
	if got := (&Error{File: "x", Msg: "m"}).Error(); got != "x: m" {
		t.Fatal(got)
	}
}

// The CRF++ expansion of a tiny sentence, worked by hand from CRF++'s rules
// (feature.cpp: row offsets beyond the sentence read _B-1, _B-2 before and
// _B+1, _B+2 after; the attribute is the line's whole text).
func TestTemplateExpansion(t *testing.T) {
	tp := mustTemplate(t, `# comment

U00:%x[-2,0]
U01:%x[-1,0]/%x[0,0]
U02:%x[1,1]
U03:%x[2,0]-%x[0,1]!
U
B
`)
	if !tp.Bigram() {
		t.Fatal("Bigram() = false")
	}
	data := "He PRP B-NP\nreckons VBZ B-VP\nso RB O\n\n"
	got, err := readAll(t, data, Options{Format: "conll", Template: tp})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"U00:_B-2", "U01:_B-1/He", "U02:VBZ", "U03:so-PRP!", "U"},
		{"U00:_B-1", "U01:He/reckons", "U02:RB", "U03:_B+1-VBZ!", "U"},
		{"U00:He", "U01:reckons/so", "U02:_B+1", "U03:_B+2-RB!", "U"},
	}
	if len(got) != 1 || len(got[0].items) != 3 {
		t.Fatalf("got %+v", got)
	}
	for i, it := range got[0].items {
		if !reflect.DeepEqual(it.names, want[i]) {
			t.Errorf("item %d: %q, want %q", i, it.names, want[i])
		}
		for _, v := range it.vals {
			if v != 1 {
				t.Errorf("value %v", v)
			}
		}
	}
	if labs := []string{got[0].items[0].label, got[0].items[1].label, got[0].items[2].label}; !reflect.DeepEqual(labs, []string{"B-NP", "B-VP", "O"}) {
		t.Errorf("labels %q", labs)
	}
	if !reflect.DeepEqual(got[0].lines, []int{1, 2, 3}) || got[0].line != 1 {
		t.Errorf("lines %v line %d", got[0].lines, got[0].line)
	}
	// String() is canonical and parses to the same template.
	s := tp.String()
	if s != "U00:%x[-2,0]\nU01:%x[-1,0]/%x[0,0]\nU02:%x[1,1]\nU03:%x[2,0]-%x[0,1]!\nU\nB\n" {
		t.Errorf("String() = %q", s)
	}
	again := mustTemplate(t, s)
	got2, err := readAll(t, data, Options{Format: "conll", Template: again})
	if err != nil || !reflect.DeepEqual(got, got2) {
		t.Errorf("re-parsed template gives %+v, %v", got2, err)
	}
}

// TestBigramTemplate checks B lines with %x as CRF++ expands them: one
// string per line at every position t ≥ 1 (the transition from t−1 to t),
// padding names at the edges, '/'-joined macros; a bare B beside them still
// means plain label bigrams.
func TestBigramTemplate(t *testing.T) {
	tp := mustTemplate(t, "U00:%x[0,0]\nB01:%x[0,1]\nB\nB02:%x[-1,1]/%x[0,1]\n# c\nB03:%x[1,0]\n")
	if !tp.Bigram() || !tp.ObsBigram() {
		t.Fatalf("Bigram() = %v, ObsBigram() = %v", tp.Bigram(), tp.ObsBigram())
	}
	if s := tp.String(); s != "U00:%x[0,0]\nB\nB01:%x[0,1]\nB02:%x[-1,1]/%x[0,1]\nB03:%x[1,0]\n" {
		t.Errorf("String() = %q", s)
	}
	data := "He PRP B-NP\nreckons VBZ B-VP\nso RB O\n\nYes UH O\n\n"
	for _, tpl := range []*Template{tp, mustTemplate(t, tp.String())} {
		r, err := NewReader(strings.NewReader(data), "in.txt", Options{Format: "conll", Template: tpl})
		if err != nil {
			t.Fatal(err)
		}
		var got [][][]string
		var s Sequence
		for {
			err := r.Read(&s)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.BPtr) != s.Len()+1 {
				t.Fatalf("BPtr has %d entries for %d items", len(s.BPtr), s.Len())
			}
			var q [][]string
			for i := range s.Len() {
				var names []string
				for k := s.BPtr[i]; k < s.BPtr[i+1]; k++ {
					names = append(names, string(s.BNames[k]))
				}
				q = append(q, names)
			}
			got = append(got, q)
		}
		want := [][][]string{
			{nil, {"B01:VBZ", "B02:PRP/VBZ", "B03:so"}, {"B01:RB", "B02:VBZ/RB", "B03:_B+1"}},
			{nil},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bigram attributes %q, want %q", got, want)
		}
	}
	// Without B lines with %x, no bigram attributes.
	r, err := NewReader(strings.NewReader(data), "in.txt", Options{Format: "conll", Template: mustTemplate(t, "U00:%x[0,0]\nB\n")})
	if err != nil {
		t.Fatal(err)
	}
	var s Sequence
	if err := r.Read(&s); err != nil || len(s.BPtr) != 0 || len(s.BNames) != 0 {
		t.Errorf("err %v, BPtr %v, BNames %q", err, s.BPtr, s.BNames)
	}
	// A B line reading a column the data lacks names its template line.
	_, err = readAll(t, data, Options{Format: "conll", Template: mustTemplate(t, "U00:%x[0,0]\nB01:%x[0,5]\n")})
	wantErr(t, err, "t.tpl:2: %x[0,5] reads column 5")
	// Only B lines with %x: a template of its own.
	if tp := mustTemplate(t, "B01:%x[0,0]\n"); tp.Bigram() || !tp.ObsBigram() {
		t.Errorf("%q alone: Bigram() = %v, ObsBigram() = %v", "B01:%x[0,0]", tp.Bigram(), tp.ObsBigram())
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"U00:%x[0,0]\nB01:%x[-1,0\n", "t.tpl:2: malformed %x"},
		{"U00:%x[0,0]\n# c\nB02:%y\n", "t.tpl:3: malformed macro"},
		{"U00:%x[0,0\n", "t.tpl:1: malformed %x"},
		{"\n\nU00:%x[a,0]\n", "t.tpl:3: malformed %x"},
		{"U00:%x[0,-1]\n", "t.tpl:1: malformed %x"},
		{"U00:%y[0,0]\n", "t.tpl:1: malformed macro"},
		{"U00:%x(0,0)\n", "t.tpl:1: malformed %x"},
		{"U00:%x[,0]\n", "t.tpl:1: malformed %x"},
		{"U00:%x[99999999999999999999,0]\n", "t.tpl:1: malformed %x"},
		{"X00:%x[0,0]\n", "t.tpl:1: \"X00:%x[0,0]\": a template line must start with U"},
		{"# only a comment\n", "t.tpl: the template has no U or B lines"},
		{"U00:%", "t.tpl:1: malformed macro"},
	} {
		_, err := ParseTemplate(strings.NewReader(c.text), "t.tpl")
		wantErr(t, err, c.want)
	}
	// A bare B and a B with an id and no %x are label bigrams.
	for _, text := range []string{"B", "B01", "U00:%x[0,0]\nB02\n"} {
		tp := mustTemplate(t, text)
		if !tp.Bigram() {
			t.Errorf("%q: Bigram() = false", text)
		}
	}
	if mustTemplate(t, "U00:%x[0,0]\n").Bigram() {
		t.Error("Bigram() without a B line")
	}
	// Columns beyond the data: the template's file and line, and the data's.
	tp := mustTemplate(t, "U00:%x[0,0]\n\nU01:%x[0,2]\n")
	_, err := readAll(t, "a b\nc d\n", Options{Format: "conll", Template: tp})
	wantErr(t, err, "t.tpl:3: %x[0,2] reads column 2 but in.txt:1 has 1 observation column(s)")
	_, err = NewReader(strings.NewReader(""), "in.txt", Options{Format: "conll", Template: tp, Columns: 2})
	wantErr(t, err, "t.tpl:3: %x[0,2] reads column 2 but in.txt has 2 observation column(s)")
}

func TestChunkingTemplate(t *testing.T) {
	tp := sharedTemplate(t)
	if !tp.Bigram() || tp.Columns() != 2 {
		t.Fatalf("Bigram %v Columns %d", tp.Bigram(), tp.Columns())
	}
	got, err := readAll(t, "Confidence NN B-NP\nin IN B-PP\n", Options{Format: "conll", Template: tp})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"U00:_B-2", "U01:_B-1", "U02:Confidence", "U03:in", "U04:_B+1",
		"U05:_B-1/Confidence", "U06:Confidence/in",
		"U10:_B-2", "U11:_B-1", "U12:NN", "U13:IN", "U14:_B+1",
		"U15:_B-2/_B-1", "U16:_B-1/NN", "U17:NN/IN", "U18:IN/_B+1",
		"U20:_B-2/_B-1/NN", "U21:_B-1/NN/IN", "U22:NN/IN/_B+1"}
	if !reflect.DeepEqual(got[0].items[0].names, want) {
		t.Errorf("got  %q\nwant %q", got[0].items[0].names, want)
	}
}

func TestColumnFormat(t *testing.T) {
	tp := mustTemplate(t, "U0:%x[0,0]\nU1:%x[0,1]\n")
	// A TAB-only line and a line of spaces separate sentences, like blank ones.
	in := "a A x\nb B y\n\t\nc C z\n   \n\n\nd D w\n"
	got, err := readAll(t, in, Options{Format: "conll", Template: tp})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got[0].items) != 2 || len(got[1].items) != 1 || got[1].line != 4 || got[2].line != 8 {
		t.Fatalf("got %+v", got)
	}
	r, _ := NewReader(strings.NewReader(in), "in.txt", Options{Format: "conll", Template: tp})
	var s Sequence
	if cr := r.(*ColumnReader); cr.Columns() != 0 {
		t.Fatal("Columns before reading")
	} else if r.Read(&s); cr.Columns() != 2 {
		t.Fatalf("Columns() = %d", cr.Columns())
	}

	// Errors name the line.
	_, err = readAll(t, "a A x\nb B y\n\nc z\n", Options{Format: "conll", Template: tp})
	wantErr(t, err, "in.txt:4: expected 3 columns, found 2")
	_, err = readAll(t, "a\n", Options{Format: "conll", Template: tp})
	wantErr(t, err, "in.txt:1: found 1 column(s)")

	// With Columns given, rows may carry no label; all rows of a sentence agree.
	got, err = readAll(t, "a A\nb B\n\nc C z\n", Options{Format: "conll", Template: tp, Columns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].nolab || got[1].nolab || got[1].items[0].label != "z" {
		t.Fatalf("got %+v", got)
	}
	_, err = readAll(t, "a A\nb B q\n", Options{Format: "conll", Template: tp, Columns: 2})
	wantErr(t, err, "in.txt:2: expected 2 columns like line 1 of this sentence, found 3")
	_, err = readAll(t, "a A q r\n", Options{Format: "conll", Template: tp, Columns: 2})
	wantErr(t, err, "in.txt:1: expected 3 columns (or 2 without a label), found 4")

	// Options errors.
	_, err = NewReader(strings.NewReader(""), "in.txt", Options{Format: "conll"})
	wantErr(t, err, "needs a feature template or a feature set")
	_, err = NewReader(strings.NewReader(""), "in.txt", Options{Format: "conll", Features: "ner"})
	wantErr(t, err, "unknown feature set")
	_, err = NewReader(strings.NewReader(""), "in.txt", Options{Format: "xml"})
	wantErr(t, err, "unknown format")
}

func TestCoNLLU(t *testing.T) {
	in := "# sent_id = 1\n# text = I can't\n" +
		"1\tI\tI\tPRON\tPRP\tCase=Nom\t2\tnsubj\t2:nsubj\t_\n" +
		"2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n" +
		"2\tca\tcan\tAUX\tMD\t_\t0\troot\t0:root\t_\n" +
		"3\tn't\tnot\tPART\tRB\t_\t2\tadvmod\t2:advmod\t_\n" +
		"3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t2:x\t_\n" +
		"\n" +
		"1\tHi\thi\tINTJ\t_\t_\t0\troot\t0:root\t_\n"
	tp := mustTemplate(t, "U0:%x[0,0]\nU1:%x[0,1]\nU2:%x[-1,6]\n")
	got, err := readAll(t, in, Options{Format: "conllu", Template: tp, Label: "xpos"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].items) != 3 {
		t.Fatalf("got %+v", got)
	}
	if !reflect.DeepEqual(got[0].lines, []int{3, 5, 6}) {
		t.Errorf("lines %v", got[0].lines)
	}
	labs := []string{got[0].items[0].label, got[0].items[1].label, got[0].items[2].label}
	if !reflect.DeepEqual(labs, []string{"PRP", "MD", "RB"}) {
		t.Errorf("labels %q", labs)
	}
	if want := []string{"U0:ca", "U1:can", "U2:nsubj"}; !reflect.DeepEqual(got[0].items[1].names, want) {
		t.Errorf("names %q, want %q", got[0].items[1].names, want)
	}
	// XPOS "_" means no label.
	if !got[1].nolab {
		t.Errorf("sentence 2 labels: %+v", got[1])
	}
	got, err = readAll(t, in, Options{Format: "conllu", Template: tp})
	if err != nil || got[0].items[1].label != "AUX" || got[1].items[0].label != "INTJ" {
		t.Fatalf("upos: %+v %v", got, err)
	}

	// A template that reads the label column leaks the answer.
	_, err = NewReader(strings.NewReader(in), "in.txt", Options{Format: "conllu", Template: mustTemplate(t, "U0:%x[0,0]\nU1:%x[1,3]\n"), Label: "xpos"})
	wantErr(t, err, "t.tpl:2: %x[1,3] reads XPOS, the label column")
	_, err = NewReader(strings.NewReader(in), "in.txt", Options{Format: "conllu", Template: mustTemplate(t, "U1:%x[0,2]\n")})
	wantErr(t, err, "t.tpl:1: %x[0,2] reads UPOS, the label column")
	_, err = NewReader(strings.NewReader(in), "in.txt", Options{Format: "conllu", Template: mustTemplate(t, "U1:%x[0,9]\n")})
	wantErr(t, err, "t.tpl:1: %x[0,9] reads column 9 but in.txt has 9 observation column(s)")
	_, err = NewReader(strings.NewReader(in), "in.txt", Options{Format: "conllu", Features: "pos", Label: "feats"})
	wantErr(t, err, "unknown label column")

	for _, c := range []struct{ in, want string }{
		{"1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\n", "in.txt:1: expected 10 TAB-separated fields, found 9"},
		{"# c\n1 I I PRON PRP _ 2 nsubj _ _\n", "in.txt:2: expected 10 TAB-separated fields, found 1"},
		{"x\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n", "in.txt:1: bad ID \"x\""},
		{"1\t\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n", "in.txt:1: field 2 (FORM) is empty"},
	} {
		_, err := readAll(t, c.in, Options{Format: "conllu", Features: "pos"})
		wantErr(t, err, c.want)
	}
}

func TestCRFsuite(t *testing.T) {
	in := "# a comment line\n" +
		"B-NP\tw=He\tpos=PRP:2.5\t\tx\\:y\\\\z:0.5\ta\\b\n" +
		"@weight:3\n" +
		"I-NP\tw=a:b\t# trailing comment\tnot=an-attribute\n" +
		"\t\n" +
		"O\n" +
		"\n\n" +
		"lab\\:el:ignored\tc:\n" +
		"@weight:0.25\tO\tq\r\n"
	want := []seq{
		{line: 2, weight: 3, lines: []int{2, 4, 6}, items: []item{
			{"B-NP", []string{"w=He", "pos=PRP", "x:y\\z", "a\\b"}, []float64{1, 2.5, 0.5, 1}},
			{"I-NP", []string{"w=a"}, []float64{0}},
			{"O", nil, nil},
		}},
		{line: 9, weight: 0.25, lines: []int{9, 10}, items: []item{
			{"lab:el", []string{"c"}, []float64{1}},
			{"O", []string{"q"}, []float64{1}},
		}},
	}
	// "w=a:b" has the value "b": not a number.
	_, err := readAll(t, "I-NP\tw=a:b\n", Options{Format: "crfsuite"})
	wantErr(t, err, "in.txt:1: attribute \"w=a\": bad value \"b\"")

	in = strings.Replace(in, "w=a:b", "w=a:0", 1)
	got, err := readAll(t, in, Options{Format: "crfsuite"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	for _, c := range []struct{ in, want string }{
		{"A\tx\n@foo:1\n", "in.txt:2: unrecognized declaration \"@foo\""},
		{"@weight\nA\tx\n", "in.txt:1: @weight needs a value"},
		{"@weight:-1\nA\tx\n", "in.txt:1: bad instance weight \"-1\""},
		{"@weight:NaN\nA\tx\n", "in.txt:1: bad instance weight"},
		{"A\tx\n:z\n", "in.txt:2: empty label"},
		{"A\tx:Inf\n", "in.txt:1: attribute \"x\": bad value \"Inf\""},
		{"A\t:2\n", "in.txt:1: empty attribute name"},
		// A long attribute is quoted in part only.
		{"A\t" + strings.Repeat("w", 100000) + ":bad\n", "in.txt:1: attribute \"" + strings.Repeat("w", 64) + "\"… (100000 bytes): bad value \"bad\""},
	} {
		_, err := readAll(t, c.in, Options{Format: "crfsuite"})
		wantErr(t, err, c.want)
	}
	_, err = NewReader(strings.NewReader(""), "in.txt", Options{Format: "crfsuite", Features: "pos"})
	wantErr(t, err, "no template or feature set applies")
}

func TestWriteCRFsuiteRoundTrip(t *testing.T) {
	s := &Sequence{
		Weight: 2.5,
		Labels: [][]byte{[]byte("B:NP"), []byte("a\\b")},
		Ptr:    []int32{0, 3, 4},
		Names:  [][]byte{[]byte("w=x:y"), []byte("back\\slash"), []byte("plain"), []byte("\\:")},
		Values: []float64{1, -0.125, 1e-300, 7},
	}
	var buf bytes.Buffer
	if err := WriteCRFsuite(&buf, s); err != nil {
		t.Fatal(err)
	}
	wantText := "@weight:2.5\nB\\:NP\tw=x\\:y\tback\\\\slash:-0.125\tplain:1e-300\na\\\\b\t\\\\\\::7\n\n"
	if buf.String() != wantText {
		t.Errorf("wrote %q\nwant  %q", buf.String(), wantText)
	}
	r, _ := NewReader(&buf, "rt", Options{Format: "crfsuite"})
	var back Sequence
	if err := r.Read(&back); err != nil {
		t.Fatal(err)
	}
	if back.Weight != s.Weight || !reflect.DeepEqual(back.Labels, s.Labels) || !reflect.DeepEqual(back.Ptr, s.Ptr) ||
		!reflect.DeepEqual(back.Names, s.Names) || !reflect.DeepEqual(back.Values, s.Values) {
		t.Errorf("round trip: %+v\nwant %+v", back, s)
	}
	if err := r.Read(&back); err != io.EOF {
		t.Errorf("second Read: %v", err)
	}

	for _, c := range []struct {
		s    Sequence
		want string
	}{
		{Sequence{File: "f", Lines: []int{7}, Labels: [][]byte{[]byte("@x")}, Ptr: []int32{0, 0}}, "f:7: label \"@x\" cannot be written"},
		{Sequence{Labels: [][]byte{[]byte("A")}, Ptr: []int32{0, 1}, Names: [][]byte{[]byte("#x")}}, "reads as a comment"},
		{Sequence{Labels: [][]byte{[]byte("A")}, Ptr: []int32{0, 1}, Names: [][]byte{[]byte("a\tb")}}, "TAB, CR and LF"},
		{Sequence{Labels: [][]byte{[]byte("A")}, Ptr: []int32{0, 1}, Names: [][]byte{{}}}, "empty name"},
		{Sequence{Ptr: []int32{0, 1}, Names: [][]byte{[]byte("a")}}, "needs a label"},
	} {
		c.s.Weight = 1
		wantErr(t, WriteCRFsuite(io.Discard, &c.s), c.want)
	}
}

// Features read from column data, written in CRFsuite format and read back
// give the same sequence.
func TestColumnToCRFsuite(t *testing.T) {
	in := "Mr. NNP B-NP\nO'Neil: NNP I-NP\nsaid\\ VBD B-VP\n"
	tp := mustTemplate(t, "U00:%x[-1,0]/%x[0,0]\nU01:%x[0,1]\nB\n")
	r, err := NewReader(strings.NewReader(in), "in", Options{Format: "conll", Template: tp, Features: "pos"})
	if err != nil {
		t.Fatal(err)
	}
	var s, back Sequence
	if err := r.Read(&s); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCRFsuite(&buf, &s); err != nil {
		t.Fatal(err)
	}
	r2, _ := NewReader(&buf, "in", Options{Format: "crfsuite"})
	if err := r2.Read(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Names, s.Names) || !reflect.DeepEqual(back.Labels, s.Labels) || !reflect.DeepEqual(back.Ptr, s.Ptr) {
		t.Errorf("round trip differs:\n%q\n%q", back.Names, s.Names)
	}
}

func TestPosFeatures(t *testing.T) {
	got, err := readAll(t, "The DT\nÉCOLE-42 NNP\nrésumés NNS\n", Options{Format: "conll", Features: "pos"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"b", "w=ÉCOLE-42", "lw=école-42",
		"p1=é", "p2=éc", "p3=éco", "p4=écol", "s1=2", "s2=42", "s3=-42", "s4=e-42",
		"sh=XXXX-dd", "cs=X-d", "dg", "hy", "ac", "ic",
		"w-2=_B-1", "w-1=the", "w+1=résumés", "w+2=_B+1",
		"w-1|w=the|école-42", "w|w+1=école-42|résumés", "cs-1=Xx", "cs+1=x"}
	if !reflect.DeepEqual(got[0].items[1].names, want) {
		t.Errorf("got  %q\nwant %q", got[0].items[1].names, want)
	}
	last := got[0].items[2].names
	for _, n := range []string{"s4=umés", "sh=xxxx", "w+1=_B+1", "w+2=_B+2", "cs+1=_B+1"} {
		if !contains(last, n) {
			t.Errorf("item 2 lacks %q: %q", n, last)
		}
	}
	if !contains(got[0].items[0].names, "sh=Xxx") || contains(got[0].items[0].names, "ac") {
		t.Errorf("item 0: %q", got[0].items[0].names)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Lines longer than the read buffer, CRLF line ends and a read error.
func TestLongLinesAndReadErrors(t *testing.T) {
	long := strings.Repeat("x", 300000)
	got, err := readAll(t, "A\t"+long+":2\r\nB\tb\r\n\r\nC\tc", Options{Format: "crfsuite"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].items[0].names[0] != long || got[0].items[0].vals[0] != 2 || got[0].items[1].label != "B" || got[1].lines[0] != 4 {
		t.Fatalf("got %d sequences", len(got))
	}
	tp := mustTemplate(t, "U:%x[0,0]\n")
	got, err = readAll(t, long+" L\r\n", Options{Format: "conll", Template: tp})
	if err != nil || got[0].items[0].names[0] != "U:"+long || got[0].items[0].label != "L" {
		t.Fatalf("conll long line: %v", err)
	}
	r, _ := NewReader(io.MultiReader(strings.NewReader("a A\nb B\n"), errReader{}), "in.txt", Options{Format: "conll", Template: tp})
	var s Sequence
	wantErr(t, r.Read(&s), "in.txt:3: read error: disk on fire")
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// TestMorphFeatures: morph is pos plus the longer affixes, the neighbours'
// affixes, case and digits with the suffix, word–suffix pairs, the length,
// and q for the words between quotation marks (not the marks, and nothing
// after an unclosed one); Words holds column 0.
func TestMorphFeatures(t *testing.T) {
	in := "Položka X\n„ Z\nDlouhodobý X\nmajetek X\n“ Z\nobsahuje V\n\" Z\nx1 D\n"
	o := Options{Format: "conll", Features: "morph"}
	got, err := readAll(t, in, o)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := readAll(t, in, Options{Format: "conll", Features: "pos"})
	if err != nil {
		t.Fatal(err)
	}
	items := got[0].items
	for k, it := range items {
		for _, n := range pos[0].items[k].names {
			if !contains(it.names, n) {
				t.Errorf("item %d lacks pos's %q", k, n)
			}
		}
	}
	want := []string{"s5=odobý", "s6=hodobý", "s7=uhodobý", "p5=dlouh", "s1-1=„", "s3+1=tek", "p2+1=ma",
		"ic|s3=obý", "w-1|s3=„|obý", "s3|w+1=obý|majetek", "len=10+", "q", "q|ic=1"}
	for _, n := range want {
		if !contains(items[2].names, n) {
			t.Errorf("Dlouhodobý lacks %q: %q", n, items[2].names)
		}
	}
	if !contains(items[3].names, "q|ic=0") || !contains(items[3].names, "len=7") {
		t.Errorf("majetek: %q", items[3].names)
	}
	for _, k := range []int{0, 1, 4, 5, 6, 7} { // outside, the marks, after the unclosed "
		if contains(items[k].names, "q") {
			t.Errorf("item %d has q: %q", k, items[k].names)
		}
	}
	if !contains(items[7].names, "dg|s2=x1") || !contains(items[0].names, "s1-1=_B-1") {
		t.Errorf("x1: %q", items[7].names)
	}
	r, err := NewReader(strings.NewReader(in), "in", o)
	if err != nil {
		t.Fatal(err)
	}
	var s Sequence
	if err := r.Read(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.Words) != 8 || string(s.Words[2]) != "Dlouhodobý" || string(s.Words[6]) != "\"" {
		t.Errorf("Words %q", s.Words)
	}
}
