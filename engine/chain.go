package engine

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// ChainOptions adds to one chain what its emission scores do not say: label
// constraints and observation-dependent transition scores. A nil
// *ChainOptions adds nothing.
//
// Allowed and Forced restrict the labellings: the constrained chain's log Z,
// marginals and Viterbi labelling are those of the CRF conditioned on the
// constraint (the log Z of the clamped chain is what latent-variable
// training needs).
type ChainOptions struct {
	// Allowed, if non-nil, has one entry per position: the labels allowed
	// there, or nil for all labels.
	Allowed [][]int32
	// Forced, if non-nil, has one entry per position: the label the
	// position must take, or -1 for none (a partial labelling).
	Forced []int32
	// TransDelta, if non-nil, has one entry per position: nil, or an M×M
	// matrix added to the transition scores into that position (entry t
	// scores the transition from position t−1 to t; entry 0 is unused).
	// These are CRF++ B templates that read the observations, Wapiti's
	// bigram patterns. Chains with deltas run in the log domain.
	TransDelta [][]float64
}

func (c *ChainOptions) check(T, M int) error {
	if c == nil {
		return nil
	}
	if c.TransDelta != nil {
		if len(c.TransDelta) != T {
			return fmt.Errorf("engine: %d transition deltas for %d positions", len(c.TransDelta), T)
		}
		for t, d := range c.TransDelta {
			if d == nil {
				continue
			}
			if len(d) != M*M {
				return fmt.Errorf("engine: transition delta at position %d has %d entries, want %d", t, len(d), M*M)
			}
			// One SIMD sum of squares is finite when every entry is
			// (−Inf entries, which are allowed, make it +Inf: then scan).
			if sq := kernels.Dot(d, d); sq <= math.MaxFloat64 {
				continue
			}
			for k, v := range d {
				if v != v || v > math.MaxFloat64 {
					return fmt.Errorf("engine: transition delta [%d][%d][%d] is %v", t, k/M, k%M, v)
				}
			}
		}
	}
	if c.Allowed != nil && len(c.Allowed) != T {
		return fmt.Errorf("engine: constraint has %d allowed sets for %d positions", len(c.Allowed), T)
	}
	if c.Forced != nil && len(c.Forced) != T {
		return fmt.Errorf("engine: constraint forces %d positions of %d", len(c.Forced), T)
	}
	for t, set := range c.Allowed {
		for _, y := range set {
			if y < 0 || int(y) >= M {
				return fmt.Errorf("engine: position %d allows label %d of %d", t, y, M)
			}
		}
	}
	for t, y := range c.Forced {
		if y < -1 || int(y) >= M {
			return fmt.Errorf("engine: position %d forced to label %d of %d", t, y, M)
		}
	}
	return nil
}

// delta returns the transition delta into position t, or nil.
func (c *ChainOptions) delta(t int) []float64 {
	if c == nil || c.TransDelta == nil {
		return nil
	}
	return c.TransDelta[t]
}

func (c *ChainOptions) hasDelta() bool {
	if c == nil {
		return false
	}
	for _, d := range c.TransDelta {
		if d != nil {
			return true
		}
	}
	return false
}

// apply sets the scores of labels the constraint excludes to -Inf in s.
// mark is scratch of M entries, vals scratch for a set's scores: a set
// that fits in vals has its scores saved, the row filled with −Inf (a
// doubling copy) and the scores put back, instead of a marked scan of
// every label (a tenth of tagging the pooled candidate-label model).
func (c *ChainOptions) apply(s []float64, T, M int, mark []int32, vals []float64) {
	if c == nil {
		return
	}
	ninf := math.Inf(-1)
	for j := range mark[:M] {
		mark[j] = -1
	}
	for t := range T {
		row := s[t*M : (t+1)*M]
		if c.Forced != nil && c.Forced[t] >= 0 {
			keep := c.Forced[t]
			v := row[keep]
			fill(row, ninf)
			row[keep] = v
		}
		if set := c.Allowed; set != nil && set[t] != nil && len(set[t]) <= len(vals) {
			kv := vals[:len(set[t])]
			for k, y := range set[t] {
				kv[k] = row[y]
			}
			fill(row, ninf)
			for k, y := range set[t] {
				row[y] = kv[k]
			}
		} else if c.Allowed != nil && c.Allowed[t] != nil {
			for _, y := range c.Allowed[t] {
				mark[y] = int32(t)
			}
			for j := range row {
				if mark[j] != int32(t) {
					row[j] = ninf
				}
			}
		}
	}
}
