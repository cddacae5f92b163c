package model

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

// CRFsuite's first-order model format (crf1d), version 100, as CRFsuite
// 0.12 writes it (lib/crf/src/crf1d_model.c). Every number is
// little-endian; every offset but those inside a CQDB chunk counts from the
// start of the file, and a reader follows the offsets, not the order.
//
//	offset 0   "lCRF", uint32 file size, "FOMC", uint32 version (100),
//	           uint32 number of features (0: not filled in), uint32 labels
//	           L, uint32 attributes A, then the uint32 offsets of the
//	           FEAT chunk, the label CQDB, the attribute CQDB, the LFRF and
//	           the AFRF chunks
//	FEAT       "FEAT", uint32 chunk size, uint32 features K, then K records
//	           of 20 bytes: uint32 type (0 state, 1 transition), uint32
//	           source (attribute, or previous label), uint32 label, float64
//	           weight
//	CQDB       the label and attribute names (see cqdb.go)
//	LFRF       "LFRF", uint32 chunk size, uint32 count (L+2: CRFsuite
//	           fills only L), then one uint32 offset per label of its
//	           transition features: uint32 n, then n uint32 feature ids
//	AFRF       the same for the state features of each attribute
//
// A tagger scores as crf1d_tag.c does: item t's score for label y is the
// sum of weight·value over the state features (a, y) of its attributes a,
// reached through AFRF; the transition i → j scores the weight of the
// feature (i, j) in LFRF[i], 0 without one; there are no start or end
// scores.
const (
	crfsuiteMagic   = "lCRF"
	crfsuiteType    = "FOMC"
	crfsuiteVersion = 100
	crfsuiteHeader  = 48
	crfsuiteChunk   = 12 // a FEAT, LFRF or AFRF chunk's header
	crfsuiteFeature = 20
	// crfsuiteMaxLabels bounds L: the transitions take L² float64s, and a
	// damaged header must not make a reader allocate gigabytes.
	crfsuiteMaxLabels = 8192
)

