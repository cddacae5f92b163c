package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

func TestWriteObs(t *testing.T) {
	var buf bytes.Buffer
	WriteObs(&buf, []trainbench.Run{{Task: "chunking", System: "simdcrf"}})
	if buf.Len() != 0 {
		t.Errorf("a section without its runs:\n%s", buf.String())
	}
	runs := []trainbench.Run{
		{Task: trainbench.ObsPlain, System: "simdcrf", ChunkF1: 93.5, ItemAcc: 95.9, Iters: 100, OptSec: 100, ModelBytes: 5e6, TagTokSec: 1e6},
		{Task: trainbench.ObsSeen, System: "simdcrf", ChunkF1: 93.75, ItemAcc: 96, Iters: 100, OptSec: 250, ModelBytes: 5.1e6, BigramWeights: 1234, TagTokSec: 5e5},
	}
	WriteObs(&buf, runs)
	s := buf.String()
	for _, want := range []string{"## Observation-dependent transitions", "| chunking.tpl | 0 | 93.50 |", "| + B01:%x[0,1], pairs seen | 1234 | 93.75 |",
		"an iteration takes 2.50× the plain template's and chunk F1 moves by +0.25 points."} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "full blocks |") {
		t.Errorf("a row for a run that is not there:\n%s", s)
	}
}
