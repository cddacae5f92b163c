package sparse

import "unsafe"

// The front table of a large Dict: a small hash table of its first
// frontIDs strings (ids 0 … frontIDs−1), which LookupBytesAll probes
// before the Dict's own table. A model's attribute ids are in order of
// decreasing frequency in training (corpus.Loader), so that the front
// strings are the ones most looked up: on CoNLL-2000 chunking's test file
// 71.9 % of the 900k lookups are of its first 4,096 attributes. Their
// slots lie scattered over the full table's 4 MB, a cache miss each;
// the front table (64 KiB) and the first strings' bytes stay in the
// cache. (4,096 ids measured faster than 2,048, 8,192 and 16,384 in four
// runs in turns, by up to 10 %; the machine was too loaded to say more.) It is built when a large Dict is opened from a file's arrays
// (DictFromFlat), never changed afterwards (Add leaves it:
// the first ids keep their strings), so lookups stay safe for concurrent
// use.
const (
	frontIDs     = 4096
	frontMinDict = 4 * frontIDs // smaller Dicts stay in the cache anyway
)

// buildFront builds d's front table (see above) when d is large.
func (d *Dict) buildFront() {
	n := d.Len()
	if n < frontMinDict || d.cq != nil {
		return
	}
	// Only the ids the Dict's own lookup gives for their strings: a
	// damaged file may hold a string twice, and the front table must
	// answer as the Dict does.
	var (
		keys [lookupBatch][]byte
		got  [lookupBatch]int32
	)
	size := 2 * frontIDs // half full
	front := make([]uint64, size)
	mask := uint64(size - 1)
	for base := int32(0); base < frontIDs; base += lookupBatch {
		for i := range int32(lookupBatch) {
			s := d.get(base + i)
			keys[i] = unsafe.Slice(unsafe.StringData(s), len(s))
		}
		d.LookupBytesAll(got[:], keys[:])
		for i, k := range keys {
			id := base + int32(i)
			if got[i] != id {
				continue
			}
			h := hashString(unsafe.String(unsafe.SliceData(k), len(k)))
			j := h & mask
			for front[j] != 0 {
				j = (j + 1) & mask
			}
			front[j] = h>>32<<32 | uint64(id+1)
		}
	}
	d.front, d.frontMask = front, mask
}

// frontLookup returns the id of s (hash h) when the front table holds it,
// else −1.
func (d *Dict) frontLookup(s string, h uint64) int32 {
	tag := h >> 32
	for i := h & d.frontMask; ; i = (i + 1) & d.frontMask {
		e := d.front[i]
		if e == 0 {
			return -1
		}
		if e>>32 == tag {
			if id := int32(uint32(e) - 1); d.get(id) == s {
				return id
			}
		}
	}
}

// lookupFront is LookupBytesAll for a Dict with a front table: each batch
// of keys first through the front table, the others then through the
// Dict's own table, their home slots loaded together as LookupBytesAll
// loads them.
func (d *Dict) lookupFront(ids []int32, keys [][]byte) {
	var (
		hs, es [lookupBatch]uint64
		miss   [lookupBatch]int32
	)
	for base := 0; base < len(keys); base += lookupBatch {
		n := min(lookupBatch, len(keys)-base)
		m := 0
		for i, k := range keys[base : base+n] {
			s := unsafe.String(unsafe.SliceData(k), len(k))
			h := hashString(s)
			if id := d.frontLookup(s, h); id >= 0 {
				ids[base+i] = id
				continue
			}
			miss[m], hs[m] = int32(base+i), h
			m++
		}
		for j := range m {
			es[j] = d.slots[hs[j]&d.mask]
		}
		for j := range m {
			k := keys[miss[j]]
			ids[miss[j]] = d.resolve(unsafe.String(unsafe.SliceData(k), len(k)), hs[j], es[j])
		}
	}
}
