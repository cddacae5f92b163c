package sparse

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func checkDict(t *testing.T, d *Dict, words []string) {
	t.Helper()
	if d.Len() != len(words) {
		t.Fatalf("Len = %d, want %d", d.Len(), len(words))
	}
	for i, w := range words {
		if got := d.String(int32(i)); got != w {
			t.Fatalf("String(%d) = %q, want %q", i, got, w)
		}
		if id, ok := d.Lookup(w); !ok || id != int32(i) {
			t.Fatalf("Lookup(%q) = %d, %v, want %d", w, id, ok, i)
		}
		if id, ok := d.LookupBytes([]byte(w)); !ok || id != int32(i) {
			t.Fatalf("LookupBytes(%q) = %d, %v, want %d", w, id, ok, i)
		}
	}
	// The batched lookups, with keys absent (one byte off each word, and
	// the word with a byte more) among them.
	var keys [][]byte
	var want []int32
	for i, w := range words {
		keys, want = append(keys, []byte(w)), append(want, int32(i))
		if len(w) > 0 {
			off := []byte(w)
			off[len(off)-1] ^= 0x80
			if id, ok := d.LookupBytes(off); ok {
				keys, want = append(keys, off), append(want, id)
			} else {
				keys, want = append(keys, off), append(want, -1)
			}
		}
		if id, ok := d.Lookup(w + "x"); ok {
			keys, want = append(keys, []byte(w+"x")), append(want, id)
		} else {
			keys, want = append(keys, []byte(w+"x")), append(want, -1)
		}
	}
	got := make([]int32, len(keys))
	d.LookupBytesAll(got, keys)
	for i := range keys {
		if got[i] != want[i] {
			t.Fatalf("LookupBytesAll(%q) = %d, want %d", keys[i], got[i], want[i])
		}
	}
}

func TestDictRoundTrip(t *testing.T) {
	var d Dict // the zero value works
	if _, ok := d.Lookup("x"); ok {
		t.Fatal("empty Dict finds x")
	}
	words := []string{"", "a", "ab", "w[0]=the", "the", "é", "abcdefgh", "abcdefghi", "abcdefgh\x00", "\x00"}
	for i, w := range words {
		id, added := d.Add(w)
		if !added || id != int32(i) {
			t.Fatalf("Add(%q) = %d, %v", w, id, added)
		}
	}
	for i, w := range words {
		if id, added := d.AddBytes([]byte(w)); added || id != int32(i) {
			t.Fatalf("second Add(%q) = %d, %v", w, id, added)
		}
	}
	checkDict(t, &d, words)
	for _, w := range []string{"b", "abcdefg", "abcdefghij", "\x00\x00"} {
		if _, ok := d.Lookup(w); ok {
			t.Fatalf("Lookup(%q) found a string never added", w)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("String(-1) did not panic")
		}
	}()
	d.String(-1)
}

func TestDictHashDeterministic(t *testing.T) {
	// Fixed values: the hash must not change between processes or
	// platforms (a change is not an error for ids, but it should be
	// deliberate).
	for s, want := range map[string]uint64{
		"":                  0xbffa8bb938d83b63,
		"w[0]=the":          0xbb26644fefde66e2,
		"abcdefghijklmnopq": 0x274092297d1b422c,
	} {
		if hash64(s) != want {
			t.Fatalf("hash64(%q) = %#x, want %#x", s, hash64(s), want)
		}
	}
	seen := map[uint64]string{}
	for i := range 100000 {
		s := "attr=" + strconv.Itoa(i)
		h := hash64(s)
		if o, dup := seen[h]; dup {
			t.Fatalf("hash64 collision: %q and %q", o, s)
		}
		seen[h] = s
	}
}

// TestDictCollisions forces every string into the same few slots with the
// same tags, so that lookups must compare strings.
func TestDictCollisions(t *testing.T) {
	for name, h := range map[string]func(string) uint64{
		"all equal":  func(string) uint64 { return 42 },
		"same tag":   func(s string) uint64 { return 7<<32 | uint64(len(s))%5 },
		"same index": func(s string) uint64 { return hash64(s) &^ 0xffffffff },
	} {
		t.Run(name, func(t *testing.T) {
			defer func(old func(string) uint64) { testHash = old }(testHash)
			testHash = h
			d := NewDict(0)
			var words []string
			for i := range 1500 {
				w := fmt.Sprint("w", i*7919%1500)
				words = append(words, w)
				if _, added := d.Add(w); !added {
					t.Fatalf("%q not added", w)
				}
			}
			checkDict(t, d, words)
			if _, ok := d.Lookup("w1500"); ok {
				t.Fatal("found w1500")
			}
		})
	}
}

