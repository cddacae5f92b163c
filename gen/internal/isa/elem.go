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

// sel returns the float32 form ps or the float64 form pd of an instruction.
func sel[F any](i *ISA, pd, ps F) F {
	if i.F32() {
		return ps
	}
	return pd
}

func (i *ISA) VMOVU(ops ...Op)         { sel(i, VMOVUPD, VMOVUPS)(ops...) }
func (i *ISA) VMOVU_Z(src, k, dst Op)  { sel(i, VMOVUPD_Z, VMOVUPS_Z)(src, k, dst) }
func (i *ISA) VMOVA(ops ...Op)         { sel(i, VMOVAPD, VMOVAPS)(ops...) }
func (i *ISA) VMASKMOV(a, m, b Op)     { sel(i, VMASKMOVPD, VMASKMOVPS)(a, m, b) }
func (i *ISA) VADD(ops ...Op)          { sel(i, VADDPD, VADDPS)(ops...) }
func (i *ISA) VADD_Z(a, b, k, dst Op)  { sel(i, VADDPD_Z, VADDPS_Z)(a, b, k, dst) }
func (i *ISA) VSUB(ops ...Op)          { sel(i, VSUBPD, VSUBPS)(ops...) }
func (i *ISA) VMUL(ops ...Op)          { sel(i, VMULPD, VMULPS)(ops...) }
func (i *ISA) VMAX(ops ...Op)          { sel(i, VMAXPD, VMAXPS)(ops...) }
func (i *ISA) VMIN(ops ...Op)          { sel(i, VMINPD, VMINPS)(ops...) }
func (i *ISA) VAND(ops ...Op)          { sel(i, VANDPD, VANDPS)(ops...) }
func (i *ISA) VCMP(ops ...Op)          { sel(i, VCMPPD, VCMPPS)(ops...) }
func (i *ISA) VBLENDV(m, a, b, dst Op) { sel(i, VBLENDVPD, VBLENDVPS)(m, a, b, dst) }
func (i *ISA) VBLENDM(ops ...Op)       { sel(i, VBLENDMPD, VBLENDMPS)(ops...) }
func (i *ISA) VFMADD231(ops ...Op)     { sel(i, VFMADD231PD, VFMADD231PS)(ops...) }
func (i *ISA) VBROADCAST(ops ...Op)    { sel(i, VBROADCASTSD, VBROADCASTSS)(ops...) }
func (i *ISA) VMOVS(ops ...Op)         { sel(i, VMOVSD, VMOVSS)(ops...) }
func (i *ISA) VADDS(ops ...Op)         { sel(i, VADDSD, VADDSS)(ops...) }
func (i *ISA) VMULS(ops ...Op)         { sel(i, VMULSD, VMULSS)(ops...) }
func (i *ISA) VDIVS(ops ...Op)         { sel(i, VDIVSD, VDIVSS)(ops...) }

// Const returns a file-local constant of the element type (float32
// constants get the suffix "32" on their name).
func (i *ISA) Const(name string, v float64) Mem {
	if !i.F32() {
		return ConstF64(name, v)
	}
	return constOnce(name+"32", F32(float32(v)))
}

// ConstBits is Const for a value given as a float64 whose float32 (or
// float64) bit pattern is wanted, such as ±Inf.
func (i *ISA) ConstBits(name string, v float64) Mem {
	if !i.F32() {
		return ConstU64(name, math.Float64bits(v))
	}
	return constOnce(name+"32", U32(math.Float32bits(float32(v))))
}
