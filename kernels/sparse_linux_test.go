package kernels

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGatherScatterPageEnd puts w, s, g and p each at the end of a mapping
// followed by an inaccessible page, with features on the last row of w and g
// at the last position: a load or store past a row's end (a missing or wrong
// tail mask) crashes the test.
func TestGatherScatterPageEnd(t *testing.T) {
	r := newRand(21)
	forTiers(t, func(t *testing.T, p *impl) {
		if !maskedLoadsSafe(t, p) {
			t.Skip("masked-off lanes fault at a page end on this CPU (qemu-user does this; hardware does not)")
		}
		for _, M := range labelCounts() {
			for _, ld := range sparseLDs(M) {
				rows, T := 3, 3
				c := csr{T: T, rows: rows, ptr: []int32{0, 2, 2, 5}, ids: []int32{2, 0, 1, 2, 2}, vals: []float64{0.5, -1, 2, 1, -0.25}}
				n := (rows-1)*ld + M
				w0, s0 := randSlice(r, n, -1, 1), randSlice(r, T*M, -1, 1)
				w, s := pageEndOf(t, w0), pageEndOf(t, s0)
				p.gather(s, w, ld, c.ptr, c.ids, c.vals, T, M)
				want := append([]float64(nil), s0...)
				gatherGeneric(want, w0, ld, c.ptr, c.ids, c.vals, T, M)
				// 3 terms of magnitude ≤ 2 and |s0| ≤ 1: (n+1)·2.3e-16·B ≤ 4·2.3e-16·7.
				checkClose(t, fmt.Sprintf("%s gather M=%d ld=%d", p.name, M, ld), s, want, 0, 7e-15)

				pm0 := randSlice(r, T*M, 0, 1)
				g, pm := pageEndOf(t, w0), pageEndOf(t, pm0)
				p.scatter(g, ld, pm, c.ptr, c.ids, c.vals, -1.5, T, M)
				want = append(want[:0], w0...)
				scatterGeneric(want, ld, pm0, c.ptr, c.ids, c.vals, -1.5, T, M)
				checkClose(t, fmt.Sprintf("%s scatter M=%d ld=%d", p.name, M, ld), g, want, 0, 7e-15)
			}
		}
	})
}

// maskedLoadsSafe probes whether the tier's masked loads honour the mask at
// a page end, using its axpy (BLAS family, not under test here) on one
// element just before an inaccessible page. Real CPUs suppress faults on
// masked-off lanes; qemu-user's VMASKMOVPD does not.
func maskedLoadsSafe(t *testing.T, p *impl) (ok bool) {
	x, y := pageEndOf(t, []float64{1}), pageEndOf(t, []float64{2})
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	p.axpy(3, x, y)
	return y[0] == 5
}

// TestSparseTiming measures gather and scatter like the benchmarks, but in
// thread CPU time (CLOCK_THREAD_CPUTIME_ID) with the tiers interleaved and the
// minimum over rounds: on a shared, overloaded machine wall-clock benchmarks
// mostly measure the neighbours. It runs only with SIMDCRF_SPARSE_TIMING=1
// (value of SIMDCRF_SPARSE_TIMING_M, if set, restricts M: e.g. "9").
func TestSparseTiming(t *testing.T) {
	if os.Getenv("SIMDCRF_SPARSE_TIMING") == "" {
		t.Skip("set SIMDCRF_SPARSE_TIMING=1 to measure")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			t.Fatal(err)
		}
		return ts.Nano()
	}
	Ms := []int{9, 45, 256}
	if m := os.Getenv("SIMDCRF_SPARSE_TIMING_M"); m != "" {
		var x int
		fmt.Sscan(m, &x)
		Ms = []int{x}
	}
	const rounds = 7
	for _, M := range Ms {
		ld := (M + 7) &^ 7
		w := benchMatrix(ld)
		s := make([]float64, benchT*M)
		p := randSlice(newRand(13), benchT*M, 0, 1)
		for _, F := range []int{20, 60} {
			for _, dist := range []string{"uniform", "zipf"} {
				c := benchCSR(F, dist == "zipf")
				for _, kern := range []string{"gather", "scatter"} {
					res := map[string][]float64{}
					win := 0
					for r := 0; r < rounds; r++ {
						for _, im := range all {
							if !im.available {
								continue
							}
							// 6 windows per measurement, a fresh part of the sequence each time.
							t0 := now()
							for k := 0; k < 6; k++ {
								o := (win % benchSeqs) * benchT
								win++
								ptr := c.ptr[o : o+benchT+1]
								if kern == "scatter" {
									im.scatter(w, ld, p, ptr, c.ids, c.vals, 1e-9, benchT, M)
								} else {
									im.gather(s, w, ld, ptr, c.ids, c.vals, benchT, M)
								}
							}
							res[im.name] = append(res[im.name], float64(now()-t0)/(6*benchT))
						}
					}
					line := fmt.Sprintf("%-7s M=%-3d F=%-2d %-7s", kern, M, F, dist)
					g := slices.Min(res["generic"])
					for _, im := range all {
						if v, ok := res[im.name]; ok {
							mn := slices.Min(v)
							line += fmt.Sprintf("  %s %7.0f (med %7.0f, %.2fx)", im.name, mn, median(v), g/mn)
						}
					}
					t.Log(line)
				}
			}
		}
	}
}

func median(v []float64) float64 {
	w := slices.Clone(v)
	slices.Sort(w)
	return w[len(w)/2]
}
