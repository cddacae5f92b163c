package isa

// Package isa holds what the avo kernel generators share: the description of
// the AVX2 and AVX-512 tiers, tail masks, reductions and loop shapes.
import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ISA describes one vector tier and element type. Kernels are written once
// against it and emitted for AVX2 (ymm, 16 registers) and AVX-512 (zmm, 32
// registers), each for float64 (4 or 8 lanes) and float32 (8 or 16 lanes):
// the element-typed instructions are the methods in elem.go. AVX2 functions
// must keep at most 16 vectors live: avo would otherwise hand out Y16–Y31,
// which need EVEX (a test in package kernels rejects them).
type ISA struct {
	Name  string // tier: "AVX2" or "AVX512"
	W     int    // lanes per vector
	Bytes int    // bytes per vector
	Regs  int    // vector registers available
	Size  int    // bytes per element: 8 (float64) or 4 (float32)
}

var (
	AVX2      = &ISA{Name: "AVX2", W: 4, Bytes: 32, Regs: 16, Size: 8}
	AVX512    = &ISA{Name: "AVX512", W: 8, Bytes: 64, Regs: 32, Size: 8}
	AVX2F32   = &ISA{Name: "AVX2", W: 8, Bytes: 32, Regs: 16, Size: 4}
	AVX512F32 = &ISA{Name: "AVX512", W: 16, Bytes: 64, Regs: 32, Size: 4}
	ISAs      = []*ISA{AVX2, AVX512}
	ISAs32    = []*ISA{AVX2F32, AVX512F32}
)

// Is512 reports whether this is an AVX-512 tier.
func (i *ISA) Is512() bool { return i.Bytes == 64 }

// Tier returns avx2 on the AVX2 tier and avx512 on AVX-512: a per-tier
// choice such as a block size in vectors.
func (i *ISA) Tier(avx2, avx512 int) int {
	if i.Is512() {
		return avx512
	}
	return avx2
}

// Vec allocates a vector register of the tier's width.
func (i *ISA) Vec() reg.VecVirtual {
	if i.Is512() {
		return ZMM()
	}
	return YMM()
}

// Vecs allocates n vector registers.
func (i *ISA) Vecs(n int) []reg.VecVirtual {
	v := make([]reg.VecVirtual, n)
	for k := range v {
		v[k] = i.Vec()
	}
	return v
}

// Fn names a function for this tier: Fn("dot") is "dotAVX2" or "dotAVX512",
// and for float32 "dot32AVX2" or "dot32AVX512".
func (i *ISA) Fn(base string) string {
	if i.F32() {
		return base + "32" + i.Name
	}
	return base + i.Name
}

// Tag is the tier's name, with "f32" appended for float32 (for labels).
func (i *ISA) Tag() string {
	if i.F32() {
		return i.Name + "f32"
	}
	return i.Name
}

// Label makes a label unique to the function being written.
func (i *ISA) Label(fn, l string) string { return fmt.Sprintf("%s_%s_%s", fn, i.Tag(), l) }

// Mask is a tail mask: an opmask register on AVX-512, a vector of all-ones or
// all-zeros qwords on AVX2 (for VMASKMOVPD).
type Mask struct {
	K reg.OpmaskVirtual
	Y reg.VecVirtual
}

var maskTable Mem
var maskTableDone bool

// tailTable is eight qwords, four all-ones then four zeros; loading four of
// them from qword 4−r gives a mask whose first r lanes are set.
func tailTable() Mem {
	if !maskTableDone {
		maskTable = GLOBL("tailmask", RODATA|NOPTR)
		for k := 0; k < 8; k++ {
			v := uint64(0)
			if k < 4 {
				v = ^uint64(0)
			}
			DATA(8*k, U64(v))
		}
		maskTableDone = true
	}
	return maskTable
}

