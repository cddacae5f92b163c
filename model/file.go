package model

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// Version is the file format version this package writes and the newest it
// reads.
const Version = 1

const (
	magic      = "\x89SIMDCRF"
	headerSize = 64
	entrySize  = 32
	align      = 64
	crcOffset  = 60
	maxSecs    = 1024
	shapeSize  = 64
	flagNeeded = 1 // section flag: a reader that does not know the kind must refuse the file
)

// Section kinds.
const (
	secMeta = 1 + iota
	secLabels
	secAttrs
	secShape
	secState
	secPatternPtr
	secPatternLabels
	secTrans
	secStart
	secEnd
	secExcPairs
	secExcScores
	// The attribute dictionary in place of secAttrs (since v1 files of
	// 2026-11-22): its string ends (uint32), bytes and hash table
	// (uint64), used in place on load instead of rebuilt.
	secAttrEnds
	secAttrArena
	secAttrTable
	secLast = secAttrTable
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// littleEndian reports whether the host stores numbers as the file does, so
// that arrays can be viewed in place. Tests clear it to exercise decoding.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

type section struct {
	kind uint32
	data []byte
}

// sections returns the model's sections, the float arrays as views of the
// model's memory on little-endian hosts.
func (m *Model) sections() ([]section, error) {
	meta, err := json.Marshal(m.Meta)
	if err != nil {
		return nil, fmt.Errorf("model: encoding metadata: %w", err)
	}
	labels, err := m.Labels.MarshalBinary()
	if err != nil {
		return nil, err
	}
	own, err := m.Attrs.Own() // (a CRFsuite model's is used in place)
	if err != nil {
		return nil, fmt.Errorf("model: attribute dictionary: %w", err)
	}
	ends, arena, table := own.Flat()
	var attrs []byte
	if testHookVarintAttrs {
		if attrs, err = own.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	M := m.Labels.Len()
	tr := m.Trans
	def, exc := tr.Exceptions()
	var shape [shapeSize]byte
	le := binary.LittleEndian
	le.PutUint32(shape[0:], uint32(m.State.Layout()))
	le.PutUint32(shape[4:], uint32(tr.Structure()))
	le.PutUint64(shape[8:], uint64(M))
	le.PutUint64(shape[16:], uint64(m.State.NumAttrs()))
	stride := M
	if d, ok := m.State.(*sparse.Dense); ok {
		stride = d.Stride()
	}
	le.PutUint64(shape[24:], uint64(stride))
	le.PutUint64(shape[32:], uint64(m.State.NumParams()))
	le.PutUint64(shape[40:], uint64(len(exc)))
	le.PutUint64(shape[48:], math.Float64bits(def))

	start, end := make([]float64, M), make([]float64, M)
	for j := range M {
		start[j], end[j] = tr.Start(j), tr.End(j)
	}
	secs := []section{
		{secMeta, meta},
		{secLabels, labels},
		{secAttrEnds, leBytes(ends)},
		{secAttrArena, arena},
		{secAttrTable, leBytes(table)},
		{secShape, shape[:]},
		{secState, leBytes(params(m.State))},
		{secStart, leBytes(start)},
		{secEnd, leBytes(end)},
	}
	if sp, ok := m.State.(*sparse.Sparse); ok {
		p := sp.Pattern()
		n := p.NumAttrs()
		ptr := make([]byte, 4*(n+1))
		lab := make([]byte, 0, 2*p.NumPairs())
		var row []int32
		for a := range int32(n) {
			le.PutUint32(ptr[4*a:], uint32(p.RowStart(a)))
			row = p.AttrLabels(row[:0], a)
			for _, j := range row {
				lab = le.AppendUint16(lab, uint16(j))
			}
		}
		le.PutUint32(ptr[4*n:], uint32(p.NumPairs()))
		secs = append(secs, section{secPatternPtr, ptr}, section{secPatternLabels, lab})
	}
	if testHookVarintAttrs { // the older files' attribute section
		secs = slices.DeleteFunc(secs, func(s section) bool {
			return s.kind == secAttrEnds || s.kind == secAttrArena || s.kind == secAttrTable
		})
		secs = append(secs, section{secAttrs, attrs})
	}
	if tr.Structure() == engine.Tied {
		pairs := make([]byte, 0, 8*len(exc))
		scores := make([]float64, len(exc))
		for k, e := range exc {
			pairs = le.AppendUint32(pairs, uint32(e.From))
			pairs = le.AppendUint32(pairs, uint32(e.To))
			scores[k] = e.Score
		}
		secs = append(secs, section{secExcPairs, pairs}, section{secExcScores, leBytes(scores)})
	} else {
		score := make([]float64, M*M)
		for i := range M {
			for j := range M {
				score[i*M+j] = tr.Score(i, j)
			}
		}
		secs = append(secs, section{secTrans, leBytes(score)})
	}
	lex, err := m.lexiconSections()
	if err != nil {
		return nil, err
	}
	secs = append(secs, m.subSection()...)
	secs = append(secs, m.pruneSection()...)
	secs = append(secs, m.trigramSections()...)
	gsecs, err := m.guesserSection()
	if err != nil {
		return nil, err
	}
	secs = append(secs, gsecs...)
	bsecs, err := m.bigramSections()
	if err != nil {
		return nil, err
	}
	secs = append(secs, bsecs...)
	return append(secs, lex...), nil
}

// word is the element types of the file's arrays.
type word interface {
	~uint16 | ~uint32 | ~int32 | ~uint64 | ~float64
}

// leBytes returns v's bytes in little-endian order: a view on
// little-endian hosts, an encoded copy elsewhere.
func leBytes[T word](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	size := int(unsafe.Sizeof(v[0]))
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), size*len(v))
	}
	b := make([]byte, size*len(v))
	for i := range v {
		p := unsafe.Pointer(&v[i])
		switch size {
		case 2:
			binary.LittleEndian.PutUint16(b[2*i:], *(*uint16)(p))
		case 4:
			binary.LittleEndian.PutUint32(b[4*i:], *(*uint32)(p))
		default:
			binary.LittleEndian.PutUint64(b[8*i:], *(*uint64)(p))
		}
	}
	return b
}

