package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

// TestWriteTrainingPeerAccuracy checks the rows that hold simdcrf's
// accuracy to CRFsuite's on identical attribute files, task by task and
// thread count by thread count, met and missed.
func TestWriteTrainingPeerAccuracy(t *testing.T) {
	runs := []trainbench.Run{
		{Task: "chunking", System: "crfsuite", Threads: 1, ItemAcc: 95.90, ChunkF1: 93.50, TrainSec: 80, TagTokSec: 70e3},
		{Task: "chunking", System: "simdcrf", Threads: 1, Labels: 23, ItemAcc: 95.95, ChunkF1: 93.55, TrainSec: 10, TagTokSec: 600e3},
		{Task: "chunking", System: "simdcrf", Threads: 2, Labels: 23, ItemAcc: 95.95, ChunkF1: 93.55, TrainSec: 6, TagTokSec: 900e3},
		{Task: "czech-cltt-attrs", System: "crfsuite", Threads: 1, ItemAcc: 79.00, ChunkF1: -1},
		{Task: "czech-cltt-attrs", System: "simdcrf", Threads: 1, Labels: 304, ItemAcc: 78.95, ChunkF1: -1},
		{Task: "czech-cltt-attrs", System: "simdcrf", Threads: 2, Labels: 304, ItemAcc: 78.80, ChunkF1: -1},
	}
	var buf bytes.Buffer
	writeTraining(&buf, runs, trainbench.Options{})
	out := buf.String()
	for _, want := range []string{
		"CoNLL-2000 chunking, chunking.tpl (M = 23), 1 thread(s): item accuracy equal to CRFsuite's within 0.1, or better | +0.05 points | yes |",
		"CoNLL-2000 chunking, chunking.tpl (M = 23), 2 thread(s): item accuracy equal to CRFsuite's within 0.1, or better | +0.05 points | yes |",
		"CRFsuite attribute files (M = 304), 1 thread(s): item accuracy equal to CRFsuite's within 0.1, or better | -0.05 points | yes |",
		"CRFsuite attribute files (M = 304), 2 thread(s): item accuracy equal to CRFsuite's within 0.1, or better | -0.20 points | no |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing row %q in\n%s", want, out)
		}
	}
}

// TestWriteTrainingPeerOnly: a run of a peer task other than chunking
// still gets its accuracy rows (the chunking rows need chunking).
func TestWriteTrainingPeerOnly(t *testing.T) {
	runs := []trainbench.Run{
		{Task: "czech-cltt-attrs", System: "crfsuite", Threads: 1, ItemAcc: 78.85, ChunkF1: -1},
		{Task: "czech-cltt-attrs", System: "simdcrf", Threads: 1, Labels: 304, ItemAcc: 78.89, ChunkF1: -1},
		{Task: "czech-cltt-attrs", System: "simdcrf", Threads: 2, Labels: 304, ItemAcc: 78.89, ChunkF1: -1},
	}
	var buf bytes.Buffer
	writeTraining(&buf, runs, trainbench.Options{})
	out := buf.String()
	if !strings.Contains(out, "(M = 304), 2 thread(s): item accuracy equal to CRFsuite's within 0.1, or better | +0.04 points | yes |") ||
		strings.Contains(out, "CoNLL-2000 training") || strings.Contains(out, "CRFsuite did not run") {
		t.Errorf("got\n%s", out)
	}
}
