// Package roofline sets each phase of an L-BFGS iteration beside the
// least time this machine allows for the work the phase does (simdcrf-bench
// roofline, and a section of BENCHMARKS.md). A limit is a lower bound: a
// phase can never beat it. So the machine is measured at its best, on one
// thread: the FMA peak, streaming bandwidth per memory level, and the
// latency of dependent loads (docs/roofline.md).
package roofline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/simdcrf/simdcrf/kernels"
)

// Level is one level of the memory hierarchy as measured here.
type Level struct {
	Name      string  // "L1", "L2", "L3", "memory"
	Bytes     int64   // the working set measured: half the cache; memory: 256 MiB or 8·L3
	ReadGBs   float64 // streaming reads (kernels.Dot over two vectors), GB/s, one thread
	RMWGBs    float64 // y += a·x (kernels.Axpy): x and y read, y written, all counted
	LatencyNs float64 // a load waiting for the previous one, over a random cycle of cache lines
}

// Caches returns the data cache sizes of CPU 0 in bytes, from sysfs, and
// whether they were read there (else 32 KiB, 512 KiB and 16 MiB).
func Caches() (l1, l2, l3 int64, ok bool) {
	l1, l2, l3 = 32<<10, 512<<10, 16<<20
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	read := 0
	for _, d := range dirs {
		level, err1 := sysfs(d, "level")
		typ, err2 := sysfs(d, "type")
		size, err3 := sysfs(d, "size")
		if err1 != nil || err2 != nil || err3 != nil || typ == "Instruction" {
			continue
		}
		n, err := parseSize(size)
		if err != nil {
			continue
		}
		switch level {
		case "1":
			l1 = n
		case "2":
			l2 = n
		case "3":
			l3 = n
		default:
			continue
		}
		read++
	}
	return l1, l2, l3, read == 3 && l1 < l2 && l2 < l3
}

func sysfs(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return strings.TrimSpace(string(b)), err
}

// parseSize reads sysfs's "32K", "512K", "32768K", "1M".
func parseSize(s string) (int64, error) {
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("roofline: cache size %q", s)
	}
	return n * mul, nil
}

// Measure measures the four levels, each figure the best of reps.
func Measure(reps int, progress func(string)) ([]Level, error) {
	return measure(reps, progress, 1)
}

