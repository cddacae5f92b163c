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
	// The column and row structures, and each column entry's (previous,
	// next) labels, checked once for the kernels (SpMV, MaxPlus and
	// GatherMulAdd then check sizes only).
	colRows, rowRows *kernels.Rows
	colPairs         *kernels.Pairs
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
	var err error
	if tf.colRows, err = kernels.NewRows(tf.colPtr, tf.colI, m); err == nil {
		if tf.rowRows, err = kernels.NewRows(tf.rowPtr, tf.rowJ, m); err == nil {
			tf.colPairs, err = kernels.NewPairs(tf.colI, tf.colJ, m, m)
		}
	}
	if err != nil {
		panic("engine: tied exceptions: " + err.Error()) // labels checked when given
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
