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
// is then shifted by its maximum in place (it is still in L1).
func genShiftRows(i *ISA) {
	fn := i.Fn("shiftRows")
	TEXT(fn, NOSPLIT, "func(out, mx, lo, in, a []float64, T, M int)")
	Pragma("noescape")
	Doc(fn + " is ShiftRows; the wrapper has checked the sizes (T, M ≥ 1).")
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
	VBROADCASTSD(ConstU64("rowsninf", math.Float64bits(math.Inf(-1))), ninf)
	VBROADCASTSD(ConstU64("rowspinf", math.Float64bits(math.Inf(1))), pinf)
	VBROADCASTSD(ConstF64("rowsnegmax", -math.MaxFloat64), negMax)
	const ge = 0x1D // GE_OQ
	idx := GP64()

	Label(i.Label(fn, "row"))
	mx, mn := i.Vec(), i.Vec()
	VMOVAPD(ninf, mx)
	VMOVAPD(pinf, mn)
	XORQ(idx, idx)
	Label(i.Label(fn, "col"))
	CMPQ(idx, full)
	JAE(LabelRef(i.Label(fn, "coltail")))
	v := i.Vec()
	VMOVUPD(Addr(in, idx, 0), v)
	VADDPD(Addr(pa, idx, 0), v, v)
	VMOVUPD(v, Addr(out, idx, 0))
	VMAXPD(v, mx, mx)
	if i.Is512() {
		k := K()
		VCMPPD(U8(ge), negMax, v, k)
		VMINPD(v, mn, k, mn)
	} else {
		c := i.Vec()
		VCMPPD(U8(ge), negMax, v, c)
		VBLENDVPD(c, v, pinf, c)
		VMINPD(c, mn, mn)
	}
	ADDQ(I32(i.W), idx)
	JMP(LabelRef(i.Label(fn, "col")))

	Label(i.Label(fn, "coltail"))
	TESTQ(rem, rem)
	JZ(LabelRef(i.Label(fn, "reduce")))
	{
		v, t := i.Vec(), i.Vec()
		i.LoadMasked(tm, Addr(in, idx, 0), v)
		i.LoadMasked(tm, Addr(pa, idx, 0), t)
		VADDPD(t, v, v)
		i.StoreMasked(tm, v, Addr(out, idx, 0))
		if i.Is512() {
			VMAXPD(v, mx, tm.K, mx)
			k := K()
			VCMPPD(U8(ge), negMax, v, tm.K, k)
			VMINPD(v, mn, k, mn)
		} else {
			VBLENDVPD(tm.Y, v, ninf, t)
			VMAXPD(t, mx, mx)
			VCMPPD(U8(ge), negMax, v, t)
			VANDPD(tm.Y, t, t)
			VBLENDVPD(t, v, pinf, t)
			VMINPD(t, mn, mn)
		}
	}

	Label(i.Label(fn, "reduce"))
	hmx := hred(i, mx, true)
	hmn := hred(i, mn, false)
	VMOVSD(hmx, Mem{Base: pmx})
	VMOVSD(hmn, Mem{Base: plo})
	m := i.Vec()
	VBROADCASTSD(hmx, m)
	XORQ(idx, idx)
	Label(i.Label(fn, "sub"))
	CMPQ(idx, full)
	JAE(LabelRef(i.Label(fn, "subtail")))
	{
		v := i.Vec()
		VMOVUPD(Addr(out, idx, 0), v)
		VSUBPD(m, v, v)
		VMOVUPD(v, Addr(out, idx, 0))
	}
	ADDQ(I32(i.W), idx)
	JMP(LabelRef(i.Label(fn, "sub")))
	Label(i.Label(fn, "subtail"))
	TESTQ(rem, rem)
	JZ(LabelRef(i.Label(fn, "next")))
	{
		v := i.Vec()
		i.LoadMasked(tm, Addr(out, idx, 0), v)
		VSUBPD(m, v, v)
		i.StoreMasked(tm, v, Addr(out, idx, 0))
	}
	Label(i.Label(fn, "next"))
	LEAQ(Mem{Base: in, Index: M, Scale: 8}, in)
	LEAQ(Mem{Base: out, Index: M, Scale: 8}, out)
	ADDQ(I32(8), pmx)
	ADDQ(I32(8), plo)
	DECQ(T)
	JNZ(LabelRef(i.Label(fn, "row")))
	Ret()
}

// hred reduces v's lanes by maximum (or minimum) and returns the xmm
// register whose low lane holds it; v is clobbered.
func hred(i *ISA, v reg.VecVirtual, isMax bool) reg.Register {
	op := VMINPD
	if isMax {
		op = VMAXPD
	}
	if i.Is512() {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		op(hi, v.AsY(), hi)
		v = hi
	}
	x := XMM()
	VEXTRACTF128(U8(1), v.AsY(), x)
	op(x, v.AsX(), v.AsX())
	VUNPCKHPD(v.AsX(), v.AsX(), x)
	op(x, v.AsX(), v.AsX())
	return v.AsX()
}
