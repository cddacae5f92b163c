// Command select generates the selection kernels of package kernels:
// SelectGE (the indices i, increasing, with x[i] ≥ bound), SelectSumGE
// (with x[i] + y[i] ≥ bound) and Max (the largest non-NaN entry), for
// float64 and float32, AVX2 and AVX-512.
//
// A selection compares with VCMPPD/VCMPPS LE_OQ (bound ≤ x: false for a
// NaN on either side, as Go's x >= bound) and keeps the indices of the true
// lanes. It walks x in blocks of 16 entries (16/W vectors): the block's
// compares are ORed and tested once, so that a block with no hit (most of
// them when 1–5 % of the entries qualify) costs its loads, compares and one
// branch. A block with hits packs each vector's indices into dst with no
// branch per hit: AVX-512 compresses a vector of indices with VPCOMPRESSD
// under the compare mask (the register form: the memory form is microcoded
// on AMD) and stores it whole; AVX2 permutes each four lanes' indices with
// VPERMILPS by a 16-entry table indexed by their VMOVMSKPD/PS bits and
// stores those four. Whole stores write up to a block's worth of entries
// past the count, so blocks run while dst has that much room; after them
// single vectors (and the tail, loaded under a mask) store their hits one
// at a time (BSF, then clear the bit), checking for room before each: the
// first len(dst) hits are kept and the kernel returns −1 at the one past
// them.
//
// Measured on AVX2 (AMD EPYC, Zen 3; SelectGE and SelectSumGE, M = 304 and
// 1,341, both element types): storing a block's hits by the BSF loop, or
// storing every block's without the test, or blocks of 8 or 32 entries,
// all ran within ±5 % of this at 1–5 % hits (the time goes to the
// mispredicted test of a block with hits, about one per hit, and to
// reading x); at 20–50 % hits the table was 10–15 % faster than the BSF
// loop.
//
// Max keeps four running maxima with VMAXPD/PS x, m (x > m ? x : m: a NaN x
// is skipped), masked-off tail lanes counting as −Inf, and adds +0 to the
// result so that a zero maximum is +0 whichever zero came first.
package main

//go:generate go run . -out ../../kernels/select_amd64.s -stubs ../../kernels/select_amd64.go -pkg kernels

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	for _, i := range ISAs {
		genSelect(i, false)
		genSelect(i, true)
		genMax(i)
	}
	for _, i := range ISAs32 {
		genSelect(i, false)
		genSelect(i, true)
		genMax(i)
	}
	Emit()
}

const (
	le = 0x12 // LE_OQ
	ge = 0x1D // GE_OQ
)

var (
	lut, offs Mem
	haveTabs  bool
)

// tables declares the tables once: lut holds, for each 4-bit mask t, the
// lanes whose bits are set in t in increasing order (as VPERMILPS
// selectors; the rest 0), offs the dword vectors (k, k, k, k) for
// k = 0, 4, 8, 12 and then iota (0, 1, …, 15).
func tables() {
	if haveTabs {
		return
	}
	haveTabs = true
	lut = GLOBL("selectlut", RODATA|NOPTR)
	for t := 0; t < 16; t++ {
		k := 0
		for l := 0; l < 4; l++ {
			if t>>l&1 != 0 {
				DATA(16*t+4*k, U32(uint32(l)))
				k++
			}
		}
		for ; k < 4; k++ {
			DATA(16*t+4*k, U32(0))
		}
	}
	offs = GLOBL("selectoffs", RODATA|NOPTR)
	for k := 0; k < 4; k++ {
		for l := 0; l < 4; l++ {
			DATA(16*k+4*l, U32(uint32(4*k)))
		}
	}
	for l := 0; l < 16; l++ {
		DATA(64+4*l, U32(uint32(l)))
	}
}

// iotaVec is the memory operand of the dword vector (0, 1, …, 15).
func iotaVec() Mem { m := offs; m.Disp += 64; return m }

