package eval

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// binaryVersion is the first byte of MarshalBinary's encoding.
const binaryVersion = 1

// MarshalBinary encodes what e has counted (labels in order, per-label,
// token, sequence and chunk counts), so that an evaluator filled on one
// machine can be sent to another and merged there (a pipeline's combiner).
// The encoding is deterministic.
func (e *Evaluator) MarshalBinary() ([]byte, error) {
	b := []byte{binaryVersion}
	b = binary.AppendUvarint(b, uint64(len(e.names)))
	for i, name := range e.names {
		b = appendString(b, name)
		c := e.tab[i]
		b = appendInts(b, c.correct, c.predicted, c.support)
	}
	b = appendInts(b, e.tokens, e.correctTokens, e.seqs, e.correctSeqs, e.chunk.gold, e.chunk.predicted, e.chunk.correct)
	keys := sortedKeys(e.types)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		c := e.types[k]
		b = appendString(b, k)
		b = appendInts(b, c.gold, c.predicted, c.correct)
	}
	return b, nil
}

// UnmarshalBinary replaces what e holds by what MarshalBinary encoded.
func (e *Evaluator) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	if v := d.uvarint(); v != binaryVersion {
		if d.err != nil {
			return d.err
		}
		return fmt.Errorf("eval: encoding version %d, want %d", v, binaryVersion)
	}
	var n Evaluator
	labels := d.count()
	for range labels {
		name := d.string()
		if d.err != nil {
			break
		}
		if _, dup := n.index[name]; dup {
			return fmt.Errorf("eval: label %q encoded twice", name)
		}
		i := n.add(name)
		n.tab[i] = labelCounts{correct: d.int(), predicted: d.int(), support: d.int()}
	}
	n.tokens, n.correctTokens, n.seqs, n.correctSeqs = d.int(), d.int(), d.int(), d.int()
	n.chunk = chunkCounts{gold: d.int(), predicted: d.int(), correct: d.int()}
	types := d.count()
	if types > 0 && n.types == nil {
		n.types = make(map[string]*chunkCounts)
	}
	for range types {
		typ := d.string()
		if d.err != nil {
			break
		}
		if _, dup := n.types[typ]; dup {
			return fmt.Errorf("eval: chunk type %q encoded twice", typ)
		}
		*n.typeCounts(typ) = chunkCounts{gold: d.int(), predicted: d.int(), correct: d.int()}
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("eval: %d bytes after the encoding", len(d.b))
	}
	if d.err != nil {
		return d.err
	}
	*e = n
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendInts(b []byte, v ...int) []byte {
	for _, x := range v {
		b = binary.AppendVarint(b, int64(x))
	}
	return b
}

var errShort = errors.New("eval: truncated encoding")

// decoder reads an encoding, keeping the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of entries, each at least one byte long.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		if d.err == nil {
			d.err = errShort
		}
		return 0
	}
	return int(v)
}

func (d *decoder) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 || v < 0 {
		d.err = errShort
		if v < 0 {
			d.err = errors.New("eval: negative count in the encoding")
		}
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) string() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
