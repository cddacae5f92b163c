package roofline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/simdcrf/simdcrf/train"
)

func TestCaches(t *testing.T) {
	l1, l2, l3, ok := Caches()
	if !(0 < l1 && l1 < l2 && l2 < l3) {
		t.Fatalf("cache sizes %d, %d, %d (read from sysfs: %v)", l1, l2, l3, ok)
	}
	t.Logf("L1 %d KiB, L2 %d KiB, L3 %d KiB (from sysfs: %v)", l1>>10, l2>>10, l3>>10, ok)
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"32K": 32 << 10, "32768K": 32 << 20, "1M": 1 << 20, "512": 512} {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "K", "-1K", "0K", "x"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) accepted", s)
		}
	}
}

// TestCycle: the chase visits every cache line once before it returns.
func TestCycle(t *testing.T) {
	for _, n := range []int{1, 2, 3, 17, 1000} {
		next := cycle(n, rand.New(rand.NewPCG(1, uint64(n))))
		seen := make([]bool, n)
		p := 0
		for range n {
			if seen[p] {
				t.Fatalf("n=%d: %d visited twice", n, p)
			}
			seen[p] = true
			p = next[p]
		}
		if p != 0 {
			t.Fatalf("n=%d: back at %d after n steps, want 0", n, p)
		}
	}
}

// TestChain: the array latency chases leads from each line's first slot
// to another's, through every line once, back to the first; the same
// array every time.
func TestChain(t *testing.T) {
	for _, lines := range []int{1, 2, 256, 4096} {
		next := chain(lines)
		if len(next) != lines*slot || uintptr(unsafe.Pointer(&next[0]))%64 != 0 {
			t.Fatalf("lines=%d: %d slots at %p", lines, len(next), &next[0])
		}
		seen := make([]bool, lines)
		p := int32(0)
		for range lines {
			if p%slot != 0 || seen[p/slot] {
				t.Fatalf("lines=%d: at slot %d, a line's first visited before or not a first", lines, p)
			}
			seen[p/slot] = true
			p = next[p]
		}
		if p != 0 {
			t.Fatalf("lines=%d: back at %d after a lap, want 0", lines, p)
		}
		if p := chase(next, 0, lines); p != 0 {
			t.Fatalf("lines=%d: chase ends a lap at %d", lines, p)
		}
		if !slices.Equal(next, chain(lines)) {
			t.Fatalf("lines=%d: two chains differ", lines)
		}
	}
}

func TestAligned(t *testing.T) {
	for n := 1; n < 40; n++ {
		f, i := aligned[float64](n), aligned[int32](n)
		if len(f) != n || len(i) != n || uintptr(unsafe.Pointer(&f[0]))%64 != 0 || uintptr(unsafe.Pointer(&i[0]))%64 != 0 {
			t.Fatalf("n=%d: %d float64s at %p, %d int32s at %p", n, len(f), &f[0], len(i), &i[0])
		}
	}
}

// TestPrintLevels measures the four levels and, with -v, prints them:
// the full Measure(1, …) with -v (and not -short), which takes a second
// or so; else the quick mode. Either must give positive finite figures,
// growing working sets, and an L1 load faster than a memory load (by far:
// a few ns against a hundred or more).
func TestPrintLevels(t *testing.T) {
	full := testing.Verbose() && !testing.Short()
	t0 := time.Now()
	var lv []Level
	var err error
	if full {
		lv, err = Measure(1, func(s string) { t.Log(s) })
	} else {
		lv, err = measure(1, nil, 16)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 4 {
		t.Fatalf("%d levels", len(lv))
	}
	for i, l := range lv {
		for _, v := range []float64{l.ReadGBs, l.RMWGBs, l.LatencyNs} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("%s: %+v", l.Name, l)
			}
		}
		if i > 0 && l.Bytes <= lv[i-1].Bytes {
			t.Fatalf("working sets not growing: %+v", lv)
		}
	}
	if lv[0].LatencyNs >= lv[3].LatencyNs {
		t.Errorf("an L1 load (%.2f ns) no faster than a memory load (%.2f ns)", lv[0].LatencyNs, lv[3].LatencyNs)
	}
	l1, l2, l3, ok := Caches()
	t.Logf("caches %d KiB, %d KiB, %d KiB (from sysfs: %v); full size: %v, best of 1, in %v",
		l1>>10, l2>>10, l3>>10, ok, full, time.Since(t0).Round(time.Millisecond))
	t.Logf("%-6s %10s %10s %10s %10s", "level", "set", "read GB/s", "RMW GB/s", "load ns")
	for _, l := range lv {
		t.Logf("%-6s %6d KiB %10.1f %10.1f %10.1f", l.Name, l.Bytes>>10, l.ReadGBs, l.RMWGBs, l.LatencyNs)
	}
}

