package report

import (
	"bytes"
	"fmt"

	"github.com/simdcrf/simdcrf/bench/roofline"
)

// WriteRoofline writes the section "How far each phase is from this
// machine's limit" from roofline.Run; nothing without rows.
func WriteRoofline(buf *bytes.Buffer, r *roofline.Result) {
	if r == nil || len(r.Rows) == 0 {
		return
	}
	mc := r.Machine
	fmt.Fprintf(buf, "## How far each phase is from this machine's limit\n\n")
	fmt.Fprintf(buf, "`go run ./cmd/simdcrf-bench roofline` prints this section (`--json`: a line per phase). "+
		"It measures the machine first, on one thread, each figure the best of %d: the float64 FMA peak of the active kernels tier (`kernels.FMAProbe`), "+
		"the latency of a dependent FMA, and the bandwidth over working sets from 16 KiB to 256 MiB, doubling: streaming reads (`kernels.Dot`) "+
		"and read-modify-writes (`kernels.Axpy`). "+
		"Then it trains each task as the section above does, one thread, float64, and sets each phase's time per iteration beside its **limit**: "+
		"the longest of its flops at the peak, its bytes at the bandwidth of each structure's working set (measured on the largest set no larger, or on a larger one where that was faster: noise; "+
		"reuse within the phase taken as perfect), and its dependent FMAs at their latency. "+
		"Each is a lower bound, so a phase can never beat its limit; the work is counted from the algorithm as implemented, "+
		"from `train.Stats.Shape` (docs/roofline.md says how). The levels' table (half of each cache of sysfs; memory 256 MiB or more, "+
		"with dependent loads over a random cycle of cache lines) describes the machine; the limits use the curve.\n\n", r.Reps)
	fmt.Fprintf(buf, "CPU: %s. Float64 FMA peak %.1f GFLOP/s; dependent FMA %.2f ns.\n\n", r.Info.CPU, mc.PeakGFLOPs, mc.FMALatencyNs)
	fmt.Fprintf(buf, "| level | cache (sysfs) | working set | read GB/s | read-modify-write GB/s | dependent load ns |\n|---|---|---|---|---|---|\n")
	for l, lv := range mc.Levels {
		size := "–"
		if l < len(mc.Sizes) && lv.Name != "memory" {
			size = fmt.Sprintf("%d KiB", mc.Sizes[l]>>10)
		}
		fmt.Fprintf(buf, "| %s | %s | %d KiB | %.1f | %.1f | %.1f |\n", lv.Name, size, lv.Bytes>>10, lv.ReadGBs, lv.RMWGBs, lv.LatencyNs)
	}
	fmt.Fprintln(buf)
	fmt.Fprintf(buf, "Bandwidth against the working set (GB/s, read / read-modify-write):")
	for i, p := range mc.Curve {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(buf, "%s %s %.0f / %.0f", sep, size(p.Bytes), p.ReadGBs, p.RMWGBs)
	}
	fmt.Fprintf(buf, ".\n\n")
	fmt.Fprintf(buf, "What an evaluation works on (`train.Stats.Shape`) and the evaluations per iteration:\n\n")
	fmt.Fprintf(buf, "| corpus | M | positions | parameters | hot rows | hot features | cold features | cold labels | evaluations/iteration |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Phases {
		sh := p.Shape
		fmt.Fprintf(buf, "| %s | %d | %d | %d | %d | %d | %d | %d | %.2f |\n", p.Task, sh.Labels, sh.Tokens, sh.Params, sh.HotRows, sh.HotFeatures, sh.ColdFeatures, sh.ColdLabels, float64(p.Evals)/float64(max(p.Iters, 1)))
	}
	fmt.Fprintln(buf)
	fmt.Fprintf(buf, "| corpus | labels | phase | ms/iteration | limit ms | × limit | bound |\n|---|---|---|---|---|---|---|\n")
	for i, p := range r.Phases {
		for k := range roofline.Phases {
			row := r.Rows[i*len(roofline.Phases)+k]
			fmt.Fprintf(buf, "| %s | %d | %s | %.1f | %.2f | %s | %s |\n", p.Task, p.Labels, row.Phase, row.Ms, row.LimitMs, roofline.Ratio(row.Ms, row.LimitMs), row.Bound)
		}
	}
	fmt.Fprintln(buf)
}

// size formats a power-of-two size: "16 KiB", "256 MiB".
func size(b int64) string {
	if b >= 1<<20 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
