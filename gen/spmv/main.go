// Command spmv generates the gather kernels of package kernels used by the
// tied-transition forward–backward (engine/tied_fb.go): a CSR sparse
// matrix–vector product (spmv) and an indexed multiply-add (gatherMulAdd),
// both with VGATHERDPD (int32 indices, float64 values).
//
// Both tiers compute bit for bit what the generic reference computes. A row
// of spmv is summed in eight lanes (entry k of the row goes to lane k mod 8,
// each lane one FMA chain), then the lanes are added as
// ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)). AVX-512 holds the eight lanes in one
// zmm; AVX2 in two ymm (lanes 0–3 and 4–7), so its result is the same.
package main

//go:generate go run . -out ../../kernels/spmv_amd64.s -stubs ../../kernels/spmv_amd64.go -pkg kernels

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	for _, i := range ISAs {
		genSpMV(i)
		genGatherMulAdd(i)
	}
	Emit()
}

// genSpMV: for each row r < len(y), y[r] = Σ x[idx[k]]·v[k] over
// k ∈ [ptr[r], ptr[r+1]), eight entries per step, the last step masked to
// the n < 8 entries left (masked-off lanes read nothing and add zero).
func genSpMV(i *ISA) {
	fn := i.Fn("spmv")
	Kernel(fn, NOSPLIT, "func(y, x []float64, ptr, idx []int32, v []float64)",
		"sets y[r] = Σ x[idx[k]]·v[k] over k ∈ [ptr[r], ptr[r+1]) for r < len(y),",
		"in eight lanes (k−ptr[r] mod 8) added as ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)).",
		"len(ptr) > len(y); ptr ascends; indices are valid.")
	yp := Load(Param("y").Base(), GP64())
	rows := Load(Param("y").Len(), GP64())
	xp := Load(Param("x").Base(), GP64())
	pp := Load(Param("ptr").Base(), GP64())
	ip := Load(Param("idx").Base(), GP64())
	vp := Load(Param("v").Base(), GP64())

	r, k, hi, n, eight := GP64(), GP64(), GP64(), GP64(), GP64()
	XORQ(r, r)
	MOVLQSX(Mem{Base: pp}, k)
	MOVQ(U32(8), eight)
	var tbl, ones reg.GPVirtual
	if i.Is512() {
		ones = GP64()
		MOVL(U32(0xff), ones.As32())
	} else {
		tbl = GP64()
		LEAQ(DwordMaskTable("spmvdmask", 8), tbl)
	}

	if i.Is512() {
		spmvBlocks512(yp, rows, xp, pp, ip, vp, r, k, hi, n, eight, ones)
	}

	Label(i.Label("spmv", "row"))
	CMPQ(r, rows)
	JAE(LabelRef(i.Label("spmv", "end")))
	MOVLQSX(Mem{Base: pp, Index: r, Scale: 4, Disp: 4}, hi)
	acc := i.Vec()
	i.Zero(acc)
	var accB reg.VecVirtual
	if !i.Is512() {
		accB = YMM()
		i.Zero(accB)
	}

	// Steps while k < hi (signed: an empty row does none).
	CMPQ(k, hi)
	JGE(LabelRef(i.Label("spmv", "store")))
	Label(i.Label("spmv", "step"))
	MOVQ(hi, n)
	SUBQ(k, n)
	CMPQ(n, eight)
	CMOVQGT(eight, n)
	if i.Is512() {
		step512(xp, ip, vp, k, n, ones, acc)
	} else {
		// o = 8−n: the dword mask is tbl[o:o+8], the qword masks of the
		// two halves its sign extensions.
		o := GP64()
		MOVQ(eight, o)
		SUBQ(n, o)
		dm, ix, ma, mb := YMM(), YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: tbl, Index: o, Scale: 4}, dm)
		VPMASKMOVD(Mem{Base: ip, Index: k, Scale: 4}, dm, ix)
		VPMOVSXDQ(Mem{Base: tbl, Index: o, Scale: 4}, ma)
		VPMOVSXDQ(Mem{Base: tbl, Index: o, Scale: 4, Disp: 16}, mb)
		ixHi := XMM()
		VEXTRACTI128(U8(1), ix, ixHi)
		ga, gb, ca, cb := YMM(), YMM(), YMM(), YMM()
		VMOVDQA(ma, ca)
		VMOVDQA(mb, cb)
		VXORPD(ga, ga, ga)
		VXORPD(gb, gb, gb)
		VGATHERDPD(ca, Mem{Base: xp, Index: ix.AsX(), Scale: 8}, ga)
		VGATHERDPD(cb, Mem{Base: xp, Index: ixHi, Scale: 8}, gb)
		va, vb := YMM(), YMM()
		VMASKMOVPD(Mem{Base: vp, Index: k, Scale: 8}, ma, va)
		VMASKMOVPD(Mem{Base: vp, Index: k, Scale: 8, Disp: 32}, mb, vb)
		VFMADD231PD(va, ga, acc)
		VFMADD231PD(vb, gb, accB)
	}
	ADDQ(U32(8), k)
	CMPQ(k, hi)
	JL(LabelRef(i.Label("spmv", "step")))

	Label(i.Label("spmv", "store"))
	MOVQ(hi, k)
	if !i.Is512() {
		VADDPD(accB, acc, acc)
	}
	VMOVSD(i.HSum(acc), Mem{Base: yp, Index: r, Scale: 8})
	INCQ(r)
	JMP(LabelRef(i.Label("spmv", "row")))

	Label(i.Label("spmv", "end"))
	Ret()
}

