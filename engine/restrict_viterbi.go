package engine

import (
	"math"
)

// The restricted Viterbi: under small per-position label sets
// (ChainOptions.Allowed, Forced) the max-plus recursion runs over the pairs
// K_{t−1}×K_t of the restricted forward–backward (its sets and pair scores:
// restrictBuf.sets, pairScores), δ and back-pointers per kept label. The
// full constrained path sets the excluded labels to −Inf and runs the
// O(M²) dense or the tied step over all M labels, though at M = 1,208 a
// pruned tagger keeps at most a few labels per position. It computes what
// the full path computes, bit for bit: s_t = emission + (start + end) as
// viterbiScores adds them (the middle rows the emissions as they are),
// δ_t[b] = max_a (δ_{t−1}[a] + (S + Δ_t)[a][b]) + s_t[b] with the sets
// taken in increasing label order and a strict >, so ties go to the
// lowest label as in every kernel tier.

// restrictViterbiKernel, restrictViterbiBounded and restrictViterbiTied
// are how many of the full constrained Viterbi's units one restricted pair
// costs: a label pair of the dense kernel (M < boundedDenseLabels); a label
// of a position for the bounded dense step; a label, plus tiedFixed per
// position, for the tied step (its cost per position is nearly flat in M:
// 0.75 µs at M = 64, 1.5 at 256, 2.7 at 1,024). The restricted path
// gathers each pair's score (tied: a pairIndex probe) into pairScores'
// block, then adds and compares it in scalar code. Measured with
// BenchmarkRestricted (go test -bench
// 'Restricted/M=.*/.*viterbi-(full|K8|K16)$' -benchtime 20x -count 3,
// medians, load ≈ 1.6 on 2 cores), ns per restricted pair (K8, K16)
// against ns per full unit: dense M = 64 7.8, 5.6 against 0.17 (46, 33);
// M = 256 10, 6.9 against 12.9 (0.8, 0.5); M = 1,024 21, 7.6 against 15.5
// (1.3, 0.5); tied (units M + tiedFixed) M = 64 17, 16 against 1.3 (13,
// 12), M = 256 23, 20 against 1.9 (12, 10), M = 1,024 22, 38 against 1.75
// (13, 22).
const restrictViterbiKernel, restrictViterbiBounded, restrictViterbiTied, tiedFixed = 40, 1, 16, 512

// restrictViterbiPays is restrictPays for Viterbi, whose full path costs
// less than forward–backward's: per position M² units for dense
// transitions below boundedDenseLabels (the kernel), M from there on, M +
// tiedFixed for tied ones.
func (tr *Transitions) restrictViterbiPays(c *ChainOptions, T int) bool {
	M := int64(tr.m)
	switch {
	case tr.tied != nil:
		return restrictCheaper(c, T, M, M+tiedFixed, restrictViterbiTied)
	case tr.m < boundedDenseLabels:
		return restrictCheaper(c, T, M, M*M, restrictViterbiKernel)
	}
	return restrictCheaper(c, T, M, M, restrictViterbiBounded)
}

// restrictedViterbi is Viterbi over the sets of c. ok is false, nothing
// written, when the chain must go to the full path: a NaN or +Inf emission
// (the full path's error), a position with no label.
func (tr *Transitions) restrictedViterbi(ws *Workspace, emit []float64, T int, c *ChainOptions, path []int32) (best float64, ok bool) {
	M := tr.m
	n := T * M
	if !noNaNPosInf(emit[:n], &ws.ones) { // −Inf allowed: excluded labels
		return 0, false
	}
	rb := &ws.rs
	if !rb.sets(c, T, M) {
		return 0, false
	}
	off, lab := rb.off[:T+1], rb.lab
	k := len(lab)
	rb.alpha, rb.bp = grow(rb.alpha, k), grow(rb.bp, k)
	tr.pairScores(rb, c, T)
	delta, bp, pw := rb.alpha, rb.bp, rb.pw
	ninf := math.Inf(-1)
	for t := range T {
		a, b := tr.zeros, tr.zeros
		if t == 0 {
			a = tr.start
		}
		if t == T-1 {
			b = tr.end
		}
		k0, k1 := off[t], off[t+1]
		cur, arg := delta[k0:k1], bp[k0:k1]
		row := emit[t*M : (t+1)*M]
		if t == 0 {
			for q, y := range lab[k0:k1] {
				cur[q] = row[y] + (a[y] + b[y])
			}
			continue
		}
		prev := delta[off[t-1]:k0]
		nb := len(cur)
		blk := pw[rb.poff[t]:rb.poff[t+1]]
		for q := range cur {
			cur[q], arg[q] = ninf, -1
		}
		// Predecessors in increasing label order, strict >: the first
		// maximum (the lowest label) wins, as in the kernels.
		for p, d := range prev {
			if d == ninf {
				continue // d + x is −Inf: never > a column's maximum
			}
			r := blk[p*nb : (p+1)*nb]
			for q, x := range r {
				if v := d + x; v > cur[q] {
					cur[q], arg[q] = v, int32(p)
				}
			}
		}
		if t == T-1 {
			for q, y := range lab[k0:k1] {
				cur[q] += row[y] + (a[y] + b[y])
			}
		} else {
			// A middle row is the emission as it is (viterbiScores'
			// copy: a −0 stays −0).
			for q, y := range lab[k0:k1] {
				cur[q] += row[y]
			}
		}
	}
	// Backtrace: the best last label (lowest on ties), then the pointers.
	// With best −Inf (no labelling) the path is not meaningful, as the
	// full path's is not.
	k0 := off[T-1]
	last := delta[k0:off[T]]
	best, q := last[0], 0
	for j := 1; j < len(last); j++ {
		if last[j] > best {
			best, q = last[j], j
		}
	}
	for t := T - 1; ; t-- {
		path[t] = lab[int(off[t])+q]
		if t == 0 {
			break
		}
		if q = int(bp[int(off[t])+q]); q < 0 {
			q = 0
		}
	}
	return best, true
}
