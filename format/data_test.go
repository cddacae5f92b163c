package format

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sharedData finds ../shared/data beside the repository (or beside any
// directory above this package, so that worktrees work too).
func sharedData(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		d := filepath.Join(dir, "shared", "data")
		if _, err := os.Stat(filepath.Join(d, "README.md")); err == nil {
			return d
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if os.Getenv("CI") != "" {
		t.Fatal("../shared/data is missing (CI is set)")
	}
	t.Skip("../shared/data is missing; skipping the test on real data")
	return ""
}

func sharedTemplate(t testing.TB) *Template {
	d := sharedData(t)
	path := filepath.Join(filepath.Dir(d), "templates", "chunking.tpl")
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
	var s Sequence
	for {
		err := r.Read(&s)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seqs++
		items += s.Len()
		attrs += len(s.Names)
		for _, l := range s.Labels {
			labels[string(l)]++
		}
	}
	return
}

func TestRealFiles(t *testing.T) {
	d := sharedData(t)
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