// TailMask returns a mask with the first r lanes set, 0 ≤ r < W. r is left
// unchanged.
func (i *ISA) TailMask(r reg.GPVirtual) Mask {
	if i.Is512() {
		ones, m := GP64(), GP64()
		MOVQ(I32(-1), ones)
		BZHIQ(r, ones, m)
		k := K()
		if i.F32() {
			KMOVW(m.As32(), k)
		} else {
			KMOVB(m.As32(), k)
		}
		return Mask{K: k}
	}
	off := GP64()
	MOVQ(U32(i.W), off)
	SUBQ(r, off)
	tbl := GP64()
	y := YMM()
	if i.F32() {
		LEAQ(DwordMaskTable("tailmask32", 8), tbl)
		VMOVDQU(Mem{Base: tbl, Index: off, Scale: 4}, y)
	} else {
		LEAQ(tailTable(), tbl)
		VMOVDQU(Mem{Base: tbl, Index: off, Scale: 8}, y)
	}
	return Mask{Y: y}
}

// LoadMasked loads the masked lanes of src into dst and zeroes the others;
// masked-off lanes are not read, so it never faults past a slice's end.
func (i *ISA) LoadMasked(m Mask, src Mem, dst reg.VecVirtual) {
	if i.Is512() {
		i.VMOVU_Z(src, m.K, dst)
		return
	}
	i.VMASKMOV(src, m.Y, dst)
}

// StoreMasked stores the masked lanes of src to dst.
func (i *ISA) StoreMasked(m Mask, src reg.VecVirtual, dst Mem) {
	if i.Is512() {
		i.VMOVU(src, m.K, dst)
		return
	}
	i.VMASKMOV(src, m.Y, dst)
}

// HSum adds the lanes of v and returns the xmm register whose low lane holds
// the sum; v is clobbered.
func (i *ISA) HSum(v reg.VecVirtual) reg.Register { return i.HReduce(v, i.VADD, i.VADDS) }

// HReduce folds the lanes of v pairwise, halving the width each step, with
// the packed op (such as VADD or VMAX) and the last step with last (op, or
// its scalar form), and returns the xmm register whose low lane holds the
// result; v is clobbered.
func (i *ISA) HReduce(v reg.VecVirtual, op, last func(...Op)) reg.Register {
	if i.Is512() {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		op(hi, v.AsY(), hi)
		v = hi
	}
	x := XMM()
	VEXTRACTF128(U8(1), v.AsY(), x)
	op(x, v.AsX(), v.AsX())
	if i.F32() {
		VMOVHLPS(v.AsX(), v.AsX(), x)
		op(x, v.AsX(), v.AsX())
		VMOVSHDUP(v.AsX(), x)
	} else {
		VUNPCKHPD(v.AsX(), v.AsX(), x)
	}
	last(x, v.AsX(), v.AsX())
	return v.AsX()
}

// Zero sets v to all zeros.
func (i *ISA) Zero(v reg.VecVirtual) {
	if i.Is512() {
		VXORPD(v, v, v)
		return
	}
	VXORPD(v.AsY(), v.AsY(), v.AsY())
}

// Addr returns the memory operand base + idx*8 + disp (float64 elements).
func Addr(base, idx reg.Register, disp int) Mem {
	return Mem{Base: base, Index: idx, Scale: 8, Disp: disp}
}

// Addr returns the memory operand base + idx*Size + disp.
func (i *ISA) Addr(base, idx reg.Register, disp int) Mem {
	return Mem{Base: base, Index: idx, Scale: uint8(i.Size), Disp: disp}
}

// Kernel starts the assembly function fn (TEXT with the attributes a and
// the Go signature sig) whose pointer arguments do not escape; doc is the
// stub's comment, whose first line Kernel begins with fn.
func Kernel(fn string, a attr.Attribute, sig string, doc ...string) {
	TEXT(fn, a, sig)
	Pragma("noescape")
	Doc(append([]string{fn + " " + doc[0]}, doc[1:]...)...)
}

