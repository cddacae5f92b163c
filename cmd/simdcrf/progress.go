package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/train"
)

// progressBar draws a bar on a terminal while large files are read; on
// anything else (a pipe, a log file, a test) it draws nothing.
type progressBar struct {
	w    io.Writer
	on   bool
	last time.Time
	drew bool
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	return &progressBar{w: w, on: !quiet && isTerminal(w)}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// file is a corpus.Loader progress callback.
func (p *progressBar) file(f *corpus.File) {
	if !p.on || f.Size <= 0 || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	frac := float64(f.Offset()) / float64(f.Size)
	frac = min(max(frac, 0), 1)
	const width = 30
	n := int(frac * width)
	fmt.Fprintf(p.w, "\rreading %-30.30s [%s%s] %3.0f%%", f.Name, strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac)
	p.drew = true
}

// done clears the bar.
func (p *progressBar) done() {
	if p.drew {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 80))
		p.drew = false
	}
}

// printProgress prints one line per training iteration.
func printProgress(w io.Writer, p train.Progress) {
	hold := "-"
	if p.Holdout >= 0 {
		hold = fmt.Sprintf("%.4f", p.Holdout)
	}
	it := fmt.Sprint(p.Iteration)
	switch {
	case p.FirstOrder: // the first-order pruner's training (prune.by=first)
		it = "f" + it
	case p.Pruner: // the zeroth-order pruner's (prune.by=zeroth, first)
		it = "p" + it
	}
	fmt.Fprintf(w, "%5s %14.6f %12.6g %9d %9s %8.3f\n", it, p.Loss, p.GradNorm, p.Active, hold, p.Seconds)
}
