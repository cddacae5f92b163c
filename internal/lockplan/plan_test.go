package lockplan

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGroups: every chain in exactly one group; groups within
// their limits (chains, rows, padding).
func TestGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(56, 57))
	lens := make([]int, 500)
	for i := range lens {
		lens[i] = int(math.Exp(r.NormFloat64()*0.8 + 3)) // 1 … a few hundred
		if i%50 == 0 {
			lens[i] = 0
		}
	}
	groups := Groups(lens, 16, 3)
	seen := make([]int, len(lens))
	multi := 0
	for _, g := range groups {
		sum, longest := 0, 0
		for _, c := range g {
			seen[c]++
			sum += lens[c]
			longest = max(longest, lens[c])
		}
		if len(g) > 1 {
			multi++
			if len(g) > 16 || len(g)*longest > Rows || 4*len(g)*longest > 5*sum {
				t.Errorf("group %v (lengths %d…) breaks a limit", g, longest)
			}
			for _, c := range g {
				if lens[c] == 0 {
					t.Errorf("empty chain %d in a group", c)
				}
			}
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("chain %d in %d groups", i, n)
		}
	}
	if multi < 20 {
		t.Errorf("only %d groups of several chains", multi)
	}
	// Pool.Run's blocks (worker w: [w·n/W, (w+1)·n/W)) get similar work.
	W, n := 3, len(groups)
	var cost [3]int
	for w := range W {
		for _, g := range groups[w*n/W : (w+1)*n/W] {
			longest := 0
			for _, c := range g {
				longest = max(longest, lens[c])
			}
			if len(g) == 1 {
				cost[w] += 4 * longest
			} else {
				cost[w] += len(g) * longest
			}
		}
	}
	if lo, hi := min(cost[0], cost[1], cost[2]), max(cost[0], cost[1], cost[2]); 10*hi > 12*lo {
		t.Errorf("blocks' work %v", cost)
	}
}
