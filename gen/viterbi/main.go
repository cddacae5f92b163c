// Command viterbi generates the Viterbi kernel of package kernels: the whole
// max-product recursion of a sequence (δ and the back-pointers) in one call.
//
// The work of a step is, for every label j, a running maximum over the
// previous labels i of δ_{t−1}[i] + tr[i][j]. Row i of tr is contiguous, so
// the kernel vectorises over j: a chunk of k vectors of j holds k "best"
// and k "arg" registers, and walks i = 0..M−1 adding the broadcast
// δ_{t−1}[i] to row i of tr:
//
//	cand = δ_{t−1}[i] + tr[i][j]
//	mask = cand > best          (VCMPPD GT_OQ: false when either is NaN)
//	best = i.VMAX(cand, best)   (= cand > best ? cand : best, exactly)
//	arg  = mask ? i : arg       (i kept as a float; exact below 2^53, 2^24)
//
// which is the generic loop's strict, ascending comparison, so δ and bp are
// bit-identical to the reference (ties to the lowest i, a NaN candidate never
// wins, a NaN first candidate is never replaced). The row of δ is then
// best + s_t, and arg is converted to int32 (VCVTPD2DQ or VCVTPS2DQ, exact)
// for bp. The float32 kernels (Viterbi32) are the same code with float32
// elements: twice the lanes, and arg converts to int32 lane for lane.
//
// The j vectors of a row are split into the fewest chunks of at most Bmax
// vectors (12 on AVX-512, 5 on AVX2 with its 16 registers), balanced so
// that chunks differ by at most one vector; one code variant per chunk
// size is generated and chosen at run time. The last vector of each chunk is
// accessed under a mask (all lanes except at the end of the row), so no
// lane past the end of a row of s, tr, delta or bp is ever read or written.
// Row 0 of bp is not written (as in the generic reference). When a row fits
// one vector (M ≤ W), the next step reads δ from a stack copy written with a
// whole-vector store, since loads are not forwarded from masked stores.
//
// Per (row i, vector) pair the loop costs 4 vector uops on AVX-512 (add with
// the load folded in, compare into K, max, masked blend: 2 cycles on the two
// 512-bit ports) and 5 on AVX2 (add, compare, max, and, max: 5/3 cycles on
// three ports). Variants tried and dropped (no gain or slower): arg as int64
// lanes blended from a stored loop counter (saves the iv add on AVX-512),
// unmasked AVX-512 variants for whole last vectors.
package main

//go:generate go run . -out ../../kernels/viterbi_amd64.s -stubs ../../kernels/viterbi_amd64.go -pkg kernels

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	genViterbi(AVX2, 5, true)
	genViterbi(AVX512, 12, true)
	// The max-only kernel (δ without back-pointers) needs no arg registers:
	// AVX2 fits 12 best vectors (plus broadcast, candidate and tail mask).
	genViterbi(AVX2, 12, false)
	genViterbi(AVX512, 12, false)
	for _, i := range ISAs32 {
		genViterbi(i, i.Tier(5, 12), true)
		genViterbi(i, 12, false)
	}
	Emit()
}

var (
	ones4   Mem // four float64 1.0 (AVX2 iv increment from memory)
	ones8   Mem // eight float32 1.0 (the same for float32)
	mask32  Mem // four int32 −1 then four 0: dword tail masks for VMASKMOVPS
	haveTab bool
)

func tables() {
	if haveTab {
		return
	}
	haveTab = true
	ones4 = GLOBL("vitones", RODATA|NOPTR)
	for k := 0; k < 4; k++ {
		DATA(8*k, F64(1))
	}
	mask32 = DwordMaskTable("vitmask32", 4)
}

// ones8Table declares, on first use, eight float32 1.0.
func ones8Table() Mem {
	if ones8.Symbol.Name == "" {
		ones8 = GLOBL("vitones32", RODATA|NOPTR)
		for k := 0; k < 8; k++ {
			DATA(4*k, F32(1))
		}
	}
	return ones8
}

// vmask is the mask of the last vector of a chunk.
type vmask struct {
	k     reg.OpmaskVirtual // AVX-512
	y     reg.VecVirtual    // AVX2: qword mask for VMASKMOVPD
	lanes reg.GPVirtual     // AVX2: lane count (1..4), for the dword mask
}

// scratch is the current function's stack copy of a one-vector row of δ.
var scratch Mem

