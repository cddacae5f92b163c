// Package sentinel holds the one rule by which the scaled forward passes
// (package engine's float32 and float64 ones, the CRF layer's clamped
// scores) leave out transition scores far below the rest.
//
// A transition score more than Gap below the largest one is a sentinel
// ("impossible", as −1e4 … −1e9 are meant): exp of it is 0 in the scaled
// domain anyway, so leaving it out of the range keeps such matrices on the
// scaled path; the pass then checks with Negligible that the labellings it
// dropped weigh nothing.
package sentinel

import "math"

// Gap is how far below the largest transition score one must be to count
// as a sentinel.
const Gap = 1000

// Negligible reports whether log Z of a chain of L positions over M labels
// may leave out the labellings through sentinels: each scores at most
// bound − minGap (bound bounds every labelling's score, minGap is the
// smallest gap of a sentinel below it; +Inf when there is none), and there
// are at most M^L of them, so they weigh under e^-40 of Z when log Z is at
// least that plus L·log M + 40.
func Negligible(logZ, bound, minGap float64, L, M int) bool {
	return math.IsInf(minGap, 1) || logZ >= bound-minGap+float64(L)*math.Log(float64(M))+40
}
