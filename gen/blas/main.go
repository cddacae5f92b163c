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
	ConstraintExpr("!purego")
	for _, i := range ISAs {
		genDot(i)
		genAxpy(i)
		genScale(i)
		genPeak(i)
	}
	Generate()
}

func genDot(i *ISA) {
	fn := i.Fn("dot")
	TEXT(fn, NOSPLIT, "func(x, y []float64) float64")
	Pragma("noescape")
	Doc(fn + " returns Σ x[i]·y[i]; len(y) ≥ len(x).")
	x := Load(Param("x").Base(), GP64())
	y := Load(Param("y").Base(), GP64())
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	acc := i.Vecs(4)
	for _, a := range acc {
		i.Zero(a)
	}
	idx := GP64()
	Stripes(i, "dot", n, idx, 4, func(u int) {
		t := i.Vec()
		VMOVUPD(Addr(x, idx, u*i.Bytes), t)
		VFMADD231PD(Addr(y, idx, u*i.Bytes), t, acc[u])
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		a, b := i.Vec(), i.Vec()
		i.LoadMasked(m, Addr(x, idx, 0), a)
		i.LoadMasked(m, Addr(y, idx, 0), b)
		VFMADD231PD(a, b, acc[0])
	})
	VADDPD(acc[1], acc[0], acc[0])
	VADDPD(acc[3], acc[2], acc[2])
	VADDPD(acc[2], acc[0], acc[0])
	Store(i.HSum(acc[0]), ReturnIndex(0))
	Ret()
}

func genAxpy(i *ISA) {
	fn := i.Fn("axpy")
	TEXT(fn, NOSPLIT, "func(a float64, x, y []float64)")
	Pragma("noescape")
	Doc(fn + " sets y[i] += a·x[i] for i < len(x); len(y) ≥ len(x).")
	av := i.Vec()
	VBROADCASTSD(ParamAddr("a"), av)
	x := Load(Param("x").Base(), GP64())
	y := Load(Param("y").Base(), GP64())
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	idx := GP64()
	Stripes(i, "axpy", n, idx, 4, func(u int) {
		t := i.Vec()
		VMOVUPD(Addr(y, idx, u*i.Bytes), t)
		VFMADD231PD(Addr(x, idx, u*i.Bytes), av, t)
		VMOVUPD(t, Addr(y, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		a, b := i.Vec(), i.Vec()
		i.LoadMasked(m, Addr(x, idx, 0), a)
		i.LoadMasked(m, Addr(y, idx, 0), b)
		VFMADD231PD(a, av, b)
		i.StoreMasked(m, b, Addr(y, idx, 0))
	})
	Ret()
}

func genScale(i *ISA) {
	fn := i.Fn("scale")
	TEXT(fn, NOSPLIT, "func(a float64, x []float64)")
	Pragma("noescape")
	Doc(fn + " sets x[i] *= a.")
	av := i.Vec()
	VBROADCASTSD(ParamAddr("a"), av)
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	idx := GP64()
	Stripes(i, "scale", n, idx, 4, func(u int) {
		t := i.Vec()
		VMULPD(Addr(x, idx, u*i.Bytes), av, t)
		VMOVUPD(t, Addr(x, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		a := i.Vec()
		i.LoadMasked(m, Addr(x, idx, 0), a)
		VMULPD(a, av, a)
		i.StoreMasked(m, a, Addr(x, idx, 0))
	})
	Ret()
}

// genPeak emits a probe of the core's FMA throughput: n iterations of
// independent vector FMAs (12 accumulators on AVX2, 16 on AVX-512, more than
// latency × throughput), 2·W flops each.
func genPeak(i *ISA) {
	fn := i.Fn("fmaPeak")
	TEXT(fn, NOSPLIT, "func(n int) float64")
	Doc(fn+" runs n iterations of independent FMAs and returns a value that", "depends on all of them (so nothing is optimised away).")
	n := Load(Param("n"), GP64())
	acc := 12
	if i.Is512() {
		acc = 16
	}
	a := i.Vecs(acc)
	x, y := i.Vec(), i.Vec()
	VBROADCASTSD(ConstF64("peakone", 0.999999), x)
	VBROADCASTSD(ConstF64("peaksmall", 1e-9), y)
	for _, v := range a {
		i.Zero(v)
	}
	Label(i.Label("peak", "loop"))
	TESTQ(n, n)
	JZ(LabelRef(i.Label("peak", "done")))
	for _, v := range a {
		VFMADD231PD(x, y, v)
	}
	DECQ(n)
	JMP(LabelRef(i.Label("peak", "loop")))
	Label(i.Label("peak", "done"))
	for k := 1; k < acc; k++ {
		VADDPD(a[k], a[0], a[0])
	}
	Store(i.HSum(a[0]), ReturnIndex(0))
	Ret()
}
