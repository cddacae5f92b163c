package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/roofline"
	"github.com/simdcrf/simdcrf/bench/trainbench"
	"github.com/simdcrf/simdcrf/internal/machine"
	"github.com/simdcrf/simdcrf/train"
)

func TestWriteRoofline(t *testing.T) {
	var buf bytes.Buffer
	WriteRoofline(&buf, nil)
	if buf.Len() != 0 {
		t.Fatalf("a section without results: %q", buf.String())
	}
	r := &roofline.Result{
		Machine: roofline.Machine{PeakGFLOPs: 45.2, FMALatencyNs: 1.4, Sizes: [3]int64{32 << 10, 512 << 10, 32 << 20},
			Curve:  []roofline.Point{{Bytes: 16 << 10, ReadGBs: 134, RMWGBs: 163}, {Bytes: 256 << 20, ReadGBs: 12, RMWGBs: 15}},
			Levels: []roofline.Level{{Name: "L1", Bytes: 16 << 10, ReadGBs: 140, RMWGBs: 155, LatencyNs: 2.2}, {Name: "memory", Bytes: 256 << 20, ReadGBs: 12, RMWGBs: 16, LatencyNs: 321}}},
		Info:   machine.Info{CPU: "Test CPU"},
		Phases: []trainbench.PhaseResult{{Task: "chunking", Labels: 22, Iters: 10, Evals: 11, Shape: train.Shape{Labels: 22, Tokens: 211727, Params: 453000, HotRows: 100}}},
		Reps:   3,
	}
	for k, p := range roofline.Phases {
		r.Rows = append(r.Rows, roofline.Row{Task: "chunking", Phase: p, Threads: 1, Ms: 10 * float64(k+1), LimitMs: 4, Bound: roofline.Bandwidth})
	}
	WriteRoofline(&buf, r)
	s := buf.String()
	for _, want := range []string{
		"Test CPU", "45.2 GFLOP/s", "| L1 | 32 KiB | 16 KiB | 140.0 | 155.0 | 2.2 |", "| memory | – | 262144 KiB |",
		"16 KiB 134 / 163, 256 MiB 12 / 15.", "| chunking | 22 | 211727 | 453000 | 100 |", "1.10 |",
		"| chunking | 22 | scoring | 10.0 | 4.00 | ×2.5 | bandwidth |", "| chunking | 22 | setup | 50.0 | 4.00 | ×12.5 | bandwidth |", "best of 3",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
}