// TestCurve (quick mode): 16 KiB to 16 MiB, doubling, positive figures.
func TestCurve(t *testing.T) {
	c, err := curve(1, nil, 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 11 { // 16 KiB to 16 MiB
		t.Fatalf("%d points on the curve", len(c))
	}
	for i, p := range c {
		if !(p.ReadGBs > 0 && p.RMWGBs > 0) || math.IsInf(p.ReadGBs+p.RMWGBs, 0) || i > 0 && p.Bytes != 2*c[i-1].Bytes {
			t.Fatalf("curve %+v", c)
		}
	}
}

var testMachine = Machine{
	PeakGFLOPs: 40, FMALatencyNs: 2,
	Curve: []Point{{16 << 10, 100, 80}, {1 << 20, 50, 40}, {32 << 20, 10, 12}},
}

// TestLimit: the limit is the longest of the three bounds, each computed
// by hand; traffic goes at the bandwidth of the largest measured set no
// larger than its own.
func TestLimit(t *testing.T) {
	mc := testMachine
	for _, c := range []struct {
		w     Work
		ms    float64
		bound string
	}{
		{Work{Flops: 40e6}, 1, Flops}, // 40 MFLOP at 40 GFLOP/s
		// 1 ms at 100 GB/s (a set below the first point), 1 ms at 50 (a
		// set between the second and third), 1 ms at 12 (RMW beyond the last)
		{Work{Flops: 1e6, Traffic: []Traffic{{1 << 10, 100e6}, {4 << 20, 50e6}, {1 << 30, 12e6}}}, 3, Bandwidth},
		{Work{Flops: 1e6, Chain: 2e6}, 4, Latency}, // 2M dependent FMAs at 2 ns
		{Work{}, 0, Flops},
	} {
		ms, bound := mc.Limit(c.w)
		if math.Abs(ms-c.ms) > 1e-12 || bound != c.bound {
			t.Errorf("Limit(%+v) = %v ms, %s; want %v, %s", c.w, ms, bound, c.ms, c.bound)
		}
	}
}

// TestPhaseWork checks the counts on a small shape by hand.
func TestPhaseWork(t *testing.T) {
	mc := testMachine
	sh := train.Shape{Labels: 10, Sequences: 2, Tokens: 5, Params: 1000, StateParams: 800, HotRows: 30,
		HotFeatures: 7, ColdFeatures: 11, ColdLabels: 13, Memories: 6}
	w := PhaseWork(sh, 2, 3, mc)
	if len(w) != len(Phases) {
		t.Fatalf("%d phases", len(w))
	}
	score, fb, scatter, opt, setup := w[0], w[1], w[2], w[3], w[4]
	if want := 2 * 2 * (7*10 + 13.0); score.Flops != want || scatter.Flops != want {
		t.Errorf("scoring flops %v, scattering %v; want %v", score.Flops, scatter.Flops, want)
	}
	// hot rows 300 weights, cold 500 beside their gradient, the features
	// 4·7 + 4·11 + 2·13 = 98 bytes, the emissions in L1 (16 KiB)
	feat := 98.0
	if want := []Traffic{{8 * 300, 2 * 8 * 7 * 10}, {16 * 500, 2 * 8 * 13}, {feat, 2 * feat}, {16 << 10, 2 * 8 * 5 * 10}}; !slices.Equal(score.Traffic, want) {
		t.Errorf("scoring traffic %v; want %v", score.Traffic, want)
	}
	if want := []Traffic{{8 * 300, 2 * 16 * 7 * 10}, {16 * 500, 2 * 16 * 13}, {feat, 2 * feat}, {16 << 10, 2 * 8 * 5 * 10}}; !slices.Equal(scatter.Traffic, want) {
		t.Errorf("scattering traffic %v; want %v", scatter.Traffic, want)
	}
	if want := 2 * 6 * 100 * 5.0; fb.Flops != want {
		t.Errorf("forward-backward flops %v, want %v", fb.Flops, want)
	}
	if want := 2 * 2 * 5 * (4 + 1.0); fb.Chain != want { // ⌈log₂ 10⌉ + 1 = 5
		t.Errorf("forward-backward chain %v, want %v", fb.Chain, want)
	}
	if want := []Traffic{{8 * 1000, 2 * (32*300 + 56*500)}}; !slices.Equal(setup.Traffic, want) {
		t.Errorf("setup traffic %v, want %v", setup.Traffic, want)
	}
	// optimiser: 2m+5 = 17 vectors; (4+6) + (2+6) + 5·2 = 28 passes.
	if want := []Traffic{{8 * 1000 * 17, 8 * 1000 * 28}}; !slices.Equal(opt.Traffic, want) {
		t.Errorf("optimiser traffic %v, want %v", opt.Traffic, want)
	}
	sh.Lockstep = true
	if w := PhaseWork(sh, 2, 3, mc); w[1].Chain != 0 {
		t.Errorf("lockstep groups: a chain of %v", w[1].Chain)
	}
}

// TestBandwidthDip: a working set measured slower than a larger one (the
// machine's noise) takes the larger one's figure.
func TestBandwidthDip(t *testing.T) {
	mc := Machine{Curve: []Point{{16 << 10, 100, 80}, {1 << 20, 30, 20}, {2 << 20, 50, 40}, {32 << 20, 10, 12}}}
	for set, want := range map[float64]float64{1 << 10: 100, 16 << 10: 100, 1 << 20: 50, 3 << 20: 50, 1 << 30: 12} {
		if got := mc.Bandwidth(set); got != want {
			t.Errorf("Bandwidth(%v) = %v, want %v", set, got, want)
		}
	}
}

func TestPairs(t *testing.T) {
	// iterations 2..11 with m = 6: 2, 3, 4, 5, 6, 6, 6, 6, 6, 6
	if got := Pairs(10, 6); got != 5 {
		t.Errorf("Pairs(10, 6) = %v, want 5", got)
	}
	if got := Pairs(1, 6); got != 2 {
		t.Errorf("Pairs(1, 6) = %v, want 2", got)
	}
}

func TestFMALatency(t *testing.T) {
	if l := FMALatency(1); !(l > 0) || math.IsInf(l, 0) {
		t.Fatalf("FMA latency %v ns", l)
	}
}
