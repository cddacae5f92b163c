package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

func unsafeAddr[T any](s []T) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }

func modelBytes(t testing.TB, s spec, seed uint64) []byte {
	m := randomModel(t, rand.New(rand.NewPCG(seed, seed)), s)
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fixup rewrites the file size and checksum of a (modified) model file so
// that it gets past the checks that catch accidental damage.
func fixup(b []byte) {
	if len(b) < headerSize {
		return
	}
	binary.LittleEndian.PutUint64(b[16:], uint64(len(b)))
	crc := crc32.Update(0, castagnoli, b[:crcOffset])
	crc = crc32.Update(crc, castagnoli, b[headerSize:])
	binary.LittleEndian.PutUint32(b[crcOffset:], crc)
}

func loadBytes(t *testing.T, b []byte) (*Model, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "damaged.crf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil && !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
	// Map must judge every file as Load does.
	mm, unmap, merr := Map(path)
	if (err == nil) != (merr == nil) || (err != nil && err.Error() != merr.Error()) {
		t.Errorf("Load: %v; Map: %v", err, merr)
	}
	if merr == nil {
		sameModel(t, m, mm)
		if err := unmap(); err != nil {
			t.Error(err)
		}
	}
	// And Decode, given the bytes, as well.
	dm, derr := Decode(path, b)
	if (err == nil) != (derr == nil) || (err != nil && err.Error() != derr.Error()) {
		t.Errorf("Load: %v; Decode: %v", err, derr)
	}
	if derr == nil {
		sameModel(t, m, dm)
	}
	return m, err
}

func wantErr(t *testing.T, b []byte, what, want string) {
	t.Helper()
	if _, err := loadBytes(t, b); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want one saying %q", what, err, want)
	}
}

func TestDamagedFiles(t *testing.T) {
	good := modelBytes(t, specs[3], 1)
	if _, err := loadBytes(t, good); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 3, 8, 40, 64, 100, len(good) / 2, len(good) - 1} {
		want := "truncated"
		if n == 0 {
			want = "empty file"
		}
		wantErr(t, good[:n], "truncated", want)
	}
	wantErr(t, append(bytes.Clone(good), 0), "trailing byte", "trailing data")

	// Every flipped byte outside the magic is caught by the checksum (or,
	// in the size field, by the size check).
	r := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		b := bytes.Clone(good)
		k := len(magic) + r.IntN(len(b)-len(magic))
		b[k] ^= byte(1 + r.IntN(255))
		if _, err := loadBytes(t, b); err == nil {
			t.Fatalf("flipped byte %d accepted", k)
		} else if !strings.Contains(err.Error(), "checksum mismatch") && !(k >= 16 && k < 24) {
			t.Errorf("flipped byte %d: %v", k, err)
		}
	}
	b := bytes.Clone(good)
	b[3] = 'X'
	wantErr(t, b, "wrong magic", "not a simdcrf model")
	b = bytes.Clone(good)
	b[0] = '?'
	wantErr(t, b, "7-bit", "transferred as text")

	b = bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[8:], Version+1)
	fixup(b)
	wantErr(t, b, "future version", "newer simdcrf")

	wantErr(t, []byte("lCRF\x00\x00\x01\x00FOMC"), "crfsuite", "CRFsuite model")
	wantErr(t, []byte("B-NP\tw[0]=He\n\n"), "text", "not a simdcrf model")
	wantErr(t, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, "gzip", "not a simdcrf model")

	// Structural damage behind a valid checksum.
	b = bytes.Clone(good)
	binary.LittleEndian.PutUint64(b[headerSize+8:], 3) // first section's offset
	fixup(b)
	wantErr(t, b, "section offset", "damaged section table")
	b = bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[headerSize+entrySize*3:], 99) // unknown required section
	fixup(b)
	wantErr(t, b, "unknown section", "unknown to this simdcrf")
	b = bytes.Clone(good)
	shapeEntry := headerSize
	for binary.LittleEndian.Uint32(b[shapeEntry:]) != secShape {
		shapeEntry += entrySize
	}
	binary.LittleEndian.PutUint32(b[shapeEntry+4:], 0) // shape section now optional and unknown...
	binary.LittleEndian.PutUint32(b[shapeEntry:], 99)
	fixup(b)
	wantErr(t, b, "missing section", "no shape section")

	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	if _, _, err := Map(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Map of a directory: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, _, err := Map(filepath.Join(dir, "missing")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Map of a missing file: %v", err)
	}
}

