// Command blas generates the BLAS-1 kernels of package kernels (dot, axpy,
// scale, the elementwise mul, the widening axpyWiden) and the FMA peak probe
// used by the benchmarks.
package main

//go:generate go run . -out ../../kernels/blas_amd64.s -stubs ../../kernels/blas_amd64.go -pkg kernels

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

// Each kernel runs four vectors per iteration (independent accumulators hide
// the FMA latency), then one vector at a time, then a masked tail.
func main() {
	for _, i := range ISAs {
		genDot(i)
		genAxpy(i)
		genScale(i)
		genMul(i)
		genPeak(i)
	}
	// float32: Axpy32, Scale32 and Mul32 are the same kernels with float32
	// elements; Dot32 sums in float64 (genDot32), AxpyWiden adds float32
	// into float64 (genAxpyWiden).
	for _, i := range ISAs32 {
		genAxpy(i)
		genScale(i)
		genMul(i)
	}
	for _, i := range ISAs {
		genDot32(i)
		genAxpyWiden(i)
	}
	Emit()
}

// dotArgs loads the arguments of Dot and Dot32 and zeroes their four
// accumulators.
func dotArgs(i *ISA) (x, y reg.Register, n reg.GPVirtual, acc []reg.VecVirtual) {
	x = Load(Param("x").Base(), GP64())
	y = Load(Param("y").Base(), GP64())
	n = Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	acc = i.Vecs(4)
	for _, a := range acc {
		i.Zero(a)
	}
	return x, y, n, acc
}

// dotReturn returns the sum of the lanes of (acc0+acc1)+(acc2+acc3).
func dotReturn(i *ISA, acc []reg.VecVirtual) {
	i.VADD(acc[1], acc[0], acc[0])
	i.VADD(acc[3], acc[2], acc[2])
	i.VADD(acc[2], acc[0], acc[0])
	Store(i.HSum(acc[0]), ReturnIndex(0))
	Ret()
}

func genDot(i *ISA) {
	fn := i.Fn("dot")
	Kernel(fn, NOSPLIT, "func(x, y []float64) float64", "returns Σ x[i]·y[i]; len(y) ≥ len(x).")
	x, y, n, acc := dotArgs(i)
	idx := GP64()
	Stripes(i, "dot", n, idx, 4, func(u int) {
		t := i.Vec()
		i.VMOVU(i.Addr(x, idx, u*i.Bytes), t)
		i.VFMADD231(i.Addr(y, idx, u*i.Bytes), t, acc[u])
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		a, b := i.Vec(), i.Vec()
		i.LoadMasked(m, i.Addr(x, idx, 0), a)
		i.LoadMasked(m, i.Addr(y, idx, 0), b)
		i.VFMADD231(a, b, acc[0])
	})
	dotReturn(i, acc)
}

// axpyArgs loads the arguments of Axpy and AxpyWiden (a broadcast) and
// allocates their index.
func axpyArgs(i *ISA) (av reg.VecVirtual, x, y reg.Register, n, idx reg.GPVirtual) {
	av = i.Vec()
	i.VBROADCAST(ParamAddr("a"), av)
	x = Load(Param("x").Base(), GP64())
	y = Load(Param("y").Base(), GP64())
	n = Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	return av, x, y, n, GP64()
}

