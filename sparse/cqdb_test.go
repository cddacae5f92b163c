package sparse

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestHashlittle checks lookup3's hashlittle(key, strlen+1, 0) against
// values printed by lookup3.c itself (the copy in CRFsuite's lib/cqdb), on
// every tail length and more than one 12-byte block; "sunny" and "rainy"
// are the values decoded from a CRFsuite sample model
// (../shared/docs/crf-peers.md §4.5).
func TestHashlittle(t *testing.T) {
	for _, c := range []struct {
		key  string
		want uint32
	}{
		{"", 0x8ba9414b}, {"a", 0x42b17671}, {"ab", 0xfab04972}, {"abc", 0xf9f08e9e}, {"abcd", 0x9669f924},
		{"sunny", 0xfe41460e}, {"rainy", 0xa2df6706}, {"abcdefghijk", 0xa6e64a17}, {"abcdefghijkl", 0xe5a71b42},
		{"abcdefghijklm", 0x8675b9c8}, {"U02:Rockwell/International", 0x9d877d27},
		{"w[0]=the|w[1]=cat|suffix3=ing, 0123456789abcdef", 0x65ceef70},
	} {
		if got := hashlittle([]byte(c.key)); got != c.want {
			t.Errorf("hashlittle(%q) = %#08x, want %#08x", c.key, got, c.want)
		}
	}
}

func cqdbWords(n int, r *rand.Rand) []string {
	seen := map[string]bool{"": true}
	words := []string{""}
	for len(words) < n {
		b := make([]byte, r.IntN(30))
		for i := range b {
			b[i] = byte(1 + r.IntN(255)) // no NUL
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			words = append(words, string(b))
		}
	}
	return words
}

// TestDictFromCQDB writes CQDB chunks, opens them as Dicts and checks every
// method against a Dict of the same strings.
func TestDictFromCQDB(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	for _, n := range []int{0, 1, 2, 300, 5000} {
		words := cqdbWords(n, r)[:n]
		want := NewDict(0)
		for _, w := range words {
			want.Add(w)
		}
		chunk := AppendCQDB([]byte("prefix"), n, func(id int) string { return words[id] })[len("prefix"):]
		d, err := DictFromCQDB(slices.Concat(chunk, []byte("more")), n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if d.Len() != n || d.MemoryBytes() == 0 && n > 0 {
			t.Fatalf("n=%d: Len %d, MemoryBytes %d", n, d.Len(), d.MemoryBytes())
		}
		keys := make([][]byte, 0, 2*n)
		for id, w := range words {
			if d.String(int32(id)) != w {
				t.Fatalf("String(%d) = %q, want %q", id, d.String(int32(id)), w)
			}
			keys = append(keys, []byte(w), []byte(w+"x"))
		}
		ids, wantIDs := make([]int32, len(keys)), make([]int32, len(keys))
		d.LookupBytesAll(ids, keys)
		want.LookupBytesAll(wantIDs, keys)
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("n=%d: lookups differ from a Dict's", n)
		}
		if a := testing.AllocsPerRun(3, func() { d.LookupBytesAll(ids, keys) }); a != 0 {
			t.Errorf("n=%d: LookupBytesAll allocates (%v)", n, a)
		}
		for _, k := range keys[:min(len(keys), 50)] {
			id, ok := d.LookupBytes(k)
			wid, wok := want.LookupBytes(k)
			if id != wid || ok != wok {
				t.Fatalf("LookupBytes(%q) = %d, %v; want %d, %v", k, id, ok, wid, wok)
			}
		}
		b1, _ := d.MarshalBinary()
		b2, _ := want.MarshalBinary()
		if !bytes.Equal(b1, b2) {
			t.Errorf("n=%d: MarshalBinary over a CQDB differs from a Dict's", n)
		}
		if n >= 2 {
			rd, m, err := d.Reorder([]int32{1, 0})
			if err != nil || rd.Len() != 2 || rd.String(0) != words[1] || m[0] != 1 {
				t.Errorf("Reorder: %v", err)
			}
		}
		// Flat (and Add) copy the strings into the Dict's own arrays.
		e1, a1, t1 := d.Flat()
		e2, a2, _ := want.Flat()
		if !slices.Equal(e1, e2) || !bytes.Equal(a1, a2) || d.cq != nil {
			t.Errorf("n=%d: Flat over a CQDB has other strings than a Dict's", n)
		}
		if f, err := DictFromFlat(e1, a1, t1); err != nil {
			t.Errorf("n=%d: Flat's arrays: %v", n, err)
		} else if f.LookupBytesAll(ids, keys); !slices.Equal(ids, wantIDs) {
			t.Errorf("n=%d: lookups after Flat differ", n)
		}
		if id, added := d.Add("\x00new"); id != int32(n) || !added {
			t.Errorf("Add after Flat: %d, %v", id, added)
		}
	}
	// A key with a NUL is not found (CRFsuite, with C strings, would
	// look up what precedes it).
	chunk := AppendCQDB(nil, 2, func(id int) string { return []string{"ab", "c"}[id] })
	d, _ := DictFromCQDB(chunk, 2)
	if id, ok := d.Lookup("ab\x00zz"); ok {
		t.Errorf("Lookup(ab NUL zz) = %d", id)
	}
	if _, err := DictFromCQDB(AppendCQDB(nil, 3, func(id int) string { return []string{"a", "b", "a"}[id] }), 3); err != nil {
		t.Fatal(err)
	} else if _, err := mustCQDB(t, AppendCQDB(nil, 3, func(id int) string { return []string{"a", "b", "a"}[id] }), 3).Own(); err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Errorf("Own over a CQDB with a repeated string: %v", err)
	}
}

