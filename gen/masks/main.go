// Command masks generates the byte-class mask kernel of package kernels
// (ByteMasks): one 64-bit mask word per 64-byte block for each of two byte
// classes.
package main

//go:generate go run . -out ../../kernels/masks_amd64.s -stubs ../../kernels/masks_amd64.go -pkg kernels

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	for _, i := range ISAs {
		genByteMasks(i)
	}
	Emit()
}

// genByteMasks walks src one 64-byte block at a time. AVX2 compares the two
// 32-byte halves with VPCMPEQB and gathers each half's bits with
// VPMOVMSKB; AVX-512 compares the whole block into opmask registers
// (AVX512BW) and moves them out with KMOVQ. Two blocks per iteration, then
// one, so that the two blocks' compares overlap.
func genByteMasks(i *ISA) {
	fn := i.Fn("byteMasks")
	Kernel(fn, NOSPLIT, "func(a, b []uint64, src []byte, ca, cb1, cb2 byte)",
		"sets a[k] and b[k] for each 64-byte block k of src (len(src) a multiple of 64,",
		"a and b that many words): bit i for src[64k+i] == ca, resp. cb1 or cb2.")
	pa := Load(Param("a").Base(), GP64())
	pb := Load(Param("b").Base(), GP64())
	src := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(6), n)
	va, v1, v2 := i.Vec(), i.Vec(), i.Vec()
	VPBROADCASTB(ParamAddr("ca"), va)
	VPBROADCASTB(ParamAddr("cb1"), v1)
	VPBROADCASTB(ParamAddr("cb2"), v2)
	idx := GP64()
	XORQ(idx, idx)
	end := GP64()
	MOVQ(n, end)
	ANDQ(I32(-2), end)

	block := func(u int) {
		off := 64 * u
		dst := func(p reg.Register) Mem { return Mem{Base: p, Index: idx, Scale: 8, Disp: 8 * u} }
		if i.Is512() {
			x := ZMM()
			VMOVDQU64(Mem{Base: src, Disp: off}, x)
			ka, k1, k2 := K(), K(), K()
			VPCMPEQB(va, x, ka)
			VPCMPEQB(v1, x, k1)
			VPCMPEQB(v2, x, k2)
			KORQ(k1, k2, k1)
			ra, rb := GP64(), GP64()
			KMOVQ(ka, ra)
			KMOVQ(k1, rb)
			MOVQ(ra, dst(pa))
			MOVQ(rb, dst(pb))
			return
		}
		lo, hi := YMM(), YMM()
		VMOVDQU(Mem{Base: src, Disp: off}, lo)
		VMOVDQU(Mem{Base: src, Disp: off + 32}, hi)
		// store writes the 64-bit mask of two halves' byte compares.
		store := func(l, h reg.VecVirtual, p reg.Register) {
			r, rh := GP64(), GP64()
			VPMOVMSKB(l, r.As32())
			VPMOVMSKB(h, rh.As32())
			SHLQ(U8(32), rh)
			ORQ(rh, r)
			MOVQ(r, dst(p))
		}
		ea, fa := YMM(), YMM()
		VPCMPEQB(va, lo, ea)
		VPCMPEQB(va, hi, fa)
		store(ea, fa, pa)
		e1, e2, f1, f2 := YMM(), YMM(), YMM(), YMM()
		VPCMPEQB(v1, lo, e1)
		VPCMPEQB(v2, lo, e2)
		VPOR(e2, e1, e1)
		VPCMPEQB(v1, hi, f1)
		VPCMPEQB(v2, hi, f2)
		VPOR(f2, f1, f1)
		store(e1, f1, pb)
	}

	Label(i.Label("byteMasks", "two"))
	CMPQ(idx, end)
	JAE(LabelRef(i.Label("byteMasks", "one")))
	block(0)
	block(1)
	ADDQ(I32(128), src)
	ADDQ(I32(2), idx)
	JMP(LabelRef(i.Label("byteMasks", "two")))
	Label(i.Label("byteMasks", "one"))
	CMPQ(idx, n)
	JAE(LabelRef(i.Label("byteMasks", "done")))
	block(0)
	Label(i.Label("byteMasks", "done"))
	Ret()
}
