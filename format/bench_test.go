package format

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/simdcrf/simdcrf/internal/testdata"
)

// loop repeats data forever.
type loop struct {
	data []byte
	off  int
}

func (l *loop) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// eachSeq calls f with each sequence r reads (in a reused Sequence),
// failing tb on a read error.
func eachSeq(tb testing.TB, r Reader, f func(s *Sequence)) {
	tb.Helper()
	var s Sequence
	for {
		err := r.Read(&s)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		f(&s)
	}
}

// Once the buffers have grown, reading allocates nothing per sequence.
func TestNoAllocsPerSequence(t *testing.T) {
	conllu := "# c\n1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n" +
		"2\tca\tcan\tAUX\tMD\t_\t0\troot\t_\t_\n3\tn't\tnot\tPART\tRB\t_\t2\tadvmod\t_\t_\n\n"
	tp := mustTemplate(t, "U00:%x[-2,0]\nU01:%x[-1,0]/%x[0,0]\nU02:%x[1,1]\nB\n")
	for _, c := range []struct {
		name, data string
		o          Options
	}{
		{"conll", "He PRP B-NP\nreckons VBZ B-VP\nRésumé NN O\n\n", Options{Format: "conll", Template: tp, Features: "pos"}},
		{"conllu", conllu, Options{Format: "conllu", Features: "pos", Label: "xpos"}},
		{"conllu, morph, guesser", conllu, Options{Format: "conllu", Features: "morph", Label: "xpos", Guesser: buildGuesser(guessTokens(), 2)}},
		{"crfsuite", "@weight:2\nB-NP\tw=He\tpos=PRP:2.5\tx\\:y\nO\ta\tb\n\n", Options{Format: "crfsuite"}},
	} {
		r, err := NewReader(&loop{data: []byte(c.data)}, c.name, c.o)
		if err != nil {
			t.Fatal(err)
		}
		var s Sequence
		for range 10 {
			if err := r.Read(&s); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(1000, func() {
			if err := r.Read(&s); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per sequence", c.name, n)
		}
	}
}

func benchFile(b *testing.B, path string, o Options) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	items, attrs := 0, 0
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), filepath.Base(path), o)
		if err != nil {
			b.Fatal(err)
		}
		items, attrs = 0, 0
		eachSeq(b, r, func(s *Sequence) {
			items += s.Len()
			attrs += len(s.Names)
		})
	}
	b.ReportMetric(float64(items), "items")
	b.ReportMetric(float64(attrs), "attrs")
}

// BenchmarkReadEWT: reading + pos features of UD EWT train (XPOS).
func BenchmarkReadEWT(b *testing.B) {
	d := testdata.Dir(b)
	benchFile(b, filepath.Join(d, "ud_english_ewt", "en_ewt-ud-train.conllu"), Options{Format: "conllu", Features: "pos", Label: "xpos"})
}

// BenchmarkReadChunking: reading + chunking.tpl on CoNLL-2000 train.
func BenchmarkReadChunking(b *testing.B) {
	d := testdata.Dir(b)
	benchFile(b, filepath.Join(d, "conll2000", "train.txt"), Options{Format: "conll", Template: sharedTemplate(b)})
}

// chunkingCRFsuite is CoNLL-2000 test with chunking.tpl written in CRFsuite
// format (about 10 MB; every attribute has one `\:` escape), built once.
func chunkingCRFsuite(b *testing.B) []byte {
	d := testdata.Dir(b)
	data, err := os.ReadFile(filepath.Join(d, "conll2000", "test.txt"))
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data), "test.txt", Options{Format: "conll", Template: sharedTemplate(b)})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	eachSeq(b, r, func(s *Sequence) {
		if err := WriteCRFsuite(&buf, s); err != nil {
			b.Fatal(err)
		}
	})
	return buf.Bytes()
}

// BenchmarkReadCRFsuite: reading CoNLL-2000 test in CRFsuite format (what
// `simdcrf tag` does with an attribute file).
func BenchmarkReadCRFsuite(b *testing.B) {
	data := chunkingCRFsuite(b)
	path := filepath.Join(b.TempDir(), "test.crfsuite")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	benchFile(b, path, Options{Format: "crfsuite"})
}

// BenchmarkReadCzechMorph: reading + the morph features on UD Czech CLTT
// test, without and with the guesser learned from CLTT train (what tagging
// with a default Czech model reads).
func BenchmarkReadCzechMorph(b *testing.B) {
	dir := testdata.Dir(b, "ud_czech", "cltt")
	o := Options{Format: "conllu", Features: "morph", Label: "xpos"}
	data, err := os.ReadFile(filepath.Join(dir, "cs_cltt-ud-train.conllu"))
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data), "train", o)
	if err != nil {
		b.Fatal(err)
	}
	var gb GuesserBuilder
	eachSeq(b, r, func(s *Sequence) { gb.AddSequence(s) })
	g := gb.Build(15)
	test := filepath.Join(dir, "cs_cltt-ud-test.conllu")
	b.Run("guesser=none", func(b *testing.B) { benchFile(b, test, o) })
	o.Guesser = g
	b.Run("guesser=cltt", func(b *testing.B) { benchFile(b, test, o) })
}
