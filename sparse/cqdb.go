package sparse

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// CQDB is the constant string database of CRFsuite's model files (its
// lib/cqdb): a CRFsuite model's label and attribute dictionaries are each
// one CQDB chunk. DictFromCQDB uses one in place; AppendCQDB writes one.
// Offsets within a chunk count from the chunk's start.
//
//	offset 0     "CQDB", uint32 chunk size, uint32 flag (0), uint32
//	             byte-order mark 0x62445371, uint32 number of ids, uint32
//	             offset of the id → record array (0: none)
//	offset 24    256 table references: uint32 offset (0: empty table),
//	             uint32 number of buckets (twice the table's keys)
//	offset 2072  the records, one per string: uint32 id, uint32 size, then
//	             size bytes, the string and a NUL
//
// then the tables, each an array of buckets (uint32 hash, uint32 record
// offset, 0 for a free bucket), then the id → record array. A string's
// hash h is Bob Jenkins' lookup3 hashlittle over its bytes and the NUL,
// with seed 0; it lives in table h mod 256, in the first free bucket from
// (h >> 8) mod buckets on (linear probing).
const (
	cqdbMagic     = "CQDB"
	cqdbByteOrder = 0x62445371
	cqdbTables    = 256
	cqdbRecords   = 24 + 8*cqdbTables // offset of the first record
)

// cqdb is a CQDB chunk read in place: its strings are views of the chunk's
// bytes, found through the chunk's own hash tables, as CRFsuite finds them.
// It is safe for concurrent use.
type cqdb struct {
	b      []byte // the chunk
	n      int    // strings: ids 0 … n−1
	bwd    []byte // n uint32 record offsets, by id
	tables [cqdbTables]cqdbTable
	// buckets holds every table's buckets, copied into aligned memory
	// (hash | offset<<32).
	buckets []uint64
}

type cqdbTable struct {
	off, num uint32
	base     uint32 // index of its first bucket in cqdb.buckets
	div      uint64 // ⌊2⁶⁴/num⌋+1, for x mod num by multiplication (fastmod)
}

// mod returns x mod t.num (t.num > 0) without a division: the fraction
// x·div/2⁶⁴ keeps x/num's remainder in its high bits (Lemire, Kaser and
// Kurz, "Faster remainder by direct computation", 2019; exact for 32-bit x
// and num).
func (t *cqdbTable) mod(x uint32) uint32 {
	hi, _ := bits.Mul64(t.div*uint64(x), uint64(t.num))
	return uint32(hi)
}

