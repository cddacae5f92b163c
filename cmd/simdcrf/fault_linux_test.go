package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestModelTruncatedWhileMapped truncates the model file between mapping it
// and tagging (or dumping) with it: the commands report the file, not a
// fault, on one thread and on several.
func TestModelTruncatedWhileMapped(t *testing.T) {
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 100, 50)
	if _, stderr, err := runCLI(t, "learn", "-q", "-m", modelPath, "--template", tplPath, "-p", "max_iterations=3", trainPath); err != nil {
		t.Fatalf("learn: %v\n%s", err, stderr)
	}
	// Where the file is truncated decides which goroutine meets the fault
	// first: before tagging, the main one (making the tagger); after it,
	// the reader (looking up attribute names); after it with the names
	// held in memory, the workers (scoring).
	for _, when := range []string{"before", "reader", "workers"} {
		for _, threads := range []int{1, 3} {
			name := fmt.Sprintf("%s, %d threads", when, threads)
			m, unmap, err := model.Map(modelPath)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := m.Meta.Spec.ForTagging(format.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := corpus.Open(testPath, spec)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(modelPath)
			if err != nil {
				t.Fatal(err)
			}
			truncate := func() {
				if err := os.Truncate(modelPath, 0); err != nil {
					t.Fatal(err)
				}
			}
			if when == "workers" {
				attrs := sparse.NewDict(m.Attrs.Len())
				for id := range int32(m.Attrs.Len()) {
					attrs.Add(m.Attrs.String(id))
				}
				m.Attrs = attrs
			}
			if when == "before" {
				truncate()
			} else {
				testHookTagger = truncate
			}
			_, err = tagFiles(m, []*corpus.File{f}, tagOptions{threads: threads}, io.Discard)
			testHookTagger = nil
			if err == nil || !strings.Contains(err.Error(), modelPath) || !strings.Contains(err.Error(), "truncated or rewritten") {
				t.Errorf("tag, truncated %s: %v", name, err)
			}
			if err := dumpModel(m, 10, io.Discard); err == nil || !strings.Contains(err.Error(), "truncated or rewritten") {
				t.Errorf("dump, truncated %s: %v", name, err)
			}
			f.Close()
			unmap()
			if err := os.WriteFile(modelPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
