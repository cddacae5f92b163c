// Command sparse generates the sparse-feature kernels of package kernels:
// gather (scores += Σ value·weight row) and scatter (gradient rows +=
// value·marginals), both over a whole sequence given in CSR form.
//
// Shape of both kernels. A row of M float64 is cut into chunks of CH vectors
// (CH·W elements); the last chunk has nv vectors, 1 ≤ nv ≤ CH, the last of
// them masked (the mask may be full). nv depends on M only, so it is decided
// once per call: the function holds CH copies of the whole position loop,
// one per nv, and jumps to the right one. Inside a position, chunks are the
// outer loop and features the inner one; the chunk of the position's own row
// (s for gather, p for scatter) stays in registers across the features, so a
// feature costs one id load, one multiply for its row address, one
// broadcast, and per vector one FMA with a memory operand (gather) or a
// load-FMA-store (scatter). The feature loop is unrolled by U and has no
// per-feature branch besides the loop's own.
//
// Optionally (flag -prefetch) the rows of the next position's features are
// software-prefetched at the start of each position. Measured with rows far
// beyond the caches (M = 9 and 45, F = 20 and 60, uniform and Zipf ids) it
// made no difference beyond the noise: the out-of-order window already has
// the next features' loads in flight, and the line-fill buffers, not the
// issue of loads, are the limit. So it is off. Prefetching a row's next
// chunk while working on the current one was 20–40 % slower at M = 256.
package main

//go:generate go run . -out ../../kernels/sparse_amd64.s -stubs ../../kernels/sparse_amd64.go -pkg kernels