// openCQDB checks the CQDB chunk at the start of b (which should hold n
// strings) and returns it. Every id's record must be well formed: within
// the chunk, holding that id and a NUL-terminated string (what CRFsuite's
// writer makes; CRFsuite itself checks none of it). The hash tables are
// checked for bounds only: a lookup checks each record it visits, so that
// damaged tables make lookups miss, as in CRFsuite, but never read outside
// the chunk or loop forever.
func openCQDB(b []byte, n int) (*cqdb, error) {
	le := binary.LittleEndian
	if len(b) < cqdbRecords {
		return nil, fmt.Errorf("truncated: %d bytes, shorter than its %d-byte header", len(b), cqdbRecords)
	}
	if string(b[:4]) != cqdbMagic {
		return nil, fmt.Errorf("chunk id %q, want %q", clipBytes(b[:4]), cqdbMagic)
	}
	if bo := le.Uint32(b[12:]); bo != cqdbByteOrder {
		return nil, fmt.Errorf("byte-order mark %#08x, want %#08x", bo, cqdbByteOrder)
	}
	size := le.Uint32(b[4:])
	if size < cqdbRecords || uint64(size) > uint64(len(b)) {
		return nil, fmt.Errorf("chunk size %d, with %d bytes left in the file", size, len(b))
	}
	b = b[:size]
	db := &cqdb{b: b, n: n}
	keys := uint64(0)
	for i := range db.tables {
		t := &db.tables[i]
		t.off, t.num = le.Uint32(b[24+8*i:]), le.Uint32(b[28+8*i:])
		if t.off == 0 {
			t.num = 0 // an empty table, whatever its size says (so CRFsuite)
			continue
		}
		if t.off < cqdbRecords || uint64(t.off)+8*uint64(t.num) > uint64(size) {
			return nil, fmt.Errorf("hash table %d (%d buckets at %d) is outside the chunk's %d bytes", i, t.num, t.off, size)
		}
		if t.num > 0 {
			t.div = ^uint64(0)/uint64(t.num) + 1
		}
		keys += uint64(t.num / 2)
	}
	if keys != uint64(n) {
		return nil, fmt.Errorf("hash tables for %d strings, want %d", keys, n)
	}
	count, bwd := le.Uint32(b[16:]), le.Uint32(b[20:])
	if n > 0 && bwd == 0 {
		return nil, fmt.Errorf("no id → string array")
	}
	if n > 0 && (uint64(count) < uint64(n) || bwd < cqdbRecords || uint64(bwd)+4*uint64(n) > uint64(size)) {
		return nil, fmt.Errorf("id → string array of %d entries at %d: want %d entries within the chunk's %d bytes", count, bwd, n, size)
	}
	if n > 0 {
		db.bwd = b[bwd : bwd+4*uint32(n)]
	}
	for id := range uint32(n) {
		off := le.Uint32(db.bwd[4*id:])
		if off < cqdbRecords || uint64(off)+8 > uint64(size) {
			return nil, fmt.Errorf("string %d: record offset %d is outside the chunk", id, off)
		}
		if got := le.Uint32(b[off:]); got != id {
			return nil, fmt.Errorf("string %d: its record at %d holds id %d", id, off, got)
		}
		k := le.Uint32(b[off+4:])
		if k == 0 || uint64(off)+8+uint64(k) > uint64(size) {
			return nil, fmt.Errorf("string %d: %d bytes at %d run past the chunk's end (%d)", id, k, off+8, size)
		}
		// (A NUL within would end the string for CRFsuite; that is
		// damage only the hash tables' misses would show, so not looked
		// for: it would double the time of this loop.)
		if s := b[off+8 : off+8+k]; s[k-1] != 0 {
			return nil, fmt.Errorf("string %d (%q) does not end in a NUL", id, clipBytes(s))
		}
	}
	// The buckets, 2n of them (the tables hold n strings, and the id
	// array's 4n bytes fit in the chunk), copied into aligned memory where
	// huge pages may back it: lookups in a large dictionary, two random
	// reads each, took 45 ms instead of 56 on CoNLL-2000's test file.
	total := 0
	for i := range db.tables {
		total += int(db.tables[i].num)
	}
	db.buckets = makeHugeU64(total)
	total = 0
	for i := range db.tables {
		t := &db.tables[i]
		t.base = uint32(total)
		src := b[t.off : t.off+8*t.num]
		dst := db.buckets[total : total+int(t.num)]
		for k := range dst {
			dst[k] = le.Uint64(src[8*k:])
		}
		total += int(t.num)
	}
	return db, nil
}

// str returns the string with the given id (in range: the caller checks).
func (db *cqdb) str(id int32) string {
	le := binary.LittleEndian
	off := le.Uint32(db.bwd[4*id:])
	k := le.Uint32(db.b[off+4:]) - 1
	if k == 0 {
		return ""
	}
	return unsafe.String(&db.b[off+8], int(k))
}

// cqdbBatch is how many keys LookupBytesAll hashes before it probes.
const cqdbBatch = 32

// LookupBytesAll sets ids[i] to the id of keys[i], or −1 when the database
// does not hold it, as CRFsuite's cqdb_to_id finds it. (A key with a NUL
// byte is not found; CRFsuite, reading C strings, would look up the part
// before the NUL.) It goes over a batch of keys in passes, so that the
// cache misses of a large dictionary overlap instead of following one
// another: it hashes them all, then loads their first buckets, then the
// size words of those buckets' records, and only then compares strings.
// (Loading each first bucket right after its key's hash left the lookups
// waiting on the buckets: out of order, the processor reached few of the
// next keys' loads past lookup3's arithmetic. simdcrf tag with CRFsuite's
// CoNLL-2000 chunking model, CPU time, GOMAXPROCS=1, median of 61 in
// turns at load average 7.5-8.4: 192 ms against 227, minimum 144 against
// 168; the labels and -r -p -i output are byte-identical. The quiet
// report of BENCHMARKS.md at bcafda8 showed no gain against CRFsuite: on a
// quiet machine the model stays in the L3 and the misses are cheap.)
func (db *cqdb) LookupBytesAll(ids []int32, keys [][]byte) {
	ids = ids[:len(keys)]
	var (
		hs    [cqdbBatch]uint32
		pos   [cqdbBatch]uint32
		first [cqdbBatch]uint64
		sizes [cqdbBatch]uint32
	)
	le := binary.LittleEndian
	b := db.b
	for base := 0; base < len(keys); base += cqdbBatch {
		n := min(cqdbBatch, len(keys)-base)
		for i := range n {
			h := hashlittle(keys[base+i])
			hs[i], pos[i] = h, noBucket
			if t := &db.tables[h%cqdbTables]; t.num != 0 {
				pos[i] = t.base + t.mod(h>>8)
			}
		}
		for i := range n {
			first[i] = 0
			if p := pos[i]; p != noBucket {
				first[i] = db.buckets[p]
			}
		}
		for i := range n {
			sizes[i] = 0 // (never a record's size: it counts the NUL)
			if off := first[i] >> 32; uint32(first[i]) == hs[i] && off+8 <= uint64(len(b)) {
				sizes[i] = le.Uint32(b[off+4:])
			}
		}
		for i := range n {
			ids[base+i] = db.resolve(keys[base+i], hs[i], first[i], sizes[i])
		}
	}
}

