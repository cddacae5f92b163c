package kernels

import "encoding/binary"

// byteMasksGeneric is ByteMasks in plain Go, eight bytes at a time (SWAR):
// see byteWordMasks. len(src) is a multiple of 64 and a and b hold
// len(src)/64 words (the wrapper checked).
func byteMasksGeneric(a, b []uint64, src []byte, ca, cb1, cb2 byte) {
	xa, x1, x2 := bytesOnes*uint64(ca), bytesOnes*uint64(cb1), bytesOnes*uint64(cb2)
	for k := range len(src) / 64 {
		w := src[64*k : 64*k+64]
		// Unrolled by hand: the compiler does not unroll the loop (a few
		// percent in package format's parser, which this was written for).
		a0, b0 := byteWordMasks(binary.LittleEndian.Uint64(w[0:]), xa, x1, x2)
		a1, b1 := byteWordMasks(binary.LittleEndian.Uint64(w[8:]), xa, x1, x2)
		a2, b2 := byteWordMasks(binary.LittleEndian.Uint64(w[16:]), xa, x1, x2)
		a3, b3 := byteWordMasks(binary.LittleEndian.Uint64(w[24:]), xa, x1, x2)
		a4, b4 := byteWordMasks(binary.LittleEndian.Uint64(w[32:]), xa, x1, x2)
		a5, b5 := byteWordMasks(binary.LittleEndian.Uint64(w[40:]), xa, x1, x2)
		a6, b6 := byteWordMasks(binary.LittleEndian.Uint64(w[48:]), xa, x1, x2)
		a7, b7 := byteWordMasks(binary.LittleEndian.Uint64(w[56:]), xa, x1, x2)
		a[k] = a0 | a1<<8 | a2<<16 | a3<<24 | a4<<32 | a5<<40 | a6<<48 | a7<<56
		b[k] = b0 | b1<<8 | b2<<16 | b3<<24 | b4<<32 | b5<<40 | b6<<48 | b7<<56
	}
}

// byteWordMasks returns 8-bit masks of the bytes of the word x (bit i for
// byte i, little-endian) equal to the byte repeated in xa, and of those
// equal to the byte repeated in x1 or in x2. A byte y is nonzero exactly
// when the top bit of (y&0x7f + 0x7f) | y is set (no carries cross bytes,
// so there are no false positives from borrows as with the usual
// (x - 0x01…) & ^x & 0x80… test).
func byteWordMasks(x, xa, x1, x2 uint64) (ma, mb uint64) {
	t, c, e := x^xa, x^x1, x^x2
	nt := t&bytesLow7 + bytesLow7 | t
	ns := (c&bytesLow7 + bytesLow7 | c) & (e&bytesLow7 + bytesLow7 | e)
	ma = (^nt >> 7 & bytesOnes) * bytesGather >> 56
	mb = (^ns >> 7 & bytesOnes) * bytesGather >> 56
	return ma, mb
}

const (
	bytesOnes = 0x0101010101010101
	bytesLow7 = 0x7f7f7f7f7f7f7f7f
	// bytesGather gathers bits 0, 8, …, 56 of a word into its top byte when
	// multiplied by (the products do not overlap, so nothing carries).
	bytesGather = 0x0102040810204080
)
