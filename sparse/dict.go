package sparse

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// Dict maps strings (attribute or label names) to dense int32 ids 0, 1, 2, …
// in order of first insertion, and back.
//
// It is built to stay lean with millions of strings: the bytes of all
// strings live in one arena, each string costs one uint32 end offset, and the
// hash table is an open-addressing array of 8-byte slots (a 32-bit hash tag
// and the id) kept at most 3/4 full. Strings are never copied out: String
// returns a view of the arena. The hash is deterministic (it does not depend
// on the process), although ids depend only on the order of insertion anyway.
//
// Limits: at most 2³¹−1 strings and 4 GiB of string bytes in total; Add
// panics beyond them.
//
// A Dict is not safe for concurrent Add; concurrent Lookup and String are
// fine when nothing is added.
type Dict struct {
	arena []byte
	ends  []uint32 // ends[i] is the end of string i in arena; it starts at ends[i-1] (or 0)
	slots []uint64 // 0 = empty, else tag<<32 | (id+1)
	mask  uint64
	// borrowed: the arrays belong to the caller of DictFromFlat; Add
	// copies them before it changes anything.
	borrowed bool
	// cq, if not nil, holds the strings instead (DictFromCQDB); the
	// arrays above are then empty.
	cq *cqdb
	// front, if not nil, is the front table of the first ids (front.go).
	front     []uint64
	frontMask uint64
}

// Own returns a Dict that holds its strings itself: d, unless d is over a
// CQDB chunk (DictFromCQDB), and then a new Dict with copies of its strings
// and ids, and an error if a string repeats (a damaged CQDB may hold one
// twice; a Dict cannot).
func (d *Dict) Own() (*Dict, error) {
	if d.cq == nil {
		return d, nil
	}
	n := d.cq.n
	size := 0
	for id := range int32(n) {
		size += len(d.cq.str(id))
	}
	if uint64(size) > math.MaxUint32 {
		return nil, fmt.Errorf("sparse: Dict strings exceed 4 GiB")
	}
	arena := make([]byte, 0, size)
	ends := make([]uint32, n)
	for id := range int32(n) {
		arena = append(arena, d.cq.str(id)...)
		ends[id] = uint32(len(arena))
	}
	return DictFromStrings(ends, arena)
}

// own makes d hold its strings itself (for the methods that change or
// expose its arrays); a repeated string panics.
func (d *Dict) own() {
	if d.cq == nil {
		return
	}
	nd, err := d.Own()
	if err != nil {
		panic(err)
	}
	*d = *nd
}

// get is String without the range check, for a CQDB too.
func (d *Dict) get(id int32) string {
	if d.cq != nil {
		return d.cq.str(id)
	}
	return d.str(id)
}

// NewDict returns an empty Dict with room for about n strings before its
// table has to grow.
func NewDict(n int) *Dict {
	d := &Dict{}
	d.ends = make([]uint32, 0, max(n, 0))
	d.resize(tableSize(n))
	return d
}

// tableSize returns the smallest power of two ≥ 16 whose 3/4 holds n.
func tableSize(n int) int {
	size := 16
	for size/4*3 < n {
		size *= 2
	}
	return size
}

func (d *Dict) resize(size int) {
	old := d.slots
	d.slots = make([]uint64, size)
	adviseHuge(d.slots)
	d.mask = uint64(size - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		id := uint32(e) - 1
		h := hashString(d.str(int32(id)))
		i := h & d.mask
		for d.slots[i] != 0 {
			i = (i + 1) & d.mask
		}
		d.slots[i] = e
	}
}

// Len returns the number of strings.
func (d *Dict) Len() int {
	if d.cq != nil {
		return d.cq.n
	}
	return len(d.ends)
}

func (d *Dict) str(id int32) string {
	lo := uint32(0)
	if id > 0 {
		lo = d.ends[id-1]
	}
	hi := d.ends[id]
	if hi == lo {
		return ""
	}
	return unsafe.String(&d.arena[lo], int(hi-lo))
}

// String returns the string with the given id. It panics if id is not in
// [0, Len()). The result shares memory with the Dict (it is never modified).
func (d *Dict) String(id int32) string {
	if id < 0 || int(id) >= d.Len() {
		panic(fmt.Sprintf("sparse: Dict.String: id %d out of range [0,%d)", id, d.Len()))
	}
	return d.get(id)
}

