package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/kernels/kernelbench"
)

// TestWriteTargets: the kernel targets are AVX-512 ones; a machine without
// the tier says so instead of writing an empty table, and one with it gets
// the rows.
func TestWriteTargets(t *testing.T) {
	res := []kernelbench.Result{
		{Kernel: "forward", Impl: "generic", Labels: 45, NsPerPosition: 1800},
		{Kernel: "forward", Impl: "avx2", Labels: 45, NsPerPosition: 226},
	}
	var buf bytes.Buffer
	writeTargets(&buf, res, map[string]float64{"avx2": 46.7})
	if out := buf.String(); !strings.Contains(out, "does not have: not measured here") || strings.Contains(out, "| goal |") {
		t.Errorf("without AVX-512:\n%s", out)
	}
	buf.Reset()
	res = append(res, kernelbench.Result{Kernel: "forward", Impl: "avx512", Labels: 45, NsPerPosition: 120})
	writeTargets(&buf, res, map[string]float64{"avx2": 46.7, "avx512": 93})
	if out := buf.String(); !strings.Contains(out, "| AVX-512 forward, M=45: ≥10× generic per position | ×15.0 (120 vs 1800 ns) | yes |") {
		t.Errorf("with AVX-512:\n%s", out)
	}
}