// view returns b (a whole number of elements) as a []T: a view on
// little-endian hosts when b is aligned for T (sections of an aligned
// buffer are), a decoded copy elsewhere.
func view[T word](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return []T{}
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	}
	v := make([]T, n)
	for i := range v {
		p := unsafe.Pointer(&v[i])
		switch size {
		case 2:
			*(*uint16)(p) = binary.LittleEndian.Uint16(b[2*i:])
		case 4:
			*(*uint32)(p) = binary.LittleEndian.Uint32(b[4*i:])
		default:
			*(*uint64)(p) = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return v
}

func padTo(n int64) int64 { return (n + align - 1) &^ (align - 1) }

var zeros [align]byte

// WriteTo writes the model in the file format to w. It computes the
// checksum in a first pass over the sections (which are views of the model
// on little-endian hosts), so it holds no second copy of the weights.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	if err := m.check(); err != nil {
		return 0, err
	}
	secs, err := m.sections()
	if err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	head := make([]byte, padTo(headerSize+entrySize*int64(len(secs))))
	copy(head, magic)
	le.PutUint32(head[8:], Version)
	le.PutUint32(head[12:], headerSize)
	le.PutUint32(head[24:], uint32(len(secs)))
	off := int64(len(head))
	offs := make([]int64, len(secs))
	for i, s := range secs {
		offs[i] = off
		e := head[headerSize+entrySize*i:]
		le.PutUint32(e[0:], s.kind)
		le.PutUint32(e[4:], flagNeeded)
		le.PutUint64(e[8:], uint64(off))
		le.PutUint64(e[16:], uint64(len(s.data)))
		off = padTo(off + int64(len(s.data)))
	}
	size := off
	le.PutUint64(head[16:], uint64(size))
	crc := crc32.Update(0, castagnoli, head[:crcOffset])
	crc = crc32.Update(crc, castagnoli, head[headerSize:])
	for i, s := range secs {
		crc = crc32.Update(crc, castagnoli, s.data)
		crc = crc32.Update(crc, castagnoli, zeros[:padTo(offs[i]+int64(len(s.data)))-offs[i]-int64(len(s.data))])
	}
	le.PutUint32(head[crcOffset:], crc)

	n, err := w.Write(head)
	written := int64(n)
	for i, s := range secs {
		if err != nil {
			break
		}
		if n, err = w.Write(s.data); err == nil {
			written += int64(n)
			pad := padTo(offs[i]+int64(len(s.data))) - offs[i] - int64(len(s.data))
			n, err = w.Write(zeros[:pad])
		}
		written += int64(n)
	}
	if err == nil && written != size {
		err = io.ErrShortWrite
	}
	return written, err
}

