package eval

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCoNLL2000Gold scores CoNLL-2000's test file against itself: conlleval
// reports "processed 47377 tokens with 23852 phrases" for it.
func TestCoNLL2000Gold(t *testing.T) {
	f, err := os.Open(filepath.Join(dataDir(), "conll2000", "test.txt"))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer f.Close()
	e := &Evaluator{}
	var labels []string
	flush := func() {
		if len(labels) > 0 {
			e.Add(labels, labels)
			labels = labels[:0]
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			flush()
			continue
		}
		labels = append(labels, fields[len(fields)-1])
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	r := e.Result()
	if r.Tokens != 47377 || r.Chunk == nil || r.Chunk.Gold != 23852 || r.Chunk.Correct != 23852 || r.Chunk.F1 != 1 {
		t.Fatalf("%d tokens, chunks %+v", r.Tokens, r.Chunk)
	}
}

// dataDir is $SIMDCRF_DATA, or ../shared/data beside the module root (the
// go.mod directory).
func dataDir() string {
	if d := os.Getenv("SIMDCRF_DATA"); d != "" {
		return d
	}
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "..", "shared", "data")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "..", "..", "shared", "data")
		}
	}
}
