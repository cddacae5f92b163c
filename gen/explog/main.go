// Command explog generates the elementwise Exp and Log kernels of package
// kernels and the log-domain forward step LogMatVec, which inlines the same
// vector exp and log (gen/internal/isa/explog.go).
package main

//go:generate go run . -out ../../kernels/explog_amd64.s -stubs ../../kernels/explog_amd64.go -pkg kernels

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	for _, i := range ISAs {
		genExp(i)
		genLog(i)
		genLogMatVec(i)
	}
	for _, i := range ISAs32 {
		genExp(i)
	}
	Emit()
}

// regConsts returns the first n names (all of them if n is larger).
func regConsts(names []string, n int) []string {
	if n < len(names) {
		return names[:n]
	}
	return names
}

// elementwise emits dst[k] = f(src[k]) over len(src) elements: two vectors per
// iteration, then one, then a masked tail (masked-off lanes compute f(0) and
// are not stored).
func elementwise(i *ISA, name string, f func(x, y reg.VecVirtual)) {
	d := Load(Param("dst").Base(), GP64())
	s := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64()).(reg.GPVirtual)
	idx := GP64()
	Stripes(i, name, n, idx, 2, func(u int) {
		x, y := i.Vec(), i.Vec()
		i.VMOVU(i.Addr(s, idx, u*i.Bytes), x)
		f(x, y)
		i.VMOVU(y, i.Addr(d, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		x, y := i.Vec(), i.Vec()
		i.LoadMasked(m, i.Addr(s, idx, 0), x)
		f(x, y)
		i.StoreMasked(m, y, i.Addr(d, idx, 0))
	})
	Ret()
}

func genExp(i *ISA) {
	fn := i.Fn("exp")
	Kernel(fn, NOSPLIT, i.Sig("func(dst, src []%s)"), "sets dst[k] = exp(src[k]) for k < len(src) (flushing results below", "ExpMin to +0); len(dst) ≥ len(src), dst may alias src.")
	c := i.NewConsts()
	// AVX2: the loop body needs 4 vectors, the tail 5, so 11 constants
	// stay in registers and the rest are memory operands.
	c.Load(regConsts(i.ExpConstNames(), i.Tier(11, 32))...)
	elementwise(i, "exp", func(x, y reg.VecVirtual) { i.ExpPD(c, ExpFull, x, y) })
}

func genLog(i *ISA) {
	fn := i.Fn("log")
	Kernel(fn, NOSPLIT, "func(dst, src []float64)", "sets dst[k] = log(src[k]) for k < len(src); len(dst) ≥ len(src),", "dst may alias src.")
	c := i.NewConsts()
	c.Load(regConsts(LogConstNames(), i.Tier(9, 32))...)
	elementwise(i, "log", func(x, y reg.VecVirtual) { i.LogPD(c, LogFull, x, y) })
}

// genLogMatVec emits the log-sum-exp matrix–vector product. For each vector
// of W columns j (the last one masked), two passes over the M rows of tr:
// the column maxima m_j (VMAXPD keeps m when the term is NaN, as the
// reference's `if x > m`), then Σ_i exp(a[i] + tr[i][j] − m_j) with the
// inlined exp (terms ≤ 0, -Inf or NaN), then out = m + log(sum), or m where
// m = ±Inf.
func genLogMatVec(i *ISA) {
	fn := i.Fn("logMatVec")
	Kernel(fn, NOSPLIT, "func(out, a, tr []float64, M int)", "sets out[j] = m_j + log Σ_i exp(a[i] + tr[i][j] − m_j) with", "m_j = max_i (a[i] + tr[i][j]); tr is M×M, M ≥ 1.")
	op := Load(Param("out").Base(), GP64())
	ap := Load(Param("a").Base(), GP64())
	trp := Load(Param("tr").Base(), GP64())
	M := Load(Param("M"), GP64())
	rowb := GP64()
	MOVQ(M, rowb)
	SHLQ(U8(3), rowb)
	aend := GP64()
	LEAQ(Mem{Base: ap, Index: M, Scale: 8}, aend)

	c := i.NewConsts()
	// AVX2: the column loop needs 8 vectors, so 8 constants stay in
	// registers.
	c.Load(regConsts(i.ExpConstNames(), i.Tier(8, 5+ExpDegree+1))...)

	j, end := GP64(), GP64()
	XORQ(j, j)
	MOVQ(M, end)
	ANDQ(I32(-i.W), end)
	Label(i.Label("lmv", "cols"))
	CMPQ(j, end)
	JAE(LabelRef(i.Label("lmv", "tail")))
	lmvBlock(i, c, "full", op, ap, trp, rowb, aend, j, nil)
	ADDQ(I32(i.W), j)
	JMP(LabelRef(i.Label("lmv", "cols")))
	Label(i.Label("lmv", "tail"))
	rem := GP64()
	MOVQ(M, rem)
	SUBQ(j, rem)
	JZ(LabelRef(i.Label("lmv", "done")))
	mask := i.TailMask(rem)
	lmvBlock(i, c, "tail", op, ap, trp, rowb, aend, j, &mask)
	Label(i.Label("lmv", "done"))
	Ret()
}

// lmvBlock emits the work for the W columns starting at j (masked when mask
// is non-nil: masked-off lanes load 0 and are not stored).
func lmvBlock(i *ISA, c *Consts, tag string, op, ap, trp, rowb, aend, j reg.Register, mask *Mask) {
	row := func(p Mem, ab, v reg.VecVirtual) {
		if mask != nil {
			i.LoadMasked(*mask, p, v)
			VADDPD(ab, v, v)
		} else {
			VADDPD(p, ab, v)
		}
	}
	// rows emits a loop over the M rows: body gets the row's a[i] broadcast
	// and a[i] + tr[i][j:j+W].
	rows := func(pass string, body func(v reg.VecVirtual)) {
		p, aq := GP64(), GP64()
		LEAQ(Addr(trp, j, 0), p)
		MOVQ(ap, aq)
		lbl := i.Label("lmv", tag+pass)
		Label(lbl)
		ab, v := i.Vec(), i.Vec()
		VBROADCASTSD(Mem{Base: aq}, ab)
		row(Mem{Base: p}, ab, v)
		body(v)
		ADDQ(rowb, p)
		ADDQ(U8(8), aq)
		CMPQ(aq, aend)
		JB(LabelRef(lbl))
	}
	// Pass 1: column maxima, two rows per iteration into two accumulators
	// (the VMAXPD latency chain would otherwise bound it). Combining them
	// can only differ from the reference's first-wins order between +0 and
	// −0, which gives the same out (the shifted terms and m + log S agree).
	m, m1 := i.Vec(), i.Vec()
	i.Mov(c.Op("neginf"), m)
	i.Mov(c.Op("neginf"), m1)
	{
		p, aq, end2 := GP64(), GP64(), GP64()
		LEAQ(Addr(trp, j, 0), p)
		MOVQ(ap, aq)
		LEAQ(Mem{Base: aend, Disp: -8}, end2)
		pair, one, done := i.Label("lmv", tag+"max2"), i.Label("lmv", tag+"max1"), i.Label("lmv", tag+"maxd")
		Label(pair)
		CMPQ(aq, end2)
		JAE(LabelRef(one))
		for k, acc := range []reg.VecVirtual{m, m1} {
			ab, v := i.Vec(), i.Vec()
			VBROADCASTSD(Mem{Base: aq, Disp: 8 * k}, ab)
			if k == 0 {
				row(Mem{Base: p}, ab, v)
			} else {
				row(Mem{Base: p, Index: rowb, Scale: 1}, ab, v)
			}
			VMAXPD(acc, v, acc) // Intel vmaxpd acc, v, acc: NaN in v keeps acc
		}
		LEAQ(Mem{Base: p, Index: rowb, Scale: 2}, p)
		ADDQ(U8(16), aq)
		JMP(LabelRef(pair))
		Label(one)
		CMPQ(aq, aend)
		JAE(LabelRef(done))
		ab, v := i.Vec(), i.Vec()
		VBROADCASTSD(Mem{Base: aq}, ab)
		row(Mem{Base: p}, ab, v)
		VMAXPD(m, v, m)
		Label(done)
		VMAXPD(m1, m, m)
	}
	// Pass 2: the sum of exps.
	sum := i.Vec()
	i.Zero(sum)
	rows("sum", func(v reg.VecVirtual) {
		e := i.Vec()
		VSUBPD(m, v, v) // (a[i] + tr[i][j]) − m, as the reference
		i.ExpPD(c, ExpNonPos, v, e)
		VADDPD(e, sum, sum)
	})
	l, o, am := i.Vec(), i.Vec(), i.Vec()
	i.LogPD(c, LogNormal, sum, l)
	VADDPD(l, m, o)
	VANDPD(c.Op("absmask"), m, am)
	i.Select(CmpEQ, am, c.Op("inf"), m, o) // m = ±Inf → m
	dst := Addr(op, j, 0)
	if mask != nil {
		i.StoreMasked(*mask, o, dst)
	} else {
		VMOVUPD(o, dst)
	}
}
