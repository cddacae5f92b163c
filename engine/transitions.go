// Package engine does exact inference in linear-chain CRFs over scores:
// log Z, labelling probabilities, marginals, expected transition counts,
// Viterbi, the k best labellings, constrained inference, sampling and the
// gradient of the log-likelihood. Its inputs are emission scores (T×M,
// log domain) and a Transitions value; it knows nothing of features, so a
// neural tagger can use it as its CRF layer and a feature-based one (package
// sparse) fills the emissions from weights.
//
// The probability-domain forward–backward of package kernels does the
// O(T·M²) work: the exponentiated transition matrix is computed once per
// Transitions, each column shifted by its maximum, and each position's
// scores are exponentiated after subtracting their maximum, so the scaled
// recursion is as stable as a max-shifted log-sum-exp. Viterbi and n-best run
// in the log domain.
//
// A Transitions is safe to share across goroutines as long as none changes
// its scores (SetScores, SetTied: meant for trainers that update the weights
// between sequences); each goroutine uses its own Workspace (or a Pool).
// Steady-state calls do not allocate.
package engine

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Transitions holds the label-bigram scores of a chain over M labels: an M×M
// matrix (row = previous label, column = current label; -Inf forbids a
// transition) plus optional start and end scores, and the forms the engine
// derives from them.
type Transitions struct {
	m          int
	score      []float64 // M×M, log domain
	start, end []float64 // M each, zeros if absent

	colShift []float64 // c_j = max_i score[i][j] (0 where the column is all -Inf)
	colEnd   []float64 // colShift + end: the last position's column scores
	startEnd []float64 // start + end: those of a chain of one position
	logOnly  bool      // a column's range exceeds scaledRange: always use the log domain
	// rowLo[i] and rowHi[i]: the lowest and highest entries of row i
	// (the Dense structure's; the dense Viterbi's bounded steps)
	rowLo, rowHi []float64
	ones         []float64 // M ones
	tied         *tiedForm // non-nil for the Tied structure
	zeros        []float64 // M zeros

	// The dense forms: made by derive for Dense; for a Tied structure made
	// by dense() on first use (sampling, edge marginals, expected counts
	// as a matrix, the log domain), since its recursions work on the
	// exceptions and the forms cost M² exps and 3·M² words (with UD Czech's
	// 1,208 labels, not making them took a tag run from 390 to 336 ms).
	scoreT []float64  // scoreᵀ, for the log-domain backward pass
	e, et  []float64  // E[i][j] = exp(score[i][j] − c_j), and Eᵀ
	lazy   *lazyForms // Tied (NewTied): whether the dense forms are made

	pairs atomic.Pointer[pairIndex] // Tied: the restricted path's exception index (restrict.go)
}

// lazyForms guards the making of a Transitions' dense forms on first use.
type lazyForms struct {
	mu   sync.Mutex
	made atomic.Bool // the forms match the scores
}

// ErrNoLabelling is returned when constraints, forbidden transitions or -Inf
// scores leave no labelling with non-zero probability.
var ErrNoLabelling = errors.New("engine: no labelling is possible")

// NewTransitions makes Transitions from an M×M score matrix (row-major, row
// = previous label) and optional start and end scores (nil means zero). The
// slices are copied. Entries may be -Inf (forbidden); NaN and +Inf are
// rejected.
func NewTransitions(m int, score, start, end []float64) (*Transitions, error) {
	tr, err := newTransitions(m, score, start, end, false)
	if err != nil {
		return nil, err
	}
	def, n := mostCommon(tr.score), 0
	for _, v := range tr.score {
		if v != def {
			n++
		}
	}
	if tiedPays(m, n) {
		tr.tied = buildTied(tr, def)
	}
	return tr, nil
}

// newTransitions is NewTransitions without the choice of structure, the
// dense forms left to dense() when lazy (for NewTied).
func newTransitions(m int, score, start, end []float64, lazy bool) (*Transitions, error) {
	if m < 1 {
		return nil, fmt.Errorf("engine: %d labels; need at least 1", m)
	}
	if len(score) != m*m {
		return nil, fmt.Errorf("engine: transition matrix has %d entries, want %d×%d", len(score), m, m)
	}
	tr := &Transitions{m: m, score: append([]float64(nil), score...)}
	var err error
	if tr.start, err = vecOrZero("start", start, m); err != nil {
		return nil, err
	}
	if tr.end, err = vecOrZero("end", end, m); err != nil {
		return nil, err
	}
	if err := checkMatrix(score, m); err != nil {
		return nil, err
	}
	if lazy {
		tr.lazy = new(lazyForms)
	}
	tr.derive()
	return tr, nil
}

// checkMatrix validates an M×M score matrix: no NaN or +Inf.
func checkMatrix(score []float64, m int) error {
	if len(score) != m*m {
		return fmt.Errorf("engine: transition matrix has %d entries, want %d×%d", len(score), m, m)
	}
	for k, v := range score {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return fmt.Errorf("engine: transition score [%d][%d] is %v", k/m, k%m, v)
		}
	}
	return nil
}

