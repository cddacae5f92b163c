package model

import (
	"testing"
)

func TestAppendText(t *testing.T) {
	labels := []string{"B-NP", "I-NP", "O"}
	out := &Output{
		Labels: []int32{0, 1, 2}, Score: 3.5, LogZ: 4.25, Prob: 0.4723665527410147,
		Marginals: []float64{0.9, 0.5, 0.1234567},
		NBest: []Path{
			{Labels: []int32{0, 1, 2}, Prob: 0.4723665527410147, Marginals: []float64{0.9, 0.5, 0.1234567}},
			{Labels: []int32{0, 1, 1}, Prob: 0.25, Marginals: []float64{0.9, 0.5, 0.75}},
		},
	}
	for _, c := range []struct {
		o    TextOptions
		want string
	}{
		{TextOptions{}, "B-NP\nI-NP\nO\n\n"},
		{TextOptions{Prob: true}, "@probability\t0.472367\nB-NP\nI-NP\nO\n\n"},
		{TextOptions{Marginals: true}, "B-NP:0.900000\nI-NP:0.500000\nO:0.123457\n\n"},
		{TextOptions{NBest: 2}, "@nbest\t1\t0.472367\nB-NP\nI-NP\nO\n\n@nbest\t2\t0.250000\nB-NP\nI-NP\nI-NP\n\n"},
		{TextOptions{NBest: 2, Marginals: true}, "@nbest\t1\t0.472367\nB-NP:0.900000\nI-NP:0.500000\nO:0.123457\n\n" +
			"@nbest\t2\t0.250000\nB-NP:0.900000\nI-NP:0.500000\nI-NP:0.750000\n\n"},
	} {
		if got := string(AppendText([]byte("x"), out, labels, nil, c.o)); got != "x"+c.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", c.o, got, "x"+c.want)
		}
	}
	buf := make([]byte, 0, 1024)
	o := TextOptions{Prob: true, Marginals: true, NBest: 2}
	if n := testing.AllocsPerRun(100, func() { buf = AppendText(buf[:0], out, labels, nil, o) }); n != 0 {
		t.Errorf("AppendText into a buffer with room: %v allocations, want 0", n)
	}
}
