package engine

import "slices"

// The restricted-label forward–backward: when every position allows a few
// labels K_t (ChainOptions.Allowed, Forced), the recursion runs over the
// pairs K_{t−1}×K_t alone, O(Σ_t |K_{t−1}|·|K_t|) per chain, instead of
// setting the excluded labels' scores to −Inf and running the O(M²) (dense)
// or O(M + exceptions) (tied) step over all labels. Candidate labels and
// the pruned training of package train (MarMoT-style: a few labels per
// position out of M = 1,208) are its users. It answers what the constrained
// path answers (to rounding), and hands the chain back to it whenever its
// own scaled recursion might lose precision (a position's scores or a
// column of a step spreading wider than scaledRange, no labelling, a NaN,
// ±Inf or −Inf emission), so the exact path's log domain and errors stay
// the single source of those cases.

// restrictBuf is the restricted path's part of a Workspace. Position t's
// labels are lab[off[t]:off[t+1]] (increasing, no duplicates), its local
// scores, ψ, α and β in the same layout; the pair weights into position t
// (t ≥ 1) are pw[poff[t]:poff[t+1]], row-major |K_{t−1}|×|K_t|, and pk
// their tied exception indices (−1: the default).
type restrictBuf struct {
	off, lab     []int32
	s, alpha     []float64
	beta, w      []float64
	scale, shift []float64
	poff         []int32
	pw           []float64
	pk           []int32
	mark         []bool  // M: scratch of the set building, all false between calls
	bp           []int32 // Viterbi's back-pointers: an index into K_{t−1}, −1: none
}

// restrictDense and restrictTied are how many of the full path's units
// (one label pair of a dense step; one label or exception of a tied step)
// one restricted pair costs: the restricted path gathers each pair's score
// (a likely cache miss at large M: the matrix is 8 MB at M = 1,024) or
// looks up its exception, exponentiates it and walks it three times in
// scalar code, where the dense full path's units are vector lanes
// streaming in order and the tied one's are gathers too. Measured with
// BenchmarkRestricted (load ≈ 4 on 2 cores), ns per restricted pair
// against ns per full unit: dense M = 256, K = 64: 8.0 against 0.49 (16:
// the two paths take the same time there), M = 1,024, K = 64: 37 against
// 1.02 (36); tied (12 exceptions per column) M = 256, K = 16: 33 against
// 6.9 (4.8), M = 1,024, K = 32: 29 against 7.2 (4.0).
const restrictDense, restrictTied = 24, 4

// restrictOff turns the restricted path off (tests and benchmarks compare
// it with the constrained full path through the public calls);
// restrictAlways takes it whatever it costs (benchmarks measure its cost
// per pair).
var restrictOff, restrictAlways bool

// restrictPays reports whether the restricted path is cheaper than the
// full one for a chain of T positions under c: Σ_t |K_{t−1}|·|K_t| pairs
// (|K_t| = M for a free position) against T·M² for dense transitions or
// T·(M + exceptions) for tied ones, at restrictDense or restrictTied full units per pair.
func (tr *Transitions) restrictPays(c *ChainOptions, T int) bool {
	M := int64(tr.m)
	if tr.tied != nil {
		return restrictCheaper(c, T, M, M+int64(len(tr.tied.exc)), restrictTied)
	}
	return restrictCheaper(c, T, M, M*M, restrictDense)
}

// restrictCheaper reports whether Σ_t |K_{t−1}|·|K_t| pairs at ratio full
// units each cost less than T·full units, over M labels.
func restrictCheaper(c *ChainOptions, T int, M, full, ratio int64) bool {
	if restrictOff || c == nil || c.Allowed == nil || T == 0 {
		return false
	}
	if restrictAlways {
		return true
	}
	budget := int64(T) * full
	var pairs int64
	prev := int64(0)
	for t := range T {
		n := M
		if set := c.Allowed[t]; set != nil {
			n = int64(len(set))
		}
		if c.Forced != nil && c.Forced[t] >= 0 {
			n = 1
		}
		if t == 0 {
			pairs += n
		} else {
			pairs += prev * n
		}
		prev = n
		if pairs*ratio > budget {
			return false
		}
	}
	return true
}

// pairIndex finds a tied structure's exceptions by label pair: an
// open-addressing hash table (linear probing, at most half full) of keys
// i·M + j + 1 (0: empty) and exception indices. A binary search in
// per-row sorted lists was 45 % of the restricted path's time at M = 256
// with 12 exceptions per row (BenchmarkRestricted tied-K8): its branches
// mispredict; a probe is one multiply and, mostly, one compare.
type pairIndex struct {
	keys  []uint64
	k     []int32
	shift uint
	m     uint64
}

// newPairIndex indexes n distinct pairs of labels in [0, m): pair(k) is
// the k-th, found as k.
func newPairIndex(m, n int, pair func(k int) (i, j int32)) *pairIndex {
	bits := uint(1)
	for 1<<bits < 2*n {
		bits++
	}
	px := &pairIndex{keys: make([]uint64, 1<<bits), k: make([]int32, 1<<bits), shift: 64 - bits, m: uint64(m)}
	mask := uint64(len(px.keys) - 1)
	for k := range n {
		i, j := pair(k)
		key := uint64(i)*px.m + uint64(j) + 1
		h := (key * 0x9E3779B97F4A7C15) >> px.shift
		for px.keys[h] != 0 {
			h = (h + 1) & mask
		}
		px.keys[h], px.k[h] = key, int32(k)
	}
	return px
}