// testHookVarintAttrs makes sections write the attribute dictionary as
// older files have it (secAttrs), to test that they still load.
var testHookVarintAttrs bool

// testHookWriter, if set, wraps the temporary file's writer in WriteFile
// (to inject write errors).
var testHookWriter func(io.Writer) io.Writer

// WriteFile writes the model to path atomically: to a temporary file in the
// same directory, synced, then renamed over path. On any error the
// temporary file is removed and an existing file at path is left as it was.
func (m *Model) WriteFile(path string) error {
	return writeAtomic(path, func(w io.Writer) error {
		_, err := m.WriteTo(w)
		return err
	})
}

// writeAtomic writes a file at path with write, atomically (see WriteFile).
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("model: writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("model: writing %s: %w", path, err)
		}
	}()
	var w io.Writer = f
	if testHookWriter != nil {
		w = testHookWriter(f)
	}
	if err = write(w); err != nil {
		return err
	}
	// CreateTemp makes the file private (0600); a model is data like any
	// other output.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable; not every system can sync a
	// directory, and the model is complete either way.
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Load reads a model file written by WriteFile, or a CRFsuite model file
// (told apart by the magic number). The file is read once into a
// 64-byte-aligned buffer; on little-endian hosts the weight arrays are
// views of that buffer (a CRFsuite model's weights are copied out of it,
// its attribute dictionary used in place). A damaged, truncated or foreign
// file gets an error naming the file and the problem.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("model %s: not a regular file", path)
	}
	size := st.Size()
	if size < headerSize {
		// Read what there is, to tell a foreign file from a truncated one.
		b, _ := io.ReadAll(io.LimitReader(f, headerSize))
		return decode(path, b)
	}
	if size > math.MaxInt-align {
		return nil, fmt.Errorf("model %s: file too large (%d bytes)", path, size)
	}
	buf := alignedBuf(int(size))
	if _, err := io.ReadFull(f, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("model %s: file shrank while being read", path)
		}
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return decode(path, buf)
}

// Decode reads a model from the bytes of a model file, in simdcrf's format
// or CRFsuite's (told apart by the magic number), with Load's checks and
// errors; name stands for the file in messages. It copies data once into a
// 64-byte-aligned buffer the model then uses, so data may be reused. For
// model files that are not local files (object storage, say), where Load
// and Map cannot open them.
func Decode(name string, data []byte) (*Model, error) {
	buf := alignedBuf(len(data))
	copy(buf, data)
	return decode(name, buf)
}

// loadUnmapped is Map's answer where it reads the file instead: Load, and
// an unmap that does nothing.
func loadUnmapped(path string) (*Model, func() error, error) {
	m, err := Load(path)
	return m, func() error { return nil }, err
}