// failAfter fails every write after n bytes.
type failAfter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write error")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestWriteFileAtomic(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	old := randomModel(t, r, specs[0])
	m := randomModel(t, r, specs[3])
	dir := t.TempDir()
	path := filepath.Join(dir, "model.crf")
	if err := old.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	onlyModel := func(what string) {
		t.Helper()
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "model.crf" {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%s: directory holds %v", what, names)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: existing model changed", what)
		}
	}
	var full bytes.Buffer
	m.WriteTo(&full)
	for _, n := range []int{0, 10, 100, full.Len() / 2, full.Len() - 1} {
		testHookWriter = func(w io.Writer) io.Writer { return &failAfter{w, n} }
		err := m.WriteFile(path)
		testHookWriter = nil
		if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), path) {
			t.Errorf("failing after %d bytes: %v", n, err)
		}
		onlyModel("write error")
	}
	// Rename fails: the target is a non-empty directory.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "x"), nil, 0o644)
	if err := m.WriteFile(sub); err == nil {
		t.Error("wrote over a directory")
	}
	os.RemoveAll(sub)
	onlyModel("rename error")
	if err := m.WriteFile(filepath.Join(dir, "no", "such", "dir")); err == nil {
		t.Error("wrote into a missing directory")
	}
	if os.Geteuid() != 0 { // root writes into read-only directories
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		if err := m.WriteFile(filepath.Join(ro, "m.crf")); err == nil {
			t.Error("wrote into a read-only directory")
		}
	}
	// Success replaces the model; the file is readable by others.
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, m, l)
}

func TestDump(t *testing.T) {
	m := randomModel(t, rand.New(rand.NewPCG(3, 3)), spec{m: 4, attrs: 30, layout: sparse.SparseRows, tied: true, zeros: 0.3})
	var b bytes.Buffer
	if err := m.Dump(&b, 5); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"LABELS = {\n  0: L0-A\n", "TRANSITIONS (tied: default -0.5", `"trainer": "lbfgs"`, "top 5 by |weight|"} {
		if !strings.Contains(out, s) {
			t.Errorf("dump lacks %q:\n%s", s, out)
		}
	}
	// The five strongest, computed independently.
	type f struct {
		line string
		abs  float64
	}
	var all []f
	m.eachWeight(func(a, j int32, v float64) {
		if v != 0 {
			all = append(all, f{m.Attrs.String(a) + " --> " + m.Labels.String(j), max(v, -v)})
		}
	})
	for i := range all {
		for k := i + 1; k < len(all); k++ {
			if all[k].abs > all[i].abs {
				all[i], all[k] = all[k], all[i]
			}
		}
	}
	feats := out[strings.Index(out, "STATE_FEATURES"):]
	lines := strings.Split(strings.TrimSpace(feats), "\n")
	if len(lines) != 7 {
		t.Fatalf("state features:\n%s", feats)
	}
	for i := range 5 {
		if !strings.HasPrefix(lines[1+i], "  "+all[i].line+": ") {
			t.Errorf("feature %d: %q, want %q", i, lines[1+i], all[i].line)
		}
	}
	b.Reset()
	if err := m.Dump(&b, 0); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String()[strings.Index(b.String(), "STATE_FEATURES"):], " --> "); n != len(all) {
		t.Errorf("dump all: %d features, want %d", n, len(all))
	}
}

// smallSpecs are the seeds of the fuzzer: small files, which it mutates
// (and minimises) quickly.
var smallSpecs = []spec{
	{m: 2, attrs: 3, layout: sparse.DenseRows},
	{m: 3, attrs: 2, layout: sparse.DenseRows, stride: 4, forbid: true},
	{m: 3, attrs: 4, layout: sparse.SparseRows, tied: true},
	{m: 2, attrs: 0, layout: sparse.SparseRows},
}

func FuzzLoad(f *testing.F) {
	for i, s := range smallSpecs {
		f.Add(modelBytes(f, s, uint64(i)), false)
		f.Add(modelBytes(f, s, uint64(i)), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			// Get past the checksum to reach the section parser.
			data = bytes.Clone(data)
			fixup(data)
		}
		checkDecode(t, "fuzz", data)
	})
}

// TestMutatedFiles loads model files with random bytes changed and the
// checksum fixed up, so that the section parser sees them: errors, never
// panics, and a model that loads can be used.
func TestMutatedFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var seeds [][]byte
	for i, s := range append(smallSpecs, specs[:5]...) {
		seeds = append(seeds, modelBytes(t, s, uint64(i)))
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		b := bytes.Clone(seeds[r.IntN(len(seeds))])
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		fixup(b)
		checkDecode(t, "mutated", b)
	}
}

func checkDecode(t *testing.T, name string, data []byte) {
	{
		buf := alignedBuf(len(data))
		copy(buf, data)
		m, err := decode(name, buf)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model "+name+": ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		// A model that loads must be usable.
		if m.Attrs.Len() > 0 {
			tg := m.NewTagger()
			seq := sparse.Seq{Ptr: []int32{0, 2, 3}, IDs: []int32{0, int32(m.Attrs.Len() - 1), 0}}
			var out Output
			if err := tg.Tag(seq, Options{Prob: true, Marginals: true, NBest: 2}, &out); err != nil && !errors.Is(err, engine.ErrNoLabelling) {
				t.Fatal(err)
			}
		}
		var d bytes.Buffer
		if err := m.Dump(&d, 3); err != nil {
			t.Fatal(err)
		}
	}
}
