package eval

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/internal/testdata"
)

// TestCoNLL2000Gold scores CoNLL-2000's test file against itself: conlleval
// reports "processed 47377 tokens with 23852 phrases" for it.
func TestCoNLL2000Gold(t *testing.T) {
	f, err := os.Open(testdata.Dir(t, "conll2000", "test.txt"))
	if err != nil {
		t.Fatal(err)
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