// off is the memory operand of the dword vector (k, k, k, k), k one of 4,
// 8, 12 (the offsets of a block's vectors and groups of four lanes).
func off(k int) Mem {
	if k%4 != 0 || k < 4 || k > 12 {
		panic(fmt.Sprintf("select: no offset vector for %d", k))
	}
	m := offs
	m.Disp += 4 * k
	return m
}

// sel holds what one selection kernel's parts share.
type sel struct {
	i       *ISA
	fn      string
	sum     bool
	dst     reg.GPVirtual // dst's base
	cap     reg.GPVirtual // len(dst)
	x, y    reg.GPVirtual // bases of x and y (y: sum only)
	n       reg.GPVirtual // hits stored
	idx     reg.GPVirtual // index of the vector being compared
	b       reg.VecVirtual
	nbitset int
}

func genSelect(i *ISA, sum bool) {
	tables()
	name, sig, what := "selectGE", "func(dst []int32, x []%s, bound %s) int", "x[i] ≥ bound"
	if sum {
		name, sig, what = "selectSumGE", "func(dst []int32, x, y []%s, bound %s) int", "x[i] + y[i] ≥ bound (len(y) ≥ len(x))"
	}
	fn := i.Fn(name)
	Kernel(fn, NOSPLIT, i.Sig(sig),
		"writes to dst the indices i < len(x), increasing, with "+what+" and returns their count;",
		"with more than len(dst) of them it returns −1, dst holding the first len(dst). Entries of dst past the count may be overwritten.")
	s := &sel{i: i, fn: fn, sum: sum}
	s.dst = Load(Param("dst").Base(), GP64()).(reg.GPVirtual)
	s.cap = Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	s.x = Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	N := Load(Param("x").Len(), GP64())
	if sum {
		s.y = Load(Param("y").Base(), GP64()).(reg.GPVirtual)
	}
	s.b = i.Vec()
	i.VBROADCAST(ParamAddr("bound"), s.b)
	s.n, s.idx = GP64(), GP64()
	XORQ(s.n, s.n)
	XORQ(s.idx, s.idx)
	// Blocks of 16 entries.
	U := max(1, 16/i.W)
	UW := U * i.W
	left := GP64()
	var tab reg.GPVirtual
	if !i.Is512() {
		tab = GP64()
		LEAQ(lut, tab)
	}

	// Blocks of U vectors while idx ≤ end = len(x) − UW and dst has room
	// for a block's whole stores (checked after each block with hits). A
	// block without hits runs straight through: one branch.
	end := GP64()
	MOVQ(N, end)
	SUBQ(U32(UW), end)
	CMPQ(s.cap, U32(UW))
	JB(LabelRef(s.l("one")))
	CMPQ(s.idx, end)
	JG(LabelRef(s.l("one")))
	Label(s.l("block"))
	cs := make([]Op, U)
	for u := range U {
		cs[u] = s.compare(u * i.Bytes)
	}
	if i.Is512() {
		acc := cs[0].(reg.OpmaskVirtual)
		if U > 1 {
			acc = K()
			KORW(cs[0], cs[1], acc)
		}
		for u := 2; u < U; u++ {
			KORW(cs[u], acc, acc)
		}
		KORTESTW(acc, acc)
		JNZ(LabelRef(s.l("hits")))
	} else {
		acc := cs[0]
		if U > 1 {
			acc = i.Vec()
			VPOR(cs[0], cs[1], acc)
		}
		for u := 2; u < U; u++ {
			VPOR(cs[u], acc, acc)
		}
		VPTEST(acc, acc)
		JNZ(LabelRef(s.l("hits")))
	}
	Label(s.l("next"))
	ADDQ(U32(UW), s.idx)
	CMPQ(s.idx, end)
	JLE(LabelRef(s.l("block")))
	JMP(LabelRef(s.l("one")))

	// A block's hits. iv: the dword indices of its first vector (its
	// first four on AVX2).
	Label(s.l("hits"))
	x := XMM()
	// VMOVQ, not MOVQ: the SSE form, with the upper halves of the vector
	// registers dirty, made the whole kernel 20 times slower.
	VMOVQ(s.idx, x)
	var iv reg.Register
	switch {
	case i.Is512() && i.F32():
		iv = i.Vec().AsZ()
	case i.Is512():
		iv = i.Vec().AsY()
	default:
		iv = XMM()
	}
	VPBROADCASTD(x, iv)
	VPADDD(iotaVec(), iv, iv)
	for u := range U {
		m := GP32()
		s.maskOf(cs[u], m)
		if i.Is512() {
			src := iv
			if u > 0 {
				src = i.Vec().AsZ()
				if !i.F32() {
					src = src.(reg.Vec).AsY()
				}
				VPADDD_BCST(off(u*i.W), iv, src)
			}
			t := i.Vec().AsZ()
			if !i.F32() {
				t = t.(reg.Vec).AsY()
			}
			VPCOMPRESSD_Z(src, cs[u], t)
			VMOVDQU32(t, Mem{Base: s.dst, Index: s.n, Scale: 4})
			POPCNTL(m, m)
			ADDQ(m.As64(), s.n)
			continue
		}
		for g := 0; g < i.W/4; g++ {
			t, c := GP32(), GP32()
			MOVL(m, t)
			if g > 0 {
				SHRL(U8(4*g), t)
			}
			ANDL(U8(15), t)
			POPCNTL(t, c)
			SHLL(U8(4), t)
			src := iv
			if o := u*i.W + 4*g; o > 0 {
				src = XMM()
				VPADDD(off(o), iv, src)
			}
			o := XMM()
			VPERMILPS(Mem{Base: tab, Index: t.As64(), Scale: 1}, src, o)
			VMOVDQU(o, Mem{Base: s.dst, Index: s.n, Scale: 4})
			ADDQ(c.As64(), s.n)
		}
	}
	MOVQ(s.cap, left)
	SUBQ(s.n, left)
	CMPQ(left, U32(UW))
	JAE(LabelRef(s.l("next")))
	ADDQ(U32(UW), s.idx)

	// Single vectors, each hit stored with a check for room.
	Label(s.l("one"))
	MOVQ(N, left)
	SUBQ(s.idx, left)
	CMPQ(left, U32(i.W))
	JB(LabelRef(s.l("tail")))
	{
		m := GP32()
		s.maskOf(s.compare(0), m)
		TESTL(m, m)
		JZ(LabelRef(s.l("onenext")))
		s.bitLoop(m)
	}
	Label(s.l("onenext"))
	ADDQ(U32(i.W), s.idx)
	JMP(LabelRef(s.l("one")))

	// The last len(x) mod W entries, loaded under a mask.
	Label(s.l("tail"))
	TESTQ(left, left)
	JZ(LabelRef(s.l("done")))
	{
		tm := i.TailMask(left.(reg.GPVirtual))
		v := i.Vec()
		i.LoadMasked(tm, i.Addr(s.x, s.idx, 0), v)
		if sum {
			w := i.Vec()
			i.LoadMasked(tm, i.Addr(s.y, s.idx, 0), w)
			i.VADD(w, v, v)
		}
		m := GP32()
		if i.Is512() {
			k := K()
			i.VCMP(U8(ge), s.b, v, tm.K, k)
			s.maskOf(k, m)
		} else {
			c := i.Vec()
			i.VCMP(U8(ge), s.b, v, c)
			VPAND(tm.Y, c, c)
			s.maskOf(c, m)
		}
		TESTL(m, m)
		JZ(LabelRef(s.l("done")))
		s.bitLoop(m)
	}
	Label(s.l("done"))
	Store(s.n, ReturnIndex(0))
	Ret()
	Label(s.l("overflow"))
	MOVQ(I32(-1), s.n)
	Store(s.n, ReturnIndex(0))
	Ret()
}