// noBucket marks a key whose table is empty.
const noBucket = ^uint32(0)

// resolve finishes the lookup of key, whose hash is h and whose first
// bucket holds e (hash in the low half, record offset in the high), the
// record there having size sz (0 if the bucket's hash is not h or its
// record lies outside the chunk): the first bucket of equal hash whose
// record holds key and a valid id, probing until a free bucket (or, in a
// damaged full table, all of them).
func (db *cqdb) resolve(key []byte, h uint32, e uint64, sz uint32) int32 {
	t := &db.tables[h%cqdbTables]
	if t.num == 0 {
		return -1
	}
	le := binary.LittleEndian
	b := db.b
	size := uint64(len(b))
	want := uint64(len(key)) + 1 // the record's size: the key and its NUL
	k := t.mod(h >> 8)
	for range t.num {
		off := e >> 32
		if off == 0 {
			return -1
		}
		if uint32(e) == h && off+8+want <= size && uint64(sz) == want {
			rec := b[off+8 : off+8+want]
			if string(rec[:len(key)]) == string(key) && rec[len(key)] == 0 {
				if id := le.Uint32(b[off:]); uint64(id) < uint64(db.n) {
					return int32(id)
				}
			}
		}
		if k++; k == t.num {
			k = 0
		}
		e, sz = db.buckets[t.base+k], 0
		if off := e >> 32; uint32(e) == h && off+8 <= size {
			sz = le.Uint32(b[off+4:])
		}
	}
	return -1
}

// hashlittle is lookup3's hashlittle(key, len(key)+1, 0): the hash of key
// followed by a NUL, as CQDB hashes strings.
func hashlittle(key []byte) uint32 {
	n := len(key) + 1
	a := 0xdeadbeef + uint32(n)
	b, c := a, a
	le := binary.LittleEndian
	// Whole blocks of 12 bytes while more than 12 remain: these never
	// reach the NUL.
	for n > 12 {
		a += le.Uint32(key)
		b += le.Uint32(key[4:])
		c += le.Uint32(key[8:])
		// mix
		a -= c
		a ^= bits.RotateLeft32(c, 4)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 6)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 8)
		b += a
		a -= c
		a ^= bits.RotateLeft32(c, 16)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 19)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 4)
		b += a
		key = key[12:]
		n -= 12
	}
	// The last 1 to 12 bytes, the NUL last (it adds nothing): each word
	// takes its bytes little-endian, a short one zero-extended.
	switch r := len(key); {
	case r >= 8:
		a += le.Uint32(key)
		b += le.Uint32(key[4:])
		c += short(key[8:])
	case r >= 4:
		a += le.Uint32(key)
		b += short(key[4:])
	default:
		a += short(key)
	}
	// final
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}

// short returns the 0 to 4 bytes of p as a little-endian number (three
// overlapping loads instead of a loop for 1 to 3 bytes).
func short(p []byte) uint32 {
	switch n := len(p); n {
	case 0:
		return 0
	case 4:
		return binary.LittleEndian.Uint32(p)
	default:
		return uint32(p[0]) | uint32(p[n/2])<<(8*(n/2)) | uint32(p[n-1])<<(8*(n-1))
	}
}