func TestDictMillion(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	d := NewDict(0)
	for i := range n {
		d.Add("attr=" + strconv.Itoa(i))
	}
	if d.Len() != n {
		t.Fatalf("Len = %d", d.Len())
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		i := r.IntN(n)
		s := "attr=" + strconv.Itoa(i)
		if id, ok := d.Lookup(s); !ok || id != int32(i) || d.String(id) != s {
			t.Fatalf("Lookup(%q) = %d, %v", s, id, ok)
		}
	}
	t.Logf("%d strings: %.1f bytes per entry", n, float64(d.MemoryBytes())/float64(n))
}

func TestDictReorder(t *testing.T) {
	d := NewDict(4)
	words := []string{"a", "b", "c", "d", "e"}
	for _, w := range words {
		d.Add(w)
	}
	counts := []int64{1, 5, 0, 5, 2}
	order := FrequencyOrder(counts, 1)
	if fmt.Sprint(order) != "[1 3 4 0]" {
		t.Fatalf("FrequencyOrder = %v", order)
	}
	nd, oldToNew, err := d.Reorder(order)
	if err != nil {
		t.Fatal(err)
	}
	checkDict(t, nd, []string{"b", "d", "e", "a"})
	if fmt.Sprint(oldToNew) != "[3 0 -1 1 2]" {
		t.Fatalf("oldToNew = %v", oldToNew)
	}
	if _, ok := nd.Lookup("c"); ok {
		t.Fatal("dropped string still there")
	}
	checkDict(t, d, words) // d unchanged
	for _, bad := range [][]int32{{0, 0}, {5}, {-1}} {
		if _, _, err := d.Reorder(bad); err == nil {
			t.Fatalf("Reorder(%v) succeeded", bad)
		}
	}
}

