package train

import (
	"fmt"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/lockplan"
	"github.com/simdcrf/simdcrf/sparse"
)

// lockstep is the dense evaluation at large M: the sequences in groups of
// similar lengths (lockplan.Groups) whose forward–backward runs in
// lockstep (lockplan.Posteriors, the engine's: one pass over the M×M matrix per
// position for the whole group, where one sequence at a time streams it
// at every position). The objective and gradient are the per-sequence
// ones up to rounding (TestLockstepObjective).
type lockstep struct {
	units [][]int32 // sequence indices; a unit of one runs through seq
	bufs  []lockBuf // per worker
}

// lockBuf is a worker's buffers for one group.
type lockBuf struct {
	emits, margs [][]float64
	emit, marg   []float64 // Σ T_k × M of the largest group
	logZ         []float64
}

// setLockstep applies the Config's lockstep mode (set by
// lockplan.Force): "always" plans lockstep groups at
// any M (where the model is one newLockstep takes), "never" drops the plan,
// "" and "auto" keep newObjective's choice (M ≥ engine.LockstepLabels).
func (o *objective) setLockstep(mode string) {
	switch mode {
	case "always":
		o.lock = o.newLockstep(true)
	case "never":
		o.lock = nil
	}
}

// newLockstep returns the lockstep plan of a plain dense chain (no
// candidate labels, no observation-dependent transitions, no instance
// weights other than 1: a group adds its transition counts unweighted),
// or nil when use is false or the model is not one.
func (o *objective) newLockstep(use bool) *lockstep {
	md := o.md
	if !use || md.tied || md.noTrans || md.big != nil || md.allowed != nil || md.prune != nil || o.weighted {
		return nil
	}
	lens := make([]int, len(o.sc.labels))
	for i, y := range o.sc.labels {
		lens[i] = len(y)
	}
	W := len(o.workers)
	units := lockplan.Groups(lens, lockplan.Chains, W)
	rows := 0
	for _, u := range units {
		if len(u) > 1 {
			n := 0
			for _, i := range u {
				n += lens[i]
			}
			rows = max(rows, n)
		}
	}
	if rows == 0 {
		return nil
	}
	l := &lockstep{units: units, bufs: make([]lockBuf, W)}
	for w := range l.bufs {
		b := &l.bufs[w]
		b.emit = make([]float64, rows*md.m)
		b.marg = make([]float64, rows*md.m)
	}
	return l
}

// unit adds unit u's NLL and gradient into worker w's buffers.
func (o *objective) unit(ws *engine.Workspace, w int, tr *engine.Transitions, theta []float64, u int) error {
	wb := &o.workers[w]
	seqs := o.lock.units[u]
	if len(seqs) == 1 {
		return o.seq(ws, wb, tr, theta, int(seqs[0]))
	}
	md := o.md
	m := md.m
	b := &o.lock.bufs[w]
	b.emits, b.margs = b.emits[:0], b.margs[:0]
	off := 0
	wb.pc.startSeqs(len(seqs))
	for _, i := range seqs {
		n := len(o.sc.labels[i]) * m
		emit := b.emit[off : off+n]
		o.scoreSeq(wb, theta, int(i), emit)
		b.emits = append(b.emits, emit)
		b.margs = append(b.margs, b.marg[off:off+n])
		off += n
	}
	wb.pc.mark(phaseScore) // the group's forward–backward is marked by its first finishSeq
	b.logZ = growF(b.logZ, len(seqs))
	acc := wb.tg[:md.bigOff-md.nState]
	nt := len(acc)
	if k, err := lockplan.Posteriors(tr, ws, b.emits, b.margs, b.logZ, acc[:m*m], acc[nt-2*m:nt-m], acc[nt-m:]); err != nil {
		if k < 0 {
			return fmt.Errorf("train: %w", err)
		}
		return fmt.Errorf("train: sequence %d: %w", seqs[k], err)
	}
	for k, i := range seqs {
		if err := o.finishSeq(wb, theta, int(i), b.emits[k], b.margs[k], b.logZ[k], sparse.Seq{}, nil); err != nil {
			return err
		}
	}
	return nil
}
