// Command maxplus generates the max-plus CSR kernel of package kernels used
// by the tied-transition Viterbi (engine/tied_viterbi.go): for every row r, the
// largest of y[r] and the candidates x[idx[k]] + v[k] of its entries, with
// the lowest index among the largest (arg[r]), updating (y[r], arg[r]).
//
// A candidate is a (value, index) pair, ordered by value (==, so −0 and +0
// tie) and then by lower index. Indices are held zero-extended in qword
// lanes, so that a negative arg (no index) is ≥ 2^31, above every real
// index, and a lane with no entry is (-Inf, 2^32−1), which never wins. NaN
// values are taken as -Inf (VMAXPD with -Inf as its second operand returns
// -Inf for a NaN first operand). The row's entries go to lanes in steps of
// W (the last step masked to those left); each lane keeps its best; the
// lanes of a block of rows (8 on AVX-512, 4 on AVX2) are then reduced
// together in a transpose network, one row per lane, and merged with
// (y, arg), which wins its ties. Since the order is total except for equal
// values at equal indices, the result does not depend on the reduction
// order: it is the generic reference's, but for the sign of a zero that
// ties at a repeated index (documented in kernels.MaxPlusCSR).
package main

//go:generate go run . -out ../../kernels/maxplus_amd64.s -stubs ../../kernels/maxplus_amd64.go -pkg kernels

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	gen2()
	gen512()
	Emit()
}

// Compare predicates (VCMPPD).
const (
	cmpEQ = 0x00 // EQ_OQ
	cmpGT = 0x1e // GT_OQ
)

// args holds the loaded arguments and the loop registers shared by both
// tiers.
type args struct {
	yp, ap, xp, pp, ip, vp reg.GPVirtual
	left, k, hi, n         reg.GPVirtual
}

func header(i *ISA) (fn string, a args) {
	fn = i.Fn("maxPlusCSR")
	Kernel(fn, NOSPLIT, "func(y []float64, arg []int32, x []float64, ptr, idx []int32, v []float64)",
		"updates (y[r], arg[r]) for r < len(y) with the best of the candidates",
		"(x[idx[k]]+v[k], idx[k]), k ∈ [ptr[r], ptr[r+1]): larger value, then lower index",
		"(uint32), NaN as -Inf. len(arg) ≥ len(y); ptr ascends; indices are valid.")
	a.yp = Load(Param("y").Base(), GP64()).(reg.GPVirtual)
	a.left = Load(Param("y").Len(), GP64()).(reg.GPVirtual)
	a.ap = Load(Param("arg").Base(), GP64()).(reg.GPVirtual)
	a.xp = Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	a.pp = Load(Param("ptr").Base(), GP64()).(reg.GPVirtual)
	a.ip = Load(Param("idx").Base(), GP64()).(reg.GPVirtual)
	a.vp = Load(Param("v").Base(), GP64()).(reg.GPVirtual)
	a.k, a.hi, a.n = GP64(), GP64(), GP64()
	TESTQ(a.left, a.left)
	JLE(LabelRef(i.Label("mpc", "end")))
	MOVLQSX(Mem{Base: a.pp}, a.k)
	return fn, a
}

// rowHi sets hi to row u's end, ptr[u+1] (pp points at the block's first
// row), or to k (an empty row) when the block has only left ≤ u rows.
func rowHi(i *ISA, a args, u int) {
	skip := i.Label("mpc", fmt.Sprintf("nohi%d", u))
	MOVQ(a.k, a.hi)
	if u > 0 {
		CMPQ(a.left, U8(u))
		JLE(LabelRef(skip))
	}
	MOVLQSX(Mem{Base: a.pp, Disp: 4 * (u + 1)}, a.hi)
	Label(skip)
}

// clampN sets n = min(hi − k, lim) (hi ≥ k) using lim's register.
func clampN(a args, lim reg.Register) {
	MOVQ(a.hi, a.n)
	SUBQ(a.k, a.n)
	CMPQ(a.n, lim)
	CMOVQGT(lim, a.n)
}

// row leaves row u's best in the accumulators of step and k at the row's
// end: step (the tier's step512 or step2) takes the n ≤ W entries from k,
// into the accumulators when first, else merged into them; lim holds W.
func row(i *ISA, a args, u int, lim reg.GPVirtual, step func(first bool)) {
	rowHi(i, a, u)
	clampN(a, lim)
	step(true)
	ADDQ(U8(i.W), a.k)
	done := i.Label("mpc", fmt.Sprintf("done%d", u))
	loop := i.Label("mpc", fmt.Sprintf("step%d", u))
	CMPQ(a.k, a.hi)
	JGE(LabelRef(done))
	Label(loop)
	clampN(a, lim)
	step(false)
	ADDQ(U8(i.W), a.k)
	CMPQ(a.k, a.hi)
	JL(LabelRef(loop))
	Label(done)
	MOVQ(a.hi, a.k)
}