// BenchmarkDict measures memory per entry and lookup time with 1M (2M in
// full mode) attribute-like strings, hits in random order, and misses.
func BenchmarkDict(b *testing.B) {
	for _, n := range []int{1 << 20, 4 << 20} {
		words := make([]string, n)
		for i := range words {
			words[i] = fmt.Sprintf("w[%d]=tok%x", i%5-2, uint32(i)*2654435761)
		}
		d := NewDict(0)
		for _, w := range words {
			d.Add(w)
		}
		r := rand.New(rand.NewPCG(1, 1))
		perm := r.Perm(n)
		// The queries are copies, as strings built by feature extraction
		// would be (a Go map would otherwise find its keys' bytes in
		// cache from hashing the query).
		queries := make([]string, n)
		for i, w := range words {
			queries[i] = strings.Clone(w)
		}
		b.Run(fmt.Sprintf("N=%d/lookup", n), func(b *testing.B) {
			k := 0
			for b.Loop() {
				if _, ok := d.Lookup(queries[perm[k]]); !ok {
					b.Fatal("miss")
				}
				if k++; k == n {
					k = 0
				}
			}
			b.ReportMetric(float64(d.MemoryBytes())/float64(n), "B/entry")
			b.ReportMetric(float64(len(d.arena))/float64(n), "arenaB/entry")
		})
		b.Run(fmt.Sprintf("N=%d/zipf", n), func(b *testing.B) {
			// Hits in Zipf(1) order over ranks, ranks a random
			// permutation of the ids: frequent strings stay cached, as
			// in feature extraction.
			zr := rand.NewZipf(r, 1.0001, 1, uint64(n-1))
			seq := make([]int, 1<<16)
			for i := range seq {
				seq[i] = perm[zr.Uint64()]
			}
			k := 0
			for b.Loop() {
				if _, ok := d.Lookup(queries[seq[k&(1<<16-1)]]); !ok {
					b.Fatal("miss")
				}
				k++
			}
		})
		b.Run(fmt.Sprintf("N=%d/hot", n), func(b *testing.B) {
			// 4096 distinct strings: the cost of hashing, probing and
			// comparing when the memory is in cache.
			k := 0
			for b.Loop() {
				if _, ok := d.Lookup(queries[perm[k&4095]]); !ok {
					b.Fatal("miss")
				}
				k++
			}
		})
		b.Run(fmt.Sprintf("N=%d/miss", n), func(b *testing.B) {
			k := 0
			miss := make([]string, 4096)
			for i := range miss {
				miss[i] = fmt.Sprintf("x[%d]=nope%d", i, i)
			}
			for b.Loop() {
				if _, ok := d.Lookup(miss[k&4095]); ok {
					b.Fatal("hit")
				}
				k++
			}
		})
		b.Run(fmt.Sprintf("N=%d/build", n), func(b *testing.B) {
			for b.Loop() {
				d := NewDict(0)
				for _, w := range words {
					d.Add(w)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/add")
		})
		b.Run(fmt.Sprintf("N=%d/gomap", n), func(b *testing.B) {
			m := make(map[string]int32)
			for i, w := range words {
				m[w] = int32(i)
			}
			k := 0
			for b.Loop() {
				if _, ok := m[queries[perm[k]]]; !ok {
					b.Fatal("miss")
				}
				if k++; k == n {
					k = 0
				}
			}
		})
	}
}

func TestDictBinary(t *testing.T) {
	d := NewDict(0)
	words := []string{"", "a", "w[0]=the", strings.Repeat("x", 300), "é"}
	for _, w := range words {
		d.Add(w)
	}
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := d.AppendBinary([]byte("prefix"))
	if string(b2[6:]) != string(b) {
		t.Fatal("AppendBinary differs from MarshalBinary")
	}
	var e Dict
	if err := e.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	checkDict(t, &e, words)
	// The encoding is deterministic: re-encoding gives the same bytes.
	if b3, _ := e.MarshalBinary(); string(b3) != string(b) {
		t.Fatal("re-encoding differs")
	}
	var empty Dict
	be, _ := empty.MarshalBinary()
	if err := e.UnmarshalBinary(be); err != nil || e.Len() != 0 {
		t.Fatal("empty Dict round trip", err)
	}
	for name, bad := range map[string][]byte{
		"nil":       nil,
		"truncated": b[:len(b)-1],
		"trailing":  append(append([]byte{}, b...), 0),
		"count":     {0xff, 0xff, 0xff, 0xff, 0x0f, 1, 'a'},
		"repeat":    {2, 1, 'a', 1, 'a'},
		"length":    {1, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a'},
		"varint":    {0x80},
	} {
		var x Dict
		x.Add("keep")
		if err := x.UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: accepted %v", name, bad)
		}
		if x.Len() != 1 {
			t.Errorf("%s: failed UnmarshalBinary changed the Dict", name)
		}
	}
}

// TestDictFlat round-trips a Dict through its flat arrays and checks that
// DictFromFlat rejects arrays a lookup could not rely on.
func TestDictFlat(t *testing.T) {
	d := NewDict(0)
	words := []string{"", "a", "w[0]=the", strings.Repeat("x", 300), "é"}
	for i := range 2000 {
		words = append(words, fmt.Sprint("w", i))
	}
	for _, w := range words {
		d.Add(w)
	}
	ends, arena, table := d.Flat()
	e, err := DictFromFlat(slices.Clone(ends), slices.Clone(arena), slices.Clone(table))
	if err != nil {
		t.Fatal(err)
	}
	checkDict(t, e, words)
	ids := make([]int32, len(words)+1)
	keys := [][]byte{[]byte("absent")}
	for _, w := range words {
		keys = append(keys, []byte(w))
	}
	e.LookupBytesAll(ids, keys)
	for i, id := range ids {
		if id != int32(i-1) {
			t.Fatalf("LookupBytesAll: key %d gets %d", i, id)
		}
	}
	// Add works on copies: the caller's arrays stay as they were.
	ends2, arena2, table2 := slices.Clone(ends), slices.Clone(arena), slices.Clone(table)
	f, _ := DictFromFlat(ends2, arena2, table2)
	f.Add("new")
	checkDict(t, f, append(slices.Clone(words), "new"))
	if !slices.Equal(ends2, ends) || string(arena2) != string(arena) || !slices.Equal(table2, table) {
		t.Fatal("Add changed the flat arrays")
	}
	var empty Dict
	e0, a0, t0 := empty.Flat()
	if x, err := DictFromFlat(e0, a0, t0); err != nil || x.Len() != 0 {
		t.Fatal("empty Dict:", err)
	}
	mod := func(f func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64)) error {
		_, err := DictFromFlat(f(slices.Clone(ends), slices.Clone(arena), slices.Clone(table)))
		return err
	}
	occupied := slices.IndexFunc(table, func(e uint64) bool { return e != 0 })
	free := slices.Index(table, 0)
	for name, f := range map[string]func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64){
		"descending ends": func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) { e[3] = 0; return e, a, tb },
		"short arena":     func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) { return e, a[:len(a)-1], tb },
		"table size":      func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) { return e, a, tb[:len(tb)-1] },
		"full table": func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) {
			return e[:16], a[:e[15]], tb[:16]
		},
		"id range": func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) {
			tb[occupied] = 1<<32 | 1<<31
			return e, a, tb
		},
		"repeated id": func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) {
			tb[free] = tb[occupied]
			return e, a, tb
		},
		"missing id": func(e []uint32, a []byte, tb []uint64) ([]uint32, []byte, []uint64) {
			tb[occupied] = 0
			return e, a, tb
		},
	} {
		if err := mod(f); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDictUnmarshal(f *testing.F) {
	f.Add([]byte{2, 1, 'a', 1, 'b'})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Dict
		if err := d.UnmarshalBinary(data); err != nil {
			return
		}
		b, _ := d.MarshalBinary()
		if string(b) != string(data) {
			// Non-minimal varints decode but re-encode differently;
			// the Dict must still round-trip.
			var e Dict
			if err := e.UnmarshalBinary(b); err != nil || e.Len() != d.Len() {
				t.Fatalf("round trip of %v failed: %v", data, err)
			}
		}
	})
}

