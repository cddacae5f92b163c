//go:build linux && !purego

package kernels

import (
	"fmt"
	"testing"
)

// TestSelectPageEnd puts x, y and dst right before an unmapped page: a
// tier that reads a lane past x or y (masked tails done wrong) or writes
// past dst crashes. Results are compared with generic. Skipped with -short
// (qemu-user does not suppress faults on masked-off lanes: see
// TestViterbiPageEnd).
func TestSelectPageEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: masked-load fault suppression is not emulated by qemu-user")
	}
	r := newRand(74)
	run := func(t *testing.T, p *impl) {
		for _, n := range selectLengths() {
			xs, ys := randSlice(r, n, -3, 3), randSlice(r, n, -3, 3)
			x, y := pageEndOf(t, xs), pageEndOf(t, ys)
			x32, y32 := pageEndOf(t, to32(xs)), pageEndOf(t, to32(ys))
			for _, bound := range []float64{2.5, -1, -10} {
				all := make([]int32, n)
				c := selectSumGEGeneric(all, xs, ys, bound)
				for _, cp := range []int{c, c + 5, max(c-1, 0)} {
					what := fmt.Sprintf("%s n=%d bound=%v cap=%d", p.name, n, bound, cp)
					for _, k := range []struct {
						name      string
						got, want func(dst []int32) int
					}{
						{"ge", func(d []int32) int { return p.selectGE(d, x, bound) }, func(d []int32) int { return selectGEGeneric(d, xs, bound) }},
						{"sum", func(d []int32) int { return p.selectSumGE(d, x, y, bound) }, func(d []int32) int { return selectSumGEGeneric(d, xs, ys, bound) }},
						{"ge32", func(d []int32) int { return p.selectGE32(d, x32, float32(bound)) }, func(d []int32) int { return selectGEGeneric(d, to32(xs), float32(bound)) }},
						{"sum32", func(d []int32) int { return p.selectSumGE32(d, x32, y32, float32(bound)) }, func(d []int32) int { return selectSumGEGeneric(d, to32(xs), to32(ys), float32(bound)) }},
					} {
						want := make([]int32, cp)
						wn := k.want(want)
						dst := pageEndOf(t, make([]int32, cp))
						if gn := k.got(dst); gn != wn || fmt.Sprint(dst[:max(wn, 0)]) != fmt.Sprint(want[:max(wn, 0)]) {
							t.Fatalf("%s %s: %d %v, want %d %v", what, k.name, gn, dst, wn, want)
						}
					}
				}
			}
			if got, want := p.max(x), maxGeneric(xs); got != want {
				t.Fatalf("%s max n=%d: %v, want %v", p.name, n, got, want)
			}
			if got, want := p.max32(x32), maxGeneric(to32(xs)); got != want {
				t.Fatalf("%s max32 n=%d: %v, want %v", p.name, n, got, want)
			}
		}
	}
	forTiers(t, run)
	for _, p := range selectDirect {
		t.Run(p.name, func(t *testing.T) { run(t, p) })
	}
}