// decodeCRFsuite reads a CRFsuite model file held in buf; name is for
// messages. The weights are copied out of buf into the model's own
// arrays; the attribute dictionary is looked up in buf in place.
func decodeCRFsuite(name string, buf []byte) (*Model, error) {
	bad := func(format string, args ...any) (*Model, error) {
		return nil, formatError(name, "CRFsuite model: "+format, args...)
	}
	le := binary.LittleEndian
	if len(buf) < crfsuiteHeader {
		return bad("truncated: %d bytes, shorter than the %d-byte header", len(buf), crfsuiteHeader)
	}
	if want := le.Uint32(buf[4:]); uint64(want) != uint64(len(buf)) {
		if uint64(want) > uint64(len(buf)) {
			return bad("truncated: %d bytes, the header says %d", len(buf), want)
		}
		return bad("%d bytes, but the header says %d (trailing data or a damaged header)", len(buf), want)
	}
	if t := string(buf[8:12]); t != crfsuiteType {
		return bad("model type %q; simdcrf reads CRFsuite's first-order CRFs (%q)", clipBytes(buf[8:12]), crfsuiteType)
	}
	if v := le.Uint32(buf[12:]); v != crfsuiteVersion {
		return bad("format version %d; simdcrf reads version %d", v, crfsuiteVersion)
	}
	L, A := le.Uint32(buf[20:]), le.Uint32(buf[24:])
	if L == 0 || L > crfsuiteMaxLabels {
		return bad("%d labels (simdcrf reads 1 to %d)", L, crfsuiteMaxLabels)
	}
	size := uint32(len(buf))
	offFeat, offLabels, offAttrs, offLRefs, offARefs := le.Uint32(buf[28:]), le.Uint32(buf[32:]), le.Uint32(buf[36:]), le.Uint32(buf[40:]), le.Uint32(buf[44:])

	// chunk returns the chunk of the given id at off, after its 12-byte
	// header (its count in n), checking that it lies within the file.
	chunk := func(id string, off uint32) (body []byte, n uint32, err error) {
		if off < crfsuiteHeader || uint64(off)+crfsuiteChunk > uint64(size) {
			return nil, 0, formatError(name, "CRFsuite model: the %s chunk's offset %d is outside the file (%d bytes)", id, off, size)
		}
		c := buf[off:]
		if string(c[:4]) != id {
			return nil, 0, formatError(name, "CRFsuite model: chunk id %q at %d, want %q", clipBytes(c[:4]), off, id)
		}
		cs := le.Uint32(c[4:])
		if cs < crfsuiteChunk || uint64(cs) > uint64(len(c)) {
			return nil, 0, formatError(name, "CRFsuite model: the %s chunk at %d says it has %d bytes; %d are left in the file", id, off, cs, len(c))
		}
		return c[crfsuiteChunk:cs], le.Uint32(c[8:]), nil
	}

	feat, K, err := chunk("FEAT", offFeat)
	if err != nil {
		return nil, err
	}
	if uint64(K)*crfsuiteFeature > uint64(len(feat)) {
		return bad("the FEAT chunk holds %d bytes of features, too few for the %d it counts", len(feat), K)
	}
	feat = feat[:crfsuiteFeature*K]

	if offLabels >= size {
		return bad("the label dictionary's offset %d is outside the file (%d bytes)", offLabels, size)
	}
	labelDict, err := sparse.DictFromCQDB(buf[offLabels:], int(L))
	if err == nil {
		labelDict, err = labelDict.Own() // (small; and a repeated label is an error)
	}
	if err != nil {
		return bad("label dictionary at %d: %v", offLabels, err)
	}
	if offAttrs >= size {
		return bad("the attribute dictionary's offset %d is outside the file (%d bytes)", offAttrs, size)
	}
	if A > size/4 { // (each needs 4 bytes in the id array)
		return bad("%d attributes in a file of %d bytes", A, size)
	}
	attrDict, err := sparse.DictFromCQDB(buf[offAttrs:], int(A))
	if err != nil {
		return bad("attribute dictionary at %d: %v", offAttrs, err)
	}

	// refs returns the feature ids that chunk body lists for item i (a
	// label or an attribute).
	refs := func(what string, body []byte, i uint32) ([]byte, error) {
		off := le.Uint32(body[4*i:])
		if off < crfsuiteHeader || off > size-4 {
			return nil, formatError(name, "CRFsuite model: the feature list of %s %d is at %d, outside the file (%d bytes)", what, i, off, size)
		}
		n := le.Uint32(buf[off:])
		if n > (size-off-4)/4 {
			return nil, formatError(name, "CRFsuite model: the feature list of %s %d (%d features at %d) runs past the end of the file (%d bytes)", what, i, n, off, size)
		}
		return buf[off+4 : off+4+4*n], nil
	}
	// badFeature says what is wrong with feature fid, referenced by src
	// (a label, or an attribute) as a feature of the given type.
	badFeature := func(what string, fid, typ, src uint32) error {
		if fid >= K {
			return formatError(name, "CRFsuite model: %s %d references feature %d; there are %d", what, src, fid, K)
		}
		r := feat[crfsuiteFeature*fid:]
		t, s, d := le.Uint32(r), le.Uint32(r[4:]), le.Uint32(r[8:])
		w := math.Float64frombits(le.Uint64(r[12:]))
		switch {
		case t != typ || s != src:
			return formatError(name, "CRFsuite model: %s %d references feature %d of type %d from %d, want type %d from %d", what, src, fid, t, s, typ, src)
		case d >= L:
			return formatError(name, "CRFsuite model: feature %d is to label %d; there are %d labels", fid, d, L)
		default:
			return formatError(name, "CRFsuite model: feature %d has weight %v", fid, w)
		}
	}

	// Transitions: LFRF[i] lists the features i → j.
	lrefs, nl, err := chunk("LFRF", offLRefs)
	if err != nil {
		return nil, err
	}
	if nl < L || uint64(len(lrefs)) < 4*uint64(L) {
		return bad("the LFRF chunk has %d offsets in %d bytes, want one for each of %d labels", nl, len(lrefs), L)
	}
	score := make([]float64, int(L)*int(L))
	set := make([]uint64, (len(score)+63)/64) // the pairs with a feature
	for i := range L {
		ids, err := refs("label", lrefs, i)
		if err != nil {
			return nil, err
		}
		for k := 0; k < len(ids); k += 4 {
			fid := le.Uint32(ids[k:])
			if fid >= K {
				return nil, badFeature("label", fid, 1, i)
			}
			r := feat[crfsuiteFeature*fid : crfsuiteFeature*fid+crfsuiteFeature]
			j, w := le.Uint32(r[8:]), math.Float64frombits(le.Uint64(r[12:]))
			if le.Uint32(r) != 1 || le.Uint32(r[4:]) != i || j >= L || w-w != 0 {
				return nil, badFeature("label", fid, 1, i)
			}
			if k := i*L + j; set[k/64]&(1<<(k%64)) != 0 {
				return bad("two features for the transition %d → %d", i, j)
			} else {
				set[k/64] |= 1 << (k % 64)
				score[k] = w
			}
		}
	}
	trans, err := engine.NewTransitions(int(L), score, nil, nil)
	if err != nil {
		return bad("transitions: %v", err)
	}

	// State features: AFRF[a] lists the features (a, y), as the sparse
	// rows of attribute a (labels ascending: CRFsuite writes them so; other
	// orders are sorted). Each feature has one source, so there are at
	// most K of them.
	arefs, na, err := chunk("AFRF", offARefs)
	if err != nil {
		return nil, err
	}
	if na < A || uint64(len(arefs)) < 4*uint64(A) {
		return bad("the AFRF chunk has %d offsets in %d bytes, want one for each of %d attributes", na, len(arefs), A)
	}
	rowPtr := make([]int32, A+1)
	labels := make([]uint16, K)
	w := sparse.MakeBuffer(int(K))
	nnz := 0
	for a := range A {
		off := le.Uint32(arefs[4*a:])
		if off < crfsuiteHeader || off > size-4 {
			_, err := refs("attribute", arefs, a)
			return nil, err
		}
		n := le.Uint32(buf[off:])
		if n > (size-off-4)/4 || int(n) > len(labels)-nnz {
			if _, err := refs("attribute", arefs, a); err != nil {
				return nil, err
			}
			return bad("attribute %d has %d state features, more than the %d features left", a, n, len(labels)-nnz)
		}
		ids := buf[off+4 : off+4+4*n]
		row, rw := labels[nnz:nnz+int(n)], w[nnz:nnz+int(n)]
		ascending := true
		prev := -1
		for k := range row {
			fid := le.Uint32(ids[4*k:])
			if fid >= K {
				return nil, badFeature("attribute", fid, 0, a)
			}
			r := feat[crfsuiteFeature*fid : crfsuiteFeature*fid+crfsuiteFeature]
			// Type 0 from attribute a, in one comparison; the weights
			// are checked for NaN and ±Inf below, all at once.
			y := le.Uint32(r[8:])
			if le.Uint64(r) != uint64(a)<<32 || y >= L {
				return nil, badFeature("attribute", fid, 0, a)
			}
			ascending = ascending && int(y) > prev
			prev = int(y)
			row[k], rw[k] = uint16(y), math.Float64frombits(le.Uint64(r[12:]))
		}
		if !ascending {
			sortRow(row, rw)
			for k := 1; k < len(row); k++ {
				if row[k] == row[k-1] {
					return bad("two state features for attribute %d and label %d", a, row[k])
				}
			}
		}
		nnz += len(row)
		rowPtr[a+1] = int32(nnz)
	}
	if k := nonFinite(w[:nnz]); k >= 0 {
		i, _ := slices.BinarySearch(rowPtr, int32(k)+1) // rowPtr[i-1] ≤ k < rowPtr[i]
		return bad("attribute %d has a state feature of weight %v", i-1, w[k])
	}
	pat, err := sparse.PatternView(int(L), rowPtr, labels[:nnz])
	if err != nil {
		return bad("state features: %v", err)
	}
	state, err := sparse.NewSparse(pat, w[:nnz])
	if err != nil {
		return bad("state features: %v", err)
	}

	m := &Model{Labels: labelDict, Attrs: attrDict, State: state, Trans: trans,
		Meta: Meta{Spec: format.Spec{Format: "crfsuite"}, Extra: map[string]string{"model_format": "CRFsuite (lCRF FOMC 100)"}}}
	if err := m.check(); err != nil {
		return bad("%v", err)
	}
	return m, nil
}

