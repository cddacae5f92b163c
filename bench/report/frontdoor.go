package report

import (
	"bytes"
	"fmt"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

// Issue 27's targets for the Go API (package simdcrf) against the command.
const (
	frontTrainMax = 1.25 // Trainer's wall time, at most this times learn's
	frontTagMin   = 1.0  // Tagger's tokens/s, at least this times tag's
)

// WriteFrontDoor writes the section on the Go API against the command.
func WriteFrontDoor(buf *bytes.Buffer, r trainbench.FrontResult) {
	fmt.Fprintf(buf, "## The Go API (package simdcrf) against the command\n\n")
	fmt.Fprintf(buf, "CoNLL-2000 chunking with chunking.tpl's attributes (%d training tokens, %d L-BFGS iterations to CRFsuite's stopping rule, default options), "+
		"one thread each (GOMAXPROCS=1): `simdcrf.Trainer` appending the sequences as items held in memory and training, in this process, "+
		"against `simdcrf learn --threads 1` on the same attributes as a CRFsuite file (reading it included), wall time, medians of %d runs taken in turns; "+
		"then the command's model tagging the test file (%d tokens): `Tagger.Tag` sequence by sequence in this process against `simdcrf tag --threads 1` "+
		"as a whole process (file to labels), medians of the tagging runs. Both models label the test file alike: %s.\n\n",
		r.Tokens, r.Iters, r.Reps, r.TestTokens, map[bool]string{true: "yes", false: "**no**"}[r.SameModelLabels])
	met := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	fmt.Fprintf(buf, "| | command | Go API | ratio | target | met |\n|---|---|---|---|---|---|\n")
	tr := r.TrainerSec / r.LearnSec
	fmt.Fprintf(buf, "| training, wall s (Append %.2f s of it) | %.2f | %.2f | ×%.2f | ≤ ×%.2f | %s |\n",
		r.AppendSec, r.LearnSec, r.TrainerSec, tr, frontTrainMax, met(tr <= frontTrainMax))
	tg := r.TaggerTokSec / r.CmdTagTokSec
	fmt.Fprintf(buf, "| tagging, tokens/s | %s | %s | ×%.2f | ≥ ×%.2f | %s |\n\n",
		FormatRate(r.CmdTagTokSec), FormatRate(r.TaggerTokSec), tg, frontTagMin, met(tg >= frontTagMin))
}
