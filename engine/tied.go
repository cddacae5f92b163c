package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/simdcrf/simdcrf/kernels"
)

// Structure is how the engine stores and uses a transition matrix.
type Structure int

const (
	// Auto picks Tied when the matrix has few exceptions to its most
	// common value and the label count makes that pay (see tiedPays), else
	// Dense.
	Auto Structure = iota
	// Dense runs the O(M²) kernels at every step.
	Dense
	// Tied (Cohn 2006) keeps one default score shared by all label pairs
	// plus a sparse list of exceptions, so forward, backward, expected
	// counts and Viterbi cost O(M + exceptions) per step instead of O(M²).
	// A default of -Inf is the forbidden-transitions structure: the
	// exceptions are then the allowed transitions.
	Tied
)

func (s Structure) String() string {
	switch s {
	case Dense:
		return "dense"
	case Tied:
		return "tied"
	}
	return "auto"
}

// Exception is a transition whose score differs from the tied default.
type Exception struct {
	From, To int32
	Score    float64
}

// tiedForm is the sparse form of a transition matrix: default d plus
// exceptions, by column (for forward and Viterbi) and by row (backward).
type tiedForm struct {
	def  float64
	exc  []Exception // as given or found, in row-major order
	dcol []float64   // D_j = exp(d − c_j)
	ones []float64   // M ones: kernels.Dot(x, ones) is Σ x in vector lanes
	// column j's exceptions are colI/colV/colS[colPtr[j]:colPtr[j+1]]:
	// previous label i, E_ij − D_j, and the score S_ij; colK maps each to
	// its index in exc.
	colPtr     []int32
	colI, colK []int32
	colV, colS []float64
	colJ       []int32   // the column of each entry (flat passes)
	colE       []float64 // exp(score − c_j) of each entry: counts reads it in order, not from the M×M matrix
	// row i's exceptions: next label, E_ij − D_j, and the index in exc.
	rowPtr     []int32
	rowJ, rowK []int32
	rowV       []float64
	rowS       []float64 // the score S_ij of each (the bounded Viterbi step)
	// rowLo[i] and rowHi[i] are the lowest and highest scores of row i
	// over all M columns (the default included unless the row is all
	// exceptions): the bounded Viterbi step's bounds.
	rowLo, rowHi []float64
	maxCol       int // most exceptions in one column
}

// Options configures NewTransitionsWith.
type Options struct {
	// Structure forces Dense or Tied; Auto (the zero value) chooses.
	Structure Structure
}

// NewTransitionsWith is NewTransitions with options.
func NewTransitionsWith(m int, score, start, end []float64, o Options) (*Transitions, error) {
	tr, err := NewTransitions(m, score, start, end)
	if err != nil {
		return nil, err
	}
	switch o.Structure {
	case Dense:
		tr.tied = nil
	case Tied:
		if tr.tied == nil {
			tr.tied = buildTied(tr, mostCommon(tr.score))
		}
	}
	return tr, nil
}

// NewTied makes Transitions over m labels where every transition scores def
// except the listed exceptions (at most one per label pair), with optional
// start and end scores. It uses the Tied structure.
func NewTied(m int, def float64, exc []Exception, start, end []float64) (*Transitions, error) {
	if m < 1 {
		return nil, fmt.Errorf("engine: %d labels; need at least 1", m)
	}
	if err := checkDefault(def); err != nil {
		return nil, err
	}
	// The matrix is filled by doubling copies and the pairs checked
	// against a bit per entry: with UD Czech's 1,208 labels (1.46M
	// entries, 14,718 exceptions) a map of the pairs, a second copy of the
	// matrix and scans of it for the column maxima and for the exceptions
	// took about half of the CPU time of loading the model (a tag run of
	// one sentence: 0.055 s, now 0.03 s).
	score := make([]float64, m*m)
	fill(score, def)
	seen := make([]uint64, (m*m+63)/64)
	for _, e := range exc {
		if e.From < 0 || int(e.From) >= m || e.To < 0 || int(e.To) >= m {
			return nil, fmt.Errorf("engine: exception %d→%d is out of range for %d labels", e.From, e.To, m)
		}
		at := int(e.From)*m + int(e.To)
		if seen[at/64]&(1<<(at%64)) != 0 {
			return nil, fmt.Errorf("engine: exception %d→%d given twice", e.From, e.To)
		}
		seen[at/64] |= 1 << (at % 64)
		score[at] = e.Score
	}
	tr := &Transitions{m: m, score: score, lazy: new(lazyForms)}
	var err error
	if tr.start, err = vecOrZero("start", start, m); err != nil {
		return nil, err
	}
	if tr.end, err = vecOrZero("end", end, m); err != nil {
		return nil, err
	}
	for _, e := range exc {
		if math.IsNaN(e.Score) || math.IsInf(e.Score, 1) {
			return nil, fmt.Errorf("engine: transition score [%d][%d] is %v", e.From, e.To, e.Score)
		}
	}
	// Keep exactly the given exceptions (even those equal to def), in the
	// caller's order, so that Posteriors.Tied indexes match.
	tr.tied = &tiedForm{def: def, exc: slices.Clone(exc)}
	tr.tied.index(tr)
	tr.derive() // from the exceptions (tiedForm.cols)
	tr.tied.values(tr)
	return tr, nil
}