func mustCQDB(t *testing.T, b []byte, n int) *Dict {
	t.Helper()
	d, err := DictFromCQDB(b, n)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDamagedCQDB: damage to a chunk's header, records or id array is an
// error saying what is wrong; damage to its hash tables makes lookups
// miss, never loop or read outside the chunk.
func TestDamagedCQDB(t *testing.T) {
	words := []string{"alpha", "beta", "gamma", "delta"}
	good := AppendCQDB(nil, len(words), func(id int) string { return words[id] })
	le := binary.LittleEndian
	bwd := le.Uint32(good[20:])
	rec1 := le.Uint32(good[bwd+4:]) // record of id 1
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		n      int
		want   string
	}{
		{"short", func(b []byte) []byte { return b[:100] }, 4, "truncated"},
		{"chunk id", func(b []byte) []byte { b[0] = 'X'; return b }, 4, "chunk id"},
		{"byte order", func(b []byte) []byte { le.PutUint32(b[12:], 0x71534462); return b }, 4, "byte-order mark 0x71534462"},
		{"size", func(b []byte) []byte { le.PutUint32(b[4:], uint32(len(b)+1)); return b }, 4, "chunk size"},
		{"count", func(b []byte) []byte { return b }, 5, "hash tables for 4 strings, want 5"},
		{"table", func(b []byte) []byte {
			for i := range 256 {
				if le.Uint32(b[24+8*i:]) != 0 {
					le.PutUint32(b[24+8*i:], uint32(len(b)-4))
					break
				}
			}
			return b
		}, 4, "outside the chunk"},
		{"no id array", func(b []byte) []byte { le.PutUint32(b[20:], 0); return b }, 4, "no id → string array"},
		{"id array", func(b []byte) []byte { le.PutUint32(b[20:], uint32(len(b)-8)); return b }, 4, "id → string array"},
		{"record offset", func(b []byte) []byte { le.PutUint32(b[bwd+4:], uint32(len(b))); return b }, 4, "string 1: record offset"},
		{"record id", func(b []byte) []byte { le.PutUint32(b[rec1:], 7); return b }, 4, "string 1: its record at"},
		{"record size", func(b []byte) []byte { le.PutUint32(b[rec1+4:], 1<<20); return b }, 4, "run past the chunk's end"},
		{"record NUL", func(b []byte) []byte { b[rec1+8+4] = 'x'; return b }, 4, "does not end in a NUL"},
	} {
		_, err := DictFromCQDB(c.damage(bytes.Clone(good)), c.n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// Tables full of bogus buckets: every lookup misses, and ends.
	b := bytes.Clone(good)
	for i := range 256 {
		off, num := le.Uint32(b[24+8*i:]), le.Uint32(b[28+8*i:])
		for k := range num {
			le.PutUint64(b[off+8*k:], uint64(len(b)+100)<<32|uint64(k))
		}
	}
	d := mustCQDB(t, b, len(words))
	for _, w := range words {
		if id, ok := d.Lookup(w); ok {
			t.Errorf("Lookup(%q) = %d in bogus tables", w, id)
		}
		_ = fmt.Sprint(d.String(0))
	}
	// Buckets that keep their hashes but point at the chunk's last bytes
	// (a record header past its end, or a string running past it), or all
	// at the record of id 0: LookupBytesAll loads the size words of the
	// records of matching hashes ahead of the compares, and must still
	// miss (or find id 0 only), never read past the chunk.
	for _, c := range []struct {
		name string
		off  func(b []byte) uint64
		want []int32
	}{
		{"end", func(b []byte) uint64 { return uint64(len(b) - 6) }, []int32{-1, -1, -1, -1}},
		{"near end", func(b []byte) uint64 { return uint64(len(b) - 9) }, []int32{-1, -1, -1, -1}},
		{"record 0", func(b []byte) uint64 { return uint64(le.Uint32(b[bwd:])) }, []int32{0, -1, -1, -1}},
	} {
		b := bytes.Clone(good)
		for i := range 256 {
			off, num := le.Uint32(b[24+8*i:]), le.Uint32(b[28+8*i:])
			for k := range num {
				if e := le.Uint64(b[off+8*k:]); e != 0 {
					le.PutUint64(b[off+8*k:], c.off(b)<<32|e&0xffffffff)
				}
			}
		}
		d := mustCQDB(t, b, len(words))
		keys := make([][]byte, len(words))
		for i, w := range words {
			keys[i] = []byte(w)
		}
		ids := make([]int32, len(keys))
		d.LookupBytesAll(ids, keys)
		if !slices.Equal(ids, c.want) {
			t.Errorf("%s: lookups %v, want %v", c.name, ids, c.want)
		}
	}
}
