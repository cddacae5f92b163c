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
	for _, i := range ISAs {
		gather.gen(i)
		scatter.gen(i)
	}
	// Gather32 and Scatter32: the same kernels with float32 elements.
	for _, i := range ISAs32 {
		gather.gen(i)
		scatter.gen(i)
	}
	Emit()
}

// gatherCH and scatterCH are the chunk widths in vectors. AVX2 has 16
// registers: gather needs CH accumulators, a broadcast, a mask and a masked
// load temporary; scatter CH row vectors, a broadcast, a mask and load
// temporaries. On AVX-512, 8 vectors (8 cache lines of a row per feature
// and pass) measured no slower than 16 at M = 45 and 5–15 % faster at
// M = 256 with rows far beyond the caches (more rows in flight per pass; the
// extra passes re-read only ids and values, from L1).
func gatherCH(i *ISA) int  { return i.Tier(12, 8) }
func scatterCH(i *ISA) int { return i.Tier(10, 8) }

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
	ADDQ(U32(ce*i.Size), fullEnd)
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
	LEAQ(Mem{Base: b, Index: a, Scale: i.Sc()}, a)
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

// kernel is what tells gather and scatter apart. The call setup, the position
// loop over chunks and the unrolled feature loop are written once (gen,
// variant, features) and ask the kernel only for these differences.
type kernel struct {
	name string    // function and label base: "gather" or "scatter"
	sig  string    // Go signature
	doc  [2]string // doc comment lines
	ch   func(i *ISA) int
	own  string // the position's own row (s, p), held in registers per chunk
	rows string // the matrix whose rows the features index (w, g)
	// store writes the own row back after its features (gather updates it;
	// scatter only reads it).
	store bool
	// coef broadcasts the coefficient of feature f+u into a new vector.
	coef func(i *ISA, vals, f reg.Register, u int) reg.VecVirtual
	// apply applies one feature to vector k of the chunk: own is the own
	// row's vector, b the coefficient, at the feature row's vector; m is
	// the tail mask when vector k is the masked last one, else nil.
	apply func(i *ISA, own, b reg.VecVirtual, at Mem, m *Mask)
}

// gather: s[t] += Σ_f vals[f]·w[ids[f]]. One FMA with a memory operand per
// vector and feature; the accumulators are the chunk of s.
var gather = &kernel{
	name: "gather",
	sig:  "func(s, w []%s, ld int, ptr, ids []int32, vals []%s, T, M int)",
	doc: [2]string{"adds Σ_f vals[f]·w[ids[f]·ld:+M] to row t of s (T×M) for every",
		"position t, features f ∈ [ptr[t], ptr[t+1]). Ids must be valid."},
	ch:    gatherCH,
	own:   "s",
	rows:  "w",
	store: true,
	coef: func(i *ISA, vals, f reg.Register, u int) reg.VecVirtual {
		b := i.Vec()
		i.VBROADCAST(Mem{Base: vals, Index: f, Scale: i.Sc(), Disp: i.Size * u}, b)
		return b
	},
	apply: func(i *ISA, acc, b reg.VecVirtual, at Mem, m *Mask) {
		switch {
		case m == nil:
			i.VFMADD231(at, b, acc)
		case i.Is512():
			// The opmask merges: masked-off lanes are neither read nor changed.
			i.VFMADD231(at, b, m.K, acc)
		default:
			t := i.Vec()
			i.LoadMasked(*m, at, t)
			i.VFMADD231(t, b, acc)
		}
	},
}

// scatter: g[ids[f]] += (c·vals[f])·p[t], one feature after the other (a
// row may repeat), so each vector is a load-FMA-store.
var scatter = &kernel{
	name: "scatter",
	sig:  "func(g []%s, ld int, p []%s, ptr, ids []int32, vals []%s, c %s, T, M int)",
	doc: [2]string{"adds (c·vals[f])·p[t][0:M] to row ids[f] of g (stride ld) for every",
		"feature f ∈ [ptr[t], ptr[t+1]) of every position t, in order. Ids must be valid."},
	ch:   scatterCH,
	own:  "p",
	rows: "g",
	coef: func(i *ISA, vals, f reg.Register, u int) reg.VecVirtual {
		x := XMM()
		i.VMOVS(ParamAddr("c"), x)
		i.VMULS(Mem{Base: vals, Index: f, Scale: i.Sc(), Disp: i.Size * u}, x, x)
		b := i.Vec()
		i.VBROADCAST(x, b)
		return b
	},
	apply: func(i *ISA, row, b reg.VecVirtual, at Mem, m *Mask) {
		t := i.Vec()
		if m != nil {
			i.LoadMasked(*m, at, t)
			i.VFMADD231(row, b, t)
			i.StoreMasked(*m, t, at)
			return
		}
		i.VMOVU(at, t)
		i.VFMADD231(row, b, t)
		i.VMOVU(t, at)
	},
}