func genAxpy(i *ISA) {
	fn := i.Fn("axpy")
	Kernel(fn, NOSPLIT, i.Sig("func(a %s, x, y []%s)"), "sets y[i] += a·x[i] for i < len(x); len(y) ≥ len(x).")
	av, x, y, n, idx := axpyArgs(i)
	Stripes(i, "axpy", n, idx, 4, func(u int) {
		t := i.Vec()
		i.VMOVU(i.Addr(y, idx, u*i.Bytes), t)
		i.VFMADD231(i.Addr(x, idx, u*i.Bytes), av, t)
		i.VMOVU(t, i.Addr(y, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		a, b := i.Vec(), i.Vec()
		i.LoadMasked(m, i.Addr(x, idx, 0), a)
		i.LoadMasked(m, i.Addr(y, idx, 0), b)
		i.VFMADD231(a, av, b)
		i.StoreMasked(m, b, i.Addr(y, idx, 0))
	})
	Ret()
}

func genScale(i *ISA) {
	fn := i.Fn("scale")
	Kernel(fn, NOSPLIT, i.Sig("func(a %s, x []%s)"), "sets x[i] *= a.")
	av := i.Vec()
	i.VBROADCAST(ParamAddr("a"), av)
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	ScaleElems(i, "scale", x, x, n, av, 4)
	Ret()
}

// genMul emits Mul (Mul32): dst[i] = x[i]·y[i]·a, the two products rounded
// in that order as Go rounds them, so every tier gives the generic kernel's
// bits. dst may be x or y.
func genMul(i *ISA) {
	fn := i.Fn("mul")
	Kernel(fn, NOSPLIT, i.Sig("func(dst, x, y []%s, a %s)"), "sets dst[i] = x[i]·y[i]·a for i < len(x); len(dst), len(y) ≥ len(x).")
	av := i.Vec()
	i.VBROADCAST(ParamAddr("a"), av)
	dst := Load(Param("dst").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	y := Load(Param("y").Base(), GP64())
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	idx := GP64()
	Stripes(i, "mul", n, idx, 4, func(u int) {
		t := i.Vec()
		i.VMOVU(i.Addr(x, idx, u*i.Bytes), t)
		i.VMUL(i.Addr(y, idx, u*i.Bytes), t, t)
		i.VMUL(av, t, t)
		i.VMOVU(t, i.Addr(dst, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		a, b := i.Vec(), i.Vec()
		i.LoadMasked(m, i.Addr(x, idx, 0), a)
		i.LoadMasked(m, i.Addr(y, idx, 0), b)
		i.VMUL(b, a, a)
		i.VMUL(av, a, a)
		i.StoreMasked(m, a, i.Addr(dst, idx, 0))
	})
	Ret()
}

// halfMask is a mask of the low rem (< W) float32 lanes of half a vector of
// the float64 tier i: a K register (AVX-512) or an xmm of dword masks.
func halfMask(i *ISA, rem reg.GPVirtual) Op {
	if i.Is512() {
		ones, mb := GP64(), GP64()
		MOVQ(I32(-1), ones)
		BZHIQ(rem, ones, mb)
		k := K()
		KMOVW(mb.As32(), k)
		return k
	}
	off, tb := GP64(), GP64()
	MOVQ(U32(8), off)
	SUBQ(rem, off)
	LEAQ(DwordMaskTable("tailmask32", 8), tb)
	m := XMM()
	VMOVDQU(Mem{Base: tb, Index: off, Scale: 4}, m)
	return m
}

// widenMasked loads the float32 lanes of src under m (halfMask; lanes
// masked off are not read) into the low half of v and widens them to the
// float64 lanes of v (VCVTPS2PD, exact).
func widenMasked(i *ISA, m Op, src Mem, v reg.VecVirtual) {
	half := v.AsX()
	if i.Is512() {
		half = v.AsY()
		VMOVUPS_Z(src, m, half)
	} else {
		VMASKMOVPS(src, m, half)
	}
	VCVTPS2PD(half, v)
}

// at32 addresses float32 element idx of b.
func at32(b, idx reg.Register, disp int) Mem { return Mem{Base: b, Index: idx, Scale: 4, Disp: disp} }

// genAxpyWiden emits AxpyWiden for the float64 tier i: y[i] += a·float64(x[i])
// with x float32, each load widened (exact), then a product and a sum each
// rounded as Go rounds them on amd64 (no FMA), so every tier gives the
// generic kernel's bits.
func genAxpyWiden(i *ISA) {
	fn := "axpyWiden" + i.Name
	Kernel(fn, NOSPLIT, "func(a float64, x []float32, y []float64)", "sets y[i] += a·float64(x[i]) for i < len(x); len(y) ≥ len(x).")
	av, x, y, n, idx := axpyArgs(i)
	Stripes(i, "axpyWiden", n, idx, 4, func(u int) {
		t := i.Vec()
		VCVTPS2PD(at32(x, idx, u*i.Bytes/2), t)
		VMULPD(av, t, t)
		VADDPD(i.Addr(y, idx, u*i.Bytes), t, t)
		VMOVUPD(t, i.Addr(y, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		t, b := i.Vec(), i.Vec()
		widenMasked(i, halfMask(i, rem), at32(x, idx, 0), t)
		VMULPD(av, t, t)
		m := i.TailMask(rem)
		i.LoadMasked(m, i.Addr(y, idx, 0), b)
		VADDPD(b, t, t)
		i.StoreMasked(m, t, i.Addr(y, idx, 0))
	})
	Ret()
}

// genDot32 emits Dot32 for the float64 tier i: the dot product of two
// float32 vectors in float64, each float32 load widened to float64
// (VCVTPS2PD, exact) before the FMA, so the products are exact and only the
// summation order differs from the generic kernel. The tail (< W elements)
// is loaded under a dword mask and widened.
func genDot32(i *ISA) {
	fn := "dot32" + i.Name
	Kernel(fn, NOSPLIT, "func(x, y []float32) float64", "returns Σ x[i]·y[i] in float64; len(y) ≥ len(x).")
	x, y, n, acc := dotArgs(i)
	idx := GP64()
	Stripes(i, "dot32", n, idx, 4, func(u int) {
		a, b := i.Vec(), i.Vec()
		VCVTPS2PD(at32(x, idx, u*i.Bytes/2), a)
		VCVTPS2PD(at32(y, idx, u*i.Bytes/2), b)
		VFMADD231PD(a, b, acc[u])
	}, func(rem reg.GPVirtual) {
		a, b := i.Vec(), i.Vec()
		m := halfMask(i, rem)
		widenMasked(i, m, at32(x, idx, 0), a)
		widenMasked(i, m, at32(y, idx, 0), b)
		VFMADD231PD(a, b, acc[0])
	})
	dotReturn(i, acc)
}

// genPeak emits a probe of the core's FMA throughput: n iterations of
// independent vector FMAs (12 accumulators on AVX2, 16 on AVX-512, more than
// latency × throughput), 2·W flops each.
func genPeak(i *ISA) {
	fn := i.Fn("fmaPeak")
	TEXT(fn, NOSPLIT, "func(n int) float64")
	Doc(fn+" runs n iterations of independent FMAs and returns a value that", "depends on all of them (so nothing is optimised away).")
	n := Load(Param("n"), GP64())
	acc := i.Tier(12, 16)
	a := i.Vecs(acc)
	x, y := i.Vec(), i.Vec()
	i.VBROADCAST(ConstF64("peakone", 0.999999), x)
	i.VBROADCAST(ConstF64("peaksmall", 1e-9), y)
	for _, v := range a {
		i.Zero(v)
	}
	Label(i.Label("peak", "loop"))
	TESTQ(n, n)
	JZ(LabelRef(i.Label("peak", "done")))
	for _, v := range a {
		i.VFMADD231(x, y, v)
	}
	DECQ(n)
	JMP(LabelRef(i.Label("peak", "loop")))
	Label(i.Label("peak", "done"))
	for k := 1; k < acc; k++ {
		i.VADD(a[k], a[0], a[0])
	}
	Store(i.HSum(a[0]), ReturnIndex(0))
	Ret()
}
