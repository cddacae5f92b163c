package sparse

import (
	"fmt"
	"testing"
)

func TestLookupBytesAll(t *testing.T) {
	d := NewDict(0)
	var empty Dict
	for i := range 5000 {
		d.Add(fmt.Sprintf("attr%d", i*3))
	}
	var keys [][]byte
	for i := range 15000 {
		keys = append(keys, []byte(fmt.Sprintf("attr%d", i)))
	}
	keys = append(keys, nil, []byte{})
	ids := make([]int32, len(keys))
	for _, dd := range []*Dict{d, &empty} {
		dd.LookupBytesAll(ids, keys)
		for i, k := range keys {
			want, ok := dd.LookupBytes(k)
			if !ok {
				want = -1
			}
			if ids[i] != want {
				t.Fatalf("key %q: LookupBytesAll %d, LookupBytes %d", k, ids[i], want)
			}
		}
	}
	if n := testing.AllocsPerRun(10, func() { d.LookupBytesAll(ids, keys) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
