// Package neon encodes the AArch64 Advanced SIMD instructions that Go's arm64
// assembler does not know (vector floating-point arithmetic, compares,
// conversions, some shifts), so that the arm64 generators can write them as
// WORD directives. Each encoder returns a Word: the 32-bit encoding and its
// GNU spelling, exactly as golang.org/x/arch/arm64/arm64asm.GNUSyntax prints
// it, which the generated file carries as a comment and which
// gen/arm64's decode test checks.
package neon

import (
	"fmt"
	"strings"
)

// Word is one encoded instruction.
type Word struct {
	Enc uint32
	GNU string
}

// String formats w as a Go assembler line body.
func (w Word) String() string { return fmt.Sprintf("WORD $0x%08x // %s", w.Enc, w.GNU) }

func reg(r int) uint32 {
	if r < 0 || r > 31 {
		panic(fmt.Sprintf("neon: bad register V%d", r))
	}
	return uint32(r)
}

// three is a three-register .2D instruction: op vd.2d, vn.2d, vm.2d.
func three(base uint32, name string, d, n, m int) Word {
	return Word{base | reg(m)<<16 | reg(n)<<5 | reg(d),
		fmt.Sprintf("%s v%d.2d, v%d.2d, v%d.2d", name, d, n, m)}
}

// two is a two-register .2D instruction: op vd.2d, vn.2d.
func two(base uint32, name string, d, n int) Word {
	return Word{base | reg(n)<<5 | reg(d), fmt.Sprintf("%s v%d.2d, v%d.2d", name, d, n)}
}

// Vector floating point, .2D lanes (d = n op m).
func FADD(d, n, m int) Word   { return three(0x4e60d400, "fadd", d, n, m) }
func FSUB(d, n, m int) Word   { return three(0x4ee0d400, "fsub", d, n, m) }
func FMUL(d, n, m int) Word   { return three(0x6e60dc00, "fmul", d, n, m) }
func FDIV(d, n, m int) Word   { return three(0x6e60fc00, "fdiv", d, n, m) }
func FMAX(d, n, m int) Word   { return three(0x4e60f400, "fmax", d, n, m) }
func FMIN(d, n, m int) Word   { return three(0x4ee0f400, "fmin", d, n, m) }
func FMAXNM(d, n, m int) Word { return three(0x4e60c400, "fmaxnm", d, n, m) }
func FADDP(d, n, m int) Word  { return three(0x6e60d400, "faddp", d, n, m) }
func FMAXP(d, n, m int) Word  { return three(0x6e60f400, "fmaxp", d, n, m) }

// Compares: all-ones lanes where the relation holds (false for NaN).
func FCMGT(d, n, m int) Word { return three(0x6ee0e400, "fcmgt", d, n, m) } // n > m
func FCMGE(d, n, m int) Word { return three(0x6e60e400, "fcmge", d, n, m) } // n >= m
func FCMEQ(d, n, m int) Word { return three(0x4e60e400, "fcmeq", d, n, m) } // n == m
func CMGT(d, n, m int) Word  { return three(0x4ee03400, "cmgt", d, n, m) }  // signed int64 n > m

// FCMEQZ is n == 0, FCMLTZ is n < 0.
func FCMEQZ(d, n int) Word {
	return Word{0x4ee0d800 | reg(n)<<5 | reg(d), fmt.Sprintf("fcmeq v%d.2d, v%d.2d, #0", d, n)}
}
func FCMLTZ(d, n int) Word {
	return Word{0x4ee0e800 | reg(n)<<5 | reg(d), fmt.Sprintf("fcmlt v%d.2d, v%d.2d, #0", d, n)}
}

// Rounding, conversions, sign.
func FRINTN(d, n int) Word { return two(0x4e618800, "frintn", d, n) }
func FRINTM(d, n int) Word { return two(0x4e619800, "frintm", d, n) }
func FCVTZS(d, n int) Word { return two(0x4ee1b800, "fcvtzs", d, n) }
func FCVTNS(d, n int) Word { return two(0x4e61a800, "fcvtns", d, n) }
func SCVTF(d, n int) Word  { return two(0x4e61d800, "scvtf", d, n) }
func FABS(d, n int) Word   { return two(0x4ee0f800, "fabs", d, n) }
func FNEG(d, n int) Word   { return two(0x6ee0f800, "fneg", d, n) }

// Shifts of .2D lanes by an immediate.
func SSHR(d, n, sh int) Word { return shift(0x4f000400, "sshr", 64, d, n, sh) }
func USHR(d, n, sh int) Word { return shift(0x6f000400, "ushr", 64, d, n, sh) }
func SHL(d, n, sh int) Word  { return shift(0x4f005400, "shl", 64, d, n, sh) }

