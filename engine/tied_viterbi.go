package engine

import (
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// viterbi is the tied Viterbi recursion, bit-identical to the dense kernel.
// The best non-exception predecessor of column j is the first index, in
// order of decreasing δ (ties: lower index first), that is not one of
// column j's exceptions. Each step finds the top entries of δ, gives every
// column the first of them as its default candidate, repairs the few
// columns where that entry is an exception (the first entry's row of
// exceptions says which), then scores all exceptions in one
// kernels.Rows.MaxPlus call (one flat pass over them where that kernel
// has no vector tier or the columns have few exceptions): O(M·log K +
// exceptions) per step. Where δ bounds the rows that can win to a few
// (bounded: a trained model's sharp δ), a step scores only their
// exceptions: O(M + those rows' exceptions).
func (tf *tiedForm) viterbi(delta []float64, bp []int32, s []float64, T, M int, top, mark, cand []int32, scr []float64) {
	copy(delta[:M], s[:M])
	// A short top list: defaultFor takes its first entry that is not an
	// exception of the column. Longer where columns have many exceptions
	// (a trained model's likely transitions: the best predecessors are
	// then exceptions of most columns, and the longer list spares most
	// steps the long one below). Tagging UD Czech's fictree test (M =
	// 1,208, 12 exceptions per column) took 431 ms with 4 entries, 384 with
	// 8; the engine benchmark's 2 per column lost 15 % with 8.
	K := min(tf.maxCol+1, M, shortTop)
	if len(tf.colI) >= denseTopPerCol*M {
		K = min(tf.maxCol+1, M, longShortTop)
	}
	// Level k's marks say, in step t, of which columns top[k] is an
	// exception (see topLevels); they and the scan's marks are cleared on
	// first use in the call.
	lv := topLevels{mark: mark[:K*M], m: M}
	useDef := !math.IsInf(tf.def, -1)
	// The rest of top is a longer list, made only in the steps that need
	// it (with a thousand labels, the best few predecessors are exceptions
	// of many columns, and each such column scanned all of prev).
	long := top[K:]
	ninf := math.Inf(-1)
	// The max-plus kernel costs a few ns per column whatever its length,
	// the flat loop about 1 ns per exception when few of them beat the
	// column's candidate and several when many do (a mispredicted branch
	// each). Measured at M = 1,024 (ns per step, AVX-512 kernel vs flat):
	// uniform N(0,1) exceptions to a default of 0, 1 per column 6,062 vs
	// 3,387, 4 per column 6,325 vs 6,407, 12 per column 9,182 vs 13,737;
	// to a default of −8 (trained models: the exceptions are the likely
	// transitions), 2 per column 6,201 vs 9,218, 12 per column 9,756 vs
	// 38,221. So the kernel from 4 exceptions per column on average.
	vec := kernels.MaxPlusCSRVector() && len(tf.colI) >= maxPlusMinPerCol*M
	for t := 1; t < T; t++ {
		prev, cur, arg := delta[(t-1)*M:t*M], delta[t*M:(t+1)*M], bp[t*M:(t+1)*M]
		st := s[t*M : (t+1)*M]
		if useDef && tf.bounded(prev, cur, arg, cand, scr, &lv, int32(t), K) {
			// No column is −Inf after a bounded step: the emission is
			// added in vector lanes (1·s + δ is s + δ, bit for bit).
			kernels.Axpy(1, st, cur)
			continue
		}
		tf.fullStep(prev, cur, arg, top[:K], long, &lv, int32(t), vec, useDef)
		for j, v := range cur {
			if v == ninf {
				arg[j] = 0 // every candidate is -Inf: the dense kernel keeps i = 0
			}
			cur[j] = v + st[j]
		}
	}
}

// fullStep is a tied Viterbi step over every row: the default candidate of
// each column from top (the first K of a top list of prev, made here) and
// long (a longer one, made if needed), then every exception, by
// kernels.Rows.MaxPlus where vec, else in one flat pass. Without
// useDef (a default of −Inf) every column starts at −Inf.
func (tf *tiedForm) fullStep(prev, cur []float64, arg []int32, top, long []int32, lv *topLevels, t int32, vec, useDef bool) {
	if useDef {
		n := topK(prev, top)
		lv.made = 0
		ds := defaultScan{prev: prev, top: top[:n], long: long, nl: -1, lv: lv, t: t}
		i0 := top[0]
		v0 := prev[i0] + tf.def
		for j := range cur {
			cur[j], arg[j] = v0, i0
		}
		// Columns in which i0 is an exception need another default.
		for _, j := range tf.rowJ[tf.rowPtr[i0]:tf.rowPtr[i0+1]] {
			cur[j], arg[j] = tf.defaultFor(&ds, j)
		}
	} else {
		ninf := math.Inf(-1)
		for j := range cur {
			cur[j], arg[j] = ninf, -1
		}
	}
	// Every exception: each column's default candidate is replaced by
	// a better one, or an equal one with a lower index (column j's
	// exceptions are in increasing i, so this is the dense kernel's
	// strict > in increasing i).
	if vec {
		// All columns in one call (index arrays built and checked
		// once, in index).
		tf.colRows.MaxPlus(cur, arg, prev, tf.colS)
		return
	}
	// Without a vector tier, or with few exceptions per column,
	// one flat pass in column order (the generic kernel's loop
	// per column mispredicts its exit at nearly every column).
	colS, colJ := tf.colS, tf.colJ[:len(tf.colS)]
	for k, i := range tf.colI[:len(colS)] {
		j := colJ[k]
		c, best := prev[i]+colS[k], cur[j]
		if c > best || (c == best && (arg[j] < 0 || i < arg[j])) {
			cur[j], arg[j] = c, i
		}
	}
}

// bounded is the tied Viterbi step over the rows that can win, when there
// are at most len(cand) of them: it returns false, doing nothing, when
// there are more (or δ is all −Inf), and the caller runs the full step.
//
// Every column j gets from row b = argmax_i (δ[i] + rowLo[i]) a candidate
// of at least LB = δ[b] + rowLo[b] (rowLo[i] is the lowest score of row
// i, the default included), so its best is at least LB; a row whose every
// candidate is below LB, δ[i] + rowHi[i] < LB, can neither win a column
// nor tie with its winner. With a trained model's scores (a sharp δ: a few
// labels fit the word) a handful of rows is left of 1,208, so the step
// scores those rows' exceptions instead of all of them, and needs no top
// list of δ: the kept rows in order of decreasing δ (ties: lower index
// first) serve as one, and the best default candidate of a column is the
// first of them that is not its exception (defaultFor), as in the full
// step. The winner of each column is then the full step's, bit for bit:
// the same candidates, the same sums, the same tie rule.
//
// scr is scratch of M+2 entries.
func (tf *tiedForm) bounded(prev, cur []float64, arg []int32, cand []int32, scr []float64, lv *topLevels, t int32, K int) bool {
	nc, ok := winRows(prev, tf.rowLo, tf.rowHi, cand, scr)
	if !ok {
		return false
	}
	// In order of decreasing δ, ties by increasing index (insertion sort
	// of a list made in index order: stable).
	c := cand[:nc]
	for k := 1; k < nc; k++ {
		x := c[k]
		v, p := prev[x], k
		for p > 0 && v > prev[c[p-1]] {
			c[p] = c[p-1]
			p--
		}
		c[p] = x
	}
	i0 := c[0]
	fill(cur, prev[i0]+tf.def)
	fill(arg, i0)
	// Columns in which i0 is an exception take the first later kept row
	// that is not one (levels of lv as in the full step; past them the
	// rest of c is the long list), except where the exception from i0
	// beats every other kept row's default (δ[c[1]] + d bounds them): it
	// wins such a column outright and is scored with the others below.
	lv.made = 0
	k := min(K, nc)
	ds := defaultScan{prev: prev, top: c[:k], long: c[k:], nl: nc - k, lv: lv, t: t, kept: true}
	ninf := math.Inf(-1)
	next := ninf
	if nc > 1 {
		next = prev[c[1]] + tf.def
	}
	p0 := prev[i0]
	r0 := tf.rowPtr[i0]
	rs0 := tf.rowS[r0:tf.rowPtr[i0+1]]
	for x, j := range tf.rowJ[r0:tf.rowPtr[i0+1]] {
		if p0+rs0[x] > next {
			cur[j], arg[j] = ninf, -1
			continue
		}
		cur[j], arg[j] = tf.defaultFor(&ds, j)
	}
	// The kept rows' exceptions, with the tie rule of the full step.
	for _, i := range c {
		p := prev[i]
		rj, rs := tf.rowJ[tf.rowPtr[i]:tf.rowPtr[i+1]], tf.rowS[tf.rowPtr[i]:tf.rowPtr[i+1]]
		rs = rs[:len(rj)]
		for x, j := range rj {
			v, b := p+rs[x], cur[j]
			if v > b || (v == b && (arg[j] < 0 || i < arg[j])) {
				cur[j], arg[j] = v, i
			}
		}
	}
	return true
}

// topLevels marks, level by level, the columns of which the entries
// top[1], top[2], … of a step's short top list are exceptions: level k is
// made from top[k]'s row of exceptions the first time a column asks about
// it in the step, so that each question costs O(1) instead of a scan of the
// column's exceptions (with a thousand labels the best predecessor is an
// exception of hundreds of columns, each with a dozen exceptions or more).
type topLevels struct {
	mark    []int32 // K·m: the scan's marks at [0, m), level k's at [k·m, (k+1)·m)
	m       int
	made    int    // levels made in this step: 1..made
	cleared uint32 // bit k: region k cleared in this call
}

// region returns region k of the marks, cleared to −1 on first use.
func (lv *topLevels) region(k int) []int32 {
	r := lv.mark[k*lv.m : (k+1)*lv.m]
	if lv.cleared&(1<<k) == 0 {
		for i := range r {
			r[i] = -1
		}
		lv.cleared |= 1 << k
	}
	return r
}

// defaultScan is what defaultFor reads of one tied Viterbi step, the same
// for every column it asks about.
type defaultScan struct {
	prev      []float64 // δ of the previous position
	top, long []int32   // the step's short and long top lists of prev
	nl        int       // entries of long made in the step; −1: not made yet
	lv        *topLevels
	t         int32 // the step
	kept      bool  // top and long are the bounded step's kept rows
}

// defaultFor returns the best default-scored candidate of column j in step
// ds.t, of which top[0] is an exception: the first later top entry that is
// not an exception of j (lv says, level by level), or, when every top
// entry is one, the first such entry of long, a longer top list of prev
// made on first use in the step (ds.nl entries), or, when every entry of
// long is one too, the best unmarked entry of all of prev (-Inf, −1 if
// none). The lists are in order of decreasing δ, ties by increasing index,
// so each gives the answer a scan of all of prev would. With kept, top and
// long are the bounded step's kept rows, outside which no row can win:
// when every one of them is an exception of j, it returns −Inf, −1 without
// the scan (one of their exceptions wins the column).
func (tf *tiedForm) defaultFor(ds *defaultScan, j int32) (float64, int32) {
	prev, top, long, lv, t, kept := ds.prev, ds.top, ds.long, ds.lv, ds.t, ds.kept
	M := len(prev)
	id := t*int32(M) + j // this column's marks in region 0
	for k := 1; k < len(top); k++ {
		lm := lv.region(k)
		if k > lv.made {
			i := top[k]
			for _, c := range tf.rowJ[tf.rowPtr[i]:tf.rowPtr[i+1]] {
				lm[c] = t
			}
			lv.made = k
		}
		if lm[j] != t {
			return prev[top[k]] + tf.def, top[k]
		}
	}
	if len(top) == M || (kept && len(long) == 0) { // every label (kept row) is an exception of j
		return math.Inf(-1), -1
	}
	mark := lv.region(0)
	for _, e := range tf.colI[tf.colPtr[j]:tf.colPtr[j+1]] {
		mark[e] = id
	}
	if len(long) > 0 {
		if ds.nl < 0 {
			ds.nl = topK(prev, long)
		}
		for _, i := range long[:ds.nl] {
			if mark[i] != id {
				return prev[i] + tf.def, i
			}
		}
		if ds.nl == M || kept {
			return math.Inf(-1), -1
		}
	}
	bi := int32(-1)
	for i := range int32(M) {
		if mark[i] != id && (bi < 0 || prev[i] > prev[bi]) {
			bi = i
		}
	}
	if bi < 0 {
		return math.Inf(-1), -1
	}
	return prev[bi] + tf.def, bi
}

// maxPlusMinPerCol is the average number of exceptions per column from
// which the tied Viterbi scores them with kernels.Rows.MaxPlus (where
// it has a vector tier) rather than its flat loop: see viterbi.
const maxPlusMinPerCol = 4

// maxTop caps the top list of the tied Viterbi (the workspace's order
// buffer); shortTop is the length of its short list, longShortTop that
// length where columns average denseTopPerCol exceptions or more.
const maxTop, shortTop, longShortTop, denseTopPerCol = 64, 4, 8, 8

// maxBounded is the most rows the bounded tied Viterbi step keeps (see
// tiedForm.bounded); with more, the step scores every exception.
const maxBounded = 64

// topK writes to top the indices of the len(top) largest entries of v in
// order of decreasing value, ties by increasing index, and returns how many
// it wrote (fewer only when len(v) < len(top)).
func topK(v []float64, top []int32) int {
	n := 0
	// thr is the smallest kept value once top is full: most entries fall
	// below it and cost one compare.
	thr := math.Inf(-1)
	for i, x := range v {
		if n == len(top) && !(x > thr) {
			continue
		}
		// Insert after every entry ≥ x (earlier indices win ties).
		p := n
		if n == len(top) {
			p = n - 1
		} else {
			n++
		}
		for p > 0 && x > v[top[p-1]] {
			top[p] = top[p-1]
			p--
		}
		top[p] = int32(i)
		if n == len(top) {
			thr = v[top[n-1]]
		}
	}
	return n
}

// winRows puts in cand, in increasing index, the rows i of a max-plus step
// from prev that can win a column or tie with its winner:
// δ[i] + rowHi[i] ≥ LB = max_i δ[i] + rowLo[i] (see tiedForm.bounded). It
// returns their count, or false (the count unspecified) with more than
// len(cand) of them or no finite LB. scr is scratch of M+2 entries: LB is
// ShiftRows' row maximum (to scr[M]; its shifted row goes to scr[:M],
// unused; scr[M+1] takes its smallest entry), and arrays on the stack
// would escape through the kernel's call.
func winRows(prev, rowLo, rowHi []float64, cand []int32, scr []float64) (int, bool) {
	M := len(prev)
	hi := rowHi[:M]
	lb := scr[M : M+1]
	kernels.ShiftRows(scr[:M], lb, scr[M+1:M+2], prev, rowLo, 1, M)
	bound := lb[0]
	if !(bound > math.Inf(-1) && bound < math.Inf(1)) {
		return 0, false
	}
	// The rows that can win are few: a vector select, not a scalar pass.
	return kernels.SelectSumGE(cand, prev, hi, bound)
}