// measure is Measure with the memory level's working set and every
// timing's length divided by shrink (the tests' quick mode).
func measure(reps int, progress func(string), shrink int64) ([]Level, error) {
	if progress == nil {
		progress = func(string) {}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l1, l2, l3, _ := Caches()
	sizes := []int64{l1 / 2, l2 / 2, l3 / 2, max(256<<20, 8*l3) / shrink}
	names := []string{"L1", "L2", "L3", "memory"}
	out := make([]Level, len(sizes))
	for i, size := range sizes {
		if i > 0 && size <= sizes[i-1] {
			size = 2 * sizes[i-1]
			sizes[i] = size
		}
		progress(fmt.Sprintf("roofline: %s, %d KiB", names[i], size>>10))
		// (the last level's buffers, up to 512 MiB, are garbage: no
		// collection in the middle of a timing)
		runtime.GC()
		lv := Level{Name: names[i], Bytes: size}
		var err error
		if lv.ReadGBs, lv.RMWGBs, err = bandwidth(size, reps, shrink); err != nil {
			return nil, err
		}
		lv.LatencyNs = latency(size, reps, shrink)
		out[i] = lv
	}
	return out, nil
}

// Curve measures the bandwidth over working sets of 16 KiB to 256 MiB,
// doubling, each the best of reps.
func Curve(reps int, progress func(string)) ([]Point, error) {
	return curve(reps, progress, 1)
}

func curve(reps int, progress func(string), shrink int64) ([]Point, error) {
	if progress == nil {
		progress = func(string) {}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	progress("roofline: bandwidth from 16 KiB to 256 MiB")
	var out []Point
	for size := int64(16 << 10); size <= (256<<20)/shrink; size *= 2 {
		r, w, err := bandwidth(size, reps, shrink)
		if err != nil {
			return nil, err
		}
		out = append(out, Point{Bytes: size, ReadGBs: r, RMWGBs: w})
	}
	runtime.GC()
	return out, nil
}

// FMALatency measures the latency of a dependent float64 FMA in ns (the
// best of reps runs of a chain of math.FMA, which compiles to one
// instruction where the CPU has FMA).
func FMALatency(reps int) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 1 << 22
	best := math.Inf(1)
	for range max(reps, 1) {
		x := fmaSeed
		t0 := time.Now()
		for range n {
			x = math.FMA(x, fmaScale, fmaAdd)
		}
		d := float64(time.Since(t0).Nanoseconds()) / n
		fmaSink = x
		best = min(best, d)
	}
	return best
}

// (variables, so the chain is not folded)
var fmaSeed, fmaScale, fmaAdd, fmaSink = 1.0, 0.999999, 1e-9, 0.0

// target is how long one timing runs: long enough for the clock and a
// stray interrupt not to matter, short enough for best-of-reps to be
// quick on a shared machine.
const target = 30 * time.Millisecond

// calibrate returns the k for which f(k), k units of work, takes about t,
// doubling a trial k until it takes t/8: a single unit timed once would be
// a cold one and, for an L1-sized set, below the clock's resolution. The
// trials also warm what f touches.
func calibrate(t time.Duration, f func(k int)) int {
	for k := 1; ; k *= 2 {
		t0 := time.Now()
		f(k)
		if d := time.Since(t0); d >= t/8 {
			return max(int(math.Ceil(float64(k)*float64(t)/float64(d))), 1)
		}
	}
}

// sink keeps the results alive.
var sink float64

// bandwidth returns the best streaming read and read-modify-write
// bandwidth over a working set of size bytes (two vectors of size/2).
func bandwidth(size int64, reps int, shrink int64) (read, rmw float64, err error) {
	n := int(size / 16)
	if n < 64 {
		return 0, 0, fmt.Errorf("roofline: working set of %d bytes", size)
	}
	x, y := aligned[float64](n), aligned[float64](n)
	for i := range x {
		x[i], y[i] = 1e-9, 1
	}
	t := target / time.Duration(shrink)
	dot := func(k int) {
		for range k {
			sink += kernels.Dot(x, y)
		}
	}
	// (1 + 1e-18 rounds to 1: y stays finite and normal for any passes)
	axpy := func(k int) {
		for range k {
			kernels.Axpy(1e-9, x, y)
		}
	}
	rp, wp := calibrate(t, dot), calibrate(t, axpy)
	for range max(reps, 1) {
		t0 := time.Now()
		dot(rp)
		read = max(read, float64(rp)*float64(16*n)/float64(time.Since(t0).Nanoseconds()))
		t0 = time.Now()
		axpy(wp)
		rmw = max(rmw, float64(wp)*float64(24*n)/float64(time.Since(t0).Nanoseconds()))
	}
	sink += y[n/2]
	return read, rmw, nil
}

// latency returns the best ns per dependent load over a random cycle of
// the cache lines of a working set of size bytes.
func latency(size int64, reps int, shrink int64) float64 {
	next := chain(int(size / 64))
	// Each timing goes on from where the last stopped: a lap of 256 MiB
	// would take a second, and starting over would meet lines the last
	// timing left in the cache.
	p := int32(0)
	f := func(k int) { p = chase(next, p, k) }
	loads := calibrate(target/time.Duration(shrink), f)
	best := math.Inf(1)
	for range max(reps, 1) {
		t0 := time.Now()
		f(loads)
		best = min(best, float64(time.Since(t0).Nanoseconds())/float64(loads))
	}
	sink += float64(p)
	return best
}

// slot is the int32s in a cache line: the chase uses the first of each.
const slot = 64 / 4

// chain returns the chase's array over lines cache lines: the first int32
// of each line holds the index of the next line's first, the lines in a
// random cycle (a fixed seed, so every run chases the same one).
func chain(lines int) []int32 {
	next := aligned[int32](lines * slot)
	for i, j := range cycle(lines, rand.New(rand.NewPCG(1, uint64(lines)))) {
		next[i*slot] = int32(j * slot)
	}
	return next
}

// chase follows next k times from p: each load's address is the last
// load's value, so no two overlap. (A function of its own, so p stays in
// a register, not in a closure's variable.)
func chase(next []int32, p int32, k int) int32 {
	for range k {
		p = next[p]
	}
	return p
}

// cycle returns a random cyclic permutation of n elements: next[i] is the
// element after i, and following next from 0 visits all n (Sattolo's
// algorithm), so that no prefetcher can guess the next line.
func cycle(n int, r *rand.Rand) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		p[i], p[j] = p[j], p[i]
	}
	next := make([]int, n)
	for i := range n {
		next[p[i]] = p[(i+1)%n]
	}
	return next
}

// aligned returns n elements starting on a 64-byte boundary, so a
// vector's first line is a whole one and each chase slot opens its line.
func aligned[T float64 | int32](n int) []T {
	per := 64 / int(unsafe.Sizeof(T(0)))
	b := make([]T, n+per)
	off := int(uintptr(unsafe.Pointer(&b[0]))%64) / (64 / per)
	if off != 0 {
		off = per - off
	}
	return b[off : off+n : off+n]
}