// checkDefault checks a tied default score as NewTransitions checks every
// score: −Inf (forbidden) is allowed, NaN and +Inf are not.
func checkDefault(def float64) error {
	if math.IsNaN(def) || math.IsInf(def, 1) {
		return fmt.Errorf("engine: tied default score is %v", def)
	}
	return nil
}

// SetTied replaces the scores of a Tied Transitions in place, keeping its
// exceptions (which label pairs they are, and their order): def is the new
// default, scores[k] the new score of exception k in Exceptions order, start
// and end as in NewTied (nil means zero). The values are checked as NewTied
// checks them. It recomputes the derived forms into the existing buffers, so
// it does not allocate, and leaves tr exactly as NewTied would make it from
// the same exceptions with these scores. On error tr is unchanged. It
// returns an error for the Dense structure (use SetScores). No call on tr
// may run at the same time.
func (tr *Transitions) SetTied(def float64, scores, start, end []float64) error {
	tf := tr.tied
	if tf == nil {
		return errors.New("engine: SetTied on the Dense structure; use SetScores")
	}
	m := tr.m
	if err := checkDefault(def); err != nil {
		return err
	}
	if len(scores) != len(tf.exc) {
		return fmt.Errorf("engine: %d exception scores, want %d", len(scores), len(tf.exc))
	}
	for k, v := range scores {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			e := tf.exc[k]
			return fmt.Errorf("engine: transition score [%d][%d] is %v", e.From, e.To, v)
		}
	}
	if err := checkVec("start", start, m); err != nil {
		return err
	}
	if err := checkVec("end", end, m); err != nil {
		return err
	}
	for k := range tr.score {
		tr.score[k] = def
	}
	for k, v := range scores {
		e := &tf.exc[k]
		e.Score = v
		tr.score[int(e.From)*m+int(e.To)] = v
	}
	copyOrZero(tr.start, start)
	copyOrZero(tr.end, end)
	tf.def = def
	tr.derive()
	tf.values(tr)
	return nil
}

// Structure reports the structure in use.
func (tr *Transitions) Structure() Structure {
	if tr.tied != nil {
		return Tied
	}
	return Dense
}

// Exceptions returns the exceptions of a Tied structure (nil for Dense) and
// its default score. Posteriors.Tied indexes follow this order. The slice is
// tr's own: read it, do not change it (SetTied changes its scores).
func (tr *Transitions) Exceptions() (def float64, exc []Exception) {
	if tr.tied == nil {
		return 0, nil
	}
	return tr.tied.def, tr.tied.exc
}

// mostCommon returns the most frequent of the likely defaults: -Inf, 0 and
// the first and last entries (counting them is O(M²) without a map).
func mostCommon(score []float64) float64 {
	cands := []float64{math.Inf(-1), 0, score[0], score[len(score)-1]}
	best, bestN := cands[0], -1
	for _, c := range cands {
		n := 0
		for _, v := range score {
			if v == c {
				n++
			}
		}
		if n > bestN {
			best, bestN = c, n
		}
	}
	return best
}

// tiedPays is the Auto rule: use Tied when the exceptions are at most a
// quarter of the matrix and M ≥ 16. BENCHMARKS.md's engine table measures
// both structures on the same matrices; below M=16 the dense kernels win
// whatever the sparsity.
func tiedPays(m, exceptions int) bool {
	return m >= 16 && 4*exceptions <= m*m
}

func buildTied(tr *Transitions, def float64) *tiedForm {
	m := tr.m
	tf := &tiedForm{def: def}
	for i := range m {
		for j := range m {
			if v := tr.score[i*m+j]; v != def {
				tf.exc = append(tf.exc, Exception{int32(i), int32(j), v})
			}
		}
	}
	tf.index(tr)
	tf.values(tr)
	return tf
}

