// Command blas generates the BLAS-1 kernels of package kernels (dot, axpy,
// scale) and the FMA peak probe used by the benchmarks.
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
		genPeak(i)
	}
	// float32: Axpy32 and Scale32 are the same kernels with float32
	// elements; Dot32 sums in float64 (genDot32).
	for _, i := range ISAs32 {
		genAxpy(i)
		genScale(i)
	}
	genDot32(AVX2)
	genDot32(AVX512)
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

func genAxpy(i *ISA) {
	fn := i.Fn("axpy")
	Kernel(fn, NOSPLIT, i.Sig("func(a %s, x, y []%s)"), "sets y[i] += a·x[i] for i < len(x); len(y) ≥ len(x).")
	av := i.Vec()
	i.VBROADCAST(ParamAddr("a"), av)
	x := Load(Param("x").Base(), GP64())
	y := Load(Param("y").Base(), GP64())
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	idx := GP64()
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

// genDot32 emits Dot32 for the float64 tier i: the dot product of two
// float32 vectors in float64, each float32 load widened to float64
// (VCVTPS2PD, exact) before the FMA, so the products are exact and only the
// summation order differs from the generic kernel. The tail (< W elements)
// is loaded under a dword mask and widened.
func genDot32(i *ISA) {
	fn := "dot32" + i.Name
	Kernel(fn, NOSPLIT, "func(x, y []float32) float64", "returns Σ x[i]·y[i] in float64; len(y) ≥ len(x).")
	x, y, n, acc := dotArgs(i)
	half := func(v reg.VecVirtual) reg.Register {
		if i.Is512() {
			return v.AsY()
		}
		return v.AsX()
	}
	at := func(b, idx reg.Register, disp int) Mem { return Mem{Base: b, Index: idx, Scale: 4, Disp: disp} }
	idx := GP64()
	Stripes(i, "dot32", n, idx, 4, func(u int) {
		a, b := i.Vec(), i.Vec()
		VCVTPS2PD(at(x, idx, u*i.Bytes/2), a)
		VCVTPS2PD(at(y, idx, u*i.Bytes/2), b)
		VFMADD231PD(a, b, acc[u])
	}, func(rem reg.GPVirtual) {
		a, b := i.Vec(), i.Vec()
		if i.Is512() {
			ones, mb := GP64(), GP64()
			MOVQ(I32(-1), ones)
			BZHIQ(rem, ones, mb)
			k := K()
			KMOVW(mb.As32(), k)
			VMOVUPS_Z(at(x, idx, 0), k, half(a))
			VMOVUPS_Z(at(y, idx, 0), k, half(b))
		} else {
			off, tb := GP64(), GP64()
			MOVQ(U32(8), off)
			SUBQ(rem, off)
			LEAQ(DwordMaskTable("tailmask32", 8), tb)
			m := XMM()
			VMOVDQU(Mem{Base: tb, Index: off, Scale: 4}, m)
			VMASKMOVPS(at(x, idx, 0), m, half(a))
			VMASKMOVPS(at(y, idx, 0), m, half(b))
		}
		VCVTPS2PD(half(a), a)
		VCVTPS2PD(half(b), b)
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
