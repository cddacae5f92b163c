package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// byteMasksNaive is ByteMasks byte by byte: the oracle for the generic
// (SWAR) reference itself.
func byteMasksNaive(a, b []uint64, src []byte, ca, cb1, cb2 byte) {
	for k := range len(src) / 64 {
		var ma, mb uint64
		for i, c := range src[64*k : 64*k+64] {
			if c == ca {
				ma |= 1 << i
			}
			if c == cb1 || c == cb2 {
				mb |= 1 << i
			}
		}
		a[k], b[k] = ma, mb
	}
}

// maskClasses are the (ca, cb1, cb2) triples the tests sweep: the CRFsuite
// parser's, one class of a single byte (cb1 == cb2), overlapping classes,
// and the extreme byte values (0x00, 0x7f/0x80 around the sign bit that
// SWAR tricks and signed byte compares trip over, 0xff).
var maskClasses = [][3]byte{
	{'\t', ':', '\\'},
	{'\n', '\r', '\r'},
	{':', ':', '\\'},
	{0x00, 0xff, 0x80},
	{0xff, 0x00, 0x7f},
	{0x80, 0x7f, 0x01},
	{'a', 'a', 'a'},
}

// maskNeighbours are bytes next to the classes above (±1, and the same low
// seven bits with the top bit flipped), plus 0x00 and 0xff.
var maskNeighbours = []byte{0x08, 0x0a, 0x39, 0x3b, 0x5b, 0x5d, 0x89, 0xba, 0xdc, 0x00, 0xff,
	0x7e, 0x81, 0x01, 0xfe, 0x0c, 0x0e, 0x60, 0x62, 0xe1}

// maskInputs returns inputs of nb blocks for the class (ca, cb1, cb2):
// random bytes; bytes drawn only from the classes and their neighbours;
// every byte in class a; every byte in class b; alternating runs.
func maskInputs(r *rand.Rand, nb int, cl [3]byte) map[string][]byte {
	n := 64 * nb
	pool := append([]byte{cl[0], cl[1], cl[2]}, maskNeighbours...)
	rnd, mix, allA, allB, runs := make([]byte, n), make([]byte, n), make([]byte, n), make([]byte, n), make([]byte, n)
	for i := range n {
		rnd[i] = byte(r.Uint32())
		mix[i] = pool[r.IntN(len(pool))]
		allA[i] = cl[0]
		allB[i] = cl[1+i%2]
		runs[i] = pool[(i/7)%4]
	}
	return map[string][]byte{"random": rnd, "classes+neighbours": mix, "all-a": allA, "all-b": allB, "runs": runs}
}

const maskGuard = 0x5a5a_a5a5_5a5a_a5a5

// guardedWords returns a buffer of n words between two guard zones of four
// words, all set to maskGuard, and the view of its n words (whose capacity
// runs into the upper guard, so that a kernel writing past len would hit
// it).
func guardedWords(n int) (buf, view []uint64) {
	buf = make([]uint64, n+8)
	for i := range buf {
		buf[i] = maskGuard
	}
	return buf, buf[4 : 4+n]
}

func checkWordGuards(t testing.TB, what string, buf []uint64, n int) {
	t.Helper()
	for i := range buf {
		if (i < 4 || i >= 4+n) && buf[i] != maskGuard {
			t.Fatalf("%s: guard word %d (of %d output words) overwritten: %#x", what, i-4, n, buf[i])
		}
	}
}

func checkMasks(t testing.TB, what string, got, want []uint64) {
	t.Helper()
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("%s: word %d = %#016x, want %#016x (differ in %#016x)", what, k, got[k], want[k], got[k]^want[k])
		}
	}
}

// TestByteMasksGeneric checks the SWAR reference against the naive loop.
func TestByteMasksGeneric(t *testing.T) {
	r := newRand(61)
	for _, cl := range maskClasses {
		for _, nb := range []int{0, 1, 2, 3, 7, 64} {
			for name, src := range maskInputs(r, nb, cl) {
				want, wantB := make([]uint64, nb), make([]uint64, nb)
				byteMasksNaive(want, wantB, src, cl[0], cl[1], cl[2])
				got, gotB := make([]uint64, nb), make([]uint64, nb)
				byteMasksGeneric(got, gotB, src, cl[0], cl[1], cl[2])
				what := fmt.Sprintf("generic %q nb=%d %s", cl, nb, name)
				checkMasks(t, what+" a", got, want)
				checkMasks(t, what+" b", gotB, wantB)
			}
		}
	}
	// Every byte value in every position of a word, for every class byte.
	src := make([]byte, 64*256)
	for i := range src {
		src[i] = byte(i/64 + i%64)
	}
	for c := range 256 {
		cb := byte(c) ^ 0x80
		want, wantB := make([]uint64, 256), make([]uint64, 256)
		byteMasksNaive(want, wantB, src, byte(c), cb, cb+1)
		got, gotB := make([]uint64, 256), make([]uint64, 256)
		byteMasksGeneric(got, gotB, src, byte(c), cb, cb+1)
		checkMasks(t, fmt.Sprintf("generic c=%#x a", c), got, want)
		checkMasks(t, fmt.Sprintf("generic c=%#x b", c), gotB, wantB)
	}
}