// genViterbi emits the Viterbi kernel (arg: δ and back-pointers) or the
// max-only kernel viterbiMax (δ alone: per (row i, vector) pair just the
// add with the load folded in and the max, half the uops).
func genViterbi(i *ISA, bmax int, arg bool) {
	if bmax < 3 {
		panic("viterbi: chunk of one vector must mean M ≤ W")
	}
	tables()
	base := "viterbi"
	if !arg {
		base = "viterbiMax"
	}
	fn := i.Fn(base)
	if arg {
		Kernel(fn, NOSPLIT, i.Sig("func(delta []%s, bp []int32, s, tr []%s, T, M int)"),
			"runs the Viterbi recursion over a whole sequence: it sets",
			"delta[0:M] = s[0:M] and, for t ≥ 1, delta[t·M+j] and bp[t·M+j] exactly as",
			"viterbiGeneric does. Row 0 of bp is not written. T ≤ 0 or M ≤ 0 does nothing.")
	} else {
		Kernel(fn, NOSPLIT, i.Sig("func(delta []%s, s, tr []%s, T, M int)"),
			"runs the max-only Viterbi recursion over a whole sequence: it",
			"sets delta exactly as viterbiMaxGeneric does (δ of viterbiGeneric, no",
			"back-pointers). T ≤ 0 or M ≤ 0 does nothing.")
	}
	L := func(s string) string { return i.Label(base, s) }
	logW := uint(bits.TrailingZeros(uint(i.W)))

	delta := Load(Param("delta").Base(), GP64())
	var bp reg.Register
	if arg {
		bp = Load(Param("bp").Base(), GP64())
	}
	s := Load(Param("s").Base(), GP64())
	tr := Load(Param("tr").Base(), GP64())
	T := Load(Param("T"), GP64())
	M := Load(Param("M"), GP64()).(reg.GPVirtual)
	TESTQ(T, T)
	JLE(LabelRef(L("ret")))
	TESTQ(M, M)
	JLE(LabelRef(L("ret")))

	// Row 0: δ_0 = s_0.
	j := GP64()
	Stripes(i, "viterbi_copy", M, j, 1, func(int) {
		v := i.Vec()
		i.VMOVU(i.Addr(s, j, 0), v)
		i.VMOVU(v, i.Addr(delta, j, 0))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		v := i.Vec()
		i.LoadMasked(m, i.Addr(s, j, 0), v)
		i.StoreMasked(m, v, i.Addr(delta, j, 0))
	})
	DECQ(T)
	JZ(LabelRef(L("ret")))
	tleft := AllocLocal(8)
	MOVQ(T, tleft)

	// A row that fits one vector (M ≤ W) is re-read by the next step from a
	// scratch copy written with a whole-vector store, not from delta: a
	// load cannot be forwarded from the masked store that writes the row of
	// delta, and waiting for that store to reach the cache costs about 15
	// cycles a step (M ≤ 7 was slower than generic). Start it with δ_0.
	scratch = AllocLocal(i.Bytes)
	{
		n0, w0 := GP64(), GP64()
		MOVQ(M, n0)
		MOVQ(U32(i.W), w0)
		CMPQ(n0, w0)
		CMOVQGT(w0, n0)
		m := i.TailMask(n0)
		v := i.Vec()
		i.LoadMasked(m, Mem{Base: s}, v)
		i.VMOVU(v, scratch)
	}

	// Chunk plan: nv vectors per row in nc = ceil(nv/bmax) chunks; the first
	// `extra` chunks have base+1 vectors, the others base.
	nv := GP64()
	MOVQ(M, nv)
	ADDQ(U32(i.W-1), nv)
	SHRQ(U8(logW), nv)
	nc := GP64()
	MOVQ(nv, nc)
	ADDQ(U32(bmax-1), nc)
	MOVQ(nc, reg.RAX)
	XORQ(reg.RDX, reg.RDX)
	MOVQ(U32(bmax), nc)
	DIVQ(nc) // RAX = ceil(nv/bmax)
	MOVQ(reg.RAX, nc)
	MOVQ(nv, reg.RAX)
	XORQ(reg.RDX, reg.RDX)
	DIVQ(nc) // RAX = base, RDX = extra
	baseL, extraL := AllocLocal(8), AllocLocal(8)
	MOVQ(reg.RAX, baseL)
	MOVQ(reg.RDX, extraL)

	// cur = δ_t, srow = s_t, bprow = bp_t, starting at t = 1.
	cur, srow := GP64(), GP64()
	var bprow reg.Register
	LEAQ(Mem{Base: delta, Index: M, Scale: i.Sc()}, cur)
	LEAQ(Mem{Base: s, Index: M, Scale: i.Sc()}, srow)
	if arg {
		bprow = GP64()
		LEAQ(Mem{Base: bp, Index: M, Scale: 4}, bprow)
	}

	c := GP64()
	Label(L("t"))
	XORQ(j, j)
	XORQ(c, c)
	Label(L("chunk"))
	k := GP64()
	MOVQ(baseL, k)
	CMPQ(c, extraL)
	ADCQ(U32(0), k) // k++ when c < extra (carry set by the unsigned compare)
	// lanes of the chunk's last vector: min(W, M − j − (k−1)·W).
	lanes := GP64()
	MOVQ(k, lanes)
	SHLQ(U8(logW), lanes)
	ADDQ(j, lanes)
	SUBQ(U32(i.W), lanes)
	NEGQ(lanes)
	ADDQ(M, lanes)
	w := GP64()
	MOVQ(U32(i.W), w)
	CMPQ(lanes, w)
	CMOVQGT(w, lanes)
	// AVX2 also has unmasked variants ("f") for chunks whose last vector is
	// whole: its masked load (VMASKMOVPD) costs an extra uop per row of tr.
	// On AVX-512 the masked load is folded into the addition for free.
	if !i.Is512() {
		CMPQ(lanes, U32(i.W))
		JE(LabelRef(L("full")))
	}
	for kk := 1; kk <= bmax; kk++ {
		CMPQ(k, U32(kk))
		JE(LabelRef(L(fmt.Sprintf("k%d", kk))))
	}
	JMP(LabelRef(L("ret"))) // unreachable: 1 ≤ k ≤ bmax
	if !i.Is512() {
		Label(L("full"))
		for kk := 1; kk <= bmax; kk++ {
			CMPQ(k, U32(kk))
			JE(LabelRef(L(fmt.Sprintf("f%d", kk))))
		}
		JMP(LabelRef(L("ret"))) // unreachable
	}

	variant := func(kk int, masked bool) {
		name := fmt.Sprintf("k%d", kk)
		if !masked {
			name = fmt.Sprintf("f%d", kk)
		}
		Label(L(name))
		var m vmask
		switch {
		case !masked:
		case i.Is512():
			ones, bm := GP64(), GP64()
			MOVQ(I32(-1), ones)
			BZHIQ(lanes, ones, bm)
			m.k = K()
			if i.F32() {
				KMOVW(bm.As32(), m.k)
			} else {
				KMOVB(bm.As32(), m.k)
			}
		default:
			m.y = i.TailMask(lanes).Y
			m.lanes = lanes
		}
		chunkBody(i, base, name, kk, masked, arg, m, M, tr, cur, srow, bprow, j)
		ADDQ(U32(kk*i.W), j)
		INCQ(c)
		CMPQ(j, M)
		JB(LabelRef(L("chunk")))
		JMP(LabelRef(L("next")))
	}
	for kk := 1; kk <= bmax; kk++ {
		variant(kk, true)
		if !i.Is512() {
			variant(kk, false)
		}
	}

	Label(L("next"))
	LEAQ(Mem{Base: cur, Index: M, Scale: i.Sc()}, cur)
	LEAQ(Mem{Base: srow, Index: M, Scale: i.Sc()}, srow)
	if arg {
		LEAQ(Mem{Base: bprow, Index: M, Scale: 4}, bprow)
	}
	DECQ(tleft)
	JNZ(LabelRef(L("t")))
	Label(L("ret"))
	Ret()
}

