package sparse

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// The wide table of a Dict: its hash table again, slot for slot, each slot
// widened to 32 bytes that also hold the length of the slot's string and
// its first wideInline bytes:
//
//	bytes 0–7    the slot, little-endian (tag<<32 | id+1; 0 for a free slot)
//	byte  8      the string's length, or 255 for 255 bytes or more
//	bytes 9–31   its first bytes (up to 23), zero after its end
//
// A lookup then settles a key of up to 23 bytes (98 % of CoNLL-2000
// chunking's attribute names) in the slot it probes, one cache line, where
// the plain table needs the string's end offsets and bytes too, two more
// cache misses that depend on the first. A model file stores it (section
// 32, one a reader may skip); it is four times the plain table's size.
const (
	wideSlot   = 32 // bytes per wide slot
	wideInline = 23 // string bytes held in a wide slot
	wideLong   = 255
)

// Wide returns the wide table of d (see above; the slot words
// little-endian on every host), for storing it beside Flat's arrays and
// attaching it again with WithWide. It is built afresh each call.
func (d *Dict) Wide() []byte {
	_, _, table := d.Flat()
	w := make([]byte, wideSlot*len(table))
	for i, e := range table {
		if e == 0 {
			continue
		}
		b := w[wideSlot*i : wideSlot*(i+1)]
		binary.LittleEndian.PutUint64(b, e)
		s := d.str(int32(uint32(e) - 1))
		b[8] = byte(min(len(s), wideLong))
		copy(b[9:], s)
	}
	return w
}

// WithWide attaches a wide table (from Wide) to d, used in place for
// LookupBytesAll; the caller must not modify it afterwards. It must hold d's
// slots as they are, slot for slot, which it checks (so that a lookup
// through it finds only ids d has, and ends at a free slot); a wide table
// whose lengths or bytes disagree with d's strings makes lookups miss or
// find the wrong id (a checksum is the guard against that), never read
// outside d. Add drops it.
func (d *Dict) WithWide(w []byte) error {
	if d.cq != nil {
		return fmt.Errorf("sparse: a wide table over a CQDB")
	}
	if d.slots == nil || len(w) != wideSlot*len(d.slots) {
		return fmt.Errorf("sparse: wide table of %d bytes for a table of %d slots", len(w), len(d.slots))
	}
	for i, e := range d.slots {
		if got := binary.LittleEndian.Uint64(w[wideSlot*i:]); got != e {
			return fmt.Errorf("sparse: wide table: slot %d holds %#x, the table %#x", i, got, e)
		}
	}
	d.wide = w[:len(w):len(w)]
	return nil
}

// lookupWide is LookupBytesAll through the wide table: a pass that hashes a
// batch of keys and loads their home slots (overlapping the cache misses),
// then one that settles each key in its home slot when it can.
func (d *Dict) lookupWide(ids []int32, keys [][]byte) {
	var hs, es [lookupBatch]uint64
	w := d.wide
	for base := 0; base < len(keys); base += lookupBatch {
		n := min(lookupBatch, len(keys)-base)
		batch := keys[base : base+n]
		for i, k := range batch {
			h := hashString(unsafe.String(unsafe.SliceData(k), len(k)))
			hs[i], es[i] = h, binary.LittleEndian.Uint64(w[wideSlot*(h&d.mask):])
		}
		for i, k := range batch {
			e := es[i]
			if e == 0 {
				ids[base+i] = -1
				continue
			}
			if e>>32 == hs[i]>>32 && len(k) <= wideInline {
				if b := w[wideSlot*(hs[i]&d.mask)+8:]; int(b[0]) == len(k) && string(b[1:1+len(k)]) == string(k) {
					ids[base+i] = int32(uint32(e) - 1)
					continue
				}
			}
			ids[base+i] = d.resolveWide(k, hs[i])
		}
	}
}

// resolveWide looks key (hash h) up in the wide table, probing from its
// home slot; a string longer than a slot holds is compared with d's own
// bytes.
func (d *Dict) resolveWide(key []byte, h uint64) int32 {
	tag := h >> 32
	w := d.wide
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		b := w[wideSlot*i : wideSlot*(i+1)]
		e := binary.LittleEndian.Uint64(b)
		if e == 0 {
			return -1
		}
		if e>>32 != tag || int(b[8]) != min(len(key), wideLong) {
			continue
		}
		if len(key) <= wideInline {
			if string(b[9:9+len(key)]) == string(key) {
				return int32(uint32(e) - 1)
			}
			continue
		}
		id := int32(uint32(e) - 1)
		if string(b[9:]) == string(key[:wideInline]) && d.str(id) == string(key) {
			return id
		}
	}
}