// index builds the column and row lists from tf.exc (values fills what
// depends on the scores).
func (tf *tiedForm) index(tr *Transitions) {
	m := tr.m
	tf.dcol = make([]float64, m)
	tf.ones = make([]float64, m)
	for j := range tf.ones {
		tf.ones[j] = 1
	}
	n := len(tf.exc)
	tf.colPtr, tf.rowPtr = make([]int32, m+1), make([]int32, m+1)
	for _, e := range tf.exc {
		tf.colPtr[e.To+1]++
		tf.rowPtr[e.From+1]++
	}
	for j := range m {
		tf.colPtr[j+1] += tf.colPtr[j]
		tf.rowPtr[j+1] += tf.rowPtr[j]
		tf.maxCol = max(tf.maxCol, int(tf.colPtr[j+1]-tf.colPtr[j]))
	}
	tf.colI, tf.colK, tf.colJ = make([]int32, n), make([]int32, n), make([]int32, n)
	tf.colV, tf.colS, tf.colE = make([]float64, n), make([]float64, n), make([]float64, n)
	tf.rowJ, tf.rowK, tf.rowV, tf.rowS = make([]int32, n), make([]int32, n), make([]float64, n), make([]float64, n)
	tf.rowLo, tf.rowHi = make([]float64, m), make([]float64, m)
	cpos, rpos := slices.Clone(tf.colPtr[:m]), slices.Clone(tf.rowPtr[:m])
	for k, e := range tf.exc {
		c := cpos[e.To]
		cpos[e.To]++
		tf.colI[c], tf.colK[c], tf.colJ[c] = e.From, int32(k), e.To
		r := rpos[e.From]
		rpos[e.From]++
		tf.rowJ[r], tf.rowK[r] = e.To, int32(k)
	}
}

// cols sets tr.colShift from the default and the exceptions, O(M +
// exceptions) instead of a scan of the M×M matrix, and returns the widest
// column range (colRange's value): column j's maximum is that of its
// exceptions and, unless all M entries of the column are exceptions, the
// default; its range that maximum less its smallest finite entry. The
// results are the matrix scan's, bit for bit (max and min are exact).
// tr.colEnd is its scratch.
func (tf *tiedForm) cols(tr *Transitions) float64 {
	m := tr.m
	c, lo := tr.colShift[:m], tr.colEnd[:m]
	ninf, inf := math.Inf(-1), math.Inf(1)
	for j := range m {
		c[j], lo[j] = ninf, inf
		if int(tf.colPtr[j+1]-tf.colPtr[j]) < m {
			c[j] = tf.def
			if !math.IsInf(tf.def, -1) {
				lo[j] = tf.def
			}
		}
	}
	for _, e := range tf.exc {
		c[e.To] = max(c[e.To], e.Score)
		if !math.IsInf(e.Score, -1) {
			lo[e.To] = min(lo[e.To], e.Score)
		}
	}
	r := 0.0
	for j := range m {
		if math.IsInf(c[j], -1) {
			c[j] = 0
		}
		if lo[j] < inf {
			r = max(r, c[j]-lo[j])
		}
	}
	return r
}

// values fills what depends on the scores (D_j, and each exception's
// E_ij − D_j and S_ij) from tf.def, tf.exc and tr's derived forms, into the
// lists index made.
func (tf *tiedForm) values(tr *Transitions) {
	m := tr.m
	for j := range m {
		tf.dcol[j] = math.Exp(tf.def - tr.colShift[j])
	}
	// E_ij as the dense form has it, computed for the exceptions alone.
	for c, k := range tf.colK {
		e := tf.exc[k]
		tf.colE[c] = tr.eAt(int(e.From), int(e.To))
		tf.colV[c] = tf.colE[c] - tf.dcol[e.To]
		tf.colS[c] = e.Score
	}
	for r, k := range tf.rowK {
		e := tf.exc[k]
		tf.rowV[r] = tr.eAt(int(e.From), int(e.To)) - tf.dcol[e.To]
		tf.rowS[r] = e.Score
	}
	for i := range m {
		lo, hi := math.Inf(1), math.Inf(-1)
		if int(tf.rowPtr[i+1]-tf.rowPtr[i]) < m {
			lo, hi = tf.def, tf.def
		}
		for _, v := range tf.rowS[tf.rowPtr[i]:tf.rowPtr[i+1]] {
			lo, hi = min(lo, v), max(hi, v)
		}
		tf.rowLo[i], tf.rowHi[i] = lo, hi
	}
}