// chunkBody emits the code for one chunk of kk vectors starting at lane j of
// row t (cur points at δ_t); if masked, the last vector is accessed under m.
// Without arg, only δ is computed (bprow is unused).
func chunkBody(i *ISA, base, name string, kk int, masked, arg bool, m vmask, M, tr, cur, srow, bprow, j reg.Register) {
	L := func(s string) string { return i.Label(base, name+"_"+s) }
	last := kk - 1
	if !masked {
		last = -1
	}
	// addC returns d + tr[row][j + b·W] into a new register, masked for the
	// last vector.
	addC := func(rp reg.Register, b int, d reg.VecVirtual) reg.VecVirtual {
		v := i.Vec()
		src := Mem{Base: rp, Disp: b * i.Bytes}
		switch {
		case b != last:
			i.VADD(src, d, v)
		case i.Is512():
			i.VADD_Z(src, d, m.k, v)
		default:
			i.VMASKMOV(src, m.y, v)
			i.VADD(v, d, v)
		}
		return v
	}

	ip, rp := GP64(), GP64()
	if kk == 1 {
		// One chunk of one vector: M ≤ W (bmax ≥ 3 makes k = 1 occur only
		// then), and δ_{t−1} is in the scratch copy.
		LEAQ(scratch, ip)
	} else {
		// ip = δ_{t−1} = cur − M·8
		MOVQ(M, ip)
		SHLQ(U8(i.Shift()), ip)
		NEGQ(ip)
		ADDQ(cur, ip)
	}
	LEAQ(Mem{Base: tr, Index: j, Scale: i.Sc()}, rp)

	best := i.Vecs(kk)
	var argv []reg.VecVirtual
	var iv reg.VecVirtual
	if arg {
		argv, iv = i.Vecs(kk), i.Vec()
	}
	d := i.Vec()
	i.VBROADCAST(Mem{Base: ip}, d)
	for b := 0; b < kk; b++ {
		v := addC(rp, b, d)
		best[b] = v
		if arg {
			i.Zero(argv[b])
		}
	}
	if arg {
		i.Zero(iv)
	}
	var one reg.VecVirtual
	if i.Is512() && arg {
		one = i.Vec()
		i.VBROADCAST(i.Const("vitone", 1), one)
	}
	icount := GP64()
	MOVQ(M, icount)
	DECQ(icount)
	JZ(LabelRef(L("fin")))
	Label(L("i"))
	ADDQ(U8(i.Size), ip)
	LEAQ(Mem{Base: rp, Index: M, Scale: i.Sc()}, rp)
	switch {
	case !arg:
	case i.Is512():
		i.VADD(one, iv, iv)
	default:
		if i.F32() {
			i.VADD(ones8Table(), iv, iv)
		} else {
			i.VADD(ones4, iv, iv)
		}
	}
	d = i.Vec()
	i.VBROADCAST(Mem{Base: ip}, d)
	for b := 0; b < kk; b++ {
		cand := addC(rp, b, d)
		if !arg {
			i.VMAX(best[b], cand, best[b]) // best = cand > best ? cand : best
			continue
		}
		if i.Is512() {
			kc := K()
			i.VCMP(U8(0x1e), best[b], cand, kc) // kc = cand > best (GT_OQ)
			i.VMAX(best[b], cand, best[b])      // best = cand > best ? cand : best
			i.VBLENDM(iv, argv[b], kc, argv[b]) // arg = kc ? iv : arg
		} else {
			mk := i.Vec()
			i.VCMP(U8(0x1e), best[b], cand, mk)
			i.VMAX(best[b], cand, best[b])
			// arg = mask ? i : arg as max(arg, mask & i): i exceeds every
			// earlier arg, and mask & i is +0 or i (VBLENDVPD is 3 uops on
			// recent Intel cores; VANDPD and VMAXPD are one each).
			i.VAND(iv, mk, mk)
			i.VMAX(mk, argv[b], argv[b])
		}
	}
	DECQ(icount)
	JNZ(LabelRef(L("i")))

	Label(L("fin"))
	for b := 0; b < kk; b++ {
		dm := Mem{Base: cur, Index: j, Scale: i.Sc(), Disp: b * i.Bytes}
		sm := Mem{Base: srow, Index: j, Scale: i.Sc(), Disp: b * i.Bytes}
		bm := Mem{Base: bprow, Index: j, Scale: 4, Disp: b * i.W * 4}
		// arg as int32 lanes: float32 converts in place (one int32 per
		// lane), float64 into the low half of a new register.
		var a reg.VecVirtual
		switch {
		case !arg:
		case i.F32():
			a = argv[b]
			VCVTPS2DQ(a, a)
		case i.Is512():
			a = YMM()
			VCVTPD2DQ(argv[b], a)
		default:
			a = XMM()
			VCVTPD2DQY(argv[b], a)
		}
		// δ = best + s, stored (the last vector under the mask); v is the
		// register that holds it.
		v := best[b]
		switch {
		case b != last:
			i.VADD(sm, v, v)
			i.VMOVU(v, dm)
		case i.Is512():
			t := i.Vec()
			i.VADD_Z(sm, v, m.k, t)
			i.VMOVU(t, m.k, dm)
			v = t
		default:
			t := i.Vec()
			i.VMASKMOV(sm, m.y, t)
			i.VADD(t, v, v)
			i.VMASKMOV(v, m.y, dm)
		}
		switch {
		case !arg:
		case b != last && i.Is512():
			VMOVDQU32(a, bm)
		case b != last:
			VMOVDQU(a, bm)
		case i.Is512():
			VMOVDQU32(a, m.k, bm)
		case i.F32():
			VMASKMOVPS(a, m.y, bm)
		default:
			// float64 on AVX2: four int32 lanes want a dword mask.
			off := GP64()
			MOVQ(U32(4), off)
			SUBQ(m.lanes, off)
			tb := GP64()
			LEAQ(mask32, tb)
			mx := XMM()
			VMOVDQU(Mem{Base: tb, Index: off, Scale: 4}, mx)
			VMASKMOVPS(a, mx, bm)
		}
		if kk == 1 {
			i.VMOVU(v, scratch)
		}
	}
}
