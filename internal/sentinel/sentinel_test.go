package sentinel

import (
	"math"
	"testing"
)

// TestNegligible: no sentinel is always negligible; otherwise log Z must
// reach bound − minGap + L·log M + 40, and NaN never does.
func TestNegligible(t *testing.T) {
	if !Negligible(math.NaN(), 0, math.Inf(1), 3, 4) || !Negligible(-1e9, 0, math.Inf(1), 3, 4) {
		t.Error("no sentinels: not negligible")
	}
	edge := 10 - 2000 + 3*math.Log(4) + 40
	for _, c := range []struct {
		logZ float64
		want bool
	}{{edge, true}, {edge + 1, true}, {edge - 1e-9, false}, {math.NaN(), false}} {
		if got := Negligible(c.logZ, 10, 2000, 3, 4); got != c.want {
			t.Errorf("log Z %v: %v, want %v", c.logZ, got, c.want)
		}
	}
}