// sortRow sorts a row's labels ascending, its weights alongside.
func sortRow(labels []uint16, w []float64) {
	type pair struct {
		y uint16
		w float64
	}
	p := make([]pair, len(labels))
	for k := range p {
		p[k] = pair{labels[k], w[k]}
	}
	slices.SortFunc(p, func(a, b pair) int { return int(a.y) - int(b.y) })
	for k := range p {
		labels[k], w[k] = p[k].y, p[k].w
	}
}

// CRFsuiteCompatible reports what of the model CRFsuite's format cannot
// hold, so that a model written in it would tag differently: start or end
// scores (CRFsuite has none), a tied default transition score other than
// 0 (CRFsuite scores a label bigram without a feature 0), a forbidden
// (−Inf) transition, a CRF++ template or built-in feature set (CRFsuite
// stores attribute names; it cannot extract them from columns), a label or
// attribute name with a NUL byte (CRFsuite's names are C strings). It
// returns nil when the model can be written as it is.
func (m *Model) CRFsuiteCompatible() error {
	if err := m.check(); err != nil {
		return err
	}
	if m.Lexicon != nil {
		return fmt.Errorf("model: the model restricts %d words to candidate labels; a CRFsuite model has no lexicon", m.Lexicon.Len())
	}
	if m.Sub != nil {
		return fmt.Errorf("model: the model has sub-label weights (feature.sublabels); a CRFsuite model has none")
	}
	if m.Trigrams != nil {
		return fmt.Errorf("model: the model is second-order (order=2, label trigrams); a CRFsuite model has label bigrams only")
	}
	if m.Prune != nil {
		return fmt.Errorf("model: the model tags over pruned label sets (prune.max); a CRFsuite model tags over all labels")
	}
	if m.Meta.Template != "" {
		return fmt.Errorf("model: the model extracts its attributes from columns with a CRF++ template; a CRFsuite model holds attribute names only, so CRFsuite could tag only attribute files")
	}
	if m.Meta.Features != "" {
		return fmt.Errorf("model: the model extracts its attributes from columns with the built-in feature set %q; a CRFsuite model holds attribute names only, so CRFsuite could tag only attribute files", m.Meta.Features)
	}
	if m.Bigram != nil {
		return fmt.Errorf("model: the model has observation-dependent transitions (CRF++ B template lines with %%x); CRFsuite's transitions do not read the observations")
	}
	tr := m.Trans
	M := m.Labels.Len()
	for j := range M {
		if s, e := tr.Start(j), tr.End(j); s != 0 || e != 0 {
			return fmt.Errorf("model: label %q has start score %g and end score %g; CRFsuite's model has no start or end scores", m.Labels.String(int32(j)), s, e)
		}
	}
	if tr.Structure() == engine.Tied {
		if def, _ := tr.Exceptions(); def != 0 {
			return fmt.Errorf("model: the transitions are tied with default score %g; CRFsuite scores every label bigram without a feature 0", def)
		}
	}
	for i := range M {
		for j := range M {
			if v := tr.Score(i, j); math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("model: the transition %q → %q scores %v; CRFsuite's weights are finite", m.Labels.String(int32(i)), m.Labels.String(int32(j)), v)
			}
		}
	}
	for _, d := range []struct {
		what string
		dict *sparse.Dict
	}{{"label", m.Labels}, {"attribute", m.Attrs}} {
		for id := range int32(d.dict.Len()) {
			if s := d.dict.String(id); strings.IndexByte(s, 0) >= 0 {
				return fmt.Errorf("model: %s %d (%q) holds a NUL byte; CRFsuite's names are C strings", d.what, id, clipBytes([]byte(s)))
			}
		}
	}
	return nil
}

