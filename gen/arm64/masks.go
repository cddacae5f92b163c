package main

// byteMasks writes byteMasksNEON (kernels.ByteMasks). NEON has no
// movemask: per 64-byte block it compares the four 16-byte vectors with
// CMEQ, keeps in each byte of the result its weight in the mask byte
// (AND with 1, 2, 4, …, 128, twice), and adds neighbours pairwise with
// ADDP three times (16+16 → 16, 16+16 → 16, 16 → 8 bytes): byte j of the
// low doubleword is then the sum of the weights of bytes 8j … 8j+7, that
// is the mask of those bytes, and the doubleword is the block's mask.
func (g *gen) byteMasks() {
	g.text("byteMasksNEON", "func(a, b []uint64, src []byte, ca, cb1, cb2 byte)")
	g.constants("bytemaskbits", []uint64{0x8040201008040201})
	g.args("a_base R0", "b_base R1", "src_base R2", "src_len R3")
	g.i("LSR $6, R3")
	g.args("ca R4", "cb1 R5", "cb2 R6")
	g.i("VDUP R4, V20.B16")
	g.i("VDUP R5, V21.B16")
	g.i("VDUP R6, V22.B16")
	g.i("MOVD $bytemaskbits<>(SB), R7")
	g.i("VLD1 (R7), [V23.B16]")
	loop, done := g.l("loop"), g.l("done")
	g.label(loop)
	g.i("CBZ R3, %s", done)
	g.i("VLD1.P 64(R2), [V0.B16, V1.B16, V2.B16, V3.B16]")
	for k := 0; k < 4; k++ {
		g.i("VCMEQ V20.B16, %s, %s", b16(k), b16(4+k))
		g.i("VCMEQ V21.B16, %s, %s", b16(k), b16(8+k))
		g.i("VCMEQ V22.B16, %s, %s", b16(k), b16(12+k))
	}
	for k := 0; k < 4; k++ {
		g.i("VORR %s, %s, %s", b16(12+k), b16(8+k), b16(8+k))
	}
	for k := 4; k < 12; k++ {
		g.i("VAND V23.B16, %s, %s", b16(k), b16(k))
	}
	// gather leaves the mask of the four vectors from v in Rr.
	gather := func(v int, r string) {
		g.i("VADDP %s, %s, %s", b16(v+1), b16(v), b16(v))
		g.i("VADDP %s, %s, %s", b16(v+3), b16(v+2), b16(v+2))
		g.i("VADDP %s, %s, %s", b16(v+2), b16(v), b16(v))
		g.i("VADDP %s, %s, %s", b16(v), b16(v), b16(v))
		g.i("VMOV V%d.D[0], %s", v, r)
	}
	gather(4, "R8")
	gather(8, "R9")
	g.i("MOVD.P R8, 8(R0)")
	g.i("MOVD.P R9, 8(R1)")
	g.i("SUB $1, R3")
	g.i("B %s", loop)
	g.label(done)
	g.i("RET")
}