// merger is the tier's merge512 or merge2.
type merger func(av, ai, bv, bi reg.VecVirtual)

// unpackMerge ends the transpose network: from ev (rows 0, 2, …) and ov
// (rows 1, 3, …), each row's best in two neighbouring lanes, it returns
// (bv, bi) with row u's best in lane u, then sets n = min(left, W) (lim
// holds W) for the merge with (y, arg).
func unpackMerge(i *ISA, a args, lim reg.GPVirtual, merge merger, ev, ei, ov, oi reg.VecVirtual) (bv, bi reg.VecVirtual) {
	bv, bi, hv, hi := i.Vec(), i.Vec(), i.Vec(), i.Vec()
	VUNPCKLPD(ov, ev, bv) // first of their two lanes
	VPUNPCKLQDQ(oi, ei, bi)
	VUNPCKHPD(ov, ev, hv)
	VPUNPCKHQDQ(oi, ei, hi)
	merge(bv, bi, hv, hi)
	MOVQ(a.left, a.n)
	CMPQ(a.n, lim)
	CMOVQGT(lim, a.n)
	return bv, bi
}

// nextBlock advances to the next block of W rows (y by W float64s, arg and
// ptr by W int32s) and ends the function.
func nextBlock(i *ISA, a args) {
	ADDQ(U8(i.Bytes), a.yp)
	ADDQ(U8(i.Bytes/2), a.ap)
	ADDQ(U8(i.Bytes/2), a.pp)
	SUBQ(U8(i.W), a.left)
	JG(LabelRef(i.Label("mpc", "block")))
	Label(i.Label("mpc", "end"))
	Ret()
}

// ---------------------------------------------------------------- AVX-512

// merge512 sets (av, ai) to the better of (av, ai) and (bv, bi): b wins
// where bv > av, or bv == av and bi < ai (unsigned). It returns the mask of
// lanes b won.
func merge512(av, ai, bv, bi reg.VecVirtual) reg.OpmaskVirtual {
	gt, eq, w := K(), K(), K()
	VCMPPD(U8(cmpGT), av, bv, gt)
	VCMPPD(U8(cmpEQ), av, bv, eq)
	VPCMPUQ(U8(1), ai, bi, eq, w) // eq and bi < ai
	KORB(gt, w, w)
	VMOVAPD(bv, w, av)
	VMOVDQA64(bi, w, ai)
	return w
}

// step512 loads the n ≤ 8 entries from k as candidates: c = x[idx]+v
// (NaN → -Inf) and their indices zero-extended to qwords; lanes ≥ n are
// (-Inf, noIdx). When first, they go straight to (cv, ci), else they are
// merged into them.
func step512(a args, ones reg.GPVirtual, ninf, noIdx, cv, ci reg.VecVirtual, first bool) {
	mb := GP64()
	BZHIQ(a.n, ones, mb)
	km, kg := K(), K()
	KMOVB(mb.As32(), km)
	KMOVB(km, kg)
	ix := YMM()
	VMOVDQU32_Z(Mem{Base: a.ip, Index: a.k, Scale: 4}, km, ix)
	g := ZMM()
	VMOVAPD(ninf, g) // masked-off lanes keep -Inf (and no merge dependency)
	VGATHERDPD(Mem{Base: a.xp, Index: ix, Scale: 8}, kg, g)
	VADDPD(Mem{Base: a.vp, Index: a.k, Scale: 8}, g, km, g)
	c, iq := cv, ci
	if !first {
		c, iq = ZMM(), ZMM()
	}
	VMAXPD(ninf, g, c) // g > -Inf ? g : -Inf: NaN → -Inf
	VMOVDQA64(noIdx, iq)
	VPMOVZXDQ(ix, km, iq)
	if !first {
		merge512(cv, ci, c, iq)
	}
}