// shift encodes a shift by an immediate of .2D (esize 64) or .4S (esize
// 32) lanes: immh:immb holds 2·esize−sh for the right shifts (1 ≤ sh ≤
// esize), esize+sh for SHL (0 ≤ sh < esize).
func shift(base uint32, name string, esize, d, n, sh int) Word {
	lo, hi, imm := 1, esize, 2*esize-sh
	if name == "shl" {
		lo, hi, imm = 0, esize-1, esize+sh
	}
	if sh < lo || sh > hi {
		panic("neon: " + name + " shift out of range")
	}
	arr := map[int]string{64: "2d", 32: "4s"}[esize]
	return Word{base | uint32(imm)<<16 | reg(n)<<5 | reg(d), fmt.Sprintf("%s v%d.%s, v%d.%s, #%d", name, d, arr, n, arr, sh)}
}

// XTN narrows the two 64-bit lanes of vn to the two low 32-bit lanes of vd.
func XTN(d, n int) Word {
	return Word{0x0ea12800 | reg(n)<<5 | reg(d), fmt.Sprintf("xtn v%d.2s, v%d.2d", d, n)}
}

// SHRN4 narrows the eight 16-bit lanes of vn, each shifted right by 4, to
// the eight bytes of the low half of vd: with vn's bytes all-ones or zero
// (compare results), byte j of vd holds bytes 2j and 2j+1 as its low and
// high nibbles, so the doubleword holds a nibble per byte of vn.
func SHRN4(d, n int) Word {
	return Word{0x0f0c8400 | reg(n)<<5 | reg(d), fmt.Sprintf("shrn v%d.8b, v%d.8h, #4", d, n)}
}

// FADDPS is the scalar pairwise add dd = vn[0] + vn[1].
func FADDPS(d, n int) Word {
	return Word{0x7e70d800 | reg(n)<<5 | reg(d), fmt.Sprintf("faddp d%d, v%d.2d", d, n)}
}

// BIC is vd = vn AND NOT vm (bitwise, 16 bytes).
func BIC(d, n, m int) Word {
	return Word{0x4e601c00 | reg(m)<<16 | reg(n)<<5 | reg(d), fmt.Sprintf("bic v%d.16b, v%d.16b, v%d.16b", d, n, m)}
}

// S turns a .2D floating-point (or 64-bit integer) vector instruction of this
// package (FADD … CMGT, FCMEQZ, FCMLTZ, FRINTN … FNEG) into its .4S form: the
// same encoding with the size bit 22 cleared. It panics for an instruction
// without .2d operands (shifts, XTN, the scalar FADDPS, BIC), whose
// encodings differ otherwise.
func S(w Word) Word {
	if !strings.Contains(w.GNU, ".2d") || strings.HasPrefix(w.GNU, "sshr") || strings.HasPrefix(w.GNU, "ushr") ||
		strings.HasPrefix(w.GNU, "shl") || strings.HasPrefix(w.GNU, "xtn") || strings.HasPrefix(w.GNU, "faddp d") {
		panic("neon: no .4s form for " + w.GNU)
	}
	if w.Enc&(1<<22) == 0 {
		panic("neon: size bit clear in " + w.GNU)
	}
	return Word{w.Enc &^ (1 << 22), strings.ReplaceAll(w.GNU, ".2d", ".4s")}
}

// FADDPS32 is the scalar pairwise add sd = vn.s[0] + vn.s[1].
func FADDPS32(d, n int) Word {
	return Word{0x7e30d800 | reg(n)<<5 | reg(d), fmt.Sprintf("faddp s%d, v%d.2s", d, n)}
}

// SSHR32 and SHL32 are the shifts of .4S lanes.
func SSHR32(d, n, sh int) Word { return shift(0x4f000400, "sshr", 32, d, n, sh) }
func SHL32(d, n, sh int) Word  { return shift(0x4f005400, "shl", 32, d, n, sh) }

// FCVTL widens the two low float32 lanes of vn to float64 lanes of vd;
// FCVTL2 the two high ones.
func FCVTL(d, n int) Word {
	return Word{0x0e617800 | reg(n)<<5 | reg(d), fmt.Sprintf("fcvtl v%d.2d, v%d.2s", d, n)}
}
func FCVTL2(d, n int) Word {
	return Word{0x4e617800 | reg(n)<<5 | reg(d), fmt.Sprintf("fcvtl2 v%d.2d, v%d.4s", d, n)}
}