// WriteCRFsuite writes the model to w in CRFsuite's format (version 100,
// as CRFsuite 0.12 writes it, byte for byte: a CRFsuite model read and
// written back is the same file), or an error from CRFsuiteCompatible.
// As CRFsuite it writes only the non-zero weights, and only the attributes
// that have one (renumbered in order); a zero weight adds nothing to a
// score, so tagging is unchanged.
func (m *Model) WriteCRFsuite(w io.Writer) (int64, error) {
	b, err := m.crfsuiteBytes()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}

// WriteCRFsuiteFile writes the model to path in CRFsuite's format
// (WriteCRFsuite) atomically, as WriteFile writes simdcrf's.
func (m *Model) WriteCRFsuiteFile(path string) error {
	b, err := m.crfsuiteBytes()
	if err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// crfsuiteBytes returns the model as a CRFsuite model file.
func (m *Model) crfsuiteBytes() ([]byte, error) {
	if err := m.CRFsuiteCompatible(); err != nil {
		return nil, err
	}
	M := m.Labels.Len()
	type stateFeature struct {
		attr, label uint32
		w           float64
	}
	var (
		states []stateFeature
		attrs  []int32 // the attributes kept, in order; new id = index
		last   = int32(-1)
	)
	m.eachWeight(func(a, y int32, w float64) {
		if w == 0 {
			return
		}
		if a != last {
			attrs = append(attrs, a)
			last = a
		}
		states = append(states, stateFeature{uint32(len(attrs) - 1), uint32(y), w})
	})
	var trans []stateFeature // (from, to, weight)
	for i := range M {
		for j := range M {
			if v := m.Trans.Score(i, j); v != 0 {
				trans = append(trans, stateFeature{uint32(i), uint32(j), v})
			}
		}
	}
	K := len(states) + len(trans)

	le := binary.LittleEndian
	b := make([]byte, crfsuiteHeader, crfsuiteHeader+crfsuiteChunk+crfsuiteFeature*K+16*K)
	u32 := func(v uint32) { b = le.AppendUint32(b, v) }
	offFeat := len(b)
	b = append(b, "FEAT"...)
	u32(uint32(crfsuiteChunk + crfsuiteFeature*K))
	u32(uint32(K))
	for _, f := range states {
		u32(0)
		u32(f.attr)
		u32(f.label)
		b = le.AppendUint64(b, math.Float64bits(f.w))
	}
	for _, f := range trans {
		u32(1)
		u32(f.attr)
		u32(f.label)
		b = le.AppendUint64(b, math.Float64bits(f.w))
	}
	offLabels := len(b)
	b = sparse.AppendCQDB(b, M, func(id int) string { return m.Labels.String(int32(id)) })
	offAttrs := len(b)
	b = sparse.AppendCQDB(b, len(attrs), func(id int) string { return m.Attrs.String(attrs[id]) })

	// refs appends a reference chunk: n lists (count slots, CRFsuite's
	// L+2 for LFRF), list k holding the feature ids from first(k) on
	// that list(k) says.
	refs := func(id string, slots, n int, list func(k int) (first, count int)) int {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		begin := len(b)
		b = append(b, id...)
		b = append(b, make([]byte, 8+4*slots)...)
		le.PutUint32(b[begin+8:], uint32(slots))
		for k := range n {
			le.PutUint32(b[begin+crfsuiteChunk+4*k:], uint32(len(b)))
			first, count := list(k)
			u32(uint32(count))
			for f := first; f < first+count; f++ {
				u32(uint32(f))
			}
		}
		le.PutUint32(b[begin+4:], uint32(len(b)-begin))
		return begin
	}
	// Transition features from label i are a run of trans, in order, as
	// are the state features of an attribute in states.
	runs := func(n int, src func(k int) uint32, count int) func(int) (int, int) {
		start := make([]int, n+1)
		for k := range count {
			start[src(k)+1]++
		}
		for i := range n {
			start[i+1] += start[i]
		}
		return func(i int) (int, int) { return start[i], start[i+1] - start[i] }
	}
	lrun := runs(M, func(k int) uint32 { return trans[k].attr }, len(trans))
	offLRefs := refs("LFRF", M+2, M, func(i int) (int, int) {
		first, n := lrun(i)
		return len(states) + first, n
	})
	offARefs := refs("AFRF", len(attrs), len(attrs), runs(len(attrs), func(k int) uint32 { return states[k].attr }, len(states)))
	if uint64(len(b)) > math.MaxUint32 {
		return nil, fmt.Errorf("model: %d bytes as a CRFsuite model, more than its 32-bit offsets reach", len(b))
	}

	h := b[:crfsuiteHeader]
	copy(h, crfsuiteMagic)
	le.PutUint32(h[4:], uint32(len(b)))
	copy(h[8:], crfsuiteType)
	le.PutUint32(h[12:], crfsuiteVersion)
	le.PutUint32(h[16:], 0) // CRFsuite leaves the feature count 0
	le.PutUint32(h[20:], uint32(M))
	le.PutUint32(h[24:], uint32(len(attrs)))
	for k, off := range []int{offFeat, offLabels, offAttrs, offLRefs, offARefs} {
		le.PutUint32(h[28+4*k:], uint32(off))
	}
	return b, nil
}

// clipBytes returns b for an error message: at most 64 bytes, then "…"
// and the length.
func clipBytes(b []byte) string {
	if len(b) <= 64 {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:64], len(b))
}

// The model file formats (FileFormat).
const (
	FormatSimdcrf  = "simdcrf"  // simdcrf's own (WriteFile)
	FormatCRFsuite = "crfsuite" // CRFsuite's (WriteCRFsuiteFile)
)

// FileFormat returns the format of the model file at path, told by its
// magic number as Load and Map tell it: FormatSimdcrf or FormatCRFsuite,
// or an error naming the file when it is neither.
func FileFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	var head [len(magic)]byte
	n, _ := io.ReadFull(f, head[:])
	switch {
	case n >= len(crfsuiteMagic) && string(head[:len(crfsuiteMagic)]) == crfsuiteMagic:
		return FormatCRFsuite, nil
	case n == len(magic) && string(head[:]) == magic:
		return FormatSimdcrf, nil
	}
	return "", formatError(path, "not a simdcrf or CRFsuite model file (wrong magic number)")
}
