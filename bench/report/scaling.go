package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/simdcrf/simdcrf/bench/crfsuite"
	"github.com/simdcrf/simdcrf/bench/trainbench"
	"github.com/simdcrf/simdcrf/train"
)

// ScalingSVG is the plot's file name, beside BENCHMARKS.md.
const ScalingSVG = "BENCHMARKS-scaling.svg"

// WriteScaling writes the section "Cost of an iteration against M" from
// trainbench.Scaling, with the plot embedded from svgName (a path relative
// to the Markdown file), and returns the plot; nothing without points.
func WriteScaling(buf *bytes.Buffer, res trainbench.ScaleResult, svgName string) []byte {
	if len(res.Points) == 0 {
		return nil
	}
	var structures []string
	var labels []int
	ks := map[int]int{}
	for _, p := range res.Points {
		if !slices.Contains(structures, p.Structure) {
			structures = append(structures, p.Structure)
		}
		if !slices.Contains(labels, p.Labels) {
			labels = append(labels, p.Labels)
			ks[p.Labels] = p.K
		}
	}
	slices.Sort(labels)
	find := func(s string, m int) *trainbench.ScalePoint {
		for i := range res.Points {
			if p := &res.Points[i]; p.Structure == s && p.Labels == m {
				return p
			}
		}
		return nil
	}
	plot := LogPlot{Title: "UD Czech, one thread: CPU seconds per L-BFGS iteration against M",
		XLabel: "labels M (XPOS truncated to k characters)", YLabel: "CPU seconds per iteration"}
	var notes []string
	for _, s := range structures {
		se := Series{Name: trainbench.ScaleTitle(s)}
		var skipped []string
		for _, m := range labels {
			p := find(s, m)
			if p == nil {
				continue
			}
			if p.Skipped != "" {
				skipped = append(skipped, fmt.Sprintf("M = %d (%s)", m, p.Skipped))
				continue
			}
			se.X, se.Y = append(se.X, float64(m)), append(se.Y, p.CPU)
		}
		if len(skipped) > 0 {
			notes = append(notes, fmt.Sprintf("%s skipped at %s", trainbench.ScaleTitle(s), strings.Join(skipped, ", ")))
		}
		plot.Series = append(plot.Series, se)
	}
	svg := plot.SVG()

	fmt.Fprintf(buf, "## Cost of an iteration against M\n\n")
	fmt.Fprintf(buf, "`go run ./cmd/simdcrf-bench scaling` prints this section and writes the plot. One set of sentences, "+
		"%d sentences (%d tokens) of the UD Czech pool of the czech-pooled task: the fewest, shortest sentences that hold every one of the pool's "+
		"XPOS tags (a greedy cover, rarest tag first), so that the full tags' M is the pool's while a dense single-sequence iteration at that M stays within a minute. "+
		"Its positional XPOS tags truncated to their first k characters give the label sets (written to the run's work directory as CoNLL-U; "+
		"`--features pos --label xpos`). Each structure trains them in-process on one thread (GOMAXPROCS 1, `train.Train`, CRFsuite's defaults "+
		"otherwise) for %d L-BFGS iterations, the structures taking turns at each M; a point is the median iteration's CPU time (the process's "+
		"rusage between iterations; the table also gives its wall time). **dense, single-sequence** is `-p transitions=dense` with "+
		"the trainer's lockstep mode forced to `never` (`lockplan.Force`: forward–backward one sequence at a time, as training runs below M = 64); **dense, lockstep** "+
		"forces it to `always` (sequences of similar lengths in groups, one pass over the M×M matrix per position for the group, as "+
		"training runs from M = 64); **tied** is `-p transitions=tied`; **candidate-restricted** is "+
		"`-p feature.candidates=2` (forms seen twice or more held to the tags seen with them; transitions at their default, dense below "+
		"M = %d and tied from there, as the czech-pooled-morph-cand task trains); **pruned** is `-p prune.max=%d` (each position keeps the labels whose "+
		"zeroth-order posterior is at least 0.01 times the best, at most %[5]d, always the gold one, recomputed at every evaluation; transitions at their "+
		"default; the forward–backward then runs over the kept label pairs alone). **CRFsuite** trains the same sentences from "+
		"attribute files of the same features (npm crfsuite@%s, c2 = 1), its point the median of its log's per-iteration seconds (clock(), CPU), "+
		"run while its iteration is expected under %.0f s (from its last point, by M²).\n\n",
		res.Sentences, res.Tokens, res.Iterations, train.TiedLabels, trainbench.ScalePruneMax, crfsuite.Version, res.PeerCap)
	fmt.Fprintf(buf, "![CPU seconds per L-BFGS iteration against the number of labels M, log–log](%s)\n\n", svgName)
	fmt.Fprintf(buf, "| M | k |")
	for _, s := range structures {
		fmt.Fprintf(buf, " %s |", trainbench.ScaleTitle(s))
	}
	fmt.Fprintf(buf, "\n|---|---|%s\n", strings.Repeat("---|", len(structures)))
	for _, m := range labels {
		fmt.Fprintf(buf, "| %d | %d |", m, ks[m])
		for _, s := range structures {
			cell := "–"
			switch p := find(s, m); {
			case p == nil:
			case p.Skipped != "":
				cell = "skipped"
			case p.Seconds > 0:
				cell = fmt.Sprintf("%s (%s)", fmtSec(p.CPU), fmtSec(p.Seconds))
			default:
				cell = fmtSec(p.CPU)
			}
			fmt.Fprintf(buf, " %s |", cell)
		}
		fmt.Fprintln(buf)
	}
	fmt.Fprintf(buf, "\nCPU seconds per iteration (wall seconds in brackets; CRFsuite's log gives CPU only).\n\n")
	for _, n := range notes {
		fmt.Fprintf(buf, "- %s.\n", n)
	}
	// The rule of Transitions "auto" (tied from train.TiedLabels) against
	// the measured crossover of tied and dense lockstep.
	{
		var below, from []string
		for _, m := range labels {
			d, t := find(trainbench.ScaleLockstep, m), find(trainbench.ScaleTied, m)
			if d == nil || t == nil || d.Skipped != "" || t.Skipped != "" || d.CPU <= 0 || t.CPU <= 0 {
				continue
			}
			if t.CPU < d.CPU {
				from = append(from, fmt.Sprint(m))
			} else {
				below = append(below, fmt.Sprint(m))
			}
		}
		if len(from)+len(below) > 0 {
			fmt.Fprintf(buf, "- Tied faster than dense lockstep at M = %s; not at M = %s. Training's default (`transitions=auto`) ties from M = %d.\n",
				orNone(from), orNone(below), train.TiedLabels)
		}
	}
	// Ratios at the largest M every simdcrf structure reached.
	{
		m := labels[len(labels)-1]
		var parts []string
		base := find(trainbench.ScaleDense, m)
		for _, s := range structures {
			p := find(s, m)
			if s == trainbench.ScaleDense || p == nil || p.Skipped != "" || base == nil || base.Skipped != "" || p.CPU <= 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s ×%.1f", trainbench.ScaleTitle(s), base.CPU/p.CPU))
		}
		if len(parts) > 0 {
			fmt.Fprintf(buf, "- At M = %d, speed-up over dense single-sequence: %s.\n", m, strings.Join(parts, ", "))
		}
		if l := find(trainbench.ScaleLockstep, m); l != nil && l.Skipped == "" && l.CPU > 0 && base != nil && base.Skipped == "" && m >= 1000 {
			r := base.CPU / l.CPU
			fmt.Fprintf(buf, "- Issue 17's target, a dense iteration at M ≈ 1,208 at least 8 times faster than before lockstep (dense single-sequence) on one thread: ×%.1f, %s.\n", r, map[bool]string{true: "met", false: "missed"}[r >= 8])
		}
	}
	fmt.Fprintln(buf)
	return svg
}

// fmtSec writes seconds with three significant digits.
func fmtSec(s float64) string {
	switch {
	case s >= 100:
		return fmt.Sprintf("%.0f", s)
	case s >= 10:
		return fmt.Sprintf("%.1f", s)
	case s >= 1:
		return fmt.Sprintf("%.2f", s)
	}
	return fmt.Sprintf("%.3g", s)
}

// orNone joins list with commas, or says "none".
func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