// step512 adds the n ≤ 8 entries from k of a row to acc: a masked load of
// their indices and values and a masked gather (masked-off lanes add 0).
// ones holds 0xff. The FMA is merge-masked (masked-off lanes of acc are
// kept, which is adding zero: a lane never holds −0) and reads v straight
// from memory (masked-off elements are not read).
func step512(xp, ip, vp, k, n, ones reg.Register, acc reg.VecVirtual) {
	mb := GP64()
	BZHIQ(n, ones, mb)
	km, kg := K(), K()
	KMOVB(mb.As32(), km)
	KMOVB(km, kg)
	ix, g := YMM(), ZMM()
	VMOVDQU32_Z(Mem{Base: ip, Index: k, Scale: 4}, km, ix)
	VXORPD(g, g, g) // breaks the gather's merge dependency on g
	VGATHERDPD(Mem{Base: xp, Index: ix, Scale: 8}, kg, g)
	VFMADD231PD(Mem{Base: vp, Index: k, Scale: 8}, g, km, acc)
}

// spmvBlocks512 does rows eight at a time while eight remain: each row into
// its own accumulator as in the one-row loop, then the eight reductions
// together in a transpose network that adds exactly the pairs HSum adds
// (((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)) per row) and one store of eight
// results, instead of eight HSums and scalar stores. It leaves r at the
// first row not done and k at its start.
func spmvBlocks512(yp, rows, xp, pp, ip, vp, r, k, hi, n, eight, ones reg.Register) {
	i := AVX512
	end := GP64()
	MOVQ(rows, end)
	ANDQ(I32(-8), end)
	Label(i.Label("spmv", "block"))
	CMPQ(r, end)
	JAE(LabelRef(i.Label("spmv", "blocksdone")))
	acc := i.Vecs(8)
	for u := range 8 {
		i.Zero(acc[u])
		MOVLQSX(Mem{Base: pp, Index: r, Scale: 4, Disp: 4 * (u + 1)}, hi)
		step := i.Label("spmv", "b"+string(rune('0'+u)))
		done := i.Label("spmv", "d"+string(rune('0'+u)))
		CMPQ(k, hi)
		JGE(LabelRef(done))
		Label(step)
		MOVQ(hi, n)
		SUBQ(k, n)
		CMPQ(n, eight)
		CMOVQGT(eight, n)
		step512(xp, ip, vp, k, n, ones, acc[u])
		ADDQ(U32(8), k)
		CMPQ(k, hi)
		JL(LabelRef(step))
		Label(done)
		MOVQ(hi, k)
	}
	// P(a,b) = [a.s0..3 + a.s4..7 | b.s0..3 + b.s4..7] (t_l = s_l + s_{l+4}).
	pair := func(a, b reg.VecVirtual) reg.VecVirtual {
		lo, hi := ZMM(), ZMM()
		VSHUFF64X2(U8(0x44), b, a, lo)
		VSHUFF64X2(U8(0xee), b, a, hi)
		VADDPD(hi, lo, lo)
		return lo
	}
	// Q(P(a,b), P(c,d)) = [a | b | c | d], each (t0+t2, t1+t3).
	quad := func(p, q reg.VecVirtual) reg.VecVirtual {
		lo, hi := ZMM(), ZMM()
		VSHUFF64X2(U8(0x88), q, p, lo)
		VSHUFF64X2(U8(0xdd), q, p, hi)
		VADDPD(hi, lo, lo)
		return lo
	}
	even := quad(pair(acc[0], acc[2]), pair(acc[4], acc[6]))
	odd := quad(pair(acc[1], acc[3]), pair(acc[5], acc[7]))
	// Interleaving the even and odd rows' halves puts rows 0..7 in order.
	lo, hi := ZMM(), ZMM()
	VUNPCKLPD(odd, even, lo)
	VUNPCKHPD(odd, even, hi)
	VADDPD(hi, lo, lo)
	VMOVUPD(lo, Mem{Base: yp, Index: r, Scale: 8})
	ADDQ(U32(8), r)
	JMP(LabelRef(i.Label("spmv", "block")))
	Label(i.Label("spmv", "blocksdone"))
}

