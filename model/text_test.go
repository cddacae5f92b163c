package model

import (
	"math"
	"testing"
)

func TestAppendText(t *testing.T) {
	labels := []string{"B-NP", "I-NP", "O"}
	out := &Output{
		Labels: []int32{0, 1, 2}, Score: 3.5, LogZ: 4.25, Prob: 0.4723665527410147,
		Marginals:    []float64{0.9, 0.5, 0.1234567},
		AllMarginals: []float64{0.9, 0.05, 0.05, 0.25, 0.5, 0.25, 0.75, 0.1265433, 0.1234567},
		NBest: []Path{
			{Labels: []int32{0, 1, 2}, Score: 3.5, Prob: 0.4723665527410147, Marginals: []float64{0.9, 0.5, 0.1234567}},
			{Labels: []int32{0, 1, 1}, Score: 2.863706, Prob: 0.25, Marginals: []float64{0.9, 0.5, 0.75}},
		},
	}
	ref := []string{"B-NP", "B-NP", "X"}
	for _, c := range []struct {
		o    TextOptions
		want string
	}{
		{TextOptions{}, "B-NP\nI-NP\nO\n\n"},
		{TextOptions{Prob: true}, "@score\t3.500000\t4.250000\n@probability\t0.472367\nB-NP\nI-NP\nO\n\n"},
		{TextOptions{Marginals: true}, "B-NP:0.900000\nI-NP:0.500000\nO:0.123457\n\n"},
		{TextOptions{Reference: true}, "B-NP\tB-NP\nB-NP\tI-NP\nX\tO\n\n"},
		{TextOptions{Reference: true, Marginals: true, AllMarginals: true},
			"B-NP\tB-NP:0.900000\tB-NP:0.900000\tI-NP:0.050000\tO:0.050000\n" +
				"B-NP\tI-NP:0.500000\tB-NP:0.250000\tI-NP:0.500000\tO:0.250000\n" +
				"X\tO:0.123457\tB-NP:0.750000\tI-NP:0.126543\tO:0.123457\n\n"},
		{TextOptions{NBest: 2}, "@nbest\t1\t0.472367\nB-NP\nI-NP\nO\n\n@nbest\t2\t0.250000\nB-NP\nI-NP\nI-NP\n\n"},
		{TextOptions{NBest: 2, Marginals: true}, "@nbest\t1\t0.472367\nB-NP:0.900000\nI-NP:0.500000\nO:0.123457\n\n" +
			"@nbest\t2\t0.250000\nB-NP:0.900000\nI-NP:0.500000\nI-NP:0.750000\n\n"},
		{TextOptions{NBest: 2, Prob: true}, "@nbest\t1\t0.472367\n@score\t3.500000\t4.250000\n@probability\t0.472367\nB-NP\nI-NP\nO\n\n" +
			"@nbest\t2\t0.250000\n@score\t2.863706\t4.250000\n@probability\t0.250000\nB-NP\nI-NP\nI-NP\n\n"},
	} {
		if got := string(AppendText([]byte("x"), out, labels, ref, c.o)); got != "x"+c.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", c.o, got, "x"+c.want)
		}
	}
	buf := make([]byte, 0, 4096)
	o := TextOptions{Reference: true, Prob: true, Marginals: true, AllMarginals: true, NBest: 2}
	if n := testing.AllocsPerRun(100, func() { buf = AppendText(buf[:0], out, labels, ref, o) }); n != 0 {
		t.Errorf("AppendText into a buffer with room: %v allocations, want 0", n)
	}
}

// TestAppendC checks the numbers against what glibc's printf("%f") prints
// for them (ties to even: 0.0078125 is 2⁻⁷, exactly halfway).
func TestAppendC(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0, "0.000000"}, {math.Copysign(0, -1), "-0.000000"}, {0.0078125, "0.007812"}, {0.0234375, "0.023438"},
		{-2.5e-7, "-0.000000"}, {123456.1234565, "123456.123457"}, {1e21, "1000000000000000000000.000000"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {math.Copysign(math.NaN(), -1), "-nan"},
	} {
		if got := string(appendC(nil, c.x)); got != c.want {
			t.Errorf("appendC(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}
