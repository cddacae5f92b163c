package engine

import (
	"fmt"
	"math"

	"github.com/simdcrf/simdcrf/kernels"
)

// Workspace holds the buffers of inference on one chain at a time. It grows
// to the largest chain it has seen and is reused, so steady-state calls do
// not allocate. A Workspace must not be used by two goroutines at once.
type Workspace struct {
	s, psi, alpha, beta, work []float64 // T×M
	scale, rowMax, rowMin     []float64 // T
	delta                     []float64 // T×M (Viterbi)
	bp                        []int32   // T×M (Viterbi)
	probs                     []float64 // M (sampling; the tied Viterbi's scratch)
	ones                      []float64 // all 1 (Viterbi's emission check)
	keepv                     []float64 // ChainOptions.apply's scratch
	order, mark               []int32   // M (tied Viterbi)
	cand                      []int32   // the tied Viterbi's kept rows (tiedForm.bounded)
	excSum                    []float64 // one per exception (tied counts)
	nb                        nbestBuf
	lock                      lockBuf // lockstep groups (lockstep.go)

	// logMode says the last forward pass ran in the log domain: alpha
	// (and beta) then hold log-domain scores and ws.s unshifted scores.
	logMode bool
	opts    *ChainOptions // of the chain being processed
	tmat    []float64     // M×M: a position's transition matrix with its delta
	et      []float64     // T×M×M: E ∘ exp(Δ_t) (the scaled path with deltas)
	scaledD bool          // the last forward pass was the scaled one with deltas
	logE    []float64     // M×M: score[i][j] − colShift[j]
	etAt    []int32       // T: the position whose E_t position t uses
	vwin    []float64     // Viterbi with deltas: a two-row window and its δ
	vbp     []int32       // and its back-pointers
	rs      restrictBuf   // the restricted-label path (restrict.go)
}

// transAt returns the transition scores into position t: the shared matrix,
// or (S + Δ_t) built in ws.tmat; transposed if asked.
func (ws *Workspace) transAt(tr *Transitions, t int, transposed bool) []float64 {
	d := ws.opts.delta(t)
	if d == nil {
		if transposed {
			tr.dense()
			return tr.scoreT
		}
		return tr.score
	}
	M := tr.m
	ws.tmat = grow(ws.tmat, M*M)
	if !transposed {
		copy(ws.tmat, tr.score)
		kernels.Axpy(1, d, ws.tmat)
		return ws.tmat
	}
	for i := range M {
		for j := range M {
			if transposed {
				ws.tmat[j*M+i] = tr.score[i*M+j] + d[i*M+j]
			} else {
				ws.tmat[i*M+j] = tr.score[i*M+j] + d[i*M+j]
			}
		}
	}
	return ws.tmat
}

// NewWorkspace returns an empty Workspace.
func NewWorkspace() *Workspace { return &Workspace{} }

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n, n+n/4)
	}
	return s[:n]
}

func (ws *Workspace) grow(T, M int) {
	n := T * M
	ws.s = grow(ws.s, n)
	ws.psi = grow(ws.psi, n)
	ws.alpha = grow(ws.alpha, n)
	ws.beta = grow(ws.beta, n)
	ws.work = grow(ws.work, n)
	ws.scale = grow(ws.scale, T)
	ws.rowMax = grow(ws.rowMax, T)
}

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

// chainLen checks emit against M and returns T.
func (tr *Transitions) chainLen(emit []float64) (int, error) {
	if len(emit)%tr.m != 0 {
		return 0, fmt.Errorf("engine: %d emission scores is not a multiple of %d labels", len(emit), tr.m)
	}
	return len(emit) / tr.m, nil
}

