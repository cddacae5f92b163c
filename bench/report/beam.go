package report

import (
	"bytes"
	"fmt"

	"github.com/simdcrf/simdcrf/bench/beambench"
)

// WriteBeam writes the section on simdcrf-beam against simdcrf tag.
func WriteBeam(buf *bytes.Buffer, r beambench.Result) {
	fmt.Fprintf(buf, "## Beyond one machine: simdcrf-beam on Beam's local runner\n\n")
	fmt.Fprintf(buf, "`simdcrf-beam tag` (the Apache Beam pipeline of the module in `beam/`; docs/distributed.md) on Prism, Beam's local runner, "+
		"in one process on this machine's %d cores, against `simdcrf tag --threads %d`, both whole processes on the same file: "+
		"the CoNLL-2000 test file %d times over (%.2fM tokens, %d sentences, %.0f MB) with the chunking model (chunking.tpl). "+
		"Medians of %d runs, the commands taking turns; the pipeline's shards, without their \"#\" lines, were checked equal to simdcrf tag's output. "+
		"CPU is user + system time; start-up is the same command on one sentence.\n\n",
		r.Procs, r.Procs, r.Copies, float64(r.Tokens)/1e6, r.Sequences, float64(r.Bytes)/1e6, r.Repeats)
	fmt.Fprintf(buf, "| command | wall s | tokens/s | CPU s | CPU ns/token | peak MiB | start-up s |\n|---|---|---|---|---|---|---|\n")
	row := func(name string, c, start beambench.Case) {
		fmt.Fprintf(buf, "| %s | %.2f | %s | %.2f | %.0f | %.0f | %.2f |\n", name, c.Wall, FormatRate(r.TokensPerSec(c)), c.CPU,
			c.CPU/float64(r.Tokens)*1e9, c.PeakMiB, start.Wall)
	}
	row(fmt.Sprintf("simdcrf tag --threads %d", r.Procs), r.Tag, r.TagStart)
	row("simdcrf-beam tag (Prism)", r.Beam, r.BeamStart)
	more := func(ns float64) string {
		if ns < 0 {
			return fmt.Sprintf("%.0f ns less", -ns)
		}
		return fmt.Sprintf("%.0f ns more", ns)
	}
	why := ""
	if r.Beam.Wall < r.Tag.Wall {
		// simdcrf tag parses, extracts and encodes on one goroutine.
		why = ": its ranges each parse their own text, where simdcrf tag reads, extracts features and looks them up on one goroutine for its tagging threads"
	}
	fmt.Fprintf(buf, "\nPer token, the pipeline takes %s wall time and %s CPU time than simdcrf tag (start-ups taken out), "+
		"×%.2f the wall time%s. It tags %s tokens per CPU-second (the figure docs/distributed.md's cost estimate starts from). "+
		"Prism keeps every PCollection in memory, hence the peak. Building simdcrf-beam took %.0f s here (Go's caches as found) for a %.0f MiB binary.\n\n",
		more(r.OverheadNs()), more(r.CPUOverheadNs()), r.Beam.Wall/r.Tag.Wall, why, FormatRate(float64(r.Tokens)/r.Beam.CPU), r.BuildSec, r.BinaryMiB)
}
