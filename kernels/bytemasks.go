package kernels

import "fmt"

// ByteMasks marks the bytes of two classes in src, 64 bytes per word: for
// each whole block k of 64 bytes (k < len(src)/64) and i < 64,
//
//	bit i of a[k] is set iff src[64k+i] == ca
//	bit i of b[k] is set iff src[64k+i] == cb1 or src[64k+i] == cb2
//
// (bit 0 is the least significant). Every bit of a[k] and b[k] is written;
// words of a and b past len(src)/64 are left alone. cb1 == cb2 marks one
// byte value. It is the first step of a byte-oriented parser (package
// format's CRFsuite reader marks TABs in a and ':' and '\\' in b), which
// then visits the set bits instead of the bytes.
//
// len(src) must be a multiple of 64 (pad the input) and a and b must hold at
// least len(src)/64 words; otherwise ByteMasks panics. The amd64 tiers
// compare 32 (AVX2: VPCMPEQB, VPMOVMSKB) or 64 bytes (AVX-512BW: VPCMPEQB
// into an opmask, KMOVQ) at a time; NEON compares 16 at a time and gathers
// the bits with pairwise additions. All tiers give exactly the generic
// result.
func ByteMasks(a, b []uint64, src []byte, ca, cb1, cb2 byte) {
	if len(src)%64 != 0 {
		panic(fmt.Sprintf("kernels: ByteMasks: len(src) = %d is not a multiple of 64", len(src)))
	}
	nb := len(src) / 64
	need("ByteMasks", "a", len(a), nb)
	need("ByteMasks", "b", len(b), nb)
	if nb == 0 {
		return
	}
	cur().byteMasks(a[:nb], b[:nb], src, ca, cb1, cb2)
}