// alignedBuf returns n bytes starting at a 64-byte boundary, inside a
// []float64 allocation (which the garbage collector does not scan).
func alignedBuf(n int) []byte {
	// Huge pages where the system allows it: the tagger reads the tables
	// and weights at random, and with 4 KiB pages most reads also miss
	// the TLB.
	words := sparse.MakeBuffer((n + 2*align) / 8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 8*len(words))
	skip := (align - int(uintptr(unsafe.Pointer(&b[0]))%align)) % align
	return b[skip : skip+n : skip+n]
}

// formatError is a problem with the contents of a model file.
func formatError(path, format string, args ...any) error {
	return fmt.Errorf("model %s: %s", path, fmt.Sprintf(format, args...))
}

// decode parses a whole model file held in buf (64-byte aligned for the
// in-place views); name is for messages.
func decode(name string, buf []byte) (*Model, error) {
	bad := func(format string, args ...any) (*Model, error) {
		return nil, formatError(name, format, args...)
	}
	if len(buf) >= len(crfsuiteMagic) && string(buf[:len(crfsuiteMagic)]) == crfsuiteMagic {
		return decodeCRFsuite(name, buf)
	}
	if len(buf) < len(magic) || string(buf[:len(magic)]) != magic {
		switch {
		case len(buf) == 0:
			return bad("empty file, not a simdcrf model")
		case len(buf) < len(magic) && string(buf) == magic[:len(buf)]:
			return bad("truncated: %d bytes, shorter than the %d-byte header", len(buf), headerSize)
		case len(buf) >= len(magic) && string(buf[1:len(magic)]) == magic[1:]:
			return bad("damaged file header (bad first byte: transferred as text?)")
		}
		return bad("not a simdcrf model file (wrong magic number)")
	}
	if len(buf) < headerSize {
		return bad("truncated: %d bytes, shorter than the %d-byte header", len(buf), headerSize)
	}
	// The magic, version, file size and the checksum at offset 60 (over
	// everything else) keep their places in every version, so that damage
	// is told apart from a newer format.
	le := binary.LittleEndian
	if want := le.Uint64(buf[16:]); want != uint64(len(buf)) {
		if want > uint64(len(buf)) {
			return bad("truncated: %d bytes, the header says %d", len(buf), want)
		}
		return bad("%d bytes, but the header says %d (trailing data or a damaged header)", len(buf), want)
	}
	crc := crc32.Update(0, castagnoli, buf[:crcOffset])
	crc = crc32.Update(crc, castagnoli, buf[headerSize:])
	if stored := le.Uint32(buf[crcOffset:]); stored != crc {
		return bad("checksum mismatch (stored %08x, computed %08x): the file is damaged", stored, crc)
	}
	switch version := le.Uint32(buf[8:]); {
	case version == 0:
		return bad("bad format version 0")
	case version > Version:
		return bad("written in format version %d by a newer simdcrf; this one reads versions up to %d", version, Version)
	}
	if hs := le.Uint32(buf[12:]); hs != headerSize {
		return bad("damaged header: header size %d, want %d", hs, headerSize)
	}
	return parse(name, buf)
}

