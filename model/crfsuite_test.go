package model

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

// crfsuiteFixtures are models written by CRFsuite (testdata/crfsuite).
var crfsuiteFixtures = []string{"ewt-xpos", "ewt-upos"}

func gunzipFile(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tagText tags every sequence of a CRFsuite attribute file with m and
// returns what simdcrf tag prints with o.
func tagText(t testing.TB, m *Model, data []byte, o TextOptions) []byte {
	t.Helper()
	r, err := format.NewReader(bytes.NewReader(data), "test", format.Options{Format: "crfsuite"})
	if err != nil {
		t.Fatal(err)
	}
	tg := m.NewTagger()
	labels := m.LabelNames()
	var (
		seq format.Sequence
		b   sparse.Builder
		out Output
		txt []byte
	)
	for {
		err := r.Read(&seq)
		if err == io.EOF {
			return txt
		}
		if err != nil {
			t.Fatal(err)
		}
		ref := make([]string, seq.Len())
		for i, l := range seq.Labels {
			ref[i] = string(l)
		}
		if err := tg.Tag(m.Encode(&b, seq.Ptr, seq.Names, seq.Values), o.TagOptions(), &out); err != nil {
			t.Fatal(err)
		}
		txt = AppendText(txt, &out, labels, ref, o)
	}
}

// TestCRFsuiteFixtures tags the fixtures' test files with the models
// CRFsuite wrote, loaded, mapped and decoded from bytes: the labels, scores, log Z,
// probabilities and every label's marginal print exactly as CRFsuite's
// library prints them (crfsuite tag -r -p -i -l), attribute values, unknown
// attributes and ties included.
func TestCRFsuiteFixtures(t *testing.T) {
	for _, name := range crfsuiteFixtures {
		path := filepath.Join("testdata", "crfsuite", name+".crfsuite")
		data := gunzipFile(t, filepath.Join("testdata", "crfsuite", name+".test.gz"))
		want := gunzipFile(t, filepath.Join("testdata", "crfsuite", name+".test.crfsuite-tag-rpil.gz"))
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		mm, unmap, err := Map(path)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dm, err := Decode(path, raw)
		if err != nil {
			t.Fatal(err)
		}
		clear(raw) // Decode copies: the model must not depend on raw
		for _, mod := range []*Model{m, mm, dm} {
			got := tagText(t, mod, data, TextOptions{Reference: true, Prob: true, Marginals: true, AllMarginals: true})
			if !bytes.Equal(got, want) {
				t.Errorf("%s: simdcrf's -r -p -i -l output differs from CRFsuite's at line %d", name, firstDiffLine(got, want))
			}
		}
		if mm.Meta.Format != "crfsuite" || mm.Trans.Start(0) != 0 || mm.Trans.End(0) != 0 {
			t.Errorf("%s: meta %+v, start %v, end %v", name, mm.Meta, mm.Trans.Start(0), mm.Trans.End(0))
		}
		if err := unmap(); err != nil {
			t.Error(err)
		}
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// TestCRFsuiteRoundTrip: a CRFsuite model read and written back in
// CRFsuite's format is the same file, byte for byte; converted to simdcrf's
// format and back it still is, and tags as before.
func TestCRFsuiteRoundTrip(t *testing.T) {
	for _, name := range crfsuiteFixtures {
		path := filepath.Join("testdata", "crfsuite", name+".crfsuite")
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := m.WriteCRFsuite(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), orig) {
			t.Fatalf("%s: written back, %d bytes differ from CRFsuite's %d", name, b.Len(), len(orig))
		}
		own := filepath.Join(t.TempDir(), name+".model")
		if err := m.WriteFile(own); err != nil {
			t.Fatal(err)
		}
		m2, err := Load(own)
		if err != nil {
			t.Fatal(err)
		}
		data := gunzipFile(t, filepath.Join("testdata", "crfsuite", name+".test.gz"))
		o := TextOptions{Prob: true, AllMarginals: true}
		if !bytes.Equal(tagText(t, m2, data, o), tagText(t, m, data, o)) {
			t.Errorf("%s: converted to simdcrf's format, tags differently", name)
		}
		back := filepath.Join(t.TempDir(), name+".crfsuite")
		if err := m2.WriteCRFsuiteFile(back); err != nil {
			t.Fatal(err)
		}
		if b2, _ := os.ReadFile(back); !bytes.Equal(b2, orig) {
			t.Errorf("%s: crfsuite → simdcrf → crfsuite is not the same file", name)
		}
	}
}

// crfsuiteReady returns m with what CRFsuite's format cannot hold taken
// out: no start or end scores, a tied default of 0, no −Inf, no template.
func crfsuiteReady(t *testing.T, m *Model) *Model {
	t.Helper()
	M := m.Labels.Len()
	var tr *engine.Transitions
	var err error
	if m.Trans.Structure() == engine.Tied {
		_, exc := m.Trans.Exceptions()
		tr, err = engine.NewTied(M, 0, exc, nil, nil)
	} else {
		score := make([]float64, M*M)
		for i := range M {
			for j := range M {
				if v := m.Trans.Score(i, j); !math.IsInf(v, 0) {
					score[i*M+j] = v
				}
			}
		}
		tr, err = engine.NewTransitions(M, score, nil, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := New(m.Labels, m.Attrs, m.State, tr, Meta{Spec: format.Spec{Format: "crfsuite"}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteCRFsuite writes simdcrf models of every shape (dense and
// sparse rows, padded rows, dense and tied transitions, zero weights) in
// CRFsuite's format and reads them back: every sequence scores the same
// (only zero weights and the attributes left with none are dropped).
func TestWriteCRFsuite(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	for _, s := range append(specs, spec{m: 6, attrs: 60, layout: sparse.DenseRows, zeros: 0.7}, spec{m: 9, attrs: 40, layout: sparse.SparseRows, zeros: 0.5}) {
		t.Run(s.String(), func(t *testing.T) {
			m := crfsuiteReady(t, randomModel(t, r, s))
			path := filepath.Join(t.TempDir(), "m.crfsuite")
			if err := m.WriteCRFsuiteFile(path); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Labels.Len() != m.Labels.Len() || c.Attrs.Len() > m.Attrs.Len() {
				t.Fatalf("%d labels, %d attributes read back; %d and %d written", c.Labels.Len(), c.Attrs.Len(), m.Labels.Len(), m.Attrs.Len())
			}
			tm, tc := m.NewTagger(), c.NewTagger()
			var bm, bc sparse.Builder
			var om, oc Output
			for range 20 {
				T := 1 + r.IntN(6)
				ptr := []int32{0}
				var names [][]byte
				var vals []float64
				for range T {
					for range r.IntN(5) {
						name := []byte("unknown")
						if m.Attrs.Len() > 0 {
							name = []byte(m.Attrs.String(int32(r.IntN(m.Attrs.Len()))))
						}
						names = append(names, name)
						vals = append(vals, r.Float64()*2-0.5)
					}
					ptr = append(ptr, int32(len(names)))
				}
				o := Options{Prob: true, AllMarginals: true}
				if err := tm.Tag(m.Encode(&bm, ptr, names, vals), o, &om); err != nil {
					t.Fatal(err)
				}
				if err := tc.Tag(c.Encode(&bc, ptr, names, vals), o, &oc); err != nil {
					t.Fatal(err)
				}
				if !equalInts(om.Labels, oc.Labels) || !near(om.Score, oc.Score) || !near(om.LogZ, oc.LogZ) {
					t.Fatalf("written %v %v %v, read back %v %v %v", om.Labels, om.Score, om.LogZ, oc.Labels, oc.Score, oc.LogZ)
				}
				for k := range om.AllMarginals {
					if !near(om.AllMarginals[k], oc.AllMarginals[k]) {
						t.Fatalf("marginal %d: %v, read back %v", k, om.AllMarginals[k], oc.AllMarginals[k])
					}
				}
			}
		})
	}
}

func equalInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCRFsuiteCompatible: each part of a model that CRFsuite's format
// cannot hold is named, and nothing is written.
func TestCRFsuiteCompatible(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 13))
	path := filepath.Join(t.TempDir(), "m.crfsuite")
	base := crfsuiteReady(t, randomModel(t, r, specs[0]))
	M := base.Labels.Len()
	with := func(f func(m *Model)) *Model {
		m := *base
		f(&m)
		return &m
	}
	trans := func(start, end []float64, fn func(score []float64)) *engine.Transitions {
		score := make([]float64, M*M)
		fn(score)
		tr, err := engine.NewTransitions(M, score, start, end)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	start := make([]float64, M)
	start[2] = 0.5
	tied, err := engine.NewTied(M, -0.25, []engine.Exception{{From: 0, To: 1, Score: 1}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	nul := sparse.NewDict(base.Attrs.Len())
	for id := range int32(base.Attrs.Len()) {
		nul.Add(base.Attrs.String(id) + map[bool]string{true: "\x00"}[id == 3])
	}
	for _, c := range []struct {
		m    *Model
		want string
	}{
		{with(func(m *Model) { m.Meta.Template = "U00:%x[0,0]\n" }), "CRF++ template"},
		{with(func(m *Model) { m.Meta.Features = "pos" }), `built-in feature set "pos"`},
		{with(func(m *Model) { m.Trans = trans(start, nil, func([]float64) {}) }), `label "L2-C" has start score 0.5`},
		{with(func(m *Model) { m.Trans = trans(nil, start, func([]float64) {}) }), "end score 0.5"},
		{with(func(m *Model) { m.Trans = tied }), "tied with default score -0.25"},
		{with(func(m *Model) { m.Trans = trans(nil, nil, func(s []float64) { s[M+2] = math.Inf(-1) }) }), `transition "L1-B" → "L2-C" scores -Inf`},
		{with(func(m *Model) { m.Attrs = nul }), "attribute 3"},
	} {
		if err := c.m.WriteCRFsuiteFile(path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "CRFsuite") {
			t.Errorf("%v, want an error saying %q", err, c.want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("a refused model was written")
		}
	}
	if err := base.CRFsuiteCompatible(); err != nil {
		t.Fatal(err)
	}
}

// crfsuiteDamage builds a damaged copy of a CRFsuite model file.
type crfsuiteDamage struct {
	name string
	f    func(b []byte) []byte
	want string
}

// TestDamagedCRFsuite: a damaged CRFsuite model gets an error naming the
// file and what is wrong, from Load and Map alike.
func TestDamagedCRFsuite(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "crfsuite", "ewt-upos.crfsuite"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	u32 := func(b []byte, off int) uint32 { return le.Uint32(b[off:]) }
	put := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
	}
	offFeat, offLabels, offAttrs, offL, offA := int(u32(good, 28)), int(u32(good, 32)), int(u32(good, 36)), int(u32(good, 40)), int(u32(good, 44))
	firstAttrList := int(u32(good, offA+12))  // attribute 0's feature list
	firstLabelList := int(u32(good, offL+12)) // label 0's transition features
	firstFeature := offFeat + 12
	lastTrans := offFeat + 12 + 20*int(u32(good, offFeat+8)-1) // a transition feature
	for _, c := range []crfsuiteDamage{
		{"short", func(b []byte) []byte { return b[:40] }, "truncated: 40 bytes, shorter than the 48-byte header"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-100] }, "truncated"},
		{"trailing", func(b []byte) []byte { return append(b, 0) }, "trailing data"},
		{"type", func(b []byte) []byte { copy(b[8:], "SOMC"); return b }, `model type "SOMC"`},
		{"version", put(12, 99), "format version 99"},
		{"labels", put(20, 0), "0 labels"},
		{"many labels", put(20, 1<<20), "1048576 labels"},
		{"feature offset", put(28, uint32(len(good))), "FEAT chunk's offset"},
		{"feature chunk id", func(b []byte) []byte { b[offFeat] = 'X'; return b }, `chunk id "XEAT"`},
		{"feature count", put(offFeat+8, 1<<26), "too few for the 67108864 it counts"},
		{"label offset", put(32, uint32(len(good)+5)), "label dictionary's offset"},
		{"label byte order", put(offLabels+12, 1), "label dictionary at"},
		{"attribute byte order", put(offAttrs+12, 0x71534462), "byte-order mark 0x71534462"},
		{"attribute count", put(24, u32(good, 24)+1), "attribute dictionary"},
		{"LFRF", put(40, 3), "LFRF chunk's offset 3"},
		{"LFRF count", put(offL+8, 2), "want one for each of"},
		{"AFRF chunk size", put(offA+4, uint32(len(good))), "AFRF chunk at"},
		{"attribute list offset", put(offA+12, uint32(len(good)-2)), "feature list of attribute 0"},
		{"attribute list length", put(firstAttrList, 1<<29), "runs past the end of the file"},
		{"feature id", put(firstAttrList+4, 1<<30), "references feature 1073741824"},
		{"feature type", put(firstFeature, 1), "want type 0 from 0"},
		{"feature label", put(firstFeature+8, 5000), "is to label 5000"},
		{"NaN weight", func(b []byte) []byte { le.PutUint64(b[firstFeature+12:], math.Float64bits(math.NaN())); return b }, "weight NaN"},
		{"Inf weight", func(b []byte) []byte { le.PutUint64(b[lastTrans+12:], math.Float64bits(math.Inf(1))); return b }, "weight +Inf"},
		{"duplicate feature", func(b []byte) []byte {
			if u32(b, firstAttrList) < 2 {
				t.Fatal("attribute 0 has fewer than 2 features")
			}
			le.PutUint32(b[firstAttrList+8:], u32(b, firstAttrList+4))
			return b
		}, "two state features for attribute 0"},
		{"duplicate transition", func(b []byte) []byte {
			le.PutUint32(b[firstLabelList+8:], u32(b, firstLabelList+4))
			return b
		}, "two features for the transition 0 →"},
	} {
		b := c.f(bytes.Clone(good))
		m, err := loadBytes(t, b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "CRFsuite model") {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
		if m != nil {
			t.Errorf("%s: a model came with the error", c.name)
		}
	}
}

// TestMutatedCRFsuite changes random bytes of CRFsuite models: each
// either loads, and tags and dumps, or gets an error naming the file.
func TestMutatedCRFsuite(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 13))
	var seeds [][]byte
	for _, name := range crfsuiteFixtures {
		b, err := os.ReadFile(filepath.Join("testdata", "crfsuite", name+".crfsuite"))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b, smallCRFsuite(t, uint64(len(seeds))))
	}
	n := 2000
	if testing.Short() {
		n = 200
	}
	for range n {
		b := bytes.Clone(seeds[r.IntN(len(seeds))])
		for range 1 + r.IntN(4) {
			k := r.IntN(len(b))
			if r.IntN(4) == 0 { // often where the offsets and counts are
				k = r.IntN(min(len(b), 64))
			}
			b[k] = byte(r.IntN(256))
		}
		checkDecode(t, "mutated", b)
	}
}

// smallCRFsuite returns a small CRFsuite model file written by simdcrf.
func smallCRFsuite(t testing.TB, seed uint64) []byte {
	m := randomModel(t, rand.New(rand.NewPCG(seed, 7)), spec{m: 3, attrs: 4, layout: sparse.SparseRows})
	tr, err := engine.NewTransitions(3, []float64{1, -1, 0, 0.5, 0, 2, -0.5, 1.5, 0}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = New(m.Labels, m.Attrs, m.State, tr, Meta{Spec: format.Spec{Format: "crfsuite"}}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := m.WriteCRFsuite(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzLoadCRFsuite feeds arbitrary bytes after CRFsuite's magic to the
// model reader: an error naming the file, or a model that tags and dumps.
func FuzzLoadCRFsuite(f *testing.F) {
	f.Add(smallCRFsuite(f, 1))
	f.Add(smallCRFsuite(f, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= 4 {
			copy(data, crfsuiteMagic)
		}
		checkDecode(t, "fuzz", data)
	})
}
