package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/layerbench"
)

// TestWriteLayer writes the section from the options the report passes
// (no thread list: layerbench's defaults), which once indexed an empty
// slice after the whole report had run.
func TestWriteLayer(t *testing.T) {
	res := []layerbench.Result{
		{Op: "nll_grad", Type: "float32", Labels: 9, Threads: 1, SimdcrfMs: 0.2, SimdcrfTokensS: 1e6},
		{Op: "nll_grad", Type: "float32", Labels: 9, Threads: 2, SimdcrfMs: 0.1, SimdcrfTokensS: 2e6},
	}
	for _, o := range []layerbench.Options{{Rounds: 1}, {Rounds: 1, Threads: []int{2, 1}}} {
		var buf bytes.Buffer
		WriteLayer(&buf, res, o)
		out := buf.String()
		if !strings.Contains(out, "| nll_grad | float32 | 9 | 2 |") || !strings.Contains(out, "nll_grad M=9 ×2.00") {
			t.Errorf("threads %v: section lacks the rows or the scaling:\n%s", o.Threads, out)
		}
	}
}