// clipBytes returns b for an error message: at most 64 bytes, then "…"
// and the length.
func clipBytes(b []byte) string {
	if len(b) <= 64 {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:64], len(b))
}

// makeHugeU64 is MakeBuffer for uint64s.
func makeHugeU64(n int) []uint64 {
	x := make([]uint64, n)
	adviseHuge(x)
	return x
}

// DictFromCQDB returns the Dict of the n strings of the CQDB chunk at the
// start of b (a CRFsuite model's dictionary: see the CQDB layout above),
// used in place: Len, String and the lookups read b, through the chunk's
// own hash tables (Bob Jenkins' lookup3, as CRFsuite looks strings up), so
// that a large dictionary costs next to nothing to open. The caller must
// not modify b afterwards. Every string's record is checked (within the
// chunk, its id, a terminating NUL); the hash tables only for bounds, so
// that damaged ones make lookups miss, as in CRFsuite, but never read
// outside the chunk or loop forever. The methods that need the Dict's own
// arrays (Add, AddBytes, Flat, Reorder) first copy the strings (see Own).
func DictFromCQDB(b []byte, n int) (*Dict, error) {
	if n < 0 || n >= math.MaxInt32 {
		return nil, fmt.Errorf("sparse: CQDB of %d strings", n)
	}
	db, err := openCQDB(b, n)
	if err != nil {
		return nil, fmt.Errorf("sparse: CQDB: %w", err)
	}
	// (No front table: a key it misses would be hashed twice, for it and
	// for the chunk's lookup3 tables; tagging with CRFsuite's chunking
	// model took 223 ms of CPU with one against 216 without.)
	return &Dict{cq: db}, nil
}

// AppendCQDB appends to b a CQDB chunk of the n strings str(0), …,
// str(n−1), with those ids, laid out byte for byte as CRFsuite's
// cqdb_writer lays it out: the records in id order, then each non-empty
// table's buckets (twice its strings), filled in id order, then the id
// array. The strings must not hold NUL bytes (CQDB's are C strings), and
// the chunk must stay below 4 GiB; AppendCQDB does not check.
func AppendCQDB(b []byte, n int, str func(id int) string) []byte {
	le := binary.LittleEndian
	begin := len(b)
	b = append(b, make([]byte, cqdbRecords)...)
	hash := make([]uint32, n)
	off := make([]uint32, n)
	var count [cqdbTables]int
	for id := range n {
		s := str(id)
		hash[id] = hashlittle(unsafe.Slice(unsafe.StringData(s), len(s)))
		off[id] = uint32(len(b) - begin)
		count[hash[id]%cqdbTables]++
		b = le.AppendUint32(b, uint32(id))
		b = le.AppendUint32(b, uint32(len(s)+1))
		b = append(b, s...)
		b = append(b, 0)
	}
	// The ids of each table, in order (a counting sort).
	var first [cqdbTables + 1]int
	for t := range cqdbTables {
		first[t+1] = first[t] + count[t]
	}
	next := first
	order := make([]int32, n)
	for id, h := range hash {
		t := h % cqdbTables
		order[next[t]] = int32(id)
		next[t]++
	}
	var buckets []uint64
	for t := range cqdbTables {
		if count[t] == 0 {
			continue
		}
		nb := uint32(2 * count[t])
		ref := b[begin+24+8*t:]
		le.PutUint32(ref, uint32(len(b)-begin))
		le.PutUint32(ref[4:], nb)
		buckets = append(buckets[:0], make([]uint64, nb)...)
		for _, id := range order[first[t]:first[t+1]] {
			k := (hash[id] >> 8) % nb
			for buckets[k] != 0 {
				if k++; k == nb {
					k = 0
				}
			}
			buckets[k] = uint64(off[id])<<32 | uint64(hash[id])
		}
		for _, e := range buckets {
			b = le.AppendUint64(b, e)
		}
	}
	bwd := 0
	if n > 0 {
		bwd = len(b) - begin
		for _, o := range off {
			b = le.AppendUint32(b, o)
		}
	}
	h := b[begin:]
	copy(h, cqdbMagic)
	le.PutUint32(h[4:], uint32(len(b)-begin))
	le.PutUint32(h[8:], 0)
	le.PutUint32(h[12:], cqdbByteOrder)
	le.PutUint32(h[16:], uint32(n))
	le.PutUint32(h[20:], uint32(bwd))
	return b
}