// gen emits the kernel for one tier: the chunk shape, then one whole
// position loop per vector count nv of the last chunk.
func (kn *kernel) gen(i *ISA) {
	base := kn.name
	fn := i.Fn(base)
	Kernel(fn, NOSPLIT, i.Sig(kn.sig), kn.doc[0], kn.doc[1])
	ch := kn.ch(i)
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
		kn.variant(i, n, ch, m, fullEndMem, tEnd)
	}
	Label(i.Label(base, "done"))
	Ret()
}

// variant is the whole position loop for a last chunk of nv vectors.
func (kn *kernel) variant(i *ISA, nv, ch int, m Mask, fullEnd, tEnd Mem) {
	base := kn.name
	lbl := func(s string) string { return i.Label(base, fmt.Sprintf("%s%d", s, nv)) }
	own := Load(Param(kn.own).Base(), GP64())
	pp := Load(Param("ptr").Base(), GP64())
	ld8 := Load(Param("ld"), GP64())
	SHLQ(U8(i.Shift()), ld8)
	ids := Load(Param("ids").Base(), GP64())
	vals := Load(Param("vals").Base(), GP64())
	m8 := Load(Param("M"), GP64())
	SHLQ(U8(i.Shift()), m8)

	Label(lbl("t"))
	if *prefetch {
		prefetchNext(i, base, nv, pp, tEnd, kn.rows)
	}
	f0, f1 := GP64(), GP64()
	MOVLQSX(Mem{Base: pp}, f0)
	MOVLQSX(Mem{Base: pp, Disp: 4}, f1)
	CMPQ(f0, f1)
	JE(LabelRef(lbl("tnext")))
	rj := Load(Param(kn.rows).Base(), GP64())
	off := GP64()
	XORQ(off, off)
	at := func(k int) Mem { return Mem{Base: own, Index: off, Scale: 1, Disp: k * i.Bytes} }

	// Full chunks.
	Label(lbl("chunk"))
	CMPQ(off, fullEnd)
	JAE(LabelRef(lbl("last")))
	{
		row := i.Vecs(ch)
		for k := range row {
			i.VMOVU(at(k), row[k])
		}
		kn.features(i, lbl("cf"), row, nil, rj, ld8, ids, vals, f0, f1)
		if kn.store {
			for k := range row {
				i.VMOVU(row[k], at(k))
			}
		}
	}
	ADDQ(U32(ch*i.Bytes), off)
	ADDQ(U32(ch*i.Bytes), rj)
	JMP(LabelRef(lbl("chunk")))

	// Last chunk: nv vectors, the last one masked.
	Label(lbl("last"))
	{
		row := i.Vecs(nv)
		for k := 0; k < nv-1; k++ {
			i.VMOVU(at(k), row[k])
		}
		i.LoadMasked(m, at(nv-1), row[nv-1])
		kn.features(i, lbl("lf"), row, &m, rj, ld8, ids, vals, f0, f1)
		if kn.store {
			for k := 0; k < nv-1; k++ {
				i.VMOVU(row[k], at(k))
			}
			i.StoreMasked(m, row[nv-1], at(nv-1))
		}
	}

	Label(lbl("tnext"))
	ADDQ(m8, own)
	ADDQ(U8(4), pp)
	CMPQ(pp, tEnd)
	JBE(LabelRef(lbl("t")))
	JMP(LabelRef(i.Label(base, "done")))
}

// features applies features f ∈ [f0, f1) to the chunk row, unrolled by
// unroll then one at a time; rj points at the chunk's column in row 0 of
// the feature-indexed matrix. With mask != nil the last vector is masked.
// f0 and f1 are preserved.
func (kn *kernel) features(i *ISA, lbl string, row []reg.VecVirtual, mask *Mask, rj, ld8, ids, vals, f0, f1 reg.Register) {
	f := GP64()
	MOVQ(f0, f)
	end := GP64()
	MOVQ(f1, end)
	SUBQ(U8(unroll-1), end) // unrolled loop runs while f < f1-(U-1)
	one := func(u int) {
		id := GP64()
		MOVLQSX(Mem{Base: ids, Index: f, Scale: 4, Disp: 4 * u}, id)
		IMULQ(ld8, id)
		b := kn.coef(i, vals, f, u)
		for k := range row {
			var m *Mask
			if k == len(row)-1 {
				m = mask
			}
			kn.apply(i, row[k], b, Mem{Base: rj, Index: id, Scale: 1, Disp: k * i.Bytes}, m)
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