func (s *sel) l(name string) string { return s.i.Label(s.fn, name) }

// compare returns the compare of the vector at byte offset d from the
// current index: a vector of all-ones lanes (AVX2) or an opmask (AVX-512)
// where bound ≤ x (+ y).
func (s *sel) compare(d int) Op {
	i := s.i
	at := i.Addr(s.x, s.idx, d)
	var v Op = at
	if s.sum {
		t := i.Vec()
		i.VMOVU(at, t)
		i.VADD(i.Addr(s.y, s.idx, d), t, t)
		v = t
	}
	if i.Is512() {
		k := K()
		if s.sum {
			i.VCMP(U8(ge), s.b, v, k)
		} else {
			i.VCMP(U8(le), v, s.b, k)
		}
		return k
	}
	c := i.Vec()
	if s.sum {
		i.VCMP(U8(ge), s.b, v, c)
	} else {
		i.VCMP(U8(le), v, s.b, c)
	}
	return c
}

// maskOf moves the lane bits of a compare to m.
func (s *sel) maskOf(c Op, m reg.GPVirtual) {
	i := s.i
	switch {
	case i.Is512():
		KMOVW(c, m)
	case i.F32():
		VMOVMSKPS(c, m)
	default:
		VMOVMSKPD(c, m)
	}
}