// logScores fills ws.s with the log-domain scores of every position:
// emissions plus start (t = 0) and end (t = T−1) scores, plus colShift for
// t ≥ 1 when shifted (the probability-domain path), with constrained-out
// labels at -Inf, and ws.rowMax/ws.rowMin with each row's maximum and
// smallest finite score, in the same pass. It rejects NaN and +Inf
// emissions.
func (tr *Transitions) logScores(ws *Workspace, emit []float64, T int, c *ChainOptions, shifted bool) error {
	M := tr.m
	s := ws.s[:T*M]
	ws.rowMin = grow(ws.rowMin, T)
	for t := range T {
		a, b := tr.zeros, tr.zeros
		switch {
		case t == 0:
			a = tr.start
		case shifted:
			a = tr.colShift
		}
		if t == T-1 {
			b = tr.end
		}
		m, lo, bad := scoreRow(s[t*M:(t+1)*M], emit[t*M:(t+1)*M], a, b)
		if bad >= 0 {
			v := emit[t*M+bad]
			return fmt.Errorf("engine: emission score [%d][%d] is %v", t, bad, v)
		}
		ws.rowMax[t], ws.rowMin[t] = m, lo
	}
	if c != nil {
		ws.mark = grow(ws.mark, M)
		ws.keepv = grow(ws.keepv, M)
		c.apply(s, T, M, ws.mark, ws.keepv)
		for t := range T {
			m, lo := rowRange(s[t*M : (t+1)*M])
			ws.rowMax[t], ws.rowMin[t] = m, lo
		}
	}
	return nil
}

// viterbiScores fills ws.s like logScores(ws, emit, T, nil, false), without
// the row maxima and minima, which Viterbi does not read. The middle rows
// (1..T−2) are the emissions as they are: one copy, checked for NaN and +Inf
// by one SIMD sum (a NaN or +Inf entry makes the sum NaN or +Inf; only then,
// or when large finite entries overflow, are the entries scanned). Unlike
// logScores (emission + 0), a −0 emission stays −0 there, which can change
// the sign of a zero δ or score, never a comparison. Rows 0 and T−1 add the
// start and end scores as logScores does.
func (tr *Transitions) viterbiScores(ws *Workspace, emit []float64, T int) error {
	M := tr.m
	s := ws.s[:T*M]
	if T > 2 {
		mid := emit[M : (T-1)*M]
		copy(s[M:(T-1)*M], mid)
		if len(ws.ones) < len(mid) {
			ws.ones = make([]float64, len(mid)+len(mid)/4)
			for k := range ws.ones {
				ws.ones[k] = 1
			}
		}
		if sum := kernels.Dot(mid, ws.ones[:len(mid)]); !(sum <= math.MaxFloat64) {
			for k, v := range mid {
				if !(v <= math.MaxFloat64) {
					return fmt.Errorf("engine: emission score [%d][%d] is %v", 1+k/M, k%M, v)
				}
			}
		}
	}
	for _, t := range [2]int{0, T - 1} {
		a, b := tr.zeros, tr.zeros
		if t == 0 {
			a = tr.start
		}
		if t == T-1 {
			b = tr.end
		}
		row, in := s[t*M:(t+1)*M], emit[t*M:(t+1)*M]
		if bad := addRow(row, in, a, b); bad >= 0 {
			return fmt.Errorf("engine: emission score [%d][%d] is %v", t, bad, in[bad])
		}
		if T == 1 {
			break
		}
	}
	return nil
}

// addRow sets row = in + (a + b) and returns the index of the first NaN or
// +Inf entry of in, or −1.
func addRow(row, in, a, b []float64) int {
	a, b, row = a[:len(in)], b[:len(in)], row[:len(in)]
	for j, v := range in {
		if !(v <= math.MaxFloat64) {
			return j
		}
		row[j] = v + (a[j] + b[j])
	}
	return -1
}

// scoreRow sets row = in + a + b and returns its maximum and smallest finite
// entry, or the index of a NaN or +Inf entry of in as bad (else −1).
func scoreRow(row, in, a, b []float64) (m, lo float64, bad int) {
	m, lo = math.Inf(-1), math.Inf(1)
	a, b, row = a[:len(in)], b[:len(in)], row[:len(in)]
	for j, v := range in {
		if v != v || v > math.MaxFloat64 {
			return 0, 0, j
		}
		v += a[j] + b[j]
		row[j] = v
		if v > m {
			m = v
		}
		if v < lo && v >= -math.MaxFloat64 {
			lo = v
		}
	}
	return m, lo, -1
}

