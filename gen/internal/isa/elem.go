package isa

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// Element-typed instructions: each method emits the PD (float64) or PS
// (float32) form of the instruction it is named after, with the same
// operands, so that a generator is written once for both element types.

// F32 reports whether the elements are float32.
func (i *ISA) F32() bool { return i.Size == 4 }

// Shift is log2(Size), for turning element counts into byte offsets.
func (i *ISA) Shift() uint8 {
	if i.F32() {
		return 2
	}
	return 3
}

// Sc is Size as a memory operand's index scale.
func (i *ISA) Sc() uint8 { return uint8(i.Size) }

// GoType is the Go element type, for function signatures.
func (i *ISA) GoType() string {
	if i.F32() {
		return "float32"
	}
	return "float64"
}

// Sig formats a Go signature, replacing every %s with the element type.
func (i *ISA) Sig(format string) string {
	n := 0
	for k := 0; k+1 < len(format); k++ {
		if format[k] == '%' && format[k+1] == 's' {
			n++
		}
	}
	args := make([]any, n)
	for k := range args {
		args[k] = i.GoType()
	}
	return fmt.Sprintf(format, args...)
}

func (i *ISA) pick(pd, ps func(...Op), ops []Op) {
	if i.F32() {
		ps(ops...)
		return
	}
	pd(ops...)
}

func (i *ISA) VMOVU(ops ...Op) { i.pick(VMOVUPD, VMOVUPS, ops) }
func (i *ISA) VMOVU_Z(src, k, dst Op) {
	if i.F32() {
		VMOVUPS_Z(src, k, dst)
		return
	}
	VMOVUPD_Z(src, k, dst)
}
func (i *ISA) VMOVA(ops ...Op) { i.pick(VMOVAPD, VMOVAPS, ops) }
func (i *ISA) VMASKMOV(a, m, b Op) {
	if i.F32() {
		VMASKMOVPS(a, m, b)
		return
	}
	VMASKMOVPD(a, m, b)
}
func (i *ISA) VADD(ops ...Op) { i.pick(VADDPD, VADDPS, ops) }
func (i *ISA) VADD_Z(a, b, k, dst Op) {
	if i.F32() {
		VADDPS_Z(a, b, k, dst)
		return
	}
	VADDPD_Z(a, b, k, dst)
}
func (i *ISA) VSUB(ops ...Op) { i.pick(VSUBPD, VSUBPS, ops) }
func (i *ISA) VMUL(ops ...Op) { i.pick(VMULPD, VMULPS, ops) }
func (i *ISA) VMAX(ops ...Op) { i.pick(VMAXPD, VMAXPS, ops) }
func (i *ISA) VMIN(ops ...Op) { i.pick(VMINPD, VMINPS, ops) }
func (i *ISA) VAND(ops ...Op) { i.pick(VANDPD, VANDPS, ops) }
func (i *ISA) VCMP(ops ...Op) { i.pick(VCMPPD, VCMPPS, ops) }
func (i *ISA) VBLENDV(m, a, b, dst Op) {
	if i.F32() {
		VBLENDVPS(m, a, b, dst)
		return
	}
	VBLENDVPD(m, a, b, dst)
}
func (i *ISA) VBLENDM(ops ...Op)    { i.pick(VBLENDMPD, VBLENDMPS, ops) }
func (i *ISA) VFMADD231(ops ...Op)  { i.pick(VFMADD231PD, VFMADD231PS, ops) }
func (i *ISA) VBROADCAST(ops ...Op) { i.pick(VBROADCASTSD, VBROADCASTSS, ops) }
func (i *ISA) VMOVS(ops ...Op)      { i.pick(VMOVSD, VMOVSS, ops) }
func (i *ISA) VADDS(ops ...Op)      { i.pick(VADDSD, VADDSS, ops) }
func (i *ISA) VMULS(ops ...Op)      { i.pick(VMULSD, VMULSS, ops) }
func (i *ISA) VDIVS(ops ...Op)      { i.pick(VDIVSD, VDIVSS, ops) }

// Const returns a file-local constant of the element type (float32
// constants get the suffix "32" on their name).
func (i *ISA) Const(name string, v float64) Mem {
	if !i.F32() {
		return ConstF64(name, v)
	}
	name += "32"
	if m, ok := consts[name]; ok {
		return m
	}
	m := ConstData(name, F32(float32(v)))
	consts[name] = m
	return m
}

// ConstBits is Const for a value given as a float64 whose float32 (or
// float64) bit pattern is wanted, such as ±Inf.
func (i *ISA) ConstBits(name string, v float64) Mem {
	if !i.F32() {
		return ConstU64(name, math.Float64bits(v))
	}
	name += "32"
	if m, ok := consts[name]; ok {
		return m
	}
	m := ConstData(name, U32(math.Float32bits(float32(v))))
	consts[name] = m
	return m
}