// parse decodes the sections of a file whose header and checksum are good.
// It still checks every offset, length and count, since a checksum only
// catches accidental damage.
func parse(name string, buf []byte) (*Model, error) {
	bad := func(format string, args ...any) (*Model, error) {
		return nil, formatError(name, format, args...)
	}
	le := binary.LittleEndian
	n := le.Uint32(buf[24:])
	if n > maxSecs || headerSize+entrySize*uint64(n) > uint64(len(buf)) {
		return bad("damaged header: %d sections", n)
	}
	secs := map[uint32][]byte{}
	for i := range uint64(n) {
		e := buf[headerSize+entrySize*i:]
		kind, flags, off, length := le.Uint32(e), le.Uint32(e[4:]), le.Uint64(e[8:]), le.Uint64(e[16:])
		if off%align != 0 || off < headerSize+entrySize*uint64(n) || off > uint64(len(buf)) || length > uint64(len(buf))-off {
			return bad("damaged section table: section %d (kind %d) at %d, %d bytes, in a file of %d bytes", i, kind, off, length, len(buf))
		}
		if _, dup := secs[kind]; dup {
			return bad("damaged section table: section kind %d twice", kind)
		}
		if (kind < secMeta || kind > secLast) && (kind < secLexFirst || kind > secLexLast) && kind != secPrune && kind != secPruner && kind != secPrunerSub &&
			(kind < secPruner1Rule || kind > secPruner1Sub) &&
			kind != secTrigrams && kind != secTrigramScores && kind != secGuesser &&
			(kind < secBigramFirst || kind > secBigramLast) {
			if flags&flagNeeded != 0 {
				return bad("needs section kind %d, unknown to this simdcrf (written by a newer one?)", kind)
			}
			continue
		}
		secs[kind] = buf[off : off+length]
	}
	need := func(kind uint32, what string) ([]byte, error) {
		b, ok := secs[kind]
		if !ok {
			return nil, formatError(name, "no %s section", what)
		}
		return b, nil
	}

	m := &Model{}
	b, err := need(secMeta, "metadata")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m.Meta); err != nil {
		return bad("bad metadata: %v", err)
	}
	if b, err = need(secLabels, "labels"); err != nil {
		return nil, err
	}
	m.Labels = &sparse.Dict{}
	if err := m.Labels.UnmarshalBinary(b); err != nil {
		return bad("bad label dictionary: %v", err)
	}
	if b, ok := secs[secAttrs]; ok { // the varint encoding of older files
		m.Attrs = &sparse.Dict{}
		if err := m.Attrs.UnmarshalBinary(b); err != nil {
			return bad("bad attribute dictionary: %v", err)
		}
	} else {
		eb, err := need(secAttrEnds, "attribute offsets")
		if err != nil {
			return nil, err
		}
		ab, err := need(secAttrArena, "attribute strings")
		if err != nil {
			return nil, err
		}
		tb, err := need(secAttrTable, "attribute table")
		if err != nil {
			return nil, err
		}
		if len(eb)%4 != 0 || len(tb)%8 != 0 {
			return bad("attribute sections have %d and %d bytes, not whole numbers of entries", len(eb), len(tb))
		}
		if m.Attrs, err = sparse.DictFromFlat(view[uint32](eb), ab, view[uint64](tb)); err != nil {
			return bad("bad attribute dictionary: %v", err)
		}
	}
	shape, err := need(secShape, "shape")
	if err != nil {
		return nil, err
	}
	if len(shape) != shapeSize {
		return bad("shape section has %d bytes, want %d", len(shape), shapeSize)
	}
	layout, structure := le.Uint32(shape), le.Uint32(shape[4:])
	M, numAttrs, stride, numParams := le.Uint64(shape[8:]), le.Uint64(shape[16:]), le.Uint64(shape[24:]), le.Uint64(shape[32:])
	numExc, def := le.Uint64(shape[40:]), math.Float64frombits(le.Uint64(shape[48:]))
	if M != uint64(m.Labels.Len()) || M < 1 || M > math.MaxInt32 {
		return bad("%d labels in the dictionary, %d in the shape", m.Labels.Len(), M)
	}
	if numAttrs != uint64(m.Attrs.Len()) {
		return bad("%d attributes in the dictionary, %d in the shape", m.Attrs.Len(), numAttrs)
	}

	// Arrays: each section's length must be exactly count·size.
	f64s := func(kind uint32, what string, count uint64) ([]float64, error) {
		b, err := need(kind, what)
		if err != nil {
			return nil, err
		}
		if count > uint64(len(buf))/8 || uint64(len(b)) != 8*count {
			return nil, formatError(name, "%s section has %d bytes, want %d values", what, len(b), count)
		}
		return view[float64](b), nil
	}
	w, err := f64s(secState, "state weights", numParams)
	if err != nil {
		return nil, err
	}
	switch sparse.Layout(layout) {
	case sparse.DenseRows:
		if hi, lo := bits.Mul64(numAttrs, stride); stride < M || stride > math.MaxInt32 || hi != 0 || lo != numParams {
			return bad("dense weights: %d attributes × stride %d ≠ %d parameters (%d labels)", numAttrs, stride, numParams, M)
		}
		if m.State, err = sparse.NewDenseStride(int(numAttrs), int(M), int(stride), w); err != nil {
			return bad("%v", err)
		}
	case sparse.SparseRows:
		if M > sparse.MaxSparseLabels {
			return bad("sparse weights with %d labels (at most %d)", M, sparse.MaxSparseLabels)
		}
		pb, err := need(secPatternPtr, "pattern offsets")
		if err != nil {
			return nil, err
		}
		lb, err := need(secPatternLabels, "pattern labels")
		if err != nil {
			return nil, err
		}
		if uint64(len(pb)) != 4*(numAttrs+1) || uint64(len(lb)) != 2*numParams {
			return bad("pattern sections have %d and %d bytes, want %d and %d", len(pb), len(lb), 4*(numAttrs+1), 2*numParams)
		}
		p, err := sparse.PatternView(int(M), view[int32](pb), view[uint16](lb))
		if err != nil {
			return bad("bad pattern: %v", err)
		}
		if uint64(p.NumPairs()) != numParams {
			return bad("pattern has %d pairs, want %d", p.NumPairs(), numParams)
		}
		if m.State, err = sparse.NewSparse(p, w); err != nil {
			return bad("%v", err)
		}
	default:
		return bad("unknown state layout %d", layout)
	}

	start, err := f64s(secStart, "start scores", M)
	if err != nil {
		return nil, err
	}
	end, err := f64s(secEnd, "end scores", M)
	if err != nil {
		return nil, err
	}
	switch engine.Structure(structure) {
	case engine.Dense:
		if M > uint64(len(buf))/8 {
			return bad("transition matrix of %d labels does not fit the file", M)
		}
		score, err := f64s(secTrans, "transitions", M*M)
		if err != nil {
			return nil, err
		}
		m.Trans, err = engine.NewTransitionsWith(int(M), score, start, end, engine.Options{Structure: engine.Dense})
		if err != nil {
			return bad("bad transitions: %v", err)
		}
	case engine.Tied:
		pairs, err := need(secExcPairs, "transition exceptions")
		if err != nil {
			return nil, err
		}
		if numExc > uint64(len(buf))/8 || uint64(len(pairs)) != 8*numExc {
			return bad("transition exceptions section has %d bytes, want %d exceptions", len(pairs), numExc)
		}
		scores, err := f64s(secExcScores, "transition exception scores", numExc)
		if err != nil {
			return nil, err
		}
		exc := make([]engine.Exception, numExc)
		for k := range exc {
			exc[k] = engine.Exception{From: int32(le.Uint32(pairs[8*k:])), To: int32(le.Uint32(pairs[8*k+4:])), Score: scores[k]}
		}
		if m.Trans, err = engine.NewTied(int(M), def, exc, start, end); err != nil {
			return bad("bad transitions: %v", err)
		}
	default:
		return bad("unknown transition structure %d", structure)
	}
	if err := parseLexicon(name, secs, m); err != nil {
		return nil, err
	}
	if err := parseSub(name, secs, m); err != nil {
		return nil, err
	}
	if err := parsePrune(name, secs, m); err != nil {
		return nil, err
	}
	if err := parsePruner1(name, secs, m); err != nil {
		return nil, err
	}
	if m.Bigram, err = parseBigrams(name, secs, int(M)); err != nil {
		return nil, err
	}
	if err := parseTrigrams(name, secs, int(M), m); err != nil {
		return nil, err
	}
	if err := parseGuesser(name, secs, m); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return bad("%v", err)
	}
	return m, nil
}
