package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/simdcrf/simdcrf/gen/internal/neon"
)

var wordRE = regexp.MustCompile(`^\s*WORD\s+\$0x([0-9a-fA-F]{8})\s*//\s*(.*?)\s*$`)

func normalize(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// checkWords decodes every WORD directive of an arm64 assembly source and
// returns one message per WORD whose decoding (arm64asm.GNUSyntax) differs
// from the GNU spelling in its comment, or that has no such comment. It also
// returns how many WORDs it checked.
func checkWords(name, src string) (bad []string, n int) {
	for i, line := range strings.Split(src, "\n") {
		code, _, _ := strings.Cut(line, "//")
		if !strings.Contains(code, "WORD") {
			continue
		}
		n++
		m := wordRE.FindStringSubmatch(line)
		if m == nil {
			bad = append(bad, fmt.Sprintf("%s:%d: WORD without a `// <gnu syntax>` comment: %s", name, i+1, strings.TrimSpace(line)))
			continue
		}
		v, _ := strconv.ParseUint(m[1], 16, 32)
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(v))
		inst, err := arm64asm.Decode(b[:])
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s:%d: 0x%s does not decode: %v", name, i+1, m[1], err))
			continue
		}
		if got := arm64asm.GNUSyntax(inst); normalize(got) != normalize(m[2]) {
			bad = append(bad, fmt.Sprintf("%s:%d: 0x%s decodes as %q, comment says %q", name, i+1, m[1], got, m[2]))
		}
	}
	return bad, n
}

// TestWordsDecode checks every WORD in the package's arm64 assembly.
func TestWordsDecode(t *testing.T) {
	files, err := filepath.Glob("../../kernels/*_arm64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no arm64 assembly found (%v)", err)
	}
	total := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bad, n := checkWords(filepath.Base(f), string(src))
		for _, b := range bad {
			t.Error(b)
		}
		total += n
	}
	if total == 0 {
		t.Fatal("no WORD directives found: the check would prove nothing")
	}
	t.Logf("%d WORD directives checked", total)
}

// TestCheckerCatchesWrongEncoding plants wrong WORDs and expects the checker
// to report each.
func TestCheckerCatchesWrongEncoding(t *testing.T) {
	good := "\tWORD $0x4e62d423 // fadd v3.2d, v1.2d, v2.2d\n"
	if bad, n := checkWords("good.s", good); len(bad) != 0 || n != 1 {
		t.Fatalf("correct WORD rejected: %v (n=%d)", bad, n)
	}
	for _, planted := range []string{
		"\tWORD $0x4ee2d423 // fadd v3.2d, v1.2d, v2.2d\n", // FSUB's encoding, FADD's comment
		"\tWORD $0x4e62d424 // fadd v3.2d, v1.2d, v2.2d\n", // wrong destination register
		"\tWORD $0x4e62d423\n",                             // no comment
		"\tWORD $0x4e62d423 // FADD V2.D2, V1.D2, V3.D2\n", // Go syntax, not GNU
	} {
		bad, _ := checkWords("planted.s", planted)
		if len(bad) != 1 {
			t.Fatalf("planted %q: checker reported %v, want one mismatch", planted, bad)
		}
		t.Logf("caught: %s", bad[0])
	}
}

// TestEncoders decodes every encoder of package neon over a spread of
// registers, including the ones the generator does not use yet.
func TestEncoders(t *testing.T) {
	var ws []neon.Word
	for _, r := range [][3]int{{0, 1, 2}, {31, 30, 29}, {7, 16, 24}} {
		d, n, m := r[0], r[1], r[2]
		for _, f := range []func(d, n, m int) neon.Word{neon.FADD, neon.FSUB, neon.FMUL, neon.FDIV,
			neon.FMAX, neon.FMIN, neon.FMAXNM, neon.FADDP, neon.FMAXP, neon.FCMGT, neon.FCMGE,
			neon.FCMEQ, neon.CMGT, neon.BIC} {
			ws = append(ws, f(d, n, m))
		}
		for _, f := range []func(d, n int) neon.Word{neon.FCMEQZ, neon.FCMLTZ, neon.FRINTN,
			neon.FRINTM, neon.FCVTZS, neon.FCVTNS, neon.SCVTF, neon.FABS, neon.FNEG, neon.XTN, neon.FADDPS, neon.SHRN4} {
			ws = append(ws, f(d, n))
		}
		for _, sh := range []int{1, 13, 52, 63} {
			ws = append(ws, neon.SSHR(d, n, sh), neon.USHR(d, n, sh), neon.SHL(d, n, sh))
		}
		ws = append(ws, neon.SSHR(d, n, 64), neon.USHR(d, n, 64), neon.SHL(d, n, 0))
		for _, sh := range []int{1, 13, 23, 31} {
			ws = append(ws, neon.SSHR32(d, n, sh), neon.SHL32(d, n, sh))
		}
		ws = append(ws, neon.SSHR32(d, n, 32), neon.SHL32(d, n, 0))
	}
	var src strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&src, "\t%s\n", w)
	}
	bad, n := checkWords("encoders", src.String())
	for _, b := range bad {
		t.Error(b)
	}
	if n != len(ws) {
		t.Fatalf("checked %d of %d words", n, len(ws))
	}
}

// TestGeneratedFresh fails when kernels_arm64.s is not what the generator
// writes now (run `cd gen && go generate ./...`).
func TestGeneratedFresh(t *testing.T) {
	have, err := os.ReadFile("../../kernels/kernels_arm64.s")
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != generate() {
		t.Fatal("kernels/kernels_arm64.s is stale: run `cd gen && go generate ./...`")
	}
}