// Lookup returns the id of s and whether s is in the Dict.
func (d *Dict) Lookup(s string) (id int32, ok bool) {
	if d.cq != nil {
		var ids [1]int32
		keys := [1][]byte{unsafe.Slice(unsafe.StringData(s), len(s))}
		d.cq.LookupBytesAll(ids[:], keys[:])
		return ids[0], ids[0] >= 0
	}
	if d.slots == nil {
		return -1, false
	}
	h := hashString(s)
	id = d.resolve(s, h, d.slots[h&d.mask])
	return id, id >= 0
}

// LookupBytes is Lookup for a byte slice (it does not allocate).
func (d *Dict) LookupBytes(b []byte) (id int32, ok bool) {
	return d.Lookup(unsafe.String(unsafe.SliceData(b), len(b)))
}

// Add returns the id of s, adding s with the next id (Len() before the call)
// if it is not there yet; added reports whether it was.
func (d *Dict) Add(s string) (id int32, added bool) {
	d.own()
	if d.slots == nil {
		d.resize(16)
	}
	if d.borrowed {
		d.arena, d.ends, d.slots = slices.Clone(d.arena), slices.Clone(d.ends), slices.Clone(d.slots)
		d.borrowed = false
	}
	h := hashString(s)
	tag := h >> 32
	i := h & d.mask
	for ; ; i = (i + 1) & d.mask {
		e := d.slots[i]
		if e == 0 {
			break
		}
		if e>>32 == tag {
			id := int32(uint32(e) - 1)
			if d.str(id) == s {
				return id, false
			}
		}
	}
	n := len(d.ends)
	if n >= math.MaxInt32 {
		panic("sparse: Dict holds 2³¹−1 strings already")
	}
	if uint64(len(d.arena))+uint64(len(s)) > math.MaxUint32 {
		panic("sparse: Dict strings exceed 4 GiB")
	}
	d.arena = appendHuge(d.arena, len(s))
	d.arena = append(d.arena, s...)
	d.ends = appendHuge(d.ends, 1)
	d.ends = append(d.ends, uint32(len(d.arena)))
	d.slots[i] = tag<<32 | uint64(n+1)
	if (n+1)*4 > len(d.slots)*3 {
		d.resize(len(d.slots) * 2)
	}
	return int32(n), true
}

// AddBytes is Add for a byte slice (the bytes are copied if added).
func (d *Dict) AddBytes(b []byte) (id int32, added bool) {
	return d.Add(unsafe.String(unsafe.SliceData(b), len(b)))
}

// MemoryBytes returns the bytes the Dict's arrays occupy (their capacities),
// excluding the small Dict header (for a Dict over a CQDB chunk: only its
// copy of the chunk's hash tables).
func (d *Dict) MemoryBytes() int64 {
	if d.cq != nil {
		return 8 * int64(cap(d.cq.buckets))
	}
	return int64(cap(d.arena)) + 4*int64(cap(d.ends)) + 8*int64(cap(d.slots))
}

// Reorder returns a new Dict holding the strings of d in the order given:
// new id k is the string with old id order[k]. order may leave ids out (they
// are dropped). It also returns the map from old ids to new ones (-1 for
// dropped ids), which Corpus.Remap applies to sequences. The arena of the
// new Dict is laid out in the new order, so it is compact even when d is not.
// It is an error for order to hold an id twice or one outside [0, Len()).
func (d *Dict) Reorder(order []int32) (*Dict, []int32, error) {
	d, err := d.Own() // (a repeated string would make Add below merge two ids)
	if err != nil {
		return nil, nil, err
	}
	oldToNew := make([]int32, len(d.ends))
	for i := range oldToNew {
		oldToNew[i] = -1
	}
	size := 0
	for k, id := range order {
		if id < 0 || int(id) >= len(d.ends) {
			return nil, nil, fmt.Errorf("sparse: Dict.Reorder: id %d out of range [0,%d)", id, len(d.ends))
		}
		if oldToNew[id] >= 0 {
			return nil, nil, fmt.Errorf("sparse: Dict.Reorder: id %d appears twice", id)
		}
		oldToNew[id] = int32(k)
		size += len(d.str(id))
	}
	nd := NewDict(len(order))
	nd.arena = make([]byte, 0, size)
	for _, id := range order {
		nd.Add(d.str(id))
	}
	return nd, oldToNew, nil
}