// genGatherMulAdd: q[k] = FMA(x[xi[k]], y[yi[k]], q[k]) for k < len(q), two
// vectors per step, then one, then the tail (masked on AVX-512, one lane at
// a time on AVX2: a scalar FMA rounds as a lane of the vector one does).
func genGatherMulAdd(i *ISA) {
	fn := i.Fn("gatherMulAdd")
	Kernel(fn, NOSPLIT, "func(q, x []float64, xi []int32, y []float64, yi []int32)",
		"sets q[k] += x[xi[k]]·y[yi[k]] (one FMA) for k < len(q);",
		"len(xi), len(yi) ≥ len(q); indices are valid.")
	qp := Load(Param("q").Base(), GP64())
	n := Load(Param("q").Len(), GP64()).(reg.GPVirtual)
	xp := Load(Param("x").Base(), GP64())
	xip := Load(Param("xi").Base(), GP64())
	yp := Load(Param("y").Base(), GP64())
	yip := Load(Param("yi").Base(), GP64())
	idx := GP64()

	idxVec := func() reg.VecVirtual {
		if i.Is512() {
			return YMM()
		}
		return XMM()
	}
	// step does W entries from idx+u·W; m is the K mask on AVX-512 (nil:
	// all lanes).
	step := func(u int, km reg.OpmaskVirtual) {
		a, b := idxVec(), idxVec()
		ga, gb := i.Vec(), i.Vec()
		qa := i.Vec()
		xiM := Mem{Base: xip, Index: idx, Scale: 4, Disp: u * i.W * 4}
		yiM := Mem{Base: yip, Index: idx, Scale: 4, Disp: u * i.W * 4}
		qM := Mem{Base: qp, Index: idx, Scale: 8, Disp: u * i.Bytes}
		if i.Is512() {
			k1, k2 := K(), K()
			if km == nil {
				VMOVDQU(xiM, a)
				VMOVDQU(yiM, b)
				KXNORB(k1, k1, k1)
				KXNORB(k2, k2, k2)
				VMOVUPD(qM, qa)
			} else {
				VMOVDQU32_Z(xiM, km, a)
				VMOVDQU32_Z(yiM, km, b)
				KMOVB(km, k1)
				KMOVB(km, k2)
				VMOVUPD_Z(qM, km, qa)
			}
			VXORPD(ga, ga, ga)
			VXORPD(gb, gb, gb)
			VGATHERDPD(Mem{Base: xp, Index: a, Scale: 8}, k1, ga)
			VGATHERDPD(Mem{Base: yp, Index: b, Scale: 8}, k2, gb)
			VFMADD231PD(gb, ga, qa)
			if km == nil {
				VMOVUPD(qa, qM)
			} else {
				VMOVUPD(qa, km, qM)
			}
			return
		}
		VMOVDQU(xiM, a)
		VMOVDQU(yiM, b)
		m1, m2 := YMM(), YMM()
		VPCMPEQD(m1, m1, m1)
		VPCMPEQD(m2, m2, m2)
		VXORPD(ga, ga, ga)
		VXORPD(gb, gb, gb)
		VGATHERDPD(m1, Mem{Base: xp, Index: a, Scale: 8}, ga)
		VGATHERDPD(m2, Mem{Base: yp, Index: b, Scale: 8}, gb)
		VMOVUPD(qM, qa)
		VFMADD231PD(gb, ga, qa)
		VMOVUPD(qa, qM)
	}
	Stripes(i, "gma", n, idx, 2, func(u int) { step(u, nil) }, func(rem reg.GPVirtual) {
		if i.Is512() {
			ones, mb := GP64(), GP64()
			MOVL(U32(0xff), ones.As32())
			BZHIQ(rem, ones, mb)
			km := K()
			KMOVB(mb.As32(), km)
			step(0, km)
			return
		}
		// One entry at a time: rem is 1..3.
		Label(i.Label("gma", "one"))
		a, b := GP64(), GP64()
		MOVLQSX(Mem{Base: xip, Index: idx, Scale: 4}, a)
		MOVLQSX(Mem{Base: yip, Index: idx, Scale: 4}, b)
		xa, qa := XMM(), XMM()
		VMOVSD(Mem{Base: xp, Index: a, Scale: 8}, xa)
		VMOVSD(Mem{Base: qp, Index: idx, Scale: 8}, qa)
		VFMADD231SD(Mem{Base: yp, Index: b, Scale: 8}, xa, qa)
		VMOVSD(qa, Mem{Base: qp, Index: idx, Scale: 8})
		INCQ(idx)
		DECQ(rem)
		JNZ(LabelRef(i.Label("gma", "one")))
	})
	Ret()
}
