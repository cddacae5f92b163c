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

// TestWriteLargeTargets checks issue 17's rows: a capped run is reported
// as not converged whatever its time, the pruned variant against 75 s and
// CRFsuite, tagging on one thread from TagTokSec1, and the accuracy table
// keeps one row per variant (its all-cores run).
func TestWriteLargeTargets(t *testing.T) {
	pr := trainbench.SystemPruned
	runs := []trainbench.Run{
		{Task: "czech-pooled", System: "simdcrf", Threads: 2, Labels: 1208, TrainSec: 30, Iters: 60, Stop: "maximum number of iterations", TagTokSec1: 80e3, ChunkF1: -1},
		{Task: "czech-pooled", System: pr, Threads: 2, Labels: 1208, TrainSec: 70.5, Iters: 102, Stop: "line search failed: x", TagTokSec1: 310e3, ChunkF1: -1},
		{Task: "czech-cltt-attrs", System: "crfsuite", Threads: 1, ItemAcc: 78.85, ChunkF1: -1, TrainSec: 231, TagTokSec: 5e3},
		{Task: "czech-cltt-attrs", System: "simdcrf", Threads: 1, Labels: 304, ItemAcc: 78.89, ChunkF1: -1, TrainSec: 19.25, TagTokSec: 150e3},
		{Task: "czech-cltt-attrs", System: "simdcrf", Threads: 2, Labels: 304, ItemAcc: 78.89, ChunkF1: -1, TrainSec: 13},
		{Task: "czech-cltt-attrs", System: pr, Threads: 1, Labels: 304, ItemAcc: 80.00, ChunkF1: -1, TrainSec: 7, TagTokSec: 260e3},
		{Task: "czech-cltt-attrs", System: pr, Threads: 2, Labels: 304, ItemAcc: 80.10, ChunkF1: -1, TrainSec: 5},
	}
	var buf bytes.Buffer
	writeTraining(&buf, runs, trainbench.Options{})
	out := buf.String()
	for _, want := range []string{
		"UD Czech pooled (M = 1208), simdcrf, training to convergence as a whole process on 2 threads: ≤ 75 s | capped at 60 iterations: 30.0 s, not converged | no |",
		"UD Czech pooled (M = 1208), " + pr + ", training to convergence as a whole process on 2 threads: ≤ 75 s | 70.5 s, 102 iterations (line search failed: x) | yes |",
		"tagging the UD Czech pooled model (simdcrf), whole process, one thread: ≥ 300k tokens/s | 80.0k tokens/s | no |",
		"tagging the UD Czech pooled model (" + pr + "), whole process, one thread: ≥ 300k tokens/s | 310.0k tokens/s | yes |",
		"(M = 304), simdcrf, training to convergence, one thread: ≥ 30× faster than CRFsuite at equal accuracy | ×12.0 (19.2 s against 231.0 s), accuracy +0.04 points | no |",
		"(M = 304), " + pr + ", training to convergence, one thread: ≥ 30× faster than CRFsuite at equal accuracy | ×33.0 (7.0 s against 231.0 s), accuracy +1.15 points | yes |",
		"tagging at M = 304 (UD Czech CLTT attribute files, simdcrf), whole process, one thread: ≥ 50× CRFsuite's tokens/s | ×30.0 (150.0k against 5.0k tokens/s) | no |",
		"tagging at M = 304 (UD Czech CLTT attribute files, " + pr + "), whole process, one thread: ≥ 50× CRFsuite's tokens/s | ×52.0 (260.0k against 5.0k tokens/s) | yes |",
		"| " + pr + " | 80.10 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| "+pr+" | 80.00 |") {
		t.Errorf("the pruned variant's one-thread run is in the accuracy table:\n%s", out)
	}
}
