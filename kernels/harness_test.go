package kernels

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// asmImpls returns every non-generic implementation the CPU can run. Tests
// compare each against generic, so one `go test` checks every tier. A tier
// compiled in but not runnable here is logged, once per test, so that
// `go test -v` says what was not tested.
func asmImpls(t testing.TB) []*impl {
	var out []*impl
	for _, p := range all {
		switch {
		case p == generic:
		case p.available:
			out = append(out, p)
		default:
			if _, seen := notRun.LoadOrStore(t.Name()+"\x00"+p.name, true); !seen {
				t.Logf("tier %s not tested: this CPU lacks %s", p.name, p.needs)
			}
		}
	}
	return out
}

// notRun holds the tests that have logged a tier asmImpls left out.
var notRun sync.Map

// useTier makes tier name the one the exported functions use until tb
// ends.
func useTier(tb testing.TB, name string) {
	tb.Helper()
	restore, err := Use(name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(restore)
}

// forTiers runs f once per assembly tier as a subtest named after it. A
// tier compiled in that the CPU cannot run is a skipped subtest that says
// what the CPU lacks (TestTiersRun fails instead when SIMDCRF_REQUIRE_TIERS
// names it).
func forTiers(t *testing.T, f func(t *testing.T, p *impl)) {
	for _, p := range all {
		if p == generic {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			if !p.available {
				t.Skipf("tier %s: this CPU lacks %s", p.name, p.needs)
			}
			f(t, p)
		})
	}
}

// TestTiersRun fails when a tier listed in SIMDCRF_REQUIRE_TIERS cannot run
// here, so that CI cannot pass by silently testing fewer tiers than the
// machine has.
func TestTiersRun(t *testing.T) {
	req := os.Getenv("SIMDCRF_REQUIRE_TIERS")
	if req == "" {
		t.Logf("tiers available: %v (set SIMDCRF_REQUIRE_TIERS to require some)", Impls())
		return
	}
	have := map[string]bool{}
	for _, n := range Impls() {
		have[n] = true
	}
	for _, n := range strings.Split(req, ",") {
		if !have[n] {
			t.Errorf("tier %q required but not available (have %v)", n, Impls())
		}
	}
}

// lengths returns every length 0..4·8+3 (covering every tail of both
// widths) and some large ones.
func lengths() []int {
	var n []int
	for i := 0; i <= 4*8+3; i++ {
		n = append(n, i)
	}
	return append(n, 63, 64, 65, 100, 255, 256, 1023, 1024, 4099)
}

// labelCounts returns the M values kernel tests sweep: 1..4·8+3 and some
// large ones.
func labelCounts() []int {
	var m []int
	for i := 1; i <= 4*8+3; i++ {
		m = append(m, i)
	}
	return append(m, 45, 64, 100, 256)
}

const guardLen = 13

// guardVal is a NaN with a payload no kernel produces.
var guardVal = math.Float64frombits(0x7ff8dead0000beef)

// guarded returns a slice of n elements (filled from fill, which may be nil
// for zeros) inside a larger buffer whose extra elements on both sides hold
// guardVal; checkGuards verifies them afterwards.
func guarded(n int, fill []float64) (buf, view []float64) {
	buf = make([]float64, n+2*guardLen)
	for i := range buf {
		buf[i] = guardVal
	}
	view = buf[guardLen : guardLen+n : guardLen+n]
	if fill != nil {
		copy(view, fill)
	} else {
		clear(view)
	}
	return buf, view
}

func checkGuards(t testing.TB, what string, buf []float64) {
	t.Helper()
	n := len(buf) - 2*guardLen
	for i := range buf {
		if i >= guardLen && i < guardLen+n {
			continue
		}
		if math.Float64bits(buf[i]) != math.Float64bits(guardVal) {
			t.Fatalf("%s: guard zone overwritten at offset %d (value %v)", what, i-guardLen, buf[i])
		}
	}
}

// guardedInt32 is guarded for int32 outputs (back-pointers).
func guardedInt32(n int) (buf, view []int32) {
	buf = make([]int32, n+2*guardLen)
	for i := range buf {
		buf[i] = -0x5eed
	}
	view = buf[guardLen : guardLen+n : guardLen+n]
	clear(view)
	return buf, view
}

func checkGuardsInt32(t testing.TB, what string, buf []int32) {
	t.Helper()
	n := len(buf) - 2*guardLen
	for i := range buf {
		if (i < guardLen || i >= guardLen+n) && buf[i] != -0x5eed {
			t.Fatalf("%s: guard zone overwritten at offset %d", what, i-guardLen)
		}
	}
}

// ulps returns the distance in units in the last place between a and b
// (0 when both are the same NaN class or identical infinities).
func ulps(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		if math.IsNaN(a) && math.IsNaN(b) {
			return 0
		}
		return math.Inf(1)
	}
	if a == b {
		return 0
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.Signbit(a) != math.Signbit(b) {
		return math.Inf(1)
	}
	ia, ib := int64(math.Float64bits(math.Abs(a))), int64(math.Float64bits(math.Abs(b)))
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return float64(d)
}

// close reports whether got is within atol + rtol·|want| of want, treating
// NaN as equal only to NaN and infinities as equal only to themselves.
func close(got, want, rtol, atol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	return math.Abs(got-want) <= atol+rtol*math.Abs(want)
}

// checkClose fails the test at the first element of got that is not close to
// want.
func checkClose(t testing.TB, what string, got, want []float64, rtol, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !close(got[i], want[i], rtol, atol) {
			t.Fatalf("%s: [%d] = %v, want %v (rtol %g, atol %g)", what, i, got[i], want[i], rtol, atol)
		}
	}
}

func randSlice(r *rand.Rand, n int, lo, hi float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = lo + (hi-lo)*r.Float64()
	}
	return s
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// TestGeneratedAsmIsolation reads the generated amd64 files and fails when an
// AVX2 function uses anything AVX-512 (EVEX registers, opmasks or an AVX512
// requirement): such an instruction would crash AVX2-only CPUs.
func TestGeneratedAsmIsolation(t *testing.T) {
	files, _ := filepath.Glob("*_amd64.s")
	if len(files) == 0 {
		t.Skip("no generated amd64 assembly in this directory")
	}
	evex := regexp.MustCompile(`\b([XY](1[6-9]|2[0-9]|3[01])|Z[0-9]+|K[1-7])\b`)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		fn, line := "", 0
		for sc.Scan() {
			line++
			s := sc.Text()
			if strings.HasPrefix(s, "// func ") {
				fn = s
			}
			if !strings.Contains(fn, "AVX2(") {
				continue
			}
			if strings.HasPrefix(s, "// Requires:") && strings.Contains(s, "AVX512") {
				t.Errorf("%s:%d: AVX2 function requires AVX-512: %s", f, line, s)
			}
			code, _, _ := strings.Cut(s, "//")
			if evex.MatchString(code) {
				t.Errorf("%s:%d: AVX2 function uses an AVX-512 register: %s", f, line, strings.TrimSpace(code))
			}
		}
		fh.Close()
	}
}

func mustPanicT(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		msg, _ := r.(string)
		if err, ok := r.(error); ok {
			msg = err.Error()
		}
		if r == nil || !strings.Contains(msg, want) {
			t.Errorf("%s: panic %v, want one mentioning %q", what, r, want)
		}
	}()
	f()
}