// Emit ends every avo generator: it writes the assembly and the Go stubs
// (avo's -out, -stubs and -pkg flags) under the build constraint !purego,
// which builds no assembly.
func Emit() {
	ConstraintExpr("!purego")
	Generate()
}

// Ret ends a vector function: VZEROUPPER (avo does not insert it) and RET.
func Ret() {
	VZEROUPPER()
	RET()
}

// ParamAddr returns the stack address of a scalar argument, for instructions
// that take it straight from memory (VBROADCASTSD m64).
func ParamAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// Stripes walks idx from 0 to n: body(u) for unroll vectors at a time, then
// body1 for single vectors, then tail with the remaining count (1..W−1).
func Stripes(i *ISA, fn string, n, idx reg.GPVirtual, unroll int, body func(u int), tail func(rem reg.GPVirtual)) {
	XORQ(idx, idx)
	end := GP64()
	if unroll > 1 {
		MOVQ(n, end)
		ANDQ(I32(-unroll*i.W), end)
		Label(i.Label(fn, "wide"))
		CMPQ(idx, end)
		JAE(LabelRef(i.Label(fn, "narrow0")))
		for u := 0; u < unroll; u++ {
			body(u)
		}
		ADDQ(I32(unroll*i.W), idx)
		JMP(LabelRef(i.Label(fn, "wide")))
	}
	Label(i.Label(fn, "narrow0"))
	MOVQ(n, end)
	ANDQ(I32(-i.W), end)
	Label(i.Label(fn, "narrow"))
	CMPQ(idx, end)
	JAE(LabelRef(i.Label(fn, "tail")))
	body(0)
	ADDQ(I32(i.W), idx)
	JMP(LabelRef(i.Label(fn, "narrow")))
	Label(i.Label(fn, "tail"))
	rem := GP64()
	MOVQ(n, rem)
	SUBQ(idx, rem)
	JZ(LabelRef(i.Label(fn, "end")))
	tail(rem)
	Label(i.Label(fn, "end"))
}

// ScaleElems sets dst[0:n] = src[0:n]·v (dst may be src), unroll vectors
// per iteration; its labels start with fn.
func ScaleElems(i *ISA, fn string, dst, src reg.Register, n reg.GPVirtual, v reg.VecVirtual, unroll int) {
	idx := GP64()
	Stripes(i, fn, n, idx, unroll, func(u int) {
		t := i.Vec()
		i.VMUL(i.Addr(src, idx, u*i.Bytes), v, t)
		i.VMOVU(t, i.Addr(dst, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		t := i.Vec()
		i.LoadMasked(m, i.Addr(src, idx, 0), t)
		i.VMUL(t, v, t)
		i.StoreMasked(m, t, i.Addr(dst, idx, 0))
	})
}

var consts = map[string]Mem{}

// constOnce declares the file-local constant name on first use and returns
// it, however many functions of the generated file use it.
func constOnce(name string, v Constant) Mem {
	if m, ok := consts[name]; ok {
		return m
	}
	m := ConstData(name, v)
	consts[name] = m
	return m
}

// ConstF64 returns a file-local float64 constant, declared once per
// generated file however many functions use it.
func ConstF64(name string, v float64) Mem { return constOnce(name, F64(v)) }

// ConstU64 is ConstF64 for a 64-bit pattern.
func ConstU64(name string, v uint64) Mem { return constOnce(name, U64(v)) }

var dwordTables = map[string]Mem{}

// DwordMaskTable declares, on first use, the read-only table name of 2n
// dwords, n all-ones then n zeros: the n dwords from dword n−k are a mask
// whose first k lanes are set (0 ≤ k ≤ n), and their sign extension the
// qword mask. Gathers with int32 indices take such masks.
func DwordMaskTable(name string, n int) Mem {
	if m, ok := dwordTables[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	for k := 0; k < 2*n; k++ {
		v := uint32(0)
		if k < n {
			v = ^uint32(0)
		}
		DATA(4*k, U32(v))
	}
	dwordTables[name] = m
	return m
}
