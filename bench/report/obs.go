package report

import (
	"bytes"
	"fmt"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

// WriteObs writes the section on observation-dependent transitions (CRF++
// B template lines with %x) from the runs of the trainbench.ObsPlain,
// ObsSeen and ObsAll tasks; nothing when the runs hold none of them.
func WriteObs(buf *bytes.Buffer, runs []trainbench.Run) {
	get := func(task string) *trainbench.Run {
		for i := range runs {
			if runs[i].Task == task && runs[i].System == "simdcrf" {
				return &runs[i]
			}
		}
		return nil
	}
	plain := get(trainbench.ObsPlain)
	seen, all := get(trainbench.ObsSeen), get(trainbench.ObsAll)
	if plain == nil && seen == nil && all == nil {
		return
	}
	fmt.Fprintf(buf, "## Observation-dependent transitions\n\n")
	fmt.Fprintf(buf, "CoNLL-2000 chunking with `chunking.tpl` read as text by `simdcrf learn --template`, and with the line `B01:%%x[0,1]` added "+
		"(the POS tag of the current token conditions the transition into it), trained as the tables above (L-BFGS, c2 = 1, CRFsuite's stopping rule), "+
		"on all cores. The bigram attribute's weights cover either the label pairs seen with each tag in training "+
		"(`feature.bigram_pairs=seen`, the default) or a full M×M block per tag as CRF++ has them (`feature.bigram_pairs=all`). "+
		"s/iteration is the optimisation time over the iterations; model size is the file `learn` wrote.\n\n")
	fmt.Fprintf(buf, "| template | bigram weights | chunk F1 %% | item accuracy %% | iterations | s/iteration | train s | model MB | tag tokens/s |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range []struct {
		name string
		r    *trainbench.Run
	}{{"chunking.tpl", plain}, {"+ B01:%x[0,1], pairs seen", seen}, {"+ B01:%x[0,1], full blocks", all}} {
		if c.r == nil {
			continue
		}
		r := c.r
		fmt.Fprintf(buf, "| %s | %d | %.2f | %.2f | %d | %.3f | %.1f | %.2f | %s |\n", c.name, r.BigramWeights, r.ChunkF1, r.ItemAcc,
			r.Iters, r.OptSec/float64(max(r.Iters, 1)), r.TrainSec, float64(r.ModelBytes)/1e6, FormatRate(r.TagTokSec))
	}
	fmt.Fprintln(buf)
	if plain != nil && seen != nil && plain.Iters > 0 && seen.Iters > 0 {
		ps := plain.OptSec / float64(plain.Iters)
		fmt.Fprintf(buf, "With `B01:%%x[0,1]` (pairs seen) an iteration takes %.2f× the plain template's and chunk F1 moves by %+.2f points", seen.OptSec/float64(seen.Iters)/ps, seen.ChunkF1-plain.ChunkF1)
		if all != nil && all.Iters > 0 {
			fmt.Fprintf(buf, "; with full blocks %.2f× and %+.2f points", all.OptSec/float64(all.Iters)/ps, all.ChunkF1-plain.ChunkF1)
		}
		fmt.Fprintf(buf, ".\n\n")
	}
}
