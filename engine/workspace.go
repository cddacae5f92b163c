package engine

import "github.com/simdcrf/simdcrf/kernels"

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
	o2      *order2Buf    // second-order chains (order2.go), made on first use
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