// find returns the index of the pair i→j (the exception's, for a tied
// structure), or −1.
func (px *pairIndex) find(i, j int32) int32 {
	key := uint64(i)*px.m + uint64(j) + 1
	mask := uint64(len(px.keys) - 1)
	for h := (key * 0x9E3779B97F4A7C15) >> px.shift; ; h = (h + 1) & mask {
		switch px.keys[h] {
		case key:
			return px.k[h]
		case 0:
			return -1
		}
	}
}

// pairIndex returns the tied structure's pairIndex, made on first use
// (safe for concurrent callers): SetTied keeps the exception pairs, so it
// stays valid for tr's life.
func (tr *Transitions) pairIndex() *pairIndex {
	if px := tr.pairs.Load(); px != nil {
		return px
	}
	exc := tr.tied.exc
	px := newPairIndex(tr.m, len(exc), func(n int) (int32, int32) { return exc[n].From, exc[n].To })
	if tr.pairs.CompareAndSwap(nil, px) {
		return px
	}
	return tr.pairs.Load()
}

// sets fills rb.off and rb.lab with each position's labels under c (not
// nil; Forced and Allowed together; all M for a free position), increasing
// and without duplicates, and returns false if a position allows none.
func (rb *restrictBuf) sets(c *ChainOptions, T, M int) bool {
	rb.off = grow(rb.off, T+1)
	rb.lab = rb.lab[:0]
	if len(rb.mark) < M {
		rb.mark = make([]bool, M)
	}
	for t := range T {
		rb.off[t] = int32(len(rb.lab))
		var set []int32
		if c.Allowed != nil {
			set = c.Allowed[t]
		}
		forced := int32(-1)
		if c.Forced != nil {
			forced = c.Forced[t]
		}
		switch {
		case forced >= 0:
			if set == nil || slices.Contains(set, forced) {
				rb.lab = append(rb.lab, forced)
			}
		case set == nil:
			for j := range int32(M) {
				rb.lab = append(rb.lab, j)
			}
		case increasing(set):
			rb.lab = append(rb.lab, set...)
		default:
			// Drop duplicates (marked as seen, unmarked after), then
			// sort.
			start := len(rb.lab)
			for _, y := range set {
				if !rb.mark[y] {
					rb.mark[y] = true
					rb.lab = append(rb.lab, y)
				}
			}
			got := rb.lab[start:]
			for _, y := range got {
				rb.mark[y] = false
			}
			slices.Sort(got)
		}
		if int(rb.off[t]) == len(rb.lab) {
			return false
		}
	}
	rb.off[T] = int32(len(rb.lab))
	return true
}

func increasing(s []int32) bool {
	for k := 1; k < len(s); k++ {
		if s[k] <= s[k-1] {
			return false
		}
	}
	return true
}

// pairScores fills rb.poff and rb.pw (and rb.pk for tied transitions)
// with the scores S[i][j] + Δ_t[i][j] of the pairs K_{t−1}×K_t of the sets
// rb.sets made, and returns their count. Shared by the restricted
// forward–backward and Viterbi.
func (tr *Transitions) pairScores(rb *restrictBuf, c *ChainOptions, T int) int {
	M := tr.m
	off, lab := rb.off[:T+1], rb.lab
	rb.poff = grow(rb.poff, T+1)
	np := 0
	rb.poff[0] = 0 // (unused: position 0 has no pairs into it)
	if T > 1 {
		rb.poff[1] = 0
	}
	for t := 1; t < T; t++ {
		np += int(off[t]-off[t-1]) * int(off[t+1]-off[t])
		rb.poff[t+1] = int32(np)
	}
	rb.pw = grow(rb.pw, np)
	var px *pairIndex
	var exc []Exception
	if tr.tied != nil {
		px = tr.pairIndex()
		exc = tr.tied.exc
		rb.pk = grow(rb.pk, np)
	}
	pw := rb.pw
	for t := 1; t < T; t++ {
		d := c.delta(t)
		pl := lab[off[t-1]:off[t]]
		cl := lab[off[t]:off[t+1]]
		nb := len(cl)
		blk := pw[rb.poff[t]:rb.poff[t+1]]
		for a, i := range pl {
			out := blk[a*nb : (a+1)*nb]
			if px != nil {
				ks := rb.pk[int(rb.poff[t])+a*nb:][:nb]
				for b, j := range cl {
					e := px.find(i, j)
					ks[b] = e
					if e >= 0 {
						out[b] = exc[e].Score
					} else {
						out[b] = tr.tied.def
					}
				}
			} else {
				srow := tr.score[int(i)*M : (int(i)+1)*M]
				for b, j := range cl {
					out[b] = srow[j]
				}
			}
			if d != nil {
				drow := d[int(i)*M : (int(i)+1)*M]
				for b, j := range cl {
					out[b] += drow[j]
				}
			}
		}
	}
	return np
}
