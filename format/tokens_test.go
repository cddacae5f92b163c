package format

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestTokensAsColumns: sentences given as rows of columns get the
// attributes, bigram attributes, words and labels a column file with the
// same rows gets, for a template with B%x lines and both feature sets.
func TestTokensAsColumns(t *testing.T) {
	tpl, err := ParseTemplate(strings.NewReader("U00:%x[-1,0]\nU01:%x[0,0]/%x[0,1]\nU02:%x[1,1]\nB\nB01:%x[0,1]\n"), "t.tpl")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"the", "Dog", "ran", "3", "fast-ish", "ÚNOR", "x", "Quickly", "\"", "a"}
	for _, o := range []Options{{Template: tpl}, {Features: "pos"}, {Features: "morph"}} {
		tk, err := NewTokens(o)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		var sents [][][]string
		var labs [][]string
		for range 30 {
			n := 1 + r.IntN(9)
			var rows [][]string
			var l []string
			for range n {
				row := []string{words[r.IntN(len(words))], words[r.IntN(len(words))]}
				rows = append(rows, row)
				l = append(l, []string{"B-NP", "I-NP", "O"}[r.IntN(3)])
				text.WriteString(row[0] + " " + row[1] + " " + l[len(l)-1] + "\n")
			}
			text.WriteString("\n")
			sents, labs = append(sents, rows), append(labs, l)
		}
		o.Format = "conll"
		cr, err := NewReader(strings.NewReader(text.String()), "f", o)
		if err != nil {
			t.Fatal(err)
		}
		var want, got Sequence
		for i := range sents {
			if err := cr.Read(&want); err != nil {
				t.Fatal(err)
			}
			if err := tk.Sequence(&got, sents[i], labs[i]); err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct {
				name      string
				got, want any
			}{{"Ptr", got.Ptr, want.Ptr}, {"Names", got.Names, want.Names}, {"Values", got.Values, want.Values},
				{"Labels", got.Labels, want.Labels}, {"Words", got.Words, want.Words},
				{"BPtr", got.BPtr, want.BPtr}, {"BNames", got.BNames, want.BNames}} {
				if !reflect.DeepEqual(f.got, f.want) {
					t.Fatalf("%+v sentence %d: %s %q, want %q", o, i, f.name, f.got, f.want)
				}
			}
		}
		// Unlabelled: the same attributes, no labels.
		if err := tk.Sequence(&got, sents[0], nil); err != nil || got.Labels != nil || got.Len() != len(sents[0]) {
			t.Errorf("unlabelled: %v, labels %q, %d items", err, got.Labels, got.Len())
		}
	}
}

func TestTokensErrors(t *testing.T) {
	tpl, err := ParseTemplate(strings.NewReader("U00:%x[0,2]\n"), "t.tpl")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := NewTokens(Options{Features: "pos"})
	if err != nil {
		t.Fatal(err)
	}
	var s Sequence
	if err := tk.Sequence(&s, nil, nil); err != nil || s.Len() != 0 {
		t.Errorf("empty sentence: %v, %d items", err, s.Len())
	}
	for _, c := range []struct {
		tk     *Tokens
		rows   [][]string
		labels []string
		want   string
	}{
		{tk, [][]string{{"a"}, {"b"}}, []string{"X"}, "2 tokens but 1 labels"},
		{tk, [][]string{{}}, nil, "position 0: a token has no columns"},
		{tk, [][]string{{"a"}, {"b", "c"}}, nil, "position 1: 2 columns, but the sentence's first token has 1"},
	} {
		if err := c.tk.Sequence(&s, c.rows, c.labels); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.rows, err, c.want)
		}
	}
	tk2, err := NewTokens(Options{Template: tpl})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk2.Sequence(&s, [][]string{{"a", "b"}}, nil); err == nil || !strings.Contains(err.Error(), "position 0") {
		t.Errorf("template reading column 2 of 2: error %v", err)
	}
	if _, err := NewTokens(Options{}); err == nil {
		t.Error("no template or feature set: no error")
	}
	if _, err := NewTokens(Options{Template: tpl, Columns: 2}); err == nil {
		t.Error("template reading column 2 of 2 given columns: no error")
	}
}
