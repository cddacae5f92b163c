package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

// genShiftRows emits ShiftRows: per row, v = in + a is stored to out while
// its maximum and its smallest finite entry accumulate (masked-off tail
// lanes count as −Inf for the maximum and +Inf for the minimum); the row
// is then shifted by its maximum in place (it is still in L1). The tail
// vector stays in a register until it is shifted and stored: a masked
// store does not forward to a load, and reloading it cost about 4 ns a
// row (M = 9: 11.4 ns a row against 7.1 at M = 16).
func genShiftRows(i *ISA) {
	fn := i.Fn("shiftRows")
	Kernel(fn, NOSPLIT, i.Sig("func(out, mx, lo, in, a []%s, T, M int)"), "is ShiftRows; the wrapper has checked the sizes (T, M ≥ 1).")
	out := Load(Param("out").Base(), GP64())
	pmx := Load(Param("mx").Base(), GP64())
	plo := Load(Param("lo").Base(), GP64())
	in := Load(Param("in").Base(), GP64())
	pa := Load(Param("a").Base(), GP64())
	T := Load(Param("T"), GP64())
	M := Load(Param("M"), GP64()).(reg.GPVirtual)
	full := GP64()
	MOVQ(M, full)
	ANDQ(I32(-i.W), full)
	rem := GP64()
	MOVQ(M, rem)
	SUBQ(full, rem)
	tm := i.TailMask(rem)
	ninf, pinf, negMax := i.Vec(), i.Vec(), i.Vec()
	i.VBROADCAST(i.ConstBits("rowsninf", math.Inf(-1)), ninf)
	i.VBROADCAST(i.ConstBits("rowspinf", math.Inf(1)), pinf)
	negmax := -math.MaxFloat64
	if i.F32() {
		negmax = -math.MaxFloat32
	}
	i.VBROADCAST(i.Const("rowsnegmax", negmax), negMax)
	const ge = 0x1D // GE_OQ
	idx := GP64()

	Label(i.Label(fn, "row"))
	mx, mn := i.Vec(), i.Vec()
	i.VMOVA(ninf, mx)
	i.VMOVA(pinf, mn)
	XORQ(idx, idx)
	Label(i.Label(fn, "col"))
	CMPQ(idx, full)
	JAE(LabelRef(i.Label(fn, "coltail")))
	v := i.Vec()
	i.VMOVU(i.Addr(in, idx, 0), v)
	i.VADD(i.Addr(pa, idx, 0), v, v)
	i.VMOVU(v, i.Addr(out, idx, 0))
	i.VMAX(v, mx, mx)
	if i.Is512() {
		k := K()
		i.VCMP(U8(ge), negMax, v, k)
		i.VMIN(v, mn, k, mn)
	} else {
		c := i.Vec()
		i.VCMP(U8(ge), negMax, v, c)
		i.VBLENDV(c, v, pinf, c)
		i.VMIN(c, mn, mn)
	}
	ADDQ(I32(i.W), idx)
	JMP(LabelRef(i.Label(fn, "col")))

	Label(i.Label(fn, "coltail"))
	vt := i.Vec() // the tail, kept for "subtail"
	TESTQ(rem, rem)
	JZ(LabelRef(i.Label(fn, "reduce")))
	{
		v, t := vt, i.Vec()
		i.LoadMasked(tm, i.Addr(in, idx, 0), v)
		i.LoadMasked(tm, i.Addr(pa, idx, 0), t)
		i.VADD(t, v, v)
		if i.Is512() {
			i.VMAX(v, mx, tm.K, mx)
			k := K()
			i.VCMP(U8(ge), negMax, v, tm.K, k)
			i.VMIN(v, mn, k, mn)
		} else {
			i.VBLENDV(tm.Y, v, ninf, t)
			i.VMAX(t, mx, mx)
			i.VCMP(U8(ge), negMax, v, t)
			i.VAND(tm.Y, t, t)
			i.VBLENDV(t, v, pinf, t)
			i.VMIN(t, mn, mn)
		}
	}

	Label(i.Label(fn, "reduce"))
	hmx := i.HReduce(mx, i.VMAX, i.VMAX)
	hmn := i.HReduce(mn, i.VMIN, i.VMIN)
	i.VMOVS(hmx, Mem{Base: pmx})
	i.VMOVS(hmn, Mem{Base: plo})
	m := i.Vec()
	i.VBROADCAST(hmx, m)
	XORQ(idx, idx)
	Label(i.Label(fn, "sub"))
	CMPQ(idx, full)
	JAE(LabelRef(i.Label(fn, "subtail")))
	{
		v := i.Vec()
		i.VMOVU(i.Addr(out, idx, 0), v)
		i.VSUB(m, v, v)
		i.VMOVU(v, i.Addr(out, idx, 0))
	}
	ADDQ(I32(i.W), idx)
	JMP(LabelRef(i.Label(fn, "sub")))
	Label(i.Label(fn, "subtail"))
	TESTQ(rem, rem)
	JZ(LabelRef(i.Label(fn, "next")))
	i.VSUB(m, vt, vt)
	i.StoreMasked(tm, vt, i.Addr(out, idx, 0))
	Label(i.Label(fn, "next"))
	LEAQ(Mem{Base: in, Index: M, Scale: i.Sc()}, in)
	LEAQ(Mem{Base: out, Index: M, Scale: i.Sc()}, out)
	ADDQ(I32(i.Size), pmx)
	ADDQ(I32(i.Size), plo)
	DECQ(T)
	JNZ(LabelRef(i.Label(fn, "row")))
	Ret()
}
