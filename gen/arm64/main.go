// Command arm64 writes the NEON (AArch64 Advanced SIMD) kernels of package
// kernels as Go assembly. avo cannot emit arm64, so this is a small text
// emitter: instructions Go's arm64 assembler knows are written as text, the
// rest (vector floating-point arithmetic, compares, conversions, some
// shifts) as WORD directives from package neon, each with its GNU spelling in
// a comment that decode_test.go checks against golang.org/x/arch's decoder.
//
// The Go stubs are hand-written in kernels/neon_arm64.go.
package main

//go:generate go run . -out ../../kernels/kernels_arm64.s

import (
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"strings"

	"github.com/simdcrf/simdcrf/gen/internal/neon"
)

type gen struct {
	b     strings.Builder
	fn    string
	frame map[string]arg // the arguments of fn
	data  strings.Builder
	f32   bool // element type of the kernel being written: float32, else float64
}

// The element type: the fb and Viterbi kernels are written once and emitted
// for float64 (.2D lanes) and float32 (.4S lanes). In their instruction
// text, {D} is the scalar suffix (D or S), {A} the vector arrangement (D2 or
// S4), {L} the lane type (D or S), {8} the element size and {3} its log2.
var elemTokens = map[bool]*strings.Replacer{
	false: strings.NewReplacer("{D}", "D", "{A}", "D2", "{L}", "D", "{8}", "8", "{3}", "3"),
	true:  strings.NewReplacer("{D}", "S", "{A}", "S4", "{L}", "S", "{8}", "4", "{3}", "2"),
}

func (g *gen) i(format string, args ...any) {
	fmt.Fprintf(&g.b, "\t"+elemTokens[g.f32].Replace(format)+"\n", args...)
}

// sz is the element size in bytes, lanes the elements per vector.
func (g *gen) sz() int {
	if g.f32 {
		return 4
	}
	return 8
}
func (g *gen) lanes() int { return 16 / g.sz() }

// vr names vector register v with the element arrangement.
func (g *gen) vr(v int) string {
	if g.f32 {
		return fmt.Sprintf("V%d.S4", v)
	}
	return d2(v)
}

// fw emits a .2D instruction of package neon in the element type's form.
func (g *gen) fw(w neon.Word) {
	if g.f32 {
		w = neon.S(w)
	}
	g.w(w)
}

// hpair leaves the sum of the lanes of Vv in Fv (low lane).
func (g *gen) hpair(v int) {
	if g.f32 {
		g.fw(neon.FADDP(v, v, v))
		g.w(neon.FADDPS32(v, v))
		return
	}
	g.w(neon.FADDPS(v, v))
}

// name is a kernel's function name: base+"NEON", base+"32NEON" for float32.
func (g *gen) name(base string) string {
	if g.f32 {
		return base + "32NEON"
	}
	return base + "NEON"
}

// sig is a signature with every float64 replaced by the element type.
func (g *gen) sig(s string) string {
	if g.f32 {
		return strings.ReplaceAll(s, "float64", "float32")
	}
	return s
}
func (g *gen) w(w neon.Word)    { g.i("%s", w) }
func (g *gen) label(l string)   { fmt.Fprintf(&g.b, "%s:\n", l) }
func (g *gen) comment(c string) { g.i("// %s", c) }