// FrequencyOrder returns the ids 0 … len(counts)−1 sorted by decreasing
// count, ties by increasing id, leaving out ids whose count is below
// minCount. Passed to Dict.Reorder and Corpus.Remap, it gives the most
// frequent attributes the smallest ids, so that their weight rows share
// cache lines and pages.
func FrequencyOrder(counts []int64, minCount int64) []int32 {
	order := make([]int32, 0, len(counts))
	for id, c := range counts {
		if c >= minCount {
			order = append(order, int32(id))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		ca, cb := counts[a], counts[b]
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	return order
}

// appendHuge makes room for n more elements in x, one of the Dict's big
// arrays: when it has to grow x it does so by 1.5× into memory advised for
// huge pages (a lookup touches random lines of them, and with 4 KiB pages
// also misses the TLB).
func appendHuge[E any](x []E, n int) []E {
	if need := len(x) + n; need > cap(x) {
		y := make([]E, len(x), max(need, cap(x)+cap(x)/2, 64))
		adviseHuge(y[:cap(y)])
		copy(y, x)
		x = y
	}
	return x
}

// hashString is the Dict's hash function (a variable so that tests can force
// collisions).
// hashString is hash64, or testHash when a test sets it (to exercise the
// probe loop with colliding hashes); a direct call, not through a
// function variable, which cost a few ns of every lookup.
func hashString(s string) uint64 {
	if testHash != nil {
		return testHash(s)
	}
	return hash64(s)
}

var testHash func(string) uint64

const (
	hk0 = 0xa0761d6478bd642f
	hk1 = 0xe7037ed1a0b428db
	hk2 = 0x8ebc6af09c88c6e3
	hk3 = 0x589965cc75374cc3
)

func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// hash64 is a deterministic 64-bit string hash in the style of wyhash: 8
// bytes per 64×64→128-bit multiply, so about 1 ns per 8 bytes. It is the
// same on every platform and in every process.
func hash64(s string) uint64 {
	h := uint64(len(s)) ^ hk0
	p := unsafe.Slice(unsafe.StringData(s), len(s))
	n := len(p)
	for len(p) > 8 {
		h = mum(binary.LittleEndian.Uint64(p)^hk1, h^hk2)
		p = p[8:]
	}
	// v is the last 1 to 8 bytes, little-endian, zero-extended. Loads that
	// overlap bytes already hashed (within the string) replace a loop of
	// up to seven byte steps: the same value, read in one or two loads.
	var v uint64
	switch r := len(p); {
	case r == 8:
		v = binary.LittleEndian.Uint64(p)
	case n >= 8: // the 8 bytes ending at the string's end, shifted down
		full := unsafe.Slice(unsafe.StringData(s), n)
		v = binary.LittleEndian.Uint64(full[n-8:]) >> (8 * (8 - r))
	case r >= 4:
		v = uint64(binary.LittleEndian.Uint32(p)) | uint64(binary.LittleEndian.Uint32(p[r-4:]))<<(8*(r-4))
	case r > 0:
		v = uint64(p[0]) | uint64(p[r/2])<<(8*(r/2)) | uint64(p[r-1])<<(8*(r-1))
	}
	h = mum(v^hk1, h^hk3)
	return mum(h^hk0, hk2)
}

// AppendBinary appends the encoding of d to b: the number of strings, then
// each string's length and bytes, in id order (uvarint lengths). The
// encoding depends only on the strings and their order. It implements
// encoding.BinaryAppender.
func (d *Dict) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(d.Len()))
	for id := range int32(d.Len()) {
		s := d.get(id)
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// Flat returns d's arrays, for storing them and getting d back with
// DictFromFlat without rebuilding its hash table: the end offset of each
// string in arena, the bytes of all strings, and the table. They are views,
// not to be modified. The table's layout depends only on the strings and
// their order, on every platform (the hash is fixed). A Dict over a CQDB
// chunk first holds its strings itself (Own; Flat panics if one repeats).
func (d *Dict) Flat() (ends []uint32, arena []byte, table []uint64) {
	d.own()
	if d.slots == nil {
		d.resize(16)
	}
	return d.ends, d.arena, d.slots
}

// checkEnds checks that ends are the non-decreasing ends of strings that
// fill arena; count and what prefix the errors' wording.
func checkEnds(ends []uint32, arena []byte, count, what string) error {
	if n := len(ends); n >= math.MaxInt32 {
		return fmt.Errorf("sparse: %s%d strings", count, n)
	}
	prev := uint32(0)
	for i, e := range ends {
		if e < prev {
			return fmt.Errorf("sparse: %sstring %d ends before string %d", what, i, i-1)
		}
		prev = e
	}
	if uint64(prev) != uint64(len(arena)) {
		return fmt.Errorf("sparse: %sstrings end at %d, arena has %d bytes", what, prev, len(arena))
	}
	return nil
}

// DictFromFlat returns the Dict whose Flat arrays are given, using them in
// place (a model file's attribute dictionary loads without hashing its
// strings). The caller must not modify them afterwards; Add works on
// copies. It checks what a lookup relies on, so that damaged arrays give
// an error rather than a crash or an endless probe: the ends ascend to
// len(arena), the table's size is a power of two with a free slot, and it
// holds every id exactly once. (A table whose entries sit in the wrong
// slots makes lookups miss; a checksum is the guard against that.)
func DictFromFlat(ends []uint32, arena []byte, table []uint64) (*Dict, error) {
	n := len(ends)
	if err := checkEnds(ends, arena, "flat Dict of ", "flat Dict: "); err != nil {
		return nil, err
	}
	size := len(table)
	if size < 16 || size&(size-1) != 0 || n >= size {
		return nil, fmt.Errorf("sparse: flat Dict: table of %d slots for %d strings", size, n)
	}
	seen := make([]uint64, (n+63)/64)
	count := 0
	for _, e := range table {
		if e == 0 {
			continue
		}
		id := uint32(e) - 1
		if uint64(id) >= uint64(n) || seen[id/64]&(1<<(id%64)) != 0 {
			return nil, fmt.Errorf("sparse: flat Dict: table entry %#x is out of range or repeated", e)
		}
		seen[id/64] |= 1 << (id % 64)
		count++
	}
	if count != n {
		return nil, fmt.Errorf("sparse: flat Dict: table holds %d of %d strings", count, n)
	}
	d := &Dict{arena: arena[:len(arena):len(arena)], ends: ends[:n:n], slots: table[:size:size], mask: uint64(size - 1), borrowed: true}
	d.buildFront()
	return d, nil
}

// MarshalBinary returns the encoding of d (see AppendBinary).
func (d *Dict) MarshalBinary() ([]byte, error) {
	size := binary.MaxVarintLen64 + len(d.arena) + binary.MaxVarintLen64*d.Len() // (a guess over a CQDB)
	return d.AppendBinary(make([]byte, 0, size))
}

// UnmarshalBinary replaces the contents of d by the Dict that data encodes
// (see AppendBinary). It rejects truncated or trailing data and repeated
// strings.
func (d *Dict) UnmarshalBinary(data []byte) error {
	n, k := binary.Uvarint(data)
	if k <= 0 {
		return fmt.Errorf("sparse: Dict encoding: bad string count")
	}
	data = data[k:]
	// Each string takes at least one byte: a count beyond that is corrupt
	// (and must not size an allocation).
	if n > uint64(len(data)) || n > math.MaxInt32 {
		return fmt.Errorf("sparse: Dict encoding: %d strings in %d bytes", n, len(data))
	}
	// The strings into the arena, then the table (fill).
	nd := &Dict{arena: make([]byte, 0, len(data)), ends: make([]uint32, 0, n)}
	for i := range n {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) {
			return fmt.Errorf("sparse: Dict encoding: string %d is truncated", i)
		}
		nd.arena = append(nd.arena, data[k:k+int(l)]...)
		nd.ends = append(nd.ends, uint32(len(nd.arena)))
		data = data[k+int(l):]
	}
	if len(data) != 0 {
		return fmt.Errorf("sparse: Dict encoding: %d bytes of trailing data", len(data))
	}
	if err := nd.fill(); err != nil {
		return fmt.Errorf("sparse: Dict encoding: %w", err)
	}
	*d = *nd
	return nil
}

// DictFromStrings returns the Dict of n strings laid end to end in arena,
// string i ending at ends[i] (as Flat returns them), with ids in that
// order. It builds the hash table as a decoded Dict does and rejects a
// repeated string. The Dict uses ends and arena in place: the caller must
// not modify them afterwards (Add works on copies).
func DictFromStrings(ends []uint32, arena []byte) (*Dict, error) {
	n := len(ends)
	if err := checkEnds(ends, arena, "", ""); err != nil {
		return nil, err
	}
	d := &Dict{arena: arena[:len(arena):len(arena)], ends: ends[:n:n], borrowed: true}
	if err := d.fill(); err != nil {
		return nil, fmt.Errorf("sparse: %w", err)
	}
	return d, nil
}

// fill builds the hash table of nd's strings in two cache-friendly
// passes: the hashes in id order, then the insertions in order of home slot
// (a counting sort), so that the table is written front to back instead of
// at random: decoding a model's 300k attribute names took 25 ms with one
// Add per string, mostly cache misses in the table.
func (nd *Dict) fill() error {
	n := len(nd.ends)
	size := tableSize(n)
	nd.slots = make([]uint64, size)
	adviseHuge(nd.slots)
	nd.mask = uint64(size - 1)
	hashes := make([]uint64, n)
	for id := range hashes {
		hashes[id] = hashString(nd.str(int32(id)))
	}
	// Bucket the ids by the top bits of their home slot.
	shift := uint(bits.Len64(nd.mask))
	const bucketBits = 12
	if shift > bucketBits {
		shift -= bucketBits
	} else {
		shift = 0
	}
	var count [1<<bucketBits + 1]int32
	for _, h := range hashes {
		count[(h&nd.mask)>>shift+1]++
	}
	for b := 1; b < len(count); b++ {
		count[b] += count[b-1]
	}
	order := make([]int32, n)
	for id, h := range hashes {
		b := (h & nd.mask) >> shift
		order[count[b]] = int32(id)
		count[b]++
	}
	for _, id := range order {
		h := hashes[id]
		tag := h >> 32
		i := h & nd.mask
		for ; ; i = (i + 1) & nd.mask {
			e := nd.slots[i]
			if e == 0 {
				break
			}
			if e>>32 == tag && nd.str(int32(uint32(e)-1)) == nd.str(id) {
				a, b := int32(uint32(e)-1), id
				if a > b {
					a, b = b, a
				}
				str := nd.str(b)
				if len(str) > 64 { // (a damaged file's string may be long)
					return fmt.Errorf("string %d (%q…, %d bytes) repeats an earlier one", b, str[:64], len(str))
				}
				return fmt.Errorf("string %d (%q) repeats an earlier one", b, str)
			}
		}
		nd.slots[i] = tag<<32 | uint64(id+1)
	}
	return nil
}

// lookupBatch is how many keys LookupBytesAll looks up together.
const lookupBatch = 32

// LookupBytesAll sets ids[i] to the id of keys[i], or -1 when d does not
// hold it (len(ids) ≥ len(keys)). It hashes a batch of keys and loads
// their home slots before it compares any string, so that the cache misses
// of a large Dict overlap instead of following one another: a tagger looks
// up every attribute of every item. (Going on in passes, the home
// candidates' string bounds, then their first bytes, then the compares,
// was slower on CoNLL-2000's test file: 136 against 95 ms of CPU for the
// tag run up to encoding, 183 against 118 ns a key in a loop.)
func (d *Dict) LookupBytesAll(ids []int32, keys [][]byte) {
	if d.front != nil {
		d.lookupFront(ids[:len(keys)], keys)
		return
	}
	if d.cq != nil {
		d.cq.LookupBytesAll(ids, keys)
		return
	}
	ids = ids[:len(keys)]
	if d.slots == nil {
		for i := range ids {
			ids[i] = -1
		}
		return
	}
	var hs, es [lookupBatch]uint64
	for base := 0; base < len(keys); base += lookupBatch {
		n := min(lookupBatch, len(keys)-base)
		for i := range n {
			k := keys[base+i]
			h := hashString(unsafe.String(unsafe.SliceData(k), len(k)))
			hs[i] = h
			es[i] = d.slots[h&d.mask]
		}
		for i := range n {
			k := keys[base+i]
			ids[base+i] = d.resolve(unsafe.String(unsafe.SliceData(k), len(k)), hs[i], es[i])
		}
	}
}

// resolve finishes a lookup of s with hash h whose home slot holds e: the
// probe loop shared by Lookup and LookupBytesAll.
func (d *Dict) resolve(s string, h, e uint64) int32 {
	tag := h >> 32
	for i := h & d.mask; ; {
		if e == 0 {
			return -1
		}
		if e>>32 == tag {
			id := int32(uint32(e) - 1)
			if d.str(id) == s {
				return id
			}
		}
		i = (i + 1) & d.mask
		e = d.slots[i]
	}
}
