package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

// TestWritePhases writes the section from fake breakdowns: the rows with
// their shares, and the float32 and thread ratios.
func TestWritePhases(t *testing.T) {
	var buf bytes.Buffer
	WritePhases(&buf, nil, trainbench.PhaseOptions{})
	if buf.Len() != 0 {
		t.Errorf("a section without results:\n%s", buf.String())
	}
	res := []trainbench.PhaseResult{
		{Task: "chunking", Labels: 22, Precision: "float64", Threads: 1, Iters: 10, Evals: 12, Loss: 20000,
			Iteration: 100, Score: 20, ForwardBackward: 40, Scatter: 15, Setup: 5, Wait: 2, Optimiser: 18, CPU: 104},
		{Task: "chunking", Labels: 22, Precision: "float64", Threads: 2, Iters: 10, Evals: 12, Loss: 20000,
			Iteration: 55, Score: 10, ForwardBackward: 20, Scatter: 8, Setup: 3, Wait: 4, Optimiser: 10},
		{Task: "chunking", Labels: 22, Precision: "float32", Threads: 1, Iters: 10, Evals: 12, Loss: 20000.02,
			Iteration: 80, Score: 16, ForwardBackward: 32, Scatter: 10, Setup: 2, Wait: 2, Optimiser: 18},
	}
	WritePhases(&buf, res, trainbench.PhaseOptions{Iterations: 10, Rounds: 3})
	s := buf.String()
	for _, want := range []string{
		"## Where an iteration's time goes",
		"| chunking | 22 | float64 | 1 | 100.0 | 1.20 | 20.0 (20%) | 40.0 (40%) | 15.0 (15%) | 5.0 (5%) | 2.0 (2%) | 18.0 (18%) | 20000 | 104.0 |",
		"| chunking | 22 | float32 | 1 | 80.0 |",
		"chunking, 1 thread(s): float32's speed-up over float64, iteration ×1.25 (forward–backward ×1.25, scoring ×1.25, scattering ×1.50); loss after 1 + 10 iterations +1e-06 relative.",
		"chunking, float64: two threads' speed-up over one ×1.82 (optimiser ×1.80).",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "chunking, 2 thread(s): float32") || strings.Contains(s, "chunking, float32: two") {
		t.Errorf("a ratio for a case that did not run:\n%s", s)
	}
}