func gen512() {
	i := AVX512
	_, a := header(i)
	ones, eight := GP64(), GP64()
	MOVL(U32(0xff), ones.As32())
	MOVQ(U32(8), eight)
	ninf, noIdx := ZMM(), ZMM()
	VBROADCASTSD(ConstU64("mpcninf", math.Float64bits(math.Inf(-1))), ninf)
	VPBROADCASTQ(ConstU64("mpcnoidx", 0xffffffff), noIdx)

	Label(i.Label("mpc", "block"))
	cv, ci := i.Vecs(8), i.Vecs(8)
	for u := range 8 {
		row(i, a, u, eight, func(first bool) { step512(a, ones, ninf, noIdx, cv[u], ci[u], first) })
	}
	// Transpose network (the pairs of spmvBlocks512): each level merges
	// lanes l and l+h of every row, until lane u holds row u's best. A
	// level shuffles the 128-bit lanes of a and b selected by the
	// immediate lo into l, those selected by up into h, and merges h into l.
	shuf := func(lo, up uint8) func(av, ai, bv, bi reg.VecVirtual) (reg.VecVirtual, reg.VecVirtual) {
		return func(av, ai, bv, bi reg.VecVirtual) (reg.VecVirtual, reg.VecVirtual) {
			lv, li, hv, hi := ZMM(), ZMM(), ZMM(), ZMM()
			VSHUFF64X2(U8(lo), bv, av, lv)
			VSHUFI64X2(U8(lo), bi, ai, li)
			VSHUFF64X2(U8(up), bv, av, hv)
			VSHUFI64X2(U8(up), bi, ai, hi)
			merge512(lv, li, hv, hi)
			return lv, li
		}
	}
	pair := shuf(0x44, 0xee) // [a0..3 | b0..3], [a4..7 | b4..7]
	quad := shuf(0x88, 0xdd) // [a t0t1 | b t0t1 | c t0t1 | d t0t1], [a t2t3 | …]
	p0v, p0i := pair(cv[0], ci[0], cv[2], ci[2])
	p1v, p1i := pair(cv[4], ci[4], cv[6], ci[6])
	p2v, p2i := pair(cv[1], ci[1], cv[3], ci[3])
	p3v, p3i := pair(cv[5], ci[5], cv[7], ci[7])
	ev, ei := quad(p0v, p0i, p1v, p1i) // rows 0, 2, 4, 6
	ov, oi := quad(p2v, p2i, p3v, p3i) // rows 1, 3, 5, 7
	bv, bi := unpackMerge(i, a, eight, func(av, ai, bv, bi reg.VecVirtual) { merge512(av, ai, bv, bi) }, ev, ei, ov, oi)

	// Merge with (y, arg) for the block's min(left, 8) rows: (y, arg)
	// wins ties, y is stored (NaN → -Inf) and arg where a row's best won.
	mb := GP64()
	BZHIQ(a.n, ones, mb)
	kr := K()
	KMOVB(mb.As32(), kr)
	yv, ya, ad := ZMM(), ZMM(), YMM()
	VMOVUPD_Z(Mem{Base: a.yp}, kr, yv)
	VMAXPD(ninf, yv, yv)
	VMOVDQU32_Z(Mem{Base: a.ap}, kr, ad)
	VPMOVZXDQ(ad, ya)
	w := merge512(yv, ya, bv, bi)
	VMOVUPD(yv, kr, Mem{Base: a.yp})
	KANDB(kr, w, w)
	bd := YMM()
	VPMOVQD(bi, bd)
	VMOVDQU32(bd, w, Mem{Base: a.ap})
	nextBlock(i, a)
}

// ------------------------------------------------------------------- AVX2

// merge2 sets (av, ai) to the better of (av, ai) and (bv, bi) (as
// merge512).
func merge2(av, ai, bv, bi reg.VecVirtual) {
	gt, eq, lt := YMM(), YMM(), YMM()
	VCMPPD(U8(cmpGT), av, bv, gt)
	VCMPPD(U8(cmpEQ), av, bv, eq)
	VPCMPGTQ(bi, ai, lt) // ai > bi (signed: both < 2^32)
	VANDPD(lt, eq, eq)
	VORPD(gt, eq, eq)
	VBLENDVPD(eq, bv, av, av)
	VBLENDVPD(eq, bi, ai, ai)
}