// forwardTied is the scaled forward recursion with the tied structure:
// α'_t[j] = Ψ_t[j]·(D_j·Σ_i α_{t−1}[i] + Σ_{exceptions i→j} α_{t−1}[i]·(E_ij − D_j)).
// The exception sums of a step are one kernels.SpMVTrusted over the
// columns (and backward's one over the rows): colI and rowJ are label
// indices < M, checked when the exceptions were given, so no per-step scan.
func (tf *tiedForm) forward(alpha, scale, psi []float64, T, M int) {
	copy(alpha[:M], psi[:M])
	ones := tf.ones[:M]
	scale[0] = normalize(alpha[:M], ones)
	for t := 1; t < T; t++ {
		prev, cur, ps := alpha[(t-1)*M:t*M], alpha[t*M:(t+1)*M], psi[t*M:(t+1)*M]
		a := kernels.Dot(prev, ones)
		// cur[j] = Σ_{exceptions i→j} α_{t−1}[i]·(E_ij − D_j), all columns
		// in one call (index arrays built and checked once, in index).
		kernels.SpMVTrusted(cur, prev, tf.colPtr, tf.colI, tf.colV)
		dcol := tf.dcol[:M]
		ps = ps[:M]
		for j, x := range cur {
			cur[j] = ps[j] * (dcol[j]*a + x)
		}
		scale[t] = normalize(cur, ones)
	}
}

// backward is the tied backward recursion:
// β_t[i] = (Σ_j D_j·w_j + Σ_{exceptions i→j} (E_ij − D_j)·w_j)/scale_{t+1},
// w_j = Ψ_{t+1}[j]·β_{t+1}[j].
func (tf *tiedForm) backward(beta, scale, psi, w []float64, T, M int) {
	last := beta[(T-1)*M : T*M]
	for i := range last {
		last[i] = 1
	}
	for t := T - 2; t >= 0; t-- {
		next, ps, cur := beta[(t+1)*M:(t+2)*M], psi[(t+1)*M:(t+2)*M], beta[t*M:(t+1)*M]
		w, ps, next := w[:M], ps[:M], next[:M]
		for j := range w {
			w[j] = ps[j] * next[j]
		}
		// The sums over labels are kernels.Dot (vector lanes): one add
		// chain over M = 1,208 labels waited on the add latency at every
		// label.
		W := kernels.Dot(tf.dcol[:M], w)
		inv := 1 / scale[t+1]
		kernels.SpMVTrusted(cur, w[:M], tf.rowPtr, tf.rowJ, tf.rowV)
		for i, x := range cur {
			cur[i] = (W + x) * inv
		}
	}
}

// counts adds the expected count of every exception (counts[k]) and of all
// default-scored transitions together (counts[len(exc)]):
// Σ_t α_{t−1}[i]·E_ij·Ψ_t[j]·β_t[j]/scale_t over the respective pairs.
// It sums q_k = Σ_t α_{t−1}[i]·b_t[j] (b_t = Ψ_t·β_t/scale_t) for each
// exception in column order in q (len(exc) entries), and applies E_ij and
// the default's D_j once per sequence: the per-step pass is then two
// gathers and a fused multiply-add in order per exception
// (kernels.GatherMulAddTrusted; it was a scatter into counts and a read of
// the M×M matrix, 11 MB at M = 1,208: every entry a miss).
func (tf *tiedForm) counts(counts, alpha, beta, psi, scale, bb, q []float64, T, M int) {
	n := len(tf.exc)
	q = q[:n]
	clear(q)
	def := 0.0
	colI, colJ := tf.colI[:n], tf.colJ[:n]
	for t := 1; t < T; t++ {
		inv := 1 / scale[t]
		prev := alpha[(t-1)*M : t*M]
		a := kernels.Dot(prev, tf.ones[:M])
		ps, bt, b := psi[t*M:(t+1)*M], beta[t*M:(t+1)*M], bb[:M]
		for j := range b {
			b[j] = ps[j] * bt[j] * inv
		}
		db := kernels.Dot(tf.dcol[:M], b)
		def += a * db
		kernels.GatherMulAddTrusted(q, prev, colI, bb[:M], colJ)
	}
	for k, v := range q {
		counts[tf.colK[k]] += v * tf.colE[k]
		def -= v * tf.dcol[colJ[k]]
	}
	counts[n] += def
}

