package main

import (
	"math"

	"github.com/simdcrf/simdcrf/gen/internal/neon"
)

// selectGE writes selectGENEON (kernels.SelectGE), or with sum
// selectSumGENEON, and their float32 forms. NEON has no movemask: a block
// of 16 entries (eight .2D or four .4S vectors) is compared with FCMGE
// (x ≥ bound: false for NaN), the compare vectors are narrowed to one byte
// per entry by UZP1 (even halves: 64 → 32 → 16 → 8 bits, in order) and
// those bytes to one nibble per entry by SHRN #4, and the doubleword tested
// once: a block without hits costs that and one branch. A block with hits
// keeps one bit per nibble and stores idx + (trailing zeros)/4 for each
// (RBIT, CLZ), checking for room before each store. The last len(x) mod 16
// entries are compared one at a time (FCMP: LT for less or unordered).
// It returns the count, or −1 past len(dst) (dst then holds the first
// len(dst)).
func (g *gen) selectGE(sum bool) {
	name, sig := "selectGE", "func(dst []int32, x []float64, bound float64) int"
	if sum {
		name, sig = "selectSumGE", "func(dst []int32, x, y []float64, bound float64) int"
	}
	g.text(g.name(name), g.sig(sig))
	g.args("dst_base R0", "dst_len R1", "x_base R2", "x_len R3", "bound F31")
	if sum {
		g.args("y_base R4")
	}
	g.i("VDUP V31.{L}[0], V31.{A}")
	g.i("MOVD ZR, R5") // count
	g.i("MOVD ZR, R6") // index of the block's first entry
	nv := 16 / g.lanes()
	block, tail, overflow := g.l("block"), g.l("tail"), g.l("overflow")
	g.label(block)
	g.i("CMP $16, R3")
	g.i("BLT %s", tail)
	g.ld("R2", 0, nv)
	if sum {
		g.ld("R4", 8, nv)
		for k := 0; k < nv; k++ {
			g.fw(neon.FADD(k, k, 8+k))
		}
	}
	for k := 0; k < nv; k++ {
		g.fw(neon.FCMGE(16+k, k, 31))
	}
	// Narrow: each UZP1 keeps the low (even) half of each lane of two
	// vectors, the first's lanes first.
	src, w := 16, nv
	for _, arr := range []string{"S4", "H8", "B16"} {
		if arr == "S4" && g.f32 {
			continue
		}
		dst := 24
		if src == 24 {
			dst = 28
		}
		for k := 0; k < w/2; k++ {
			g.i("VUZP1 V%d.%s, V%d.%s, V%d.%s", src+2*k+1, arr, src+2*k, arr, dst+k, arr)
		}
		src, w = dst, w/2
	}
	g.w(neon.SHRN4(30, src))
	g.i("VMOV V30.D[0], R7")
	next := g.l("next")
	g.i("CBZ R7, %s", next)
	g.i("AND $0x1111111111111111, R7")
	bits := g.l("bits")
	g.label(bits)
	g.i("CMP R1, R5")
	g.i("BHS %s", overflow)
	g.i("RBIT R7, R8")
	g.i("CLZ R8, R8")
	g.i("ADD R8>>2, R6, R9")
	g.i("MOVW R9, (R0)(R5<<2)")
	g.i("ADD $1, R5")
	g.i("SUB $1, R7, R10")
	g.i("AND R10, R7")
	g.i("CBNZ R7, %s", bits)
	g.label(next)
	g.i("ADD $16, R6")
	g.i("SUB $16, R3")
	g.i("B %s", block)

	g.label(tail)
	done, skip := g.l("done"), g.l("skip")
	g.i("CBZ R3, %s", done)
	g.i("FMOV{D}.P {8}(R2), F0")
	if sum {
		g.i("FMOV{D}.P {8}(R4), F1")
		g.i("FADD{D} F1, F0")
	}
	g.i("FCMP{D} F31, F0")
	g.i("BLT %s", skip)
	g.i("CMP R1, R5")
	g.i("BHS %s", overflow)
	g.i("MOVW R6, (R0)(R5<<2)")
	g.i("ADD $1, R5")
	g.label(skip)
	g.i("ADD $1, R6")
	g.i("SUB $1, R3")
	g.i("B %s", tail)
	g.label(done)
	g.i("MOVD R5, ret+%d(FP)", g.frame["ret"].off)
	g.i("RET")
	g.label(overflow)
	g.i("MOVD $-1, R5")
	g.i("MOVD R5, ret+%d(FP)", g.frame["ret"].off)
	g.i("RET")
}

// max writes maxNEON (kernels.Max) or max32NEON: four running maxima
// replaced where x > m (FCMGT, VBIT: a NaN never wins), single entries
// loaded into every lane (VLD1R), the lanes folded, and +0 added so that a
// zero maximum is +0.
func (g *gen) max() {
	g.text(g.name("max"), g.sig("func(x []float64) float64"))
	g.args("x_base R0", "x_len R1")
	if g.f32 {
		g.constants32("selectninf32", []float32{float32(math.Inf(-1))})
		g.i("MOVD $selectninf32<>(SB), R2")
	} else {
		g.constants("selectninf", []uint64{f64(math.Inf(-1))})
		g.i("MOVD $selectninf<>(SB), R2")
	}
	g.i("VLD1 (R2), [V0.B16]")
	for k := 1; k < 4; k++ {
		g.mov(k, 0)
	}
	g.blocks("n", "R1", widths{4, 1, 0}, func(nv int) {
		if nv == 0 {
			g.i("VLD1R.P {8}(R0), [V16.{A}]")
		} else {
			g.ld("R0", 16, nv)
		}
		for k := 0; k < max(nv, 1); k++ {
			g.fw(neon.FCMGT(20+k, 16+k, k))
			g.i("VBIT %s, %s, %s", b16(20+k), b16(16+k), b16(k))
		}
	})
	g.fw(neon.FMAX(0, 0, 1))
	g.fw(neon.FMAX(2, 2, 3))
	g.fw(neon.FMAX(0, 0, 2))
	g.i("VDUP V0.D[1], V4.D2")
	g.fw(neon.FMAX(0, 0, 4))
	if g.f32 {
		g.i("VDUP V0.S[1], V4.S4")
		g.fw(neon.FMAX(0, 0, 4))
	}
	g.zero(5)
	g.fw(neon.FADD(0, 0, 5))
	g.i("FMOV{D} F0, ret+%d(FP)", g.frame["ret"].off)
	g.i("RET")
}