// rowRange returns the maximum and the smallest finite entry of row.
func rowRange(row []float64) (m, lo float64) {
	m, lo = math.Inf(-1), math.Inf(1)
	for _, v := range row {
		if v > m {
			m = v
		}
		if v < lo && v >= -math.MaxFloat64 {
			lo = v
		}
	}
	return m, lo
}

// forward runs the forward pass and returns log Z. Normally that is the
// scaled probability-domain pass, leaving Ψ in ws.psi, α in ws.alpha and the
// scales in ws.scale. When a position's scores or a transition column spread
// wider than scaledRange (or the scaled pass finds no labelling, to make
// sure), it runs in the log domain instead and sets ws.logMode.
func (tr *Transitions) forward(ws *Workspace, emit []float64, T int, c *ChainOptions) (float64, error) {
	M := tr.m
	ws.logMode, ws.opts, ws.scaledD = false, c, false
	deltas := c.hasDelta()
	logOnly := tr.logOnly || deltas && (tr.tied != nil || !tr.makeEt(ws, T))
	psi := ws.psi[:T*M]
	shift := 0.0
	// Without constraints, and when a sum of squares shows no emission is
	// NaN or ±Inf, kernels.ShiftRows puts the shifted scores straight into
	// Ψ (the scalar path below was a sixth of a training evaluation at
	// M = 22).
	if chk := kernels.Dot(emit[:T*M], emit[:T*M]); c == nil && !logOnly && chk <= math.MaxFloat64 {
		ws.rowMin = grow(ws.rowMin, T)
		mx, lo := ws.rowMax[:T], ws.rowMin[:T]
		if T == 1 {
			kernels.ShiftRows(psi, mx, lo, emit, tr.startEnd, 1, M)
		} else {
			kernels.ShiftRows(psi, mx, lo, emit, tr.start, 1, M)
			kernels.ShiftRows(psi[M:], mx[1:], lo[1:], emit[M:], tr.colShift, T-2, M)
			last := (T - 1) * M
			kernels.ShiftRows(psi[last:], mx[T-1:], lo[T-1:], emit[last:], tr.colEnd, 1, M)
		}
		for t, m := range mx {
			if math.IsInf(m, -1) {
				return math.Inf(-1), ErrNoLabelling
			}
			if m-lo[t] > scaledRange {
				tr.logScores(ws, emit, T, c, false)
				return tr.forwardLog(ws, T)
			}
			shift += m
		}
	} else {
		if err := tr.logScores(ws, emit, T, c, !logOnly); err != nil {
			return 0, err
		}
		if logOnly {
			return tr.forwardLog(ws, T)
		}
		s := ws.s[:T*M]
		for t := range T {
			row := s[t*M : (t+1)*M]
			m, lo := ws.rowMax[t], ws.rowMin[t]
			if math.IsInf(m, -1) {
				return math.Inf(-1), ErrNoLabelling
			}
			if m-lo > scaledRange {
				tr.logScores(ws, emit, T, c, false)
				return tr.forwardLog(ws, T)
			}
			shift += m
			out := psi[t*M : (t+1)*M]
			for j, v := range row {
				out[j] = v - m
			}
		}
	}
	kernels.Exp(psi, psi)
	if deltas {
		tr.forwardDelta(ws, psi, T)
		ws.scaledD = true
	} else if tr.tied != nil {
		tr.tied.forward(ws.alpha, ws.scale, psi, T, M)
	} else {
		kernels.Forward(ws.alpha, ws.scale, psi, tr.e, T, M)
	}
	logZ := shift
	for _, sc := range ws.scale[:T] {
		if !(sc > 0) {
			tr.logScores(ws, emit, T, c, false)
			return tr.forwardLog(ws, T)
		}
		logZ += math.Log(sc)
	}
	return logZ, nil
}

// forwardLog is the log-domain forward pass over ws.s (unshifted scores).
func (tr *Transitions) forwardLog(ws *Workspace, T int) (float64, error) {
	ws.logMode = true
	logZ := tr.logForward(ws, T)
	if math.IsInf(logZ, -1) {
		return logZ, ErrNoLabelling
	}
	return logZ, nil
}
