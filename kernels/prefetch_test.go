package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPrefetch: the prefetch kernels run and change no memory, for every
// length of ids up to 40, rows of 1 to 130 elements (shorter than, equal
// to and straddling cache lines), strides above M, ids at both ends of the
// slice, and an empty slice or row.
func TestPrefetch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 4096
	buf := make([]float64, n+16)
	for k := range buf {
		buf[k] = r.NormFloat64()
	}
	want := slices.Clone(buf)
	x := buf[8 : 8+n]
	buf32 := make([]float32, n+16)
	for k := range buf32 {
		buf32[k] = float32(r.NormFloat64())
	}
	want32 := slices.Clone(buf32)
	x32 := buf32[8 : 8+n]
	idBuf := make([]int32, 64)
	for nid := 0; nid <= 40; nid++ {
		for _, M := range []int{1, 7, 8, 9, 22, 49, 130} {
			ld := M + nid%3
			ids := idBuf[:nid]
			for k := range ids {
				ids[k] = int32(r.IntN((n - M) / ld))
			}
			if nid > 1 {
				ids[0], ids[nid-1] = 0, int32((n-M)/ld)
			}
			PrefetchRows(x, ld, ids, M)
			PrefetchRows(x32, ld, ids, M)
			PrefetchLines(x, ids, M)
			PrefetchLines(x32, ids, 2)
			PrefetchRows(x[:0], ld, ids, M)
			PrefetchLines(x[:0], ids, 1)
			PrefetchRows(x, ld, ids, 0)
		}
	}
	if !slices.Equal(buf, want) || !slices.Equal(buf32, want32) {
		t.Fatal("a prefetch changed memory")
	}
}

// BenchmarkPrefetch: the cost of issuing the hints for 256 rows already
// in the cache (the overhead when they are not needed).
func BenchmarkPrefetch(b *testing.B) {
	x := make([]float64, 1<<12)
	ids := make([]int32, 256)
	for k := range ids {
		ids[k] = int32(k * 7 % 180)
	}
	b.Run("M=22/rows", func(b *testing.B) {
		for range b.N {
			PrefetchRows(x, 22, ids, 22)
		}
	})
	b.Run("M=22/lines", func(b *testing.B) {
		for range b.N {
			PrefetchLines(x, ids, 2)
		}
	})
}