// TestByteMasks runs every tier against generic for every block count of
// lengths() (in blocks of 64 bytes: 0..35 covers the two-block loop and the
// single block after it many times over, then large ones), every class of
// maskClasses and every input of maskInputs, with src at every alignment
// modulo 64 in turn, and guard words around both outputs.
func TestByteMasks(t *testing.T) {
	r := newRand(62)
	forTiers(t, func(t *testing.T, p *impl) {
		for _, nb := range lengths() {
			if testing.Short() && nb > 1024 {
				continue
			}
			for ci, cl := range maskClasses {
				for name, in := range maskInputs(r, nb, cl) {
					off := (nb + ci) % 64
					raw := make([]byte, off+len(in)+64)
					for i := range raw {
						raw[i] = cl[i%3] // class bytes around src must not leak in
					}
					src := raw[off : off+len(in) : off+len(in)]
					copy(src, in)
					want, wantB := make([]uint64, nb), make([]uint64, nb)
					byteMasksGeneric(want, wantB, src, cl[0], cl[1], cl[2])
					bufA, a := guardedWords(nb)
					bufB, b := guardedWords(nb)
					p.byteMasks(a, b, src, cl[0], cl[1], cl[2])
					what := fmt.Sprintf("%s %q nb=%d %s", p.name, cl, nb, name)
					checkWordGuards(t, what+" a", bufA, nb)
					checkWordGuards(t, what+" b", bufB, nb)
					checkMasks(t, what+" a", a, want)
					checkMasks(t, what+" b", b, wantB)
				}
			}
		}
	})
}

// TestByteMasksWrapper checks the exported function on each tier (it
// writes only len(src)/64 words of longer outputs) and its panics.
func TestByteMasksWrapper(t *testing.T) {
	r := newRand(63)
	for _, name := range Impls() {
		t.Run(name, func(t *testing.T) {
			useTier(t, name)
			for _, nb := range []int{0, 1, 2, 5} {
				src := maskInputs(r, nb, maskClasses[0])["classes+neighbours"]
				want, wantB := make([]uint64, nb), make([]uint64, nb)
				byteMasksNaive(want, wantB, src, '\t', ':', '\\')
				bufA, a := guardedWords(nb + 3)
				bufB, b := guardedWords(nb + 1)
				ByteMasks(a, b, src, '\t', ':', '\\')
				checkWordGuards(t, "a", bufA[:4+nb], nb)
				checkWordGuards(t, "b", bufB[:4+nb], nb)
				for _, w := range slices.Concat(a[nb:], b[nb:]) {
					if w != maskGuard {
						t.Fatalf("nb=%d: a word past len(src)/64 was written: %#x", nb, w)
					}
				}
				checkMasks(t, "a", a, want)
				checkMasks(t, "b", b, wantB)
			}
			mustPanicT(t, "len(src) 65", "multiple of 64", func() { ByteMasks(make([]uint64, 2), make([]uint64, 2), make([]byte, 65), 0, 1, 2) })
			mustPanicT(t, "len(src) 63", "multiple of 64", func() { ByteMasks(make([]uint64, 2), make([]uint64, 2), make([]byte, 63), 0, 1, 2) })
			mustPanicT(t, "short a", "len(a)", func() { ByteMasks(make([]uint64, 1), make([]uint64, 2), make([]byte, 128), 0, 1, 2) })
			mustPanicT(t, "short b", "len(b)", func() { ByteMasks(make([]uint64, 2), nil, make([]byte, 128), 0, 1, 2) })
		})
	}
}

// FuzzByteMasks compares every tier with the naive loop on arbitrary bytes
// (cut to whole blocks after padding to at least one) and classes.
func FuzzByteMasks(f *testing.F) {
	f.Add([]byte("B-NP\tw[0]=He\tw[1]=rec\\:kon\\\\s\tpos:2.5\t\t#x"), byte('\t'), byte(':'), byte('\\'))
	f.Add(make([]byte, 200), byte(0), byte(0xff), byte(0x80))
	f.Add([]byte{0xff, 0x7f, 0x80, 0x01, 0xfe}, byte(0xff), byte(0x7f), byte(0x7f))
	f.Fuzz(func(t *testing.T, data []byte, ca, cb1, cb2 byte) {
		src := data
		for len(src) < 64 {
			src = append(src, data...)
			if len(data) == 0 {
				src = append(src, ca)
			}
		}
		src = src[:len(src)/64*64]
		nb := len(src) / 64
		want, wantB := make([]uint64, nb), make([]uint64, nb)
		byteMasksNaive(want, wantB, src, ca, cb1, cb2)
		got, gotB := make([]uint64, nb), make([]uint64, nb)
		byteMasksGeneric(got, gotB, src, ca, cb1, cb2)
		checkMasks(t, "generic a", got, want)
		checkMasks(t, "generic b", gotB, wantB)
		for _, p := range asmImpls(t) {
			bufA, a := guardedWords(nb)
			bufB, b := guardedWords(nb)
			p.byteMasks(a, b, src, ca, cb1, cb2)
			checkWordGuards(t, p.name+" a", bufA, nb)
			checkWordGuards(t, p.name+" b", bufB, nb)
			checkMasks(t, p.name+" a", a, want)
			checkMasks(t, p.name+" b", b, wantB)
		}
	})
}

// BenchmarkByteMasks marks the TABs and the ':' and '\\' of 4 KiB of
// CRFsuite-like text (one call).
func BenchmarkByteMasks(b *testing.B) {
	src := make([]byte, 4096)
	line := []byte("I-NP\tw[0]=rec\\:kon\tw[-1]=the\tpos[0]=NN\tpos[-1]|pos[0]=DT|NN:2\t")
	for i := range src {
		src[i] = line[i%len(line)]
	}
	ma, mb := make([]uint64, 64), make([]uint64, 64)
	for _, name := range Impls() {
		b.Run(name, func(b *testing.B) {
			useTier(b, name)
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				ByteMasks(ma, mb, src, '\t', ':', '\\')
			}
		})
	}
}
