package sparse

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// frontKeys returns the strings of d and, for every third one, a key that
// differs in its last byte or has one more, in a random order.
func frontKeys(d *Dict, r *rand.Rand) [][]byte {
	var keys [][]byte
	for id := range int32(d.Len()) {
		s := d.get(id)
		keys = append(keys, []byte(s))
		if id%3 == 0 {
			keys = append(keys, []byte(s+"!"))
			if len(s) > 0 {
				k := []byte(s)
				k[len(k)-1] ^= 0x20
				keys = append(keys, k)
			}
		}
	}
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// checkFront checks that d (with a front table) answers every key as the
// same Dict without one does, allocation-free.
func checkFront(t *testing.T, d *Dict, keys [][]byte) {
	t.Helper()
	if d.front == nil {
		t.Fatalf("no front table for a Dict of %d strings", d.Len())
	}
	got, want := make([]int32, len(keys)), make([]int32, len(keys))
	d.LookupBytesAll(got, keys)
	plain := *d
	plain.front = nil
	plain.LookupBytesAll(want, keys)
	for i := range keys {
		if got[i] != want[i] {
			t.Fatalf("key %q: %d with the front table, %d without", keys[i], got[i], want[i])
		}
	}
	if a := testing.AllocsPerRun(3, func() { d.LookupBytesAll(got, keys) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// TestFront checks lookups through the front table of large Dicts from a
// file's arrays (none over a CQDB), with hashes that collide in both tables,
// and one with a string twice (a damaged file), where the front table must
// answer as the Dict's own lookup does.
func TestFront(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	n := frontMinDict + 1000
	for name, h := range map[string]func(string) uint64{
		"hash64":   nil,
		"collide":  func(s string) uint64 { return hash64(s) & 0x0000_000f_00ff_ffff },
		"same tag": func(s string) uint64 { return hash64(s) & 0xffff_ffff },
	} {
		t.Run(name, func(t *testing.T) {
			defer func(old func(string) uint64) { testHash = old }(testHash)
			testHash = h
			d := NewDict(0)
			for i := range n {
				d.Add(fmt.Sprintf("U%02d:w%d", i%23, i))
			}
			d.Add("")
			ends, arena, table := d.Flat()
			f, err := DictFromFlat(ends, arena, table)
			if err != nil {
				t.Fatal(err)
			}
			checkFront(t, f, frontKeys(f, r))
		})
	}
	t.Run("cqdb", func(t *testing.T) {
		words := cqdbWords(n, r)
		c, err := DictFromCQDB(AppendCQDB(nil, n, func(id int) string { return words[id] }), n)
		if err != nil {
			t.Fatal(err)
		}
		if c.front != nil {
			t.Error("a front table over a CQDB")
		}
	})
	t.Run("repeated string", func(t *testing.T) {
		d := NewDict(0)
		for i := range n {
			d.Add(fmt.Sprintf("w%06d", i))
		}
		ends, arena, table := d.Flat()
		arena = slices.Clone(arena)
		// String 3 becomes string 7 (same length): two ids, one string,
		// which the Dict's own table finds as 7 (3's slot lies where its
		// old string's hash put it).
		copy(arena[ends[2]:ends[3]], arena[ends[6]:ends[7]])
		f, err := DictFromFlat(ends, arena, table)
		if err != nil {
			t.Fatal(err)
		}
		checkFront(t, f, [][]byte{[]byte("w000003"), []byte("w000007"), []byte("w000008")})
	})
	small := NewDict(0)
	small.Add("x")
	if s, _ := DictFromFlat(small.Flat()); s.front != nil {
		t.Error("a front table for a Dict of one string")
	}
}