// checkVec validates optional start or end scores (nil, or M entries, none
// NaN or +Inf).
func checkVec(name string, v []float64, m int) error {
	if v == nil {
		return nil
	}
	if len(v) != m {
		return fmt.Errorf("engine: %s scores have %d entries, want %d", name, len(v), m)
	}
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 1) {
			return fmt.Errorf("engine: %s score [%d] is %v", name, j, x)
		}
	}
	return nil
}

func vecOrZero(name string, v []float64, m int) ([]float64, error) {
	if err := checkVec(name, v, m); err != nil {
		return nil, err
	}
	if v == nil {
		return make([]float64, m), nil
	}
	return append([]float64(nil), v...), nil
}

// copyOrZero copies src (checked by checkVec) to dst, or zeros dst if src
// is nil.
func copyOrZero(dst, src []float64) {
	if src == nil {
		clear(dst)
	} else {
		copy(dst, src)
	}
}

// SetScores replaces the scores of a Dense Transitions in place: the M×M
// matrix and the start and end scores (nil means zero), checked as
// NewTransitions checks them. It recomputes the derived forms (the column
// shifts, the exponentiated matrix) into the existing buffers, so it does
// not allocate, and leaves tr exactly as NewTransitionsWith(M, score, start,
// end, Options{Structure: Dense}) would make it. On error tr is unchanged.
// It returns an error for the Tied structure (use SetTied: its exceptions
// would depend on the scores). No call on tr may run at the same time.
func (tr *Transitions) SetScores(score, start, end []float64) error {
	if tr.tied != nil {
		return errors.New("engine: SetScores on the Tied structure; use SetTied")
	}
	m := tr.m
	if err := checkVec("start", start, m); err != nil {
		return err
	}
	if err := checkVec("end", end, m); err != nil {
		return err
	}
	if err := checkMatrix(score, m); err != nil {
		return err
	}
	copy(tr.score, score)
	copyOrZero(tr.start, start)
	copyOrZero(tr.end, end)
	tr.derive()
	return nil
}

// derive computes the column shifts and the exponentiated matrices, into
// the buffers of an earlier call if there was one (SetScores, SetTied); with
// lazy dense forms, it marks them to be made again on next use instead.
func (tr *Transitions) derive() {
	m := tr.m
	if tr.colShift == nil {
		tr.zeros = make([]float64, m)
		tr.colShift = make([]float64, m)
		tr.colEnd = make([]float64, m)
		tr.startEnd = make([]float64, m)
		tr.rowLo, tr.rowHi = make([]float64, m), make([]float64, m)
		tr.ones = make([]float64, m)
		fill(tr.ones, 1)
	}
	if tr.tied != nil {
		// From the default and the exceptions (NewTied, SetTied); the
		// row bounds are the Dense structure's alone.
		tr.logOnly = !fits(tr.tied.cols(tr), scaledRange)
		clear(tr.rowLo)
		clear(tr.rowHi)
	} else {
		// Column maxima row by row: the matrix is read in order.
		c := tr.colShift
		for j := range c {
			c[j] = math.Inf(-1)
		}
		for i := range m {
			row := tr.score[i*m : (i+1)*m]
			lo, hi := math.Inf(1), math.Inf(-1)
			for j, v := range row {
				c[j] = max(c[j], v)
				lo, hi = min(lo, v), max(hi, v)
			}
			tr.rowLo[i], tr.rowHi[i] = lo, hi
		}
		for j, v := range c {
			if math.IsInf(v, -1) {
				c[j] = 0
			}
		}
		tr.logOnly = !fits(colRange(tr.score, tr.colShift, m), scaledRange)
	}
	for j := range m {
		tr.colEnd[j] = tr.colShift[j] + tr.end[j]
		tr.startEnd[j] = tr.start[j] + tr.end[j]
	}
	if tr.lazy != nil {
		tr.lazy.made.Store(false) // made again on next use
	} else {
		tr.deriveDense()
	}
}

// eAt returns E[i][j] = exp(score[i][j] − c_j), the dense form's entry
// (also computed alone, for a tied structure's exceptions).
func (tr *Transitions) eAt(i, j int) float64 {
	return math.Exp(tr.score[i*tr.m+j] - tr.colShift[j])
}

// deriveDense makes the dense forms E, Eᵀ and scoreᵀ.
func (tr *Transitions) deriveDense() {
	m := tr.m
	if tr.e == nil {
		tr.e = make([]float64, m*m)
		tr.et = make([]float64, m*m)
		tr.scoreT = make([]float64, m*m)
	}
	for i := range m {
		for j := range m {
			v := tr.eAt(i, j)
			tr.e[i*m+j] = v
			tr.et[j*m+i] = v
			tr.scoreT[j*m+i] = tr.score[i*m+j]
		}
	}
}

// dense makes sure the dense forms match the scores (safe for concurrent
// callers).
func (tr *Transitions) dense() {
	l := tr.lazy
	if l == nil || l.made.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.made.Load() {
		tr.deriveDense()
		l.made.Store(true)
	}
}

// Labels returns M.
func (tr *Transitions) Labels() int { return tr.m }

// Score returns the transition score from label i to label j.
func (tr *Transitions) Score(i, j int) float64 { return tr.score[i*tr.m+j] }

// Start returns the start score of label j.
func (tr *Transitions) Start(j int) float64 { return tr.start[j] }

// End returns the end score of label j.
func (tr *Transitions) End(j int) float64 { return tr.end[j] }