// bitLoop stores idx + b for each set bit b of m (not zero; consumed),
// lowest first, jumping to overflow when dst is full.
func (s *sel) bitLoop(m reg.GPVirtual) {
	s.nbitset++
	loop := s.l(fmt.Sprintf("bits%d", s.nbitset))
	Label(loop)
	CMPQ(s.n, s.cap)
	JAE(LabelRef(s.l("overflow")))
	t := GP32()
	BSFL(m, t)
	ADDL(s.idx.As32(), t)
	MOVL(t, Mem{Base: s.dst, Index: s.n, Scale: 4})
	INCQ(s.n)
	c := GP32()
	LEAL(Mem{Base: m.As64(), Disp: -1}, c)
	ANDL(c, m)
	JNZ(LabelRef(loop))
}

// genMax emits Max: U running maxima over whole vectors, then the tail
// under a mask with −Inf in the masked-off lanes.
func genMax(i *ISA) {
	fn := i.Fn("max")
	Kernel(fn, NOSPLIT, i.Sig("func(x []%s) %s"),
		"returns the largest non-NaN x[i], −Inf if none; a zero maximum is +0.")
	x := Load(Param("x").Base(), GP64())
	N := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	ninf := i.Vec()
	i.VBROADCAST(i.ConstBits("selectninf", math.Inf(-1)), ninf)
	const U = 4
	acc := i.Vecs(U)
	for _, a := range acc {
		i.VMOVA(ninf, a)
	}
	idx := GP64()
	Stripes(i, fn, N, idx, U, func(u int) {
		v := i.Vec()
		i.VMOVU(i.Addr(x, idx, u*i.Bytes), v)
		i.VMAX(acc[u], v, acc[u])
	}, func(rem reg.GPVirtual) {
		tm := i.TailMask(rem)
		v := i.Vec()
		if i.Is512() {
			i.VMOVA(ninf, v)
			i.VMOVU(i.Addr(x, idx, 0), tm.K, v)
		} else {
			i.LoadMasked(tm, i.Addr(x, idx, 0), v)
			i.VBLENDV(tm.Y, v, ninf, v)
		}
		i.VMAX(acc[0], v, acc[0])
	})
	i.VMAX(acc[1], acc[0], acc[0])
	i.VMAX(acc[3], acc[2], acc[2])
	i.VMAX(acc[2], acc[0], acc[0])
	r := i.HReduce(acc[0], i.VMAX, i.VMAX)
	z := XMM()
	VXORPS(z, z, z)
	i.VADDS(z, r, r)
	Store(r, ReturnIndex(0))
	Ret()
}