// text starts the function name with the Go signature sig.
func (g *gen) text(name, sig string) {
	g.fn = name
	var size int
	g.frame, size = frame(sig)
	fmt.Fprintf(&g.b, "\n// func %s%s\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, strings.TrimPrefix(sig, "func"), name, size)
}

// l returns a label local to the current function.
func (g *gen) l(s string) string { return g.fn + "_" + s }

func d2(v int) string  { return fmt.Sprintf("V%d.D2", v) }
func b16(v int) string { return fmt.Sprintf("V%d.B16", v) }

// list returns the register list [Vfirst.D2, …] of n consecutive registers.
func (g *gen) list(first, n int) string {
	var s []string
	for k := 0; k < n; k++ {
		s = append(s, g.vr(first+k))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// ld loads nv vectors (2·nv doubles) from ptr into Vfirst… and advances ptr;
// nv == 0 loads one double into the low lane (the upper lane is zeroed).
func (g *gen) ld(ptr string, first, nv int) {
	if nv == 0 {
		g.i("FMOV{D}.P {8}(%s), F%d", ptr, first)
		return
	}
	for k := 0; k < nv; k += 4 {
		n := min(4, nv-k)
		g.i("VLD1.P %d(%s), %s", 16*n, ptr, g.list(first+k, n))
	}
}

// st is ld's store counterpart.
func (g *gen) st(ptr string, first, nv int) {
	if nv == 0 {
		g.i("FMOV{D}.P F%d, {8}(%s)", first, ptr)
		return
	}
	for k := 0; k < nv; k += 4 {
		n := min(4, nv-k)
		g.i("VST1.P %s, %d(%s)", g.list(first+k, n), 16*n, ptr)
	}
}

func (g *gen) zero(v int) { g.i("VEOR %s, %s, %s", b16(v), b16(v), b16(v)) }
func (g *gen) mov(dst, src int) {
	g.i("VORR %s, %s, %s", b16(src), b16(src), b16(dst))
}

// zeroAcc zeroes the accumulators of a block of nv vectors, V0… (F0 for
// nv == 0).
func (g *gen) zeroAcc(nv int) {
	for k := 0; k < max(nv, 1); k++ {
		g.zero(k)
	}
}

// dup loads the element at src into every lane of Vv (scalar: only into
// Fv), advancing src past it when post.
func (g *gen) dup(scalar bool, src string, v int, post bool) {
	mode := " "
	if post {
		mode = ".P {8}"
	}
	if scalar {
		g.i("FMOV{D}"+mode+"(%s), F%d", src, v)
		return
	}
	g.i("VLD1R"+mode+"(%s), [V%d.{A}]", src, v)
}

// rowFMA adds V30 times the nv vectors of the matrix row at row (loaded into
// V16…) to the accumulators V0… (nv == 0: F0 += F30·F16). The row is read
// through tmp, or through row itself (consumed) when tmp is "", and row
// then advances by the register stride unless it is "".
func (g *gen) rowFMA(nv int, row, tmp, stride string) {
	if nv == 0 {
		g.i("FMOV{D} (%s), F16", row)
	} else {
		p := row
		if tmp != "" {
			g.i("MOVD %s, %s", row, tmp)
			p = tmp
		}
		g.ld(p, 16, nv)
	}
	if stride != "" {
		g.i("ADD %s, %s", stride, row)
	}
	g.each(nv, func(k int) { g.i("VFMLA V30.{A}, %s, %s", g.vr(16+k), g.vr(k)) }, "FMADD{D} F16, F0, F30, F0")
}

// fmaLoop computes the product of a vector and a block of nv vectors
// (nv == 0: one column) of a matrix's rows into V0… (F0): it zeroes them,
// emits setup (R15 = the row count, the pointers), and runs the loop
// labelled name+nv: body, which adds one row's term (dup, rowFMA), R15
// times.
func (g *gen) fmaLoop(nv int, name string, setup []string, body func()) {
	g.zeroAcc(nv)
	for _, ins := range setup {
		g.i(ins)
	}
	loop := g.l(fmt.Sprintf("%s%d", name, nv))
	g.label(loop)
	body()
	g.i("SUBS $1, R15")
	g.i("BNE %s", loop)
}

// dupRow broadcasts the next element at R13 to Vv, loads the nv vectors
// (nv == 0: one element) of the matrix row at R14 into Vdst… through R23
// and advances R14 by the register stride: the operands of one row i of
// the max-plus and log-sum loops.
func (g *gen) dupRow(v, dst, nv int, stride string) {
	g.dup(false, "R13", v, true)
	g.i("MOVD R14, R23")
	g.ld("R23", dst, nv)
	g.i("ADD %s, R14", stride)
}

// maxRow is one row i of the max-plus loops (Viterbi, logMatVec's maxima):
// the candidates V8… = δ[i] + tr[i][block] replace the best V0… where
// greater; with arg, their indices V4… become V16 there too.
func (g *gen) maxRow(nv int, stride string, arg bool) {
	g.dupRow(18, 8, nv, stride)
	for k := 0; k < max(nv, 1); k++ {
		g.fw(neon.FADD(8+k, 18, 8+k))
		g.fw(neon.FCMGT(12+k, 8+k, k))
		g.i("VBIT %s, %s, %s", b16(12+k), b16(8+k), b16(k))
		if arg {
			g.i("VBIT %s, V16.B16, %s", b16(12+k), b16(4+k))
		}
	}
}

// each emits op(k) for each vector k of a block of nv vectors, or for
// nv == 0 (one element) the scalar instructions instead.
func (g *gen) each(nv int, op func(k int), scalar ...string) {
	if nv == 0 {
		for _, ins := range scalar {
			g.i(ins)
		}
		return
	}
	for k := 0; k < nv; k++ {
		op(k)
	}
}

// widths lists the block sizes (in vectors) tried in order; 0 is one double.
type widths []int

func (g *gen) cols(nv int) int {
	if nv == 0 {
		return 1
	}
	return g.lanes() * nv
}

// blocks walks cnt (a register, consumed) elements in blocks: for each width
// in ws it loops while at least that many elements remain, calling body.
func (g *gen) blocks(name, cnt string, ws widths, body func(nv int)) {
	for k, nv := range ws {
		c := g.cols(nv)
		loop, next := g.l(fmt.Sprintf("%s%d", name, c)), g.l(fmt.Sprintf("%s%d_done", name, c))
		g.label(loop)
		if nv == 0 {
			g.i("CBZ %s, %s", cnt, next)
		} else {
			g.i("CMP $%d, %s", c, cnt)
			g.i("BLT %s", next)
		}
		body(nv)
		g.i("SUB $%d, %s", c, cnt)
		// A last scalar block runs once for float64 (a vector holds
		// two), and loops for float32 (up to three left).
		if k < len(ws)-1 || nv != 0 || g.lanes() > 2 {
			g.i("B %s", loop)
		}
		g.label(next)
	}
}

// constants adds a file-local table of 16-byte entries, each value twice.
func (g *gen) constants(name string, vals []uint64) {
	for k, v := range vals {
		fmt.Fprintf(&g.data, "DATA %s<>+%d(SB)/8, $0x%016x\n", name, 16*k, v)
		fmt.Fprintf(&g.data, "DATA %s<>+%d(SB)/8, $0x%016x\n", name, 16*k+8, v)
	}
	fmt.Fprintf(&g.data, "GLOBL %s<>(SB), RODATA|NOPTR, $%d\n\n", name, 16*len(vals))
}

// constants32 is constants for float32 tables: each value four times.
func (g *gen) constants32(name string, vals []float32) {
	var c []uint64
	for _, v := range vals {
		b := uint64(math.Float32bits(v))
		c = append(c, b|b<<32)
	}
	g.constants(name, c)
}

// loadConsts loads n table entries into V(first)… through ptr.
func (g *gen) loadConsts(name, ptr string, first, n int) {
	g.i("MOVD $%s<>(SB), %s", name, ptr)
	for k := 0; k < n; k += 4 {
		m := min(4, n-k)
		g.i("VLD1.P %d(%s), %s", 16*m, ptr, g.list(first+k, m))
	}
}

func f64(x float64) uint64 { return math.Float64bits(x) }

func main() {
	out := flag.String("out", "", "output .s file")
	flag.Parse()
	src := generate()
	if *out == "" {
		fmt.Print(src)
		return
	}
	if err := os.WriteFile(*out, []byte(src), 0o644); err != nil {
		log.Fatal(err)
	}
}

// generate returns the whole kernels_arm64.s file.
func generate() string {
	g := &gen{}
	g.dot()
	g.axpy()
	g.scale()
	g.mul()
	g.forward()
	g.backward()
	g.viterbi(true)
	g.viterbi(false)
	g.exp()
	g.log()
	g.sparse(false)
	g.sparse(true)
	g.transitions()
	// The float32 kernels: the same emitters with .4S lanes.
	g.f32 = true
	g.forward()
	g.backward()
	g.viterbi(true)
	g.viterbi(false)
	g.transitions()
	g.exp()
	g.shiftRows()
	g.axpy()
	g.scale()
	g.mul()
	g.sparse(false)
	g.sparse(true)
	g.f32 = false
	g.dot32()
	g.axpyWiden()
	g.logMatVec()
	g.shiftRows()
	g.fmaPeak()
	g.byteMasks()
	// The selection kernels, float64 then float32.
	for _, f32 := range []bool{false, true} {
		g.f32 = f32
		g.selectGE(false)
		g.selectGE(true)
		g.max()
	}
	g.f32 = false
	return "// Code generated by command: go run . -out ../../kernels/kernels_arm64.s. DO NOT EDIT.\n\n" +
		"//go:build !purego\n\n#include \"textflag.h\"\n\n" + g.data.String() + strings.TrimPrefix(g.b.String(), "\n")
}

// hsum leaves the sum of the lanes of Vacc[0..n) in Facc (low lane).
func (g *gen) hsum(acc, n int) {
	for s := 1; s < n; s *= 2 {
		for k := 0; k+s < n; k += 2 * s {
			g.w(neon.FADD(acc+k, acc+k, acc+k+s))
		}
	}
	g.w(neon.FADDPS(acc, acc))
}

func (g *gen) dot() {
	g.text("dotNEON", "func(x, y []float64) float64")
	g.args("x_base R0", "x_len R2", "y_base R1")
	for k := 0; k < 8; k++ {
		g.zero(k)
	}
	g.zero(24)
	g.blocks("n", "R2", widths{8, 1, 0}, func(nv int) {
		g.ld("R0", 8, nv)
		g.ld("R1", 16, nv)
		g.each(nv, func(k int) { g.i("VFMLA %s, %s, %s", d2(8+k), d2(16+k), d2(k)) }, "FMADDD F8, F24, F16, F24")
	})
	g.hsum(0, 8)
	g.i("FADDD F24, F0")
	g.ret("F0")
	g.i("RET")
}

// dot32 is Dot32: float32 inputs widened to float64 (FCVTL, FCVTL2: exact),
// products and sums in float64 as dot's; a scalar tail of up to three.
func (g *gen) dot32() {
	g.text("dot32NEON", "func(x, y []float32) float64")
	g.args("x_base R0", "x_len R2", "y_base R1")
	for k := 0; k < 4; k++ {
		g.zero(k)
	}
	g.zero(24)
	g.widenLoop(func() {
		g.i("VLD1.P 32(R0), [V8.S4, V9.S4]")
		g.i("VLD1.P 32(R1), [V10.S4, V11.S4]")
		for k := 0; k < 2; k++ {
			g.w(neon.FCVTL(12+2*k, 8+k))
			g.w(neon.FCVTL2(13+2*k, 8+k))
			g.w(neon.FCVTL(16+2*k, 10+k))
			g.w(neon.FCVTL2(17+2*k, 10+k))
		}
		for k := 0; k < 4; k++ {
			g.i("VFMLA V%d.D2, V%d.D2, V%d.D2", 12+k, 16+k, k)
		}
	}, func() {
		g.i("FMOVS.P 4(R0), F8")
		g.i("FMOVS.P 4(R1), F9")
		g.i("FCVTSD F8, F8")
		g.i("FCVTSD F9, F9")
		g.i("FMADDD F8, F24, F9, F24")
	})
	g.w(neon.FADD(0, 0, 1))
	g.w(neon.FADD(2, 2, 3))
	g.w(neon.FADD(0, 0, 2))
	g.w(neon.FADDPS(0, 0))
	g.i("FADDD F24, F0")
	g.ret("F0")
	g.i("RET")
}

func (g *gen) axpy() {
	g.text(g.name("axpy"), g.sig("func(a float64, x, y []float64)"))
	g.args("a F31")
	g.i("VDUP V31.{L}[0], V31.{A}")
	g.args("x_base R0", "x_len R2", "y_base R1")
	g.i("MOVD R1, R3")
	g.blocks("n", "R2", widths{4, 1, 0}, func(nv int) {
		g.ld("R0", 8, nv)
		g.ld("R1", 0, nv)
		g.each(nv, func(k int) { g.i("VFMLA %s, V31.{A}, %s", g.vr(8+k), g.vr(k)) }, "FMADD{D} F8, F0, F31, F0")
		g.st("R3", 0, nv)
	})
	g.i("RET")
}

// mul is Mul (Mul32): x·y, then times a, each product rounded as the
// generic kernel rounds it.
func (g *gen) mul() {
	g.text(g.name("mul"), g.sig("func(dst, x, y []float64, a float64)"))
	g.args("a F31")
	g.i("VDUP V31.{L}[0], V31.{A}")
	g.args("dst_base R3", "x_base R0", "x_len R2", "y_base R1")
	g.blocks("n", "R2", widths{4, 1, 0}, func(nv int) {
		g.ld("R0", 0, nv)
		g.ld("R1", 8, nv)
		g.each(nv, func(k int) {
			g.fw(neon.FMUL(k, k, 8+k))
			g.fw(neon.FMUL(k, k, 31))
		}, "FMUL{D} F8, F0", "FMUL{D} F31, F0")
		g.st("R3", 0, nv)
	})
	g.i("RET")
}

// axpyWiden is AxpyWiden: eight float32 at a time widened (FCVTL, FCVTL2:
// exact) and added with one rounding (FMLA), as Go's fused y += a·x is
// on arm64; a scalar loop for the rest.
func (g *gen) axpyWiden() {
	g.text("axpyWidenNEON", "func(a float64, x []float32, y []float64)")
	g.args("a F31")
	g.i("VDUP V31.D[0], V31.D2")
	g.args("x_base R0", "x_len R2", "y_base R1")
	g.i("MOVD R1, R3")
	g.widenLoop(func() {
		g.i("VLD1.P 32(R0), [V8.S4, V9.S4]")
		g.i("VLD1.P 64(R1), [V0.D2, V1.D2, V2.D2, V3.D2]")
		for k := 0; k < 2; k++ {
			g.w(neon.FCVTL(12+2*k, 8+k))
			g.w(neon.FCVTL2(13+2*k, 8+k))
		}
		for k := 0; k < 4; k++ {
			g.i("VFMLA V%d.D2, V31.D2, V%d.D2", 12+k, k)
		}
		g.i("VST1.P [V0.D2, V1.D2, V2.D2, V3.D2], 64(R3)")
	}, func() {
		g.i("FMOVS.P 4(R0), F8")
		g.i("FCVTSD F8, F8")
		g.i("FMOVD.P 8(R1), F0")
		g.i("FMADDD F8, F0, F31, F0")
		g.i("FMOVD.P F0, 8(R3)")
	})
	g.i("RET")
}

// widenLoop walks the R2 float32 elements of dot32 and axpyWiden eight at
// a time (body8) and then one at a time (body1).
func (g *gen) widenLoop(body8, body1 func()) {
	g.label(g.l("n8"))
	g.i("CMP $8, R2")
	g.i("BLT %s", g.l("n8_done"))
	body8()
	g.i("SUB $8, R2")
	g.i("B %s", g.l("n8"))
	g.label(g.l("n8_done"))
	g.label(g.l("n1"))
	g.i("CBZ R2, %s", g.l("n1_done"))
	body1()
	g.i("SUB $1, R2")
	g.i("B %s", g.l("n1"))
	g.label(g.l("n1_done"))
}

func (g *gen) scale() {
	g.text(g.name("scale"), g.sig("func(a float64, x []float64)"))
	g.args("a F31")
	g.i("VDUP V31.{L}[0], V31.{A}")
	g.args("x_base R0", "x_len R2")
	g.i("MOVD R0, R3")
	g.blocks("n", "R2", widths{4, 1, 0}, func(nv int) {
		g.ld("R0", 0, nv)
		g.each(nv, func(k int) { g.fw(neon.FMUL(k, k, 31)) }, "FMUL{D} F31, F0")
		g.st("R3", 0, nv)
	})
	g.i("RET")
}

// normalize divides the M-element row at row by F31 (the row's sum), after
// storing the sum through scalePtr (then advanced by R24). It uses R11, R19,
// R20, V0–V3, V28, V29.
func (g *gen) normalize(row, scalePtr, m, name string) {
	g.i("FMOV{D} F31, (%s)", scalePtr)
	g.i("ADD R24, %s", scalePtr)
	g.i("FMOV{D} $1.0, F29")
	g.i("FDIV{D} F31, F29, F29")
	g.i("VDUP V29.{L}[0], V29.{A}")
	g.i("MOVD %s, R11", m)
	g.i("MOVD %s, R19", row)
	g.i("MOVD %s, R20", row)
	g.blocks(name, "R11", widths{4, 1, 0}, func(nv int) {
		g.ld("R19", 0, nv)
		g.each(nv, func(k int) { g.fw(neon.FMUL(k, k, 29)) }, "FMUL{D} F29, F0")
		g.st("R20", 0, nv)
	})
}

// Register use in forward and backward:
//
//	R5 M, R6 M·8 (matrix row stride), R12 K·M·8 (sequence row stride),
//	R24 K·8 (scale stride), R7 steps left, R8 row read by the step,
//	R9 row written, R10 psi row, R11 columns left, R19 output pointer,
//	R20 psi pointer, R21 matrix column pointer, R13 vector element
//	pointer, R14 matrix row pointer, R15 inner count, R22 scratch.
//	V0–V7 accumulators, V16–V23 matrix elements, V30 broadcast element.
func (g *gen) forward() {
	g.text(g.name("forward"), g.sig("func(alpha, scale, psi, e []float64, T, M, K int)"))
	g.args("alpha_base R0", "scale_base R1", "psi_base R2", "e_base R3", "T R4", "M R5", "K R24")
	g.i("LSL ${3}, R5, R6")
	g.i("MUL R6, R24, R12")
	g.i("LSL ${3}, R24, R24")
	// Row 0: alpha_0 = psi_0, summed as it is copied (vector lanes in
	// V31, the odd last element in F27).
	g.zero(31)
	g.zero(27)
	g.i("MOVD R5, R11")
	g.i("MOVD R2, R20")
	g.i("MOVD R0, R19")
	g.blocks("copy", "R11", widths{4, 1, 0}, func(nv int) {
		g.ld("R20", 16, nv)
		g.st("R19", 16, nv)
		g.each(nv, func(k int) { g.fw(neon.FADD(31, 31, 16+k)) }, "FADD{D} F16, F27")
	})
	g.hpair(31)
	g.i("FADD{D} F27, F31")
	g.normalize("R0", "R1", "R5", "norm0")
	g.i("SUB $1, R4, R7")
	g.i("CBZ R7, %s", g.l("ret"))
	g.i("MOVD R0, R8")
	g.i("ADD R12, R2, R10")
	g.label(g.l("t"))
	g.i("ADD R12, R8, R9")
	g.zero(31)
	g.zero(27)
	g.i("MOVD R5, R11")
	g.i("MOVD R9, R19")
	g.i("MOVD R10, R20")
	g.i("MOVD R3, R21")
	g.blocks("j", "R11", colBlocks8, func(nv int) {
		g.fmaLoop(nv, "i", []string{"MOVD R8, R13", "MOVD R21, R14", "MOVD R5, R15"}, func() {
			g.dup(nv == 0, "R13", 30, true)
			g.rowFMA(nv, "R14", "R22", "R6")
		})
		g.ld("R20", 16, nv)
		if nv == 0 {
			g.i("FMUL{D} F16, F0")
			g.st("R19", 0, 0)
			if g.f32 { // up to three scalar columns (float64: one)
				g.i("FADDS F0, F27")
			} else {
				g.i("FMOVD F0, F27")
			}
		} else {
			for k := 0; k < nv; k++ {
				g.fw(neon.FMUL(k, k, 16+k))
			}
			g.st("R19", 0, nv)
			for k := 0; k < nv; k++ {
				g.fw(neon.FADD(31, 31, k))
			}
		}
		g.i("ADD $%d, R21", g.sz()*g.cols(nv))
	})
	g.hpair(31)
	g.i("FADD{D} F27, F31")
	g.normalize("R9", "R1", "R5", "norm")
	g.i("MOVD R9, R8")
	g.i("ADD R12, R10")
	g.i("SUBS $1, R7")
	g.i("BNE %s", g.l("t"))
	g.label(g.l("ret"))
	g.i("RET")
}

func (g *gen) backward() {
	g.text(g.name("backward"), g.sig("func(beta, scale, psi, et []float64, T, M, K int)"))
	g.args("beta_base R0", "scale_base R1", "psi_base R2", "et_base R3", "T R4", "M R5", "K R24")
	g.i("LSL ${3}, R5, R6")
	// Rows of beta and psi are R25 = K·M·8 apart, scales R24 = K·8
	// (K = 1 for Backward; BackwardBatch runs each sequence of a batch).
	g.i("MUL R6, R24, R25")
	g.i("LSL ${3}, R24, R24")
	g.i("SUB $1, R4, R7")
	// R8 = beta row T−1, R10 = psi row T−1, R1 = &scale[(T−1)·K].
	g.i("MUL R25, R7, R12")
	g.i("ADD R0, R12, R8")
	g.i("ADD R2, R12, R10")
	g.i("MUL R24, R7, R13")
	g.i("ADD R13, R1, R1")
	g.i("FMOV{D} $1.0, F16")
	g.i("VDUP V16.{L}[0], V16.{A}")
	g.i("MOVD R5, R11")
	g.i("MOVD R8, R19")
	g.blocks("ones", "R11", widths{1, 0}, func(nv int) { g.st("R19", 16, nv) })
	g.i("CBZ R7, %s", g.l("ret"))
	g.label(g.l("t"))
	g.i("SUB R25, R8, R9")
	g.i("FMOV{D} (R1), F29")
	g.i("FMOV{D} $1.0, F28")
	g.i("FDIV{D} F29, F28, F28")
	g.i("VDUP V28.{L}[0], V28.{A}")
	g.i("MOVD R5, R11")
	g.i("MOVD R9, R19")
	g.i("MOVD R3, R21")
	g.blocks("i", "R11", colBlocks8, func(nv int) {
		g.fmaLoop(nv, "j", []string{"MOVD R10, R13", "MOVD R8, R23", "MOVD R21, R14", "MOVD R5, R15"}, func() {
			g.dup(nv == 0, "R13", 30, true)
			g.dup(nv == 0, "R23", 29, true)
			if nv == 0 {
				g.i("FMUL{D} F29, F30")
			} else {
				g.fw(neon.FMUL(30, 30, 29))
			}
			g.rowFMA(nv, "R14", "R22", "R6")
		})
		g.each(nv, func(k int) { g.fw(neon.FMUL(k, k, 28)) }, "FMUL{D} F28, F0")
		g.st("R19", 0, nv)
		g.i("ADD $%d, R21", g.sz()*g.cols(nv))
	})
	g.i("MOVD R9, R8")
	g.i("SUB R25, R10")
	g.i("SUB R24, R1")
	g.i("SUBS $1, R7")
	g.i("BNE %s", g.l("t"))
	g.label(g.l("ret"))
	g.i("RET")
}

// viterbi emits Viterbi (arg: δ and back-pointers) or viterbiMax (δ alone,
// viterbiMaxGeneric). Registers: R8 previous δ row, R9 current δ row, R10
// s row, R25 bp row, R24 M·4; per block V0–V3 best scores, V4–V7 their
// indices (int64), V8–V11 candidates, V12–V15 masks, V16 the current i
// (int64), V17 ones, V18 δ_{t−1}[i] broadcast; viterbiMax uses neither
// the indices nor R24, R25, V16 and V17. The best score stays a
// compare-and-select (FCMGT + VBIT), not FMAX: FMAX orders −0 below +0 and
// lets a NaN candidate win, unlike the strict comparison.
func (g *gen) viterbi(arg bool) {
	if arg {
		g.text(g.name("viterbi"), g.sig("func(delta []float64, bp []int32, s, tr []float64, T, M int)"))
		g.args("delta_base R0", "bp_base R1", "s_base R2", "tr_base R3", "T R4", "M R5")
	} else {
		g.text(g.name("viterbiMax"), g.sig("func(delta []float64, s, tr []float64, T, M int)"))
		g.args("delta_base R0", "s_base R2", "tr_base R3", "T R4", "M R5")
	}
	g.i("CBZ R4, %s", g.l("ret")) // nothing to do for T = 0 or M = 0
	g.i("CBZ R5, %s", g.l("ret"))
	g.i("LSL ${3}, R5, R6")
	if arg {
		g.i("LSL $2, R5, R24")
	}
	g.i("MOVD R5, R11")
	g.i("MOVD R2, R20")
	g.i("MOVD R0, R19")
	g.blocks("copy", "R11", widths{4, 1, 0}, func(nv int) {
		g.ld("R20", 16, nv)
		g.st("R19", 16, nv)
	})
	g.i("SUB $1, R4, R7")
	g.i("CBZ R7, %s", g.l("ret"))
	if arg {
		g.i("MOVD $1, R12")
		g.i("VDUP R12, V17.{A}")
	}
	g.i("MOVD R0, R8")
	g.i("ADD R6, R2, R10")
	if arg {
		g.i("ADD R24, R1, R25")
	}
	g.label(g.l("t"))
	g.i("ADD R6, R8, R9")
	g.i("MOVD R5, R11")
	g.i("MOVD R9, R19")
	g.i("MOVD R10, R20")
	g.i("MOVD R3, R21")
	if arg {
		g.i("MOVD R25, R22")
	}
	g.blocks("j", "R11", colBlocks4, func(nv int) {
		n := max(nv, 1)
		g.i("VLD1R (R8), [V18.{A}]")
		g.i("MOVD R21, R14")
		g.i("MOVD R14, R23")
		g.ld("R23", 8, nv)
		g.i("ADD R6, R14")
		for k := 0; k < n; k++ {
			g.fw(neon.FADD(k, 18, 8+k))
			if arg {
				g.zero(4 + k)
			}
		}
		if arg {
			g.zero(16)
		}
		g.i("ADD ${8}, R8, R13")
		g.i("SUB $1, R5, R15")
		loop, post := g.l(fmt.Sprintf("i%d", nv)), g.l(fmt.Sprintf("post%d", nv))
		g.i("CBZ R15, %s", post)
		g.label(loop)
		if arg {
			g.i("VADD V17.{A}, V16.{A}, V16.{A}")
		}
		g.maxRow(nv, "R6", arg)
		g.i("SUBS $1, R15")
		g.i("BNE %s", loop)
		g.label(post)
		g.ld("R20", 8, nv)
		for k := 0; k < n; k++ {
			g.fw(neon.FADD(k, k, 8+k))
			if arg && !g.f32 { // int64 indices to int32 (float32: already int32 lanes)
				g.w(neon.XTN(4+k, 4+k))
			}
		}
		g.st("R19", 0, nv)
		if arg && nv == 0 {
			g.i("FMOVS.P F4, 4(R22)")
		}
		for k := 0; arg && k < nv; k++ {
			if g.f32 {
				g.i("VST1.P [V%d.S4], 16(R22)", 4+k)
			} else {
				g.i("FMOVD.P F%d, 8(R22)", 4+k)
			}
		}
		g.i("ADD $%d, R21", g.sz()*g.cols(nv))
	})
	g.i("MOVD R9, R8")
	g.i("ADD R6, R10")
	if arg {
		g.i("ADD R24, R25")
	}
	g.i("SUBS $1, R7")
	g.i("BNE %s", g.l("t"))
	g.label(g.l("ret"))
	g.i("RET")
}

// exp: n = round(x·log2e), r = x − n·ln2 (two-part ln2, Cody–Waite), e^r by
// its degree-13 Taylor polynomial (the truncation error on |r| ≤ ln2/2 is
// about 4e-18, far below an ulp), then scaling by 2^⌊n/2⌋·2^(n−⌊n/2⌋) so that
// n = 1024 (x near ExpMax) does not overflow the exponent field. Lanes with
// x < ExpMin become +0 (so exp(-Inf) = +0), x > ExpMax +Inf; NaN propagates
// through the arithmetic.
//
// Constants V12–V31 (see expConsts); V0 x, V1 n, V2 r, V3/V4 polynomial,
// V5 r², V6 result, V7–V9 exponent arithmetic, V10 masks.
func expConsts() []uint64 {
	var c []uint64
	c = append(c, f64(math.Log2E), 0x3fe62e42fee00000 /* ln2hi */, 0x3dea39ef35793c76, /* ln2lo */
		f64(-708.3964185322641) /* ExpMin */, f64(709.782712893384) /* ExpMax */, f64(math.Inf(1)), f64(1))
	fact := 1.0
	coef := make([]float64, 14)
	for k := 1; k <= 13; k++ {
		fact *= float64(k)
		coef[k] = 1 / fact
	}
	for k := 13; k >= 2; k-- {
		c = append(c, f64(coef[k]))
	}
	c = append(c, 1023)
	return c // V12 log2e, V13 ln2hi, V14 ln2lo, V15 ExpMin, V16 ExpMax, V17 +Inf, V18 one, V19–V30 c13…c2, V31 bias
}

func (g *gen) exp() {
	var n int
	if g.f32 {
		c := expConsts32()
		g.constants32("expc32", c)
		n = len(c)
	} else {
		c := expConsts()
		g.constants("expc", c)
		n = len(c)
	}
	g.text(g.name("exp"), g.sig("func(dst, src []float64)"))
	g.args("dst_base R0", "src_base R1", "src_len R2")
	if g.f32 {
		g.loadConsts("expc32", "R3", 12, n)
	} else {
		g.loadConsts("expc", "R3", 12, n)
	}
	g.blocks("n", "R2", widths{1, 0}, func(nv int) {
		g.ld("R1", 0, nv)
		g.expBody(true)
		g.st("R0", 6, nv)
	})
	g.i("RET")
}

// expConsts32 is expConsts for Exp32: log2e, ln2 in two parts, the limits
// rounded inwards to float32, +Inf, 1, c7…c2 of the degree-7 Taylor
// polynomial (0.09 ulp of float32 on |r| ≤ ln2/2), and the bias 127 as an
// int32 (V12–V25).
func expConsts32() []float32 {
	expmin, expmax := float32(expMin32), float32(expMax32)
	if float64(expmin) < expMin32 {
		expmin = math.Nextafter32(expmin, 0)
	}
	if float64(expmax) > expMax32 {
		expmax = math.Nextafter32(expmax, 0)
	}
	c := []float32{math.Log2E, 0.693359375, float32(math.Ln2 - 0.693359375), expmin, expmax, float32(math.Inf(1)), 1}
	fact := 1.0
	coef := make([]float64, expDeg32+1)
	for k := 1; k <= expDeg32; k++ {
		fact *= float64(k)
		coef[k] = 1 / fact
	}
	for k := expDeg32; k >= 2; k-- {
		c = append(c, float32(coef[k]))
	}
	return append(c, math.Float32frombits(127))
}

const (
	expDeg32 = 7
	expMin32 = -87.33654475055310898657
	expMax32 = 88.72283905206835
)

// expBody computes exp(V0) into V6 with the constants of expConsts in
// V12–V31 (float32: expConsts32 in V12–V25), using V1–V10. Without
// overflow, V16 and V17 are not used (the caller knows x ≤ ExpMax or NaN).
func (g *gen) expBody(overflow bool) {
	{
		last, bias, shift := 30, 31, 52 // last coefficient register (c2), bias
		if g.f32 {
			last, bias, shift = 19+expDeg32-2, 19+expDeg32-1, 23
		}
		g.fw(neon.FMUL(1, 0, 12))
		g.fw(neon.FRINTN(1, 1))
		g.mov(2, 0)
		g.i("VFMLS V13.{A}, V1.{A}, V2.{A}")
		g.i("VFMLS V14.{A}, V1.{A}, V2.{A}")
		// Horner from c13 (float32: c7) down to c2, alternating V3 and V4.
		p, q := 3, 4
		g.mov(p, 19)
		for k := 20; k <= last; k++ {
			g.mov(q, k)
			g.i("VFMLA %s, V2.{A}, %s", g.vr(p), g.vr(q))
			p, q = q, p
		}
		g.fw(neon.FMUL(5, 2, 2))
		g.mov(6, 2)
		g.i("VFMLA %s, V5.{A}, V6.{A}", g.vr(p))
		g.fw(neon.FADD(6, 6, 18))
		g.fw(neon.FCVTZS(7, 1))
		if g.f32 {
			g.w(neon.SSHR32(8, 7, 1))
		} else {
			g.w(neon.SSHR(8, 7, 1))
		}
		g.i("VSUB V8.{A}, V7.{A}, V9.{A}")
		g.i("VADD V%d.{A}, V8.{A}, V8.{A}", bias)
		g.i("VADD V%d.{A}, V9.{A}, V9.{A}", bias)
		if g.f32 {
			g.w(neon.SHL32(8, 8, shift))
			g.w(neon.SHL32(9, 9, shift))
		} else {
			g.w(neon.SHL(8, 8, shift))
			g.w(neon.SHL(9, 9, shift))
		}
		g.fw(neon.FMUL(6, 6, 8))
		g.fw(neon.FMUL(6, 6, 9))
		g.fw(neon.FCMGT(10, 15, 0)) // ExpMin > x
		g.w(neon.BIC(6, 6, 10))
		if overflow {
			g.fw(neon.FCMGT(10, 0, 16)) // x > ExpMax
			g.i("VBIT V10.B16, V17.B16, V6.B16")
		}
	}
}

// log follows Go's math.Log (FreeBSD's e_log.c): x = 2^k·m with m in
// [√2/2, √2) from the bits (subnormals are first scaled by 2^52), f = m−1,
// s = f/(2+f), and log x = k·ln2hi − ((f²/2 − (s·(f²/2+R(s²)) + k·ln2lo)) − f).
// Special lanes are patched at the end: x ≥ +Inf or NaN gives x, ±0 gives
// -Inf, x < 0 gives NaN.
//
// Constants V13–V31 (see below); V0 x, V1 masks, V2 scaled x, V3 k
// adjustment, V4–V6 exponent and mantissa, V7 s, V8 s², V9 s⁴, V10–V12
// polynomial and result.
var logConsts = []uint64{0x3fe6a09e667f3bcd /* √2/2 */, f64(0x1p-1022), f64(0x1p52), 52, f64(1), f64(2), f64(0.5),
	0x3FE5555555555593, 0x3FD999999997FA04, 0x3FD2492494229359, 0x3FCC71C51D8E78AF,
	0x3FC7466496CB03DE, 0x3FC39A09D078C69F, 0x3FC2F112DF3E5244, // L1…L7
	0x3fe62e42fee00000, 0x3dea39ef35793c76, // ln2hi, ln2lo
	f64(math.Inf(1)), 0x7ff8000000000001 /* NaN */, f64(math.Inf(-1))}

func (g *gen) log() {
	c := logConsts
	g.constants("logc", c)
	g.text("logNEON", "func(dst, src []float64)")
	g.args("dst_base R0", "src_base R1", "src_len R2")
	g.loadConsts("logc", "R3", 13, len(c))
	g.blocks("n", "R2", widths{1, 0}, func(nv int) {
		g.ld("R1", 0, nv)
		g.logBody()
		g.st("R0", 10, nv)
	})
	g.i("RET")
}

// logBody computes log(V0) into V10 with logConsts in V13–V31, using V1–V12.
func (g *gen) logBody() {
	const (
		off, minNorm, two52, c52, one, two, half = 13, 14, 15, 16, 17, 18, 19
		L1, ln2hi, ln2lo, inf, nan, ninf         = 20, 27, 28, 29, 30, 31
	)
	L := func(k int) int { return L1 + k - 1 }
	{
		g.w(neon.FCMGT(1, minNorm, 0)) // subnormal (or ≤ 0: patched later)
		g.w(neon.FMUL(2, 0, two52))
		g.i("VBIF V1.B16, V0.B16, V2.B16")
		g.i("VAND V1.B16, %s, V3.B16", b16(c52))
		g.i("VSUB %s, V2.D2, V4.D2", d2(off))
		g.w(neon.SSHR(5, 4, 52))
		g.w(neon.SHL(6, 5, 52))
		g.i("VSUB V6.D2, V2.D2, V6.D2")
		g.i("VSUB V3.D2, V5.D2, V5.D2")
		g.w(neon.SCVTF(5, 5))     // k
		g.w(neon.FSUB(6, 6, one)) // f
		g.w(neon.FADD(7, 6, two)) // 2+f
		g.w(neon.FDIV(7, 6, 7))   // s
		g.w(neon.FMUL(8, 7, 7))   // s²
		g.w(neon.FMUL(9, 8, 8))   // s⁴
		g.mov(10, L(5))           // t1 = s²(L1+s⁴(L3+s⁴(L5+s⁴L7)))
		g.i("VFMLA %s, V9.D2, V10.D2", d2(L(7)))
		g.mov(11, L(3))
		g.i("VFMLA V10.D2, V9.D2, V11.D2")
		g.mov(10, L(1))
		g.i("VFMLA V11.D2, V9.D2, V10.D2")
		g.w(neon.FMUL(10, 10, 8))
		g.mov(11, L(4)) // t2 = s⁴(L2+s⁴(L4+s⁴L6))
		g.i("VFMLA %s, V9.D2, V11.D2", d2(L(6)))
		g.mov(12, L(2))
		g.i("VFMLA V11.D2, V9.D2, V12.D2")
		g.w(neon.FMUL(11, 12, 9))
		g.w(neon.FADD(10, 10, 11))         // R
		g.w(neon.FMUL(11, 6, half))        // f/2
		g.w(neon.FMUL(11, 11, 6))          // hfsq
		g.w(neon.FADD(12, 11, 10))         // hfsq+R
		g.w(neon.FMUL(10, 5, ln2lo))       // k·ln2lo
		g.i("VFMLA V12.D2, V7.D2, V10.D2") // + s·(hfsq+R)
		g.w(neon.FSUB(11, 11, 10))
		g.w(neon.FSUB(11, 11, 6))
		g.w(neon.FMUL(10, 5, ln2hi))
		g.w(neon.FSUB(10, 10, 11))
		g.w(neon.FCMGT(1, inf, 0)) // x < +Inf (false for +Inf, NaN)
		g.i("VBIF V1.B16, V0.B16, V10.B16")
		g.w(neon.FCMEQZ(1, 0))
		g.i("VBIT V1.B16, %s, V10.B16", b16(ninf))
		g.w(neon.FCMLTZ(1, 0))
		g.i("VBIT V1.B16, %s, V10.B16", b16(nan))
	}
}

// sparse emits gather (scatter == false) or scatter. Per position t it walks
// the columns in blocks; for each block it loops over the position's
// features f: the weight (gradient) row of ids[f] at that block is
// combined with vals[f] by one FMA per vector, in feature order, as in the
// reference. Gather keeps the score block in V0–V7 across the features;
// scatter keeps the p block there and updates the gradient rows in memory.
//
// R0 s (p) row, R1 w (g), R2 ld·8, R3 &ptr[t], R4 ids, R5 vals, R6 T, R7 M,
// R9 feature count, R10 &ids[ptr[t]], R12 &vals[ptr[t]], R21 column offset
// into w (g), R22/R23 row addresses.
func (g *gen) sparse(scatter bool) {
	if scatter {
		g.text(g.name("scatter"), g.sig("func(g []float64, ld int, p []float64, ptr, ids []int32, vals []float64, c float64, T, M int)"))
		g.args("p_base R0", "g_base R1", "ld R2", "c F31")
		g.i("VDUP V31.{L}[0], V31.{A}")
		g.args("T R6", "M R7")
	} else {
		g.text(g.name("gather"), g.sig("func(s, w []float64, ld int, ptr, ids []int32, vals []float64, T, M int)"))
		g.args("s_base R0", "w_base R1", "ld R2", "T R6", "M R7")
	}
	g.args("ptr_base R3", "ids_base R4", "vals_base R5")
	g.i("LSL ${3}, R2, R2")
	g.i("CBZ R6, %s", g.l("ret"))
	g.label(g.l("t"))
	g.i("MOVW (R3), R8")
	g.i("MOVW 4(R3), R9")
	g.i("ADD $4, R3")
	g.i("SUB R8, R9, R9")
	g.i("CBZ R9, %s", g.l("next"))
	g.i("ADD R8<<2, R4, R10")
	g.i("ADD R8<<{3}, R5, R12")
	g.i("MOVD R7, R11")
	g.i("MOVD R0, R19")
	g.i("MOVD R0, R20")
	g.i("MOVD R1, R21")
	g.blocks("j", "R11", colBlocks8, func(nv int) {
		g.ld("R19", 0, nv)
		g.i("MOVD R10, R13")
		g.i("MOVD R12, R14")
		g.i("MOVD R9, R15")
		loop := g.l(fmt.Sprintf("f%d", nv))
		g.label(loop)
		g.i("MOVW.P 4(R13), R22")
		g.i("MUL R2, R22, R22")
		g.i("ADD R21, R22")
		g.dup(nv == 0, "R14", 30, true)
		switch {
		case !scatter:
			g.rowFMA(nv, "R22", "", "")
		case nv == 0:
			g.i("FMUL{D} F31, F30")
			g.i("FMOV{D} (R22), F16")
			g.i("FMADD{D} F0, F16, F30, F16")
			g.i("FMOV{D} F16, (R22)")
		default:
			g.fw(neon.FMUL(30, 31, 30))
			g.i("MOVD R22, R23")
			g.ld("R22", 16, nv)
			for k := 0; k < nv; k++ {
				g.i("VFMLA V30.{A}, %s, %s", g.vr(k), g.vr(16+k))
			}
			g.st("R23", 16, nv)
		}
		g.i("SUBS $1, R15")
		g.i("BNE %s", loop)
		if !scatter {
			g.st("R20", 0, nv)
		}
		g.i("ADD $%d, R21", g.sz()*g.cols(nv))
	})
	g.label(g.l("next"))
	g.i("ADD R7<<{3}, R0")
	g.i("SUBS $1, R6")
	g.i("BNE %s", g.l("t"))
	g.label(g.l("ret"))
	g.i("RET")
}

// transitions: bb_t = Ψ_t∘β_t·(1/scale_t) into rows 0..T−2 of work, then for
// each i and column block, acc = Σ_t α_{t−1}[i]·bb_t (FMAs in t order) and
// g[i][blk] += E[i][blk]·acc, the reference's operations in its order.
//
// R0 g, R1 e, R2 alpha, R3 beta, R4 psi, R5 scale, R6 work, R7 T, R8 M,
// R9 M·8; phase 2: R19 g pointer, R20 e pointer, R21 &alpha[i], R22 work
// column pointer, R24 rows left.
func (g *gen) transitions() {
	g.text(g.name("transitions"), g.sig("func(g, e, alpha, beta, psi, scale, work []float64, T, M int)"))
	for k, n := range []string{"g", "e", "alpha", "beta", "psi", "scale", "work"} {
		g.args(fmt.Sprintf("%s_base R%d", n, k))
	}
	g.args("T R7", "M R8")
	g.i("LSL ${3}, R8, R9")
	g.i("ADD R9, R4, R10")
	g.i("ADD R9, R3, R11")
	g.i("MOVD R6, R12")
	g.i("ADD ${8}, R5, R13")
	g.i("SUB $1, R7, R14")
	g.label(g.l("bb"))
	g.i("FMOV{D}.P {8}(R13), F29")
	g.i("FMOV{D} $1.0, F28")
	g.i("FDIV{D} F29, F28, F28")
	g.i("VDUP V28.{L}[0], V28.{A}")
	g.i("MOVD R8, R15")
	g.blocks("bbj", "R15", widths{4, 1, 0}, func(nv int) {
		g.ld("R10", 0, nv)
		g.ld("R11", 8, nv)
		g.each(nv, func(k int) {
			g.fw(neon.FMUL(k, k, 8+k))
			g.fw(neon.FMUL(k, k, 28))
		}, "FMUL{D} F8, F0", "FMUL{D} F28, F0")
		g.st("R12", 0, nv)
	})
	g.i("SUBS $1, R14")
	g.i("BNE %s", g.l("bb"))

	g.i("MOVD R0, R19")
	g.i("MOVD R1, R20")
	g.i("MOVD R2, R21")
	g.i("MOVD R8, R24")
	g.label(g.l("i"))
	g.i("MOVD R8, R11")
	g.i("MOVD R6, R22")
	g.blocks("j", "R11", colBlocks8, func(nv int) {
		g.fmaLoop(nv, "t", []string{"MOVD R21, R13", "MOVD R22, R14", "SUB $1, R7, R15"}, func() {
			g.dup(nv == 0, "R13", 30, false)
			g.rowFMA(nv, "R14", "R23", "")
			g.i("ADD R9, R13")
			g.i("ADD R9, R14")
		})
		g.i("MOVD R19, R23")
		g.ld("R23", 16, nv)
		g.ld("R20", 8, nv)
		g.each(nv, func(k int) { g.i("VFMLA %s, %s, %s", g.vr(k), g.vr(8+k), g.vr(16+k)) }, "FMADD{D} F8, F16, F0, F16")
		g.st("R19", 16, nv)
		g.i("ADD $%d, R22", g.sz()*g.cols(nv))
	})
	g.i("ADD ${8}, R21")
	g.i("SUBS $1, R24")
	g.i("BNE %s", g.l("i"))
	g.i("RET")
}

// logMatVec: pass 1 writes the column maxima m_j to out (single adds and
// strict compares, as the reference); pass 2, two columns at a time, sums
// exp((a_i + tr_ij) − m_j) over i in order with the exp of expNEON (no
// overflow path: the arguments are ≤ 0 or NaN), takes log of the sum with
// the log of logNEON (the constant sets are swapped per block; m_j is
// reread from out), and writes m_j + log(sum), or m_j where m_j = ±Inf.
func (g *gen) logMatVec() {
	g.text("logMatVecNEON", "func(out, a, tr []float64, M int)")
	g.args("out_base R0", "a_base R1", "tr_base R2", "M R3")
	g.i("LSL $3, R3, R4")
	g.i("MOVD $0xfff0000000000000, R5")
	g.i("VDUP R5, V20.D2")
	g.i("MOVD R3, R11")
	g.i("MOVD R0, R19")
	g.i("MOVD R2, R21")
	g.blocks("max", "R11", colBlocks4, func(nv int) {
		n := max(nv, 1)
		for k := 0; k < n; k++ {
			g.mov(k, 20)
		}
		g.i("MOVD R1, R13")
		g.i("MOVD R21, R14")
		g.i("MOVD R3, R15")
		loop := g.l(fmt.Sprintf("maxi%d", nv))
		g.label(loop)
		g.maxRow(nv, "R4", false)
		g.i("SUBS $1, R15")
		g.i("BNE %s", loop)
		g.st("R19", 0, nv)
		g.i("ADD $%d, R21", 8*g.cols(nv))
	})
	g.i("MOVD R3, R11")
	g.i("MOVD R0, R19")
	g.i("MOVD R2, R21")
	g.blocks("sum", "R11", widths{1, 0}, func(nv int) {
		g.loadConsts("expc", "R5", 12, len(expConsts()))
		g.i("MOVD R19, R23")
		g.ld("R23", 16, nv)
		g.zero(17)
		g.i("MOVD R1, R13")
		g.i("MOVD R21, R14")
		g.i("MOVD R3, R15")
		loop := g.l(fmt.Sprintf("sumi%d", nv))
		g.label(loop)
		g.dupRow(11, 0, nv, "R4")
		g.w(neon.FADD(0, 11, 0))
		g.w(neon.FSUB(0, 0, 16))
		g.expBody(false)
		g.w(neon.FADD(17, 17, 6))
		g.i("SUBS $1, R15")
		g.i("BNE %s", loop)
		g.mov(0, 17)
		g.loadConsts("logc", "R5", 13, len(logConsts))
		g.logBody()
		g.i("MOVD R19, R23")
		g.ld("R23", 11, nv)
		g.w(neon.FABS(12, 11))
		g.w(neon.FCMEQ(12, 12, 29))
		g.w(neon.FADD(10, 11, 10))
		g.i("VBIT V12.B16, V11.B16, V10.B16")
		g.st("R19", 10, nv)
		g.i("ADD $%d, R21", 8*g.cols(nv))
	})
	g.i("RET")
}

// fmaPeak runs n iterations of 24 independent vector FMAs (96 flops) and
// returns a value that depends on all of them.
func (g *gen) fmaPeak() {
	g.text("fmaPeakNEON", "func(n int) float64")
	g.args("n R0")
	g.i("FMOVD $0.5, F30")
	g.i("VDUP V30.D[0], V30.D2")
	g.i("FMOVD $0.125, F31")
	g.i("VDUP V31.D[0], V31.D2")
	for k := 0; k < 24; k++ {
		g.zero(k)
	}
	g.label(g.l("loop"))
	g.i("CBZ R0, %s", g.l("done"))
	for k := 0; k < 24; k++ {
		g.i("VFMLA V30.D2, V31.D2, %s", d2(k))
	}
	g.i("SUB $1, R0")
	g.i("B %s", g.l("loop"))
	g.label(g.l("done"))
	g.hsum(0, 24)
	g.ret("F0")
	g.i("RET")
}

// Column blocks of the matrix kernels: whole blocks of the widest size, then
// at most one block of each smaller size, so that a row of M columns takes
// ⌈M/16⌉ + 2 passes over the matrix at most (each pass is a chain of M
// dependent FMAs per accumulator, so fewer, wider passes hide more latency).
var (
	colBlocks8 = widths{8, 7, 6, 5, 4, 3, 2, 1, 0}
	colBlocks4 = widths{4, 3, 2, 1, 0}
)

// shiftRows is ShiftRows, one row at a time: a pass that stores v = in + a
// while the maximum (V0) and the smallest finite entry (V1) accumulate,
// then a pass that subtracts the maximum. An odd last element is loaded
// into both lanes (VLD1R), so that the reductions need no masking.
//
//	R0 in, R1 out, R2 a, R3 mx, R4 lo, R5 rows left, R6 M, R7 a pointer,
//	R8 count, R9 out row, R10/R11 read/write pointers; V28 −Inf, V29
//	+Inf, V30 −MaxFloat64.
func (g *gen) shiftRows() {
	g.text(g.name("shiftRows"), g.sig("func(out, mx, lo, in, a []float64, T, M int)"))
	g.args("out_base R1", "mx_base R3", "lo_base R4", "in_base R0", "a_base R2", "T R5", "M R6")
	if g.f32 {
		g.constants32("shiftrowsconst32", []float32{float32(math.Inf(-1)), float32(math.Inf(1)), -math.MaxFloat32})
		g.loadConsts("shiftrowsconst32", "R7", 28, 3)
	} else {
		g.constants("shiftrowsconst", []uint64{f64(math.Inf(-1)), f64(math.Inf(1)), f64(-math.MaxFloat64)})
		g.loadConsts("shiftrowsconst", "R7", 28, 3)
	}
	g.label(g.l("row"))
	g.i("MOVD R2, R7")
	g.i("MOVD R1, R9")
	g.i("MOVD R6, R8")
	g.mov(0, 28)
	g.mov(1, 29)
	g.blocks("v", "R8", widths{1, 0}, func(nv int) {
		if nv == 0 {
			g.i("VLD1R.P {8}(R0), [V2.{A}]")
			g.i("VLD1R.P {8}(R7), [V3.{A}]")
		} else {
			g.ld("R0", 2, 1)
			g.ld("R7", 3, 1)
		}
		g.fw(neon.FADD(2, 2, 3))
		g.st("R1", 2, nv)
		g.fw(neon.FMAX(0, 0, 2))
		g.fw(neon.FCMGE(4, 2, 30))
		g.i("VAND %s, %s, %s", b16(2), b16(4), b16(5))
		g.w(neon.BIC(6, 29, 4))
		g.i("VORR %s, %s, %s", b16(5), b16(6), b16(5))
		g.fw(neon.FMIN(1, 1, 5))
	})
	// Fold the lanes: the upper half onto the lower (float32: then lane 1
	// onto lane 0).
	g.i("VDUP V0.D[1], V4.D2")
	g.fw(neon.FMAX(0, 0, 4))
	g.i("VDUP V1.D[1], V4.D2")
	g.fw(neon.FMIN(1, 1, 4))
	if g.f32 {
		g.i("VDUP V0.S[1], V4.S4")
		g.fw(neon.FMAX(0, 0, 4))
		g.i("VDUP V1.S[1], V4.S4")
		g.fw(neon.FMIN(1, 1, 4))
	}
	g.i("FMOV{D}.P F0, {8}(R3)")
	g.i("FMOV{D}.P F1, {8}(R4)")
	g.i("VDUP V0.{L}[0], V0.{A}")
	g.i("MOVD R9, R10")
	g.i("MOVD R9, R11")
	g.i("MOVD R6, R8")
	g.blocks("s", "R8", widths{1, 0}, func(nv int) {
		g.ld("R10", 2, nv)
		g.fw(neon.FSUB(2, 2, 0))
		g.st("R11", 2, nv)
	})
	g.i("SUB $1, R5")
	g.i("CBNZ R5, %s", g.l("row"))
	g.i("RET")
}
