package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

// TestWriteScaling writes the section from fake points: the embedded plot,
// the table with CPU (wall) cells, a CRFsuite point skipped and named, a
// pruned point skipped, the speed-ups at the largest M; the plot has a
// line per structure with two points or more.
func TestWriteScaling(t *testing.T) {
	var buf bytes.Buffer
	if svg := WriteScaling(&buf, trainbench.ScaleResult{}, ScalingSVG); svg != nil || buf.Len() != 0 {
		t.Errorf("a section without points:\n%s", buf.String())
	}
	res := trainbench.ScaleResult{Sentences: 566, Tokens: 12553, Iterations: 3, PeerCap: 20}
	for _, m := range []struct{ k, labels int }{{1, 12}, {15, 1208}} {
		f := float64(m.labels) / 12
		res.Points = append(res.Points,
			trainbench.ScalePoint{Structure: trainbench.ScaleDense, K: m.k, Labels: m.labels, CPU: 0.01 * f * f, Seconds: 0.011 * f * f, Iters: 3},
			trainbench.ScalePoint{Structure: trainbench.ScaleLockstep, K: m.k, Labels: m.labels, CPU: 0.001 * f * f, Seconds: 0.0012 * f * f, Iters: 3},
		)
	}
	res.Points = append(res.Points,
		trainbench.ScalePoint{Structure: trainbench.ScalePruned, K: 1, Labels: 12, CPU: 0.02, Seconds: 0.021, Iters: 3},
		trainbench.ScalePoint{Structure: trainbench.ScalePruned, K: 15, Labels: 1208, Skipped: "over the cap"})
	res.Points = append(res.Points,
		trainbench.ScalePoint{Structure: trainbench.ScaleCRFsuite, K: 1, Labels: 12, CPU: 0.05, Iters: 3},
		trainbench.ScalePoint{Structure: trainbench.ScaleCRFsuite, K: 15, Labels: 1208, Skipped: "expected 500 s/iteration"})
	svg := WriteScaling(&buf, res, "plot.svg")
	s := buf.String()
	for _, want := range []string{
		"## Cost of an iteration against M",
		"566 sentences (12553 tokens)",
		"![CPU seconds per L-BFGS iteration against the number of labels M, log–log](plot.svg)",
		"| M | k | dense, single-sequence | dense, lockstep | pruned | CRFsuite |",
		"| 12 | 1 | 0.01 (0.011) | 0.001 (0.0012) | 0.02 (0.021) | 0.05 |",
		"| 1208 | 15 | 101 (111) | 10.1 (12.2) | skipped | skipped |",
		"pruned skipped at M = 1208 (over the cap)",
		"**pruned** is `-p prune.max=8`",
		"CRFsuite skipped at M = 1208 (expected 500 s/iteration).",
		"At M = 1208, speed-up over dense single-sequence: dense, lockstep ×10.0.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	el := parseSVG(t, svg)
	if n := len(el["polyline"]); n != 2 { // dense and lockstep; CRFsuite and pruned have one point each
		t.Errorf("%d lines, want 2", n)
	}
	p := string(svg)
	for _, want := range []string{"dense, single-sequence", "dense, lockstep", "pruned", "CRFsuite"} {
		if !strings.Contains(p, want) {
			t.Errorf("legend without %q", want)
		}
	}
}

// TestWriteBeside: the report's images land in its directory, whole,
// with no temporary file left; an unwritable place is an error.
func TestWriteBeside(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "BENCHMARKS.md")
	svg := LogPlot{Title: "t", Series: []Series{{Name: "a", X: []float64{1, 10}, Y: []float64{1, 2}}}}.SVG()
	if err := writeBeside(report, map[string][]byte{ScalingSVG: svg}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, ScalingSVG))
	if err != nil || !bytes.Equal(got, svg) {
		t.Errorf("read back %d bytes (%v), wrote %d", len(got), err, len(svg))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
	if err := writeBeside(filepath.Join(dir, "no", "such", "BENCHMARKS.md"), map[string][]byte{ScalingSVG: svg}); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

// TestWriteScalingRules checks the lines that judge the rules against the
// points: where tied beats dense lockstep, and issue 17's ×8 for lockstep
// at the largest M (met and missed).
func TestWriteScalingRules(t *testing.T) {
	for _, c := range []struct {
		lock float64
		want string
	}{{3, "×3.3, missed"}, {1.25, "×8.0, met"}} {
		res := trainbench.ScaleResult{Sentences: 2, Tokens: 9, Iterations: 3}
		res.Points = []trainbench.ScalePoint{
			{Structure: trainbench.ScaleDense, K: 1, Labels: 12, CPU: 0.01},
			{Structure: trainbench.ScaleLockstep, K: 1, Labels: 12, CPU: 0.01},
			{Structure: trainbench.ScaleTied, K: 1, Labels: 12, CPU: 0.02},
			{Structure: trainbench.ScaleTied, K: 2, Labels: 59, CPU: 0.03},
			{Structure: trainbench.ScaleDense, K: 15, Labels: 1208, CPU: 10},
			{Structure: trainbench.ScaleLockstep, K: 15, Labels: 1208, CPU: c.lock},
			{Structure: trainbench.ScaleTied, K: 15, Labels: 1208, CPU: 0.5},
		}
		var buf bytes.Buffer
		WriteScaling(&buf, res, "plot.svg")
		s := buf.String()
		for _, want := range []string{
			"- Tied faster than dense lockstep at M = 1208; not at M = 12. Training's default (`transitions=auto`) ties from M = 200.",
			"at least 8 times faster than before lockstep (dense single-sequence) on one thread: " + c.want + ".",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("no %q in\n%s", want, s)
			}
		}
	}
}