// hash64Ref is hash64 as first written (a byte loop for the tail), the
// reference its tests compare against: the hash must never change, since
// model files store tables built with it.
func hash64Ref(s string) uint64 {
	h := uint64(len(s)) ^ hk0
	p := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(p) > 8 {
		h = mum(binary.LittleEndian.Uint64(p)^hk1, h^hk2)
		p = p[8:]
	}
	var v uint64
	if len(p) == 8 {
		v = binary.LittleEndian.Uint64(p)
	} else {
		for k := len(p) - 1; k >= 0; k-- {
			v = v<<8 | uint64(p[k])
		}
	}
	h = mum(v^hk1, h^hk3)
	return mum(h^hk0, hk2)
}

// TestHash64Unchanged checks the hash against its first form, byte by
// byte, for every length up to 80 and random bytes: model files store
// tables built with it, so it must never change.
func TestHash64Unchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	buf := make([]byte, 96)
	for n := range 81 {
		for range 200 {
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			off := r.IntN(16)
			s := string(buf[off : off+n])
			if got, want := hash64(s), hash64Ref(s); got != want {
				t.Fatalf("hash64(%q) = %#x, first form gives %#x", s, got, want)
			}
		}
	}
}

func FuzzHash64(f *testing.F) {
	f.Add("")
	f.Add("U00:Rockwell")
	f.Add("w[0]=the")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hash64(s), hash64Ref(s); got != want {
			t.Fatalf("hash64(%q) = %#x, first form gives %#x", s, got, want)
		}
	})
}

func TestDictFromStrings(t *testing.T) {
	d, err := DictFromStrings([]uint32{3, 6, 6, 9}, []byte("catdogcow"))
	if err != nil || d.Len() != 4 || d.String(2) != "" || d.String(3) != "cow" {
		t.Fatalf("DictFromStrings: %v", err)
	}
	if id, ok := d.Lookup("dog"); id != 1 || !ok {
		t.Errorf("Lookup(dog) = %d, %v", id, ok)
	}
	if id, _ := d.Add("pig"); id != 4 || d.String(0) != "cat" {
		t.Errorf("Add after DictFromStrings: %d", id)
	}
	for _, c := range []struct {
		ends  []uint32
		arena string
		want  string
	}{
		{[]uint32{3, 2}, "cat", "ends before"},
		{[]uint32{3}, "cats", "arena has 4 bytes"},
		{[]uint32{3, 6}, "catcat", `string 1 ("cat") repeats`},
	} {
		if _, err := DictFromStrings(c.ends, []byte(c.arena)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DictFromStrings(%v, %q): %v, want %q", c.ends, c.arena, err, c.want)
		}
	}
}
