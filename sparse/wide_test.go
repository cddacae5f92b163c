package sparse

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWide checks lookups through a wide table against the plain table's,
// for keys present and absent, short and long (past the 23 bytes a slot
// holds, and past 255), the empty one, with real hashes and with hashes
// forced to collide.
func TestWide(t *testing.T) {
	for name, h := range map[string]func(string) uint64{
		"hash64":     nil,
		"all equal":  func(string) uint64 { return 42 },
		"same tag":   func(s string) uint64 { return 7<<32 | uint64(len(s))%5 },
		"same index": func(s string) uint64 { return hash64(s) &^ 0xffffffff },
	} {
		t.Run(name, func(t *testing.T) {
			defer func(old func(string) uint64) { testHash = old }(testHash)
			testHash = h
			n := 3000
			if h != nil {
				n = 400 // (every lookup probes them all)
			}
			words := []string{"", "a", strings.Repeat("x", 23), strings.Repeat("x", 24), strings.Repeat("y", 300), strings.Repeat("y", 299) + "z"}
			for i := range n {
				words = append(words, fmt.Sprintf("U%02d:w%d", i%23, i), fmt.Sprintf("U%02d:a-rather-long-name/%d", i%23, i))
			}
			d := NewDict(0)
			for _, w := range words {
				d.Add(w)
			}
			ends, arena, table := d.Flat()
			wide := d.Wide()
			e, err := DictFromFlat(ends, arena, table)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.WithWide(wide); err != nil {
				t.Fatal(err)
			}
			var keys [][]byte
			for _, w := range words {
				keys = append(keys, []byte(w), []byte(w+"!"))
				if len(w) > 0 {
					keys = append(keys, []byte(w[:len(w)-1]+"?"))
				}
			}
			got, want := make([]int32, len(keys)), make([]int32, len(keys))
			e.LookupBytesAll(got, keys)
			for i, k := range keys {
				id, ok := d.LookupBytes(k)
				if !ok {
					id = -1
				}
				want[i] = id
			}
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("key %q: %d through the wide table, %d through the plain one", keys[i], got[i], want[i])
					}
				}
			}
			if a := testing.AllocsPerRun(5, func() { e.LookupBytesAll(got, keys) }); a != 0 {
				t.Errorf("%v allocations", a)
			}
			// Add drops the wide table; lookups stay right.
			f, _ := DictFromFlat(slices.Clone(ends), slices.Clone(arena), slices.Clone(table))
			if err := f.WithWide(slices.Clone(wide)); err != nil {
				t.Fatal(err)
			}
			id, _ := f.Add("new")
			f.LookupBytesAll(got[:2], [][]byte{[]byte("new"), []byte(words[5])})
			if got[0] != id || got[1] != 5 || f.wide != nil {
				t.Errorf("after Add: %v (want %d, 5), wide table kept: %v", got[:2], id, f.wide != nil)
			}
		})
	}
}

func TestWithWideChecks(t *testing.T) {
	d := NewDict(0)
	for i := range 100 {
		d.Add(fmt.Sprint("w", i))
	}
	wide := d.Wide()
	if err := d.WithWide(wide[:len(wide)-wideSlot]); err == nil {
		t.Error("a wide table a slot short attached")
	}
	for i := 0; i < len(wide); i += wideSlot {
		if binary.LittleEndian.Uint64(wide[i:]) != 0 {
			bad := slices.Clone(wide)
			bad[i] ^= 1
			if err := d.WithWide(bad); err == nil || !strings.Contains(err.Error(), "slot") {
				t.Errorf("a wide table with slot %d changed: %v", i/wideSlot, err)
			}
			break
		}
	}
	var empty Dict
	if err := empty.WithWide(nil); err == nil {
		t.Error("a wide table attached to a Dict without a table")
	}
	if err := d.WithWide(wide); err != nil {
		t.Error(err)
	}
}