import (
	"flag"
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

var prefetch = flag.Bool("prefetch", false, "prefetch the next position's weight rows")

func main() {
	flag.Parse()
	ConstraintExpr("!purego")
	for _, i := range ISAs {
		genGather(i)
		genScatter(i)
	}
	Generate()
}

// gatherCH and scatterCH are the chunk widths in vectors. AVX2 has 16
// registers: gather needs CH accumulators, a broadcast, a mask and a masked
// load temporary; scatter CH row vectors, a broadcast, a mask and load
// temporaries. On AVX-512, 8 vectors (8 cache lines of a row per feature
// and pass) measured no slower than 16 at M = 45 and 5–15 % faster at
// M = 256 with rows far beyond the caches (more rows in flight per pass; the
// extra passes re-read only ids and values, from L1).
func gatherCH(i *ISA) int {
	if i.Is512() {
		return 8
	}
	return 12
}

func scatterCH(i *ISA) int {
	if i.Is512() {
		return 8
	}
	return 10
}

// unroll is the feature-loop unroll factor.
const unroll = 4

// shape computes, once per call, the number of full chunks' bytes (fullEnd,
// a byte offset: chunks at offsets < fullEnd are full), the vector count nv
// of the last chunk and the tail mask of its last vector.
func shape(i *ISA, base string, M reg.GPVirtual, ch int) (fullEnd, nv reg.GPVirtual, m Mask) {
	ce := ch * i.W
	// rem = M - full·ce ∈ [1, ce] with full = (M-1)/ce, by subtraction (once
	// per call; M is small).
	rem := GP64()
	MOVQ(M, rem)
	fullEnd = GP64()
	XORQ(fullEnd, fullEnd)
	Label(i.Label(base, "shape"))
	CMPQ(rem, U32(ce))
	JBE(LabelRef(i.Label(base, "shaped")))
	SUBQ(U32(ce), rem)
	ADDQ(U32(ce*8), fullEnd)
	JMP(LabelRef(i.Label(base, "shape")))
	Label(i.Label(base, "shaped"))
	// nv = (rem + W - 1) / W; r = rem - (nv-1)·W ∈ [1, W]
	nv = GP64()
	MOVQ(rem, nv)
	ADDQ(U8(i.W-1), nv)
	SHRQ(U8(log2(i.W)), nv)
	r := GP64()
	MOVQ(nv, r)
	DECQ(r)
	SHLQ(U8(log2(i.W)), r)
	NEGQ(r)
	ADDQ(rem, r)
	m = i.TailMask(r)
	return fullEnd, nv, m
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// dispatch jumps to label(nv) for nv = 1..ch.
func dispatch(i *ISA, base string, nv reg.GPVirtual, ch int) {
	for k := 1; k <= ch; k++ {
		CMPQ(nv, U8(k))
		JE(LabelRef(i.Label(base, fmt.Sprintf("nv%d", k))))
	}
	// not reached: nv ∈ [1, ch]
	JMP(LabelRef(i.Label(base, "done")))
}

// prefetchNext prefetches every cache line of the rows of position t+1's
// features; pp points at ptr[t], tEnd at ptr[T-1]. Registers are temporary.
func prefetchNext(i *ISA, base string, nv int, pp reg.Register, tEnd Mem, rows string) {
	skip := i.Label(base, fmt.Sprintf("pfskip%d", nv))
	CMPQ(pp, tEnd)
	JAE(LabelRef(skip))
	ids := Load(Param("ids").Base(), GP64())
	b := Load(Param(rows).Base(), GP64())
	f, fe := GP64(), GP64()
	MOVLQSX(Mem{Base: pp, Disp: 4}, f)
	MOVLQSX(Mem{Base: pp, Disp: 8}, fe)
	lines := Load(Param("M"), GP64())
	DECQ(lines)
	SHRQ(U8(3), lines) // lines after the first: (M-1)/8 (a line holds 8 float64)
	loop := i.Label(base, fmt.Sprintf("pf%d", nv))
	Label(loop)
	CMPQ(f, fe)
	JAE(LabelRef(skip))
	a := GP64()
	MOVLQSX(Mem{Base: ids, Index: f, Scale: 4}, a)
	IMULQ(ParamAddr("ld"), a)
	LEAQ(Mem{Base: b, Index: a, Scale: 8}, a)
	PREFETCHT0(Mem{Base: a})
	k := GP64()
	MOVQ(lines, k)
	inner := i.Label(base, fmt.Sprintf("pfl%d", nv))
	innerEnd := i.Label(base, fmt.Sprintf("pfle%d", nv))
	Label(inner)
	TESTQ(k, k)
	JZ(LabelRef(innerEnd))
	ADDQ(U8(64), a)
	PREFETCHT0(Mem{Base: a})
	DECQ(k)
	JMP(LabelRef(inner))
	Label(innerEnd)
	INCQ(f)
	JMP(LabelRef(loop))
	Label(skip)
}

func genGather(i *ISA) {
	base := "gather"
	fn := i.Fn(base)
	TEXT(fn, NOSPLIT, "func(s, w []float64, ld int, ptr, ids []int32, vals []float64, T, M int)")
	Pragma("noescape")
	Doc(fn+" adds Σ_f vals[f]·w[ids[f]·ld:+M] to row t of s (T×M) for every",
		"position t, features f ∈ [ptr[t], ptr[t+1]). Ids must be valid.")
	ch := gatherCH(i)
	M := Load(Param("M"), GP64()).(reg.GPVirtual)
	fullEnd, nv, m := shape(i, base, M, ch)
	fullEndMem := AllocLocal(8)
	MOVQ(fullEnd, fullEndMem)
	tEnd := AllocLocal(8) // address of ptr[T-1]
	{
		p := Load(Param("ptr").Base(), GP64())
		T := Load(Param("T"), GP64())
		LEAQ(Mem{Base: p, Index: T, Scale: 4, Disp: -4}, p)
		MOVQ(p, tEnd)
	}
	dispatch(i, base, nv, ch)
	for n := 1; n <= ch; n++ {
		Label(i.Label(base, fmt.Sprintf("nv%d", n)))
		gatherVariant(i, base, n, ch, m, fullEndMem, tEnd)
	}
	Label(i.Label(base, "done"))
	Ret()
}

// gatherVariant is the whole position loop for a last chunk of nv vectors.
func gatherVariant(i *ISA, base string, nv, ch int, m Mask, fullEnd, tEnd Mem) {
	lbl := func(s string) string { return i.Label(base, fmt.Sprintf("%s%d", s, nv)) }
	sp := Load(Param("s").Base(), GP64())
	pp := Load(Param("ptr").Base(), GP64())
	ld8 := Load(Param("ld"), GP64())
	SHLQ(U8(3), ld8)
	ids := Load(Param("ids").Base(), GP64())
	vals := Load(Param("vals").Base(), GP64())
	m8 := Load(Param("M"), GP64())
	SHLQ(U8(3), m8)

	Label(lbl("t"))
	if *prefetch {
		prefetchNext(i, base, nv, pp, tEnd, "w")
	}
	f0, f1 := GP64(), GP64()
	MOVLQSX(Mem{Base: pp}, f0)
	MOVLQSX(Mem{Base: pp, Disp: 4}, f1)
	CMPQ(f0, f1)
	JE(LabelRef(lbl("tnext")))
	wj := Load(Param("w").Base(), GP64())
	off := GP64()
	XORQ(off, off)

	// Full chunks.
	Label(lbl("chunk"))
	CMPQ(off, fullEnd)
	JAE(LabelRef(lbl("last")))
	{
		acc := i.Vecs(ch)
		for k := range acc {
			VMOVUPD(Mem{Base: sp, Index: off, Scale: 1, Disp: k * i.Bytes}, acc[k])
		}
		gatherFeatures(i, lbl("cf"), acc, nil, m, wj, ld8, ids, vals, f0, f1)
		for k := range acc {
			VMOVUPD(acc[k], Mem{Base: sp, Index: off, Scale: 1, Disp: k * i.Bytes})
		}
	}
	ADDQ(U32(ch*i.Bytes), off)
	ADDQ(U32(ch*i.Bytes), wj)
	JMP(LabelRef(lbl("chunk")))

	// Last chunk: nv vectors, the last one masked.
	Label(lbl("last"))
	{
		acc := i.Vecs(nv)
		for k := 0; k < nv-1; k++ {
			VMOVUPD(Mem{Base: sp, Index: off, Scale: 1, Disp: k * i.Bytes}, acc[k])
		}
		last := Mem{Base: sp, Index: off, Scale: 1, Disp: (nv - 1) * i.Bytes}
		i.LoadMasked(m, last, acc[nv-1])
		gatherFeatures(i, lbl("lf"), acc, &m, m, wj, ld8, ids, vals, f0, f1)
		for k := 0; k < nv-1; k++ {
			VMOVUPD(acc[k], Mem{Base: sp, Index: off, Scale: 1, Disp: k * i.Bytes})
		}
		i.StoreMasked(m, acc[nv-1], last)
	}

	Label(lbl("tnext"))
	ADDQ(m8, sp)
	ADDQ(U8(4), pp)
	CMPQ(pp, tEnd)
	JBE(LabelRef(lbl("t")))
	JMP(LabelRef(i.Label(base, "done")))
}

// gatherFeatures emits acc += vals[f]·w[ids[f]·ld + chunk] for f ∈ [f0, f1);
// wj points at the chunk's column in row 0 of w. With mask != nil the last
// vector is masked. f0 and f1 are preserved.
func gatherFeatures(i *ISA, lbl string, acc []reg.VecVirtual, mask *Mask, m Mask, wj, ld8, ids, vals, f0, f1 reg.Register) {
	f := GP64()
	MOVQ(f0, f)
	end := GP64()
	MOVQ(f1, end)
	SUBQ(U8(unroll-1), end) // unrolled loop runs while f < f1-(U-1)
	one := func(u int) {
		id := GP64()
		MOVLQSX(Mem{Base: ids, Index: f, Scale: 4, Disp: 4 * u}, id)
		IMULQ(ld8, id)
		b := i.Vec()
		VBROADCASTSD(Mem{Base: vals, Index: f, Scale: 8, Disp: 8 * u}, b)
		for k := range acc {
			src := Mem{Base: wj, Index: id, Scale: 1, Disp: k * i.Bytes}
			if mask != nil && k == len(acc)-1 {
				if i.Is512() {
					VFMADD231PD(src, b, m.K, acc[k])
				} else {
					t := i.Vec()
					VMASKMOVPD(src, m.Y, t)
					VFMADD231PD(t, b, acc[k])
				}
				continue
			}
			VFMADD231PD(src, b, acc[k])
		}
	}
	Label(lbl + "u")
	CMPQ(f, end)
	JGE(LabelRef(lbl + "1"))
	for u := 0; u < unroll; u++ {
		one(u)
	}
	ADDQ(U8(unroll), f)
	JMP(LabelRef(lbl + "u"))
	Label(lbl + "1")
	CMPQ(f, f1)
	JGE(LabelRef(lbl + "e"))
	one(0)
	INCQ(f)
	JMP(LabelRef(lbl + "1"))
	Label(lbl + "e")
}

func genScatter(i *ISA) {
	base := "scatter"
	fn := i.Fn(base)
	TEXT(fn, NOSPLIT, "func(g []float64, ld int, p []float64, ptr, ids []int32, vals []float64, c float64, T, M int)")
	Pragma("noescape")
	Doc(fn+" adds (c·vals[f])·p[t][0:M] to row ids[f] of g (stride ld) for every",
		"feature f ∈ [ptr[t], ptr[t+1]) of every position t, in order. Ids must be valid.")
	ch := scatterCH(i)
	M := Load(Param("M"), GP64()).(reg.GPVirtual)
	fullEnd, nv, m := shape(i, base, M, ch)
	fullEndMem := AllocLocal(8)
	MOVQ(fullEnd, fullEndMem)
	tEnd := AllocLocal(8)
	{
		p := Load(Param("ptr").Base(), GP64())
		T := Load(Param("T"), GP64())
		LEAQ(Mem{Base: p, Index: T, Scale: 4, Disp: -4}, p)
		MOVQ(p, tEnd)
	}
	dispatch(i, base, nv, ch)
	for n := 1; n <= ch; n++ {
		Label(i.Label(base, fmt.Sprintf("nv%d", n)))
		scatterVariant(i, base, n, ch, m, fullEndMem, tEnd)
	}
	Label(i.Label(base, "done"))
	Ret()
}

func scatterVariant(i *ISA, base string, nv, ch int, m Mask, fullEnd, tEnd Mem) {
	lbl := func(s string) string { return i.Label(base, fmt.Sprintf("%s%d", s, nv)) }
	pr := Load(Param("p").Base(), GP64())
	pp := Load(Param("ptr").Base(), GP64())
	ld8 := Load(Param("ld"), GP64())
	SHLQ(U8(3), ld8)
	ids := Load(Param("ids").Base(), GP64())
	vals := Load(Param("vals").Base(), GP64())
	m8 := Load(Param("M"), GP64())
	SHLQ(U8(3), m8)

	Label(lbl("t"))
	if *prefetch {
		prefetchNext(i, base, nv, pp, tEnd, "g")
	}
	f0, f1 := GP64(), GP64()
	MOVLQSX(Mem{Base: pp}, f0)
	MOVLQSX(Mem{Base: pp, Disp: 4}, f1)
	CMPQ(f0, f1)
	JE(LabelRef(lbl("tnext")))
	gj := Load(Param("g").Base(), GP64())
	off := GP64()
	XORQ(off, off)

	Label(lbl("chunk"))
	CMPQ(off, fullEnd)
	JAE(LabelRef(lbl("last")))
	{
		row := i.Vecs(ch)
		for k := range row {
			VMOVUPD(Mem{Base: pr, Index: off, Scale: 1, Disp: k * i.Bytes}, row[k])
		}
		scatterFeatures(i, lbl("cf"), row, nil, m, gj, ld8, ids, vals, f0, f1)
	}
	ADDQ(U32(ch*i.Bytes), off)
	ADDQ(U32(ch*i.Bytes), gj)
	JMP(LabelRef(lbl("chunk")))

	Label(lbl("last"))
	{
		row := i.Vecs(nv)
		for k := 0; k < nv-1; k++ {
			VMOVUPD(Mem{Base: pr, Index: off, Scale: 1, Disp: k * i.Bytes}, row[k])
		}
		i.LoadMasked(m, Mem{Base: pr, Index: off, Scale: 1, Disp: (nv - 1) * i.Bytes}, row[nv-1])
		scatterFeatures(i, lbl("lf"), row, &m, m, gj, ld8, ids, vals, f0, f1)
	}

	Label(lbl("tnext"))
	ADDQ(m8, pr)
	ADDQ(U8(4), pp)
	CMPQ(pp, tEnd)
	JBE(LabelRef(lbl("t")))
	JMP(LabelRef(i.Label(base, "done")))
}

// scatterFeatures emits g[ids[f]·ld + chunk] += (c·vals[f])·row for
// f ∈ [f0, f1), one feature after the other (a row may repeat).
func scatterFeatures(i *ISA, lbl string, row []reg.VecVirtual, mask *Mask, m Mask, gj, ld8, ids, vals, f0, f1 reg.Register) {
	f := GP64()
	MOVQ(f0, f)
	end := GP64()
	MOVQ(f1, end)
	SUBQ(U8(unroll-1), end)
	c := ParamAddr("c")
	one := func(u int) {
		id := GP64()
		MOVLQSX(Mem{Base: ids, Index: f, Scale: 4, Disp: 4 * u}, id)
		IMULQ(ld8, id)
		x := XMM()
		VMOVSD(c, x)
		VMULSD(Mem{Base: vals, Index: f, Scale: 8, Disp: 8 * u}, x, x)
		b := i.Vec()
		VBROADCASTSD(x, b)
		for k := range row {
			dst := Mem{Base: gj, Index: id, Scale: 1, Disp: k * i.Bytes}
			t := i.Vec()
			if mask != nil && k == len(row)-1 {
				i.LoadMasked(m, dst, t)
				VFMADD231PD(row[k], b, t)
				i.StoreMasked(m, t, dst)
				continue
			}
			VMOVUPD(dst, t)
			VFMADD231PD(row[k], b, t)
			VMOVUPD(t, dst)
		}
	}
	Label(lbl + "u")
	CMPQ(f, end)
	JGE(LabelRef(lbl + "1"))
	for u := 0; u < unroll; u++ {
		one(u)
	}
	ADDQ(U8(unroll), f)
	JMP(LabelRef(lbl + "u"))
	Label(lbl + "1")
	CMPQ(f, f1)
	JGE(LabelRef(lbl + "e"))
	one(0)
	INCQ(f)
	JMP(LabelRef(lbl + "1"))
	Label(lbl + "e")
}