// step2 is step512 with four lanes, masks from the dword table.
func step2(a args, four, tbl reg.GPVirtual, ninf, noIdx, cv, ci reg.VecVirtual, first bool) {
	o := GP64()
	MOVQ(four, o)
	SUBQ(a.n, o)
	dm, qm := XMM(), YMM()
	VMOVDQU(Mem{Base: tbl, Index: o, Scale: 4}, dm)
	ix := XMM()
	VPMASKMOVD(Mem{Base: a.ip, Index: a.k, Scale: 4}, dm, ix)
	// qm from dm after the load keeps dm live through it: qemu-user's
	// VPMASKMOVD gives zeros when its destination is its mask register
	// (hardware does not), which the allocator would otherwise choose.
	VPMOVSXDQ(dm, qm)
	g, gm, vv := YMM(), YMM(), YMM()
	VMOVAPD(ninf, g) // masked-off lanes keep -Inf
	VMOVAPD(qm, gm)
	VGATHERDPD(gm, Mem{Base: a.xp, Index: ix, Scale: 8}, g)
	VMASKMOVPD(Mem{Base: a.vp, Index: a.k, Scale: 8}, qm, vv) // masked-off: 0
	VADDPD(vv, g, g)
	c, iq := cv, ci
	if !first {
		c, iq = YMM(), YMM()
	}
	VMAXPD(ninf, g, c) // NaN → -Inf
	VPMOVZXDQ(ix, iq)
	VBLENDVPD(qm, iq, noIdx, iq) // masked-off lanes: noIdx
	if !first {
		merge2(cv, ci, c, iq)
	}
}

func gen2() {
	i := AVX2
	_, a := header(i)
	four, tbl := GP64(), GP64()
	MOVQ(U32(4), four)
	LEAQ(DwordMaskTable("mpcdmask", 4), tbl)
	ninf, noIdx := YMM(), YMM()
	VBROADCASTSD(ConstU64("mpcninf", math.Float64bits(math.Inf(-1))), ninf)
	VPBROADCASTQ(ConstU64("mpcnoidx", 0xffffffff), noIdx)

	// pair(a, b) = [a: best of lanes (0,2), (1,3) | b: the same].
	pair := func(av, ai, bv, bi reg.VecVirtual) (reg.VecVirtual, reg.VecVirtual) {
		lv, li, hv, hi := YMM(), YMM(), YMM(), YMM()
		VPERM2F128(U8(0x20), bv, av, lv) // [a0 a1 | b0 b1]
		VPERM2I128(U8(0x20), bi, ai, li)
		VPERM2F128(U8(0x31), bv, av, hv) // [a2 a3 | b2 b3]
		VPERM2I128(U8(0x31), bi, ai, hi)
		merge2(lv, li, hv, hi)
		return lv, li
	}

	Label(i.Label("mpc", "block"))
	// Rows 0 and 2 are paired as soon as both are done (and 1 and 3), to
	// keep at most six accumulators live within sixteen registers.
	row2 := func(u int, cv, ci reg.VecVirtual) {
		row(i, a, u, four, func(first bool) { step2(a, four, tbl, ninf, noIdx, cv, ci, first) })
	}
	c0v, c0i, c1v, c1i := YMM(), YMM(), YMM(), YMM()
	row2(0, c0v, c0i)
	row2(1, c1v, c1i)
	c2v, c2i := YMM(), YMM()
	row2(2, c2v, c2i)
	ev, ei := pair(c0v, c0i, c2v, c2i) // [row 0 | row 2]
	c3v, c3i := YMM(), YMM()
	row2(3, c3v, c3i)
	ov, oi := pair(c1v, c1i, c3v, c3i) // [row 1 | row 3]
	bv, bi := unpackMerge(i, a, four, merge2, ev, ei, ov, oi)

	// Merge with (y, arg) for min(left, 4) rows; both are stored back
	// (y with NaN → -Inf, arg unchanged where (y, arg) won).
	o := GP64()
	MOVQ(four, o)
	SUBQ(a.n, o)
	dm, qm := XMM(), YMM()
	VMOVDQU(Mem{Base: tbl, Index: o, Scale: 4}, dm)
	VPMOVSXDQ(Mem{Base: tbl, Index: o, Scale: 4}, qm)
	yv, ad, ya := YMM(), XMM(), YMM()
	VMASKMOVPD(Mem{Base: a.yp}, qm, yv)
	VMAXPD(ninf, yv, yv)
	VPMASKMOVD(Mem{Base: a.ap}, dm, ad)
	VPMOVZXDQ(ad, ya)
	merge2(yv, ya, bv, bi)
	VMASKMOVPD(yv, qm, Mem{Base: a.yp})
	// The low dwords of ya's four qwords: arg as loaded, or the index.
	yh := XMM()
	VEXTRACTI128(U8(1), ya, yh)
	VSHUFPS(U8(0x88), yh, ya.AsX(), ad)
	VPMASKMOVD(ad, dm, Mem{Base: a.ap})
	nextBlock(i, a)
}