// viterbi is the tied Viterbi recursion, bit-identical to the dense kernel.
// The best non-exception predecessor of column j is the first index, in
// order of decreasing δ (ties: lower index first), that is not one of
// column j's exceptions. Each step finds the top entries of δ, gives every
// column the first of them as its default candidate, repairs the few
// columns where that entry is an exception (the first entry's row of
// exceptions says which), then scores all exceptions in one
// kernels.MaxPlusCSRTrusted call (one flat pass over them where that kernel
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
// kernels.MaxPlusCSRTrusted where vec, else in one flat pass. Without
// useDef (a default of −Inf) every column starts at −Inf.
func (tf *tiedForm) fullStep(prev, cur []float64, arg []int32, top, long []int32, lv *topLevels, t int32, vec, useDef bool) {
	M := len(prev)
	if useDef {
		n := topK(prev, top)
		nl := -1 // long not made yet in this step
		lv.made = 0
		i0 := top[0]
		v0 := prev[i0] + tf.def
		for j := range cur {
			cur[j], arg[j] = v0, i0
		}
		// Columns in which i0 is an exception need another default.
		for _, j := range tf.rowJ[tf.rowPtr[i0]:tf.rowPtr[i0+1]] {
			cur[j], arg[j] = tf.defaultFor(prev, top[:n], long, &nl, lv, t, int(j), M, t*int32(M)+j, false)
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
		kernels.MaxPlusCSRTrusted(cur, arg, prev, tf.colPtr, tf.colI, tf.colS)
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

// fill sets every entry of x to v, by doubling copies (memmove's vector
// loop: a plain loop stores one entry at a time, and with a thousand labels
// the tied Viterbi fills two rows at every step).
func fill[E any](x []E, v E) {
	if len(x) == 0 {
		return
	}
	x[0] = v
	for n := 1; n < len(x); n *= 2 {
		copy(x[n:], x[:n])
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
	M := len(prev)
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
	nl := nc - k
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
		cur[j], arg[j] = tf.defaultFor(prev, c[:k], c[k:], &nl, lv, t, int(j), M, t*int32(M)+j, true)
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

// defaultFor returns the best default-scored candidate of column j in step
// t, of which top[0] is an exception: the first later top entry that is
// not an exception of j (lv says, level by level), or, when every top
// entry is one, the first such entry of long, a longer top list of prev
// made on first use in the step (*nl entries; −1: not made yet), or, when
// every entry of long is one too, the best unmarked entry of all of prev
// (-Inf, −1 if none). The lists are in order of decreasing δ, ties by
// increasing index, so each gives the answer a scan of all of prev would.
// With kept, top and long are the bounded step's kept rows, outside which
// no row can win: when every one of them is an exception of j, it returns
// −Inf, −1 without the scan (one of their exceptions wins the column).
func (tf *tiedForm) defaultFor(prev []float64, top, long []int32, nl *int, lv *topLevels, t int32, j, M int, id int32, kept bool) (float64, int32) {
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
		if *nl < 0 {
			*nl = topK(prev, long)
		}
		for _, i := range long[:*nl] {
			if mark[i] != id {
				return prev[i] + tf.def, i
			}
		}
		if *nl == M || kept {
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
// which the tied Viterbi scores them with kernels.MaxPlusCSRTrusted (where
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

// normalize divides row by its sum (kernels.Dot with ones, len(row) ones)
// and returns the sum.
func normalize(row, ones []float64) float64 {
	sum := kernels.Dot(row, ones)
	kernels.Scale(1/sum, row)
	return sum
}

// winRows puts in cand, in increasing index, the rows i of a max-plus step
// from prev that can win a column or tie with its winner:
// δ[i] + rowHi[i] ≥ LB = max_i δ[i] + rowLo[i] (see tiedForm.bounded). It
// returns their count, or false with more than len(cand) of them or no
// finite LB. scr is scratch of M+2 entries: LB is ShiftRows' row maximum
// (to scr[M]; its shifted row goes to scr[:M], unused; scr[M+1] takes its
// smallest entry), and arrays on the stack would escape through the
// kernel's call.
func winRows(prev, rowLo, rowHi []float64, cand []int32, scr []float64) (int, bool) {
	M := len(prev)
	hi := rowHi[:M]
	lb := scr[M : M+1]
	kernels.ShiftRows(scr[:M], lb, scr[M+1:M+2], prev, rowLo, 1, M)
	bound := lb[0]
	if !(bound > math.Inf(-1) && bound < math.Inf(1)) {
		return 0, false
	}
	nc := 0
	for i, p := range prev {
		if p+hi[i] >= bound {
			if nc == len(cand) {
				return 0, false
			}
			cand[nc] = int32(i)
			nc++
		}
	}
	return nc, true
}
