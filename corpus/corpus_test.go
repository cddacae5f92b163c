package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoad checks the dictionaries, the frequency order of attribute ids,
// instance weights, and a holdout with a label training never had.
func TestLoad(t *testing.T) {
	train := write(t, "train.txt", "A\tx\ty\nB\ty\n\n@weight:2\nA\ty\tz\n\n")
	var l Loader
	tr, err := l.Load([]string{train}, format.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Seqs != 2 || tr.Items != 3 || tr.Labels.Len() != 2 || tr.Attrs.Len() != 3 {
		t.Fatalf("got %d sequences, %d items, %d labels, %d attributes", tr.Seqs, tr.Items, tr.Labels.Len(), tr.Attrs.Len())
	}
	if tr.Attrs.String(0) != "y" { // y occurs 3 times, x and z once
		t.Errorf("most frequent attribute is %q, want y", tr.Attrs.String(0))
	}
	if len(tr.Data.Weights) != 2 || tr.Data.Weights[1] != 2 {
		t.Errorf("instance weights %v", tr.Data.Weights)
	}
	hold := write(t, "hold.txt", "A\tx\tunseen\nC\ty\n\n")
	h, err := LoadHoldout(hold, format.Spec{}, tr)
	if err != nil {
		t.Fatal(err)
	}
	s := h.Corpus.Seq(0)
	if len(s.Labels) != 2 || s.Labels[0] != 0 || s.Labels[1] != sparse.NoLabel || len(s.IDs) != 2 {
		t.Errorf("holdout sequence %+v", s)
	}
}

func TestLoadErrors(t *testing.T) {
	for name, c := range map[string]struct {
		text, want string
		cols       int
	}{
		"unlabelled": {"the\n\n", "train.conll:1: ", 1},
		"short row":  {"the DT B-NP\ndog NN\n\n", "train.conll:2: ", 0},
		"empty":      {"\n\n", "train.conll: no sequences", 0},
	} {
		t.Run(name, func(t *testing.T) {
			p := write(t, "train.conll", c.text)
			var l Loader
			_, err := l.Load([]string{p}, format.Spec{Format: "conll", Features: "pos", Columns: c.cols})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := (format.Spec{Format: "crfsuite", Features: "pos"}).Options(); err == nil {
		t.Error("crfsuite input with a feature set was accepted")
	}
	if _, err := (format.Spec{Format: "conll"}).Options(); err == nil {
		t.Error("conll input without features was accepted")
	}
}

// TestLoadBigrams: a template's B lines with %x give bigram attributes,
// most frequent first, rare ones dropped with MinFreq; a holdout keeps
// only those training knows.
func TestLoadBigrams(t *testing.T) {
	train := write(t, "train.txt", "a DT B\nb NN I\nc VB O\n\nd DT B\ne NN I\n\nf JJ O\ng NN B\n\n")
	spec := format.Spec{Format: "conll", Template: "U00:%x[0,0]\nB\nB01:%x[0,1]\n"}
	l := Loader{MinFreq: 2}
	tr, err := l.Load([]string{train}, spec)
	if err != nil {
		t.Fatal(err)
	}
	// At positions ≥ 1: NN three times, VB once (dropped); DT and JJ only
	// at position 0 (no bigram attribute there).
	if tr.BAttrs == nil || tr.BAttrs.Len() != 1 || tr.BAttrs.String(0) != "B01:NN" {
		t.Fatalf("bigram attributes %v", tr.BAttrs)
	}
	d := tr.Data
	if d.Bigram == nil || d.Bigram.Len() != 3 || d.NumBigramAttrs != 1 {
		t.Fatalf("bigram corpus %v, %d attributes", d.Bigram, d.NumBigramAttrs)
	}
	for i, want := range [][]int32{{1}, {1}, {1}} { // the NN position
		s := d.Bigram.Seq(i)
		if s.Len() != d.Corpus.Seq(i).Len() || s.NumFeatures() != len(want) || s.Ptr[want[0]+1]-s.Ptr[want[0]] != 1 {
			t.Errorf("sequence %d: bigram attributes %+v", i, s)
		}
	}
	hold := write(t, "hold.txt", "h DT B\ni NN I\nj VB O\n\n")
	h, err := LoadHoldout(hold, spec, tr)
	if err != nil {
		t.Fatal(err)
	}
	if h.Bigram == nil || h.NumBigramAttrs != 1 || h.Bigram.Seq(0).NumFeatures() != 1 {
		t.Errorf("holdout bigram attributes %+v", h.Bigram)
	}
	// Without B lines with %x, none.
	tr, err = (&Loader{}).Load([]string{train}, format.Spec{Format: "conll", Template: "U00:%x[0,0]\nB\n"})
	if err != nil || tr.BAttrs != nil || tr.Data.Bigram != nil {
		t.Errorf("plain template: %v, %v, %v", err, tr.BAttrs, tr.Data.Bigram)
	}
}
