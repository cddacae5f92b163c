package format

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/simdcrf/simdcrf/internal/testdata"
)

func sharedTemplate(t testing.TB) *Template {
	path := testdata.Templates(t, "chunking.tpl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tp, err := ParseTemplate(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// countFile reads a whole file and returns sentence and item counts and
// the number of attributes.
func countFile(t testing.TB, path string, o Options) (seqs, items, attrs int, labels map[string]int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f, filepath.Base(path), o)
	if err != nil {
		t.Fatal(err)
	}
	labels = map[string]int{}
	eachSeq(t, r, func(s *Sequence) {
		seqs++
		items += s.Len()
		attrs += len(s.Names)
		for _, l := range s.Labels {
			labels[string(l)]++
		}
	})
	return
}

func TestRealFiles(t *testing.T) {
	d := testdata.Dir(t)
	tpl := sharedTemplate(t)
	cases := []struct {
		path        string
		o           Options
		seqs, items int
		labels      int
	}{
		{"conll2000/train.txt", Options{Format: "conll", Template: tpl}, 8936, 211727, 22},
		{"conll2000/test.txt", Options{Format: "conll", Template: tpl}, 2012, 47377, 19},
		{"ud_english_ewt/en_ewt-ud-train.conllu", Options{Format: "conllu", Features: "pos", Label: "xpos"}, 12544, 204577, 49},
		{"ud_english_ewt/en_ewt-ud-train.conllu", Options{Format: "conllu", Features: "pos"}, 12544, 204577, 17},
		{"ud_english_ewt/en_ewt-ud-test.conllu", Options{Format: "conllu", Features: "pos", Label: "xpos"}, 2077, 25094, 48},
		{"ud_czech/cltt/cs_cltt-ud-train.conllu", Options{Format: "conllu", Features: "pos", Label: "xpos"}, 467, 13894, 304},
		{"ud_czech/cltt/cs_cltt-ud-train.conllu", Options{Format: "conllu", Features: "pos"}, 467, 13894, 15},
		{"wnut17/wnut17train.conll", Options{Format: "conll", Features: "pos"}, 3394, 62730, 13},
		{"wnut17/emerging.dev.conll", Options{Format: "conll", Features: "pos"}, 1009, 15733, 13},
		{"wnut17/emerging.test.annotated", Options{Format: "conll", Features: "pos"}, 1287, 23394, 13},
	}
	for _, c := range cases {
		seqs, items, attrs, labels := countFile(t, filepath.Join(d, c.path), c.o)
		if seqs != c.seqs || items != c.items || len(labels) != c.labels {
			t.Errorf("%s: %d sequences, %d items, %d labels; want %d, %d, %d",
				c.path, seqs, items, len(labels), c.seqs, c.items, c.labels)
		}
		t.Logf("%s: %d sequences, %d items, %d attributes", c.path, seqs, items, attrs)
	}
}

// Features of real files written in CRFsuite format read back unchanged
// (CoNLL-2000 has ':' and '\' free tokens like ":" that need escapes).
func TestRealRoundTrip(t *testing.T) {
	d := testdata.Dir(t)
	for _, c := range []struct {
		path string
		o    Options
	}{
		{"conll2000/test.txt", Options{Format: "conll", Template: sharedTemplate(t)}},
		{"ud_english_ewt/en_ewt-ud-dev.conllu", Options{Format: "conllu", Features: "pos", Label: "xpos"}},
	} {
		data, err := os.ReadFile(filepath.Join(d, c.path))
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(data), c.path, c.o)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		var orig []Sequence
		eachSeq(t, r, func(s *Sequence) {
			if err := WriteCRFsuite(&buf, s); err != nil {
				t.Fatal(err)
			}
			orig = append(orig, copySeq(s))
		})
		var s Sequence
		escaped := bytes.Count(buf.Bytes(), []byte(`\:`))
		r2, _ := NewReader(&buf, "rt", Options{Format: "crfsuite"})
		for i := range orig {
			if err := r2.Read(&s); err != nil {
				t.Fatal(err)
			}
			o := &orig[i]
			if !reflect.DeepEqual(o.Labels, s.Labels) || !reflect.DeepEqual(o.Ptr, s.Ptr) || !reflect.DeepEqual(o.Names, s.Names) {
				t.Fatalf("%s: sequence %d (line %d) differs after the round trip", c.path, i, o.Line)
			}
		}
		if err := r2.Read(&s); err != io.EOF {
			t.Fatalf("%s: extra data after the round trip: %v", c.path, err)
		}
		t.Logf("%s: %d sequences, %d escaped colons", c.path, len(orig), escaped)
	}
}
