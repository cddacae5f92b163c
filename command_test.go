package simdcrf

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/model"
)

// The tests here hold the front door to what the command does: a model
// trained through Trainer is the model `simdcrf learn` trains from the same
// data in a file, and Tagger tags as `simdcrf tag` does.

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds cmd/simdcrf once per test binary and returns its path.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "simdcrf-cli")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "simdcrf")
		args := append(append([]string{"build"}, buildTags...), "-o", cliPath, "./cmd/simdcrf")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ./cmd/simdcrf: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

func run(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("simdcrf %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// labelled is a sequence with its labels.
type labelled struct {
	x []Item
	y []string
}

// synthetic returns n random sequences over a small vocabulary whose labels
// follow the attributes (with noise), some attributes valued.
func synthetic(r *rand.Rand, n int) []labelled {
	labels := []string{"A", "B", "C", "D:x", "E"}
	var out []labelled
	for range n {
		T := 1 + r.IntN(8)
		var s labelled
		for range T {
			y := r.IntN(len(labels))
			if r.IntN(4) == 0 {
				y = r.IntN(len(labels))
			}
			it := Item{{Name: fmt.Sprintf("w=%d", 3*y+r.IntN(3)), Value: 1}, {Name: "bias", Value: 1}}
			if r.IntN(3) == 0 {
				it = append(it, Attribute{Name: fmt.Sprintf("f:%d\\x", r.IntN(20)), Value: float64(r.IntN(5)) / 2})
			}
			s.x, s.y = append(s.x, it), append(s.y, labels[y])
		}
		out = append(out, s)
	}
	return out
}

// writeAttrs writes seqs as a CRFsuite attribute file.
func writeAttrs(t *testing.T, path string, seqs []labelled) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var s format.Sequence
	for _, q := range seqs {
		if _, err := fromItems(&s, q.x, q.y); err != nil {
			t.Fatal(err)
		}
		if err := format.WriteCRFsuite(w, &s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sameModel fails unless a and b hold the same dictionaries, weights and
// every other part, byte for byte in simdcrf's format, metadata aside.
func sameModel(t *testing.T, a, b *model.Model) {
	t.Helper()
	a2, b2 := *a, *b
	a2.Meta, b2.Meta = model.Meta{}, model.Meta{}
	var ba, bb bytes.Buffer
	if _, err := a2.WriteTo(&ba); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.WriteTo(&bb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ba.Bytes(), bb.Bytes()) {
		t.Fatalf("models differ (%d and %d bytes; labels %v and %v, %d and %d attributes)",
			ba.Len(), bb.Len(), a.LabelNames(), b.LabelNames(), a.Attrs.Len(), b.Attrs.Len())
	}
}

// sameTagging fails unless Tagger tags test as `simdcrf tag -p` tags the
// same sequences in testFile with the model in modelPath: the labels, and
// the probability of each labelling to the six decimals tag prints.
func sameTagging(t *testing.T, g *Tagger, test []labelled, modelPath, testFile string, tokens [][][]string) {
	t.Helper()
	out := run(t, "tag", "-p", "-m", modelPath, testFile)
	seqs := bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n"))
	if len(seqs) != len(test) {
		t.Fatalf("tag printed %d sequences for %d", len(seqs), len(test))
	}
	for i, text := range seqs {
		lines := strings.Split(string(text), "\n")
		prob, err := strconv.ParseFloat(strings.TrimPrefix(lines[1], "@probability\t"), 64)
		if err != nil {
			t.Fatalf("sequence %d: %q", i, lines[:2])
		}
		want := lines[2:]
		var got []string
		if tokens != nil {
			got, err = g.TagTokens(tokens[i])
		} else {
			got, err = g.Tag(test[i].x)
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("sequence %d: Tagger %q, simdcrf tag %q", i, got, want)
		}
		if tokens != nil {
			continue
		}
		p, err := g.Probability(test[i].x, got)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p-prob) > 5e-7 {
			t.Fatalf("sequence %d: Probability %v, simdcrf tag -p %v", i, p, prob)
		}
	}
}

// trainItems trains on seqs through a Trainer.
func trainItems(t *testing.T, o Options, seqs, holdout []labelled) *Model {
	t.Helper()
	tr, err := NewTrainer(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seqs {
		if err := tr.Append(s.x, s.y); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range holdout {
		if err := tr.AppendHoldout(s.x, s.y); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// learnArgs returns simdcrf learn's arguments for the options.
func learnArgs(o Options, modelPath string) []string {
	args := []string{"learn", "-q", "--threads", "1", "-m", modelPath}
	if o.Algorithm != "" {
		args = append(args, "-a", o.Algorithm)
	}
	for k, v := range o.Params {
		args = append(args, "-p", k+"="+v)
	}
	if o.ModelFormat != "" {
		args = append(args, "--model-format", o.ModelFormat)
	}
	return args
}

// TestSameModelAsCommand: from the same sequences (attributes, as a file for
// the command) and options, on one thread, Trainer trains the model simdcrf
// learn trains, part for part, whatever the holdout; and its Tagger tags as
// simdcrf tag does. With each algorithm, pruning, and CRFsuite's format.
func TestSameModelAsCommand(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	trainSeqs, test := synthetic(r, 300), synthetic(r, 60)
	dir := t.TempDir()
	trainFile, testFile := filepath.Join(dir, "train.txt"), filepath.Join(dir, "test.txt")
	writeAttrs(t, trainFile, trainSeqs)
	writeAttrs(t, testFile, test)
	for _, o := range []Options{
		{Params: map[string]string{"max_iterations": "30"}},
		{Algorithm: "l1", Params: map[string]string{"c1": "0.5", "max_iterations": "30", "feature.minfreq": "2"}},
		{Params: map[string]string{"prune.max": "2", "max_iterations": "20", "transitions": "tied"}},
		{Params: map[string]string{"order": "2", "max_iterations": "20"}},
		{Params: map[string]string{"order": "2", "prune.by": "first", "max_iterations": "20"}},
		{Algorithm: "sgd", Params: map[string]string{"max_iterations": "5"}},
		{Algorithm: "ap", Params: map[string]string{"max_iterations": "5"}},
		{ModelFormat: "crfsuite", Params: map[string]string{"max_iterations": "20", "feature.possible_states": "1"}},
	} {
		name := o.Algorithm + fmt.Sprint(o.Params) + o.ModelFormat
		t.Run(name, func(t *testing.T) {
			o.Threads = 1
			mp := filepath.Join(dir, "m.simdcrf")
			if o.ModelFormat == "crfsuite" {
				mp = filepath.Join(dir, "m.crfsuite")
			}
			run(t, append(learnArgs(o, mp), trainFile)...)
			want, err := model.Load(mp)
			if err != nil {
				t.Fatal(err)
			}
			got := trainItems(t, o, trainSeqs, nil)
			if o.ModelFormat == "crfsuite" {
				// Compare what the file holds: the command wrote it.
				p := filepath.Join(dir, "front.crfsuite")
				if err := got.SaveCRFsuite(p); err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(mp)
				b, _ := os.ReadFile(p)
				if !bytes.Equal(a, b) {
					t.Fatal("the CRFsuite model files differ")
				}
			} else {
				sameModel(t, got.m, want)
			}
			sameTagging(t, got.Tagger(), test, mp, testFile, nil)
			// A holdout changes nothing in the model.
			if o.Algorithm == "" && o.ModelFormat == "" {
				withHold := trainItems(t, o, trainSeqs, test[:20])
				sameModel(t, withHold.m, got.m)
			}
		})
	}
}

// TestSameModelAsCommandCoNLL2000: on real data, from attributes and from
// tokens with a template: CoNLL-2000 chunking (its first 1,500 training
// sentences, 10 iterations) with the shared CRF++ template.
func TestSameModelAsCommandCoNLL2000(t *testing.T) {
	data := testdata.Dir(t, "conll2000")
	tplPath := testdata.Templates(t, "chunking.tpl")
	if testing.Short() {
		t.Skip("trains on CoNLL-2000 (-short)")
	}
	tpl, err := os.ReadFile(tplPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	read := func(name string, n int) ([][][]string, [][]string, string) {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		blocks := strings.Split(strings.TrimSpace(string(b)), "\n\n")[:n]
		var toks [][][]string
		var labs [][]string
		for _, blk := range blocks {
			var rows [][]string
			var l []string
			for _, line := range strings.Split(blk, "\n") {
				f := strings.Fields(line)
				rows, l = append(rows, f[:len(f)-1]), append(l, f[len(f)-1])
			}
			toks, labs = append(toks, rows), append(labs, l)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(blocks, "\n\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return toks, labs, p
	}
	trTok, trLab, trFile := read("train.txt", 1500)
	teTok, teLab, teFile := read("test.txt", 300)
	o := Options{Threads: 1, Params: map[string]string{"max_iterations": "10"}}
	// trainTokens trains a Trainer with o from the training tokens, and
	// the holdout tokens given.
	trainTokens := func(t *testing.T, o Options, holdTok [][][]string, holdLab [][]string) *Model {
		t.Helper()
		tr, err := NewTrainer(o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range trTok {
			if err := tr.AppendTokens(trTok[i], trLab[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range holdTok {
			if err := tr.AppendHoldoutTokens(holdTok[i], holdLab[i]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := tr.Train(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("tokens", func(t *testing.T) {
		o := o
		o.Template = string(tpl)
		mp := filepath.Join(dir, "tok.model")
		run(t, append(learnArgs(o, mp), "--template", tplPath, trFile)...)
		want, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		got := trainTokens(t, o, nil, nil)
		sameModel(t, got.m, want)
		if s, w := got.Spec(), want.Meta.Spec; s.Template != w.Template || s.Columns != w.Columns || s.Format != w.Format {
			t.Errorf("spec %+v, the command's %+v", s, w)
		}
		sameTagging(t, got.Tagger(), make([]labelled, len(teTok)), mp, teFile, teTok)
		// The command's model tags tokens too.
		cm, err := Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		sameTagging(t, cm.Tagger(), make([]labelled, len(teTok)), mp, teFile, teTok)
	})

	t.Run("features", func(t *testing.T) {
		// The pos feature set, with the unknown-word guesser learned by
		// default: Trainer holds the tokens until Train, the command
		// reads its files twice. A holdout changes nothing.
		o := o
		o.Features = "pos"
		mp := filepath.Join(dir, "feat.model")
		run(t, append(learnArgs(o, mp), "--features", "pos", trFile)...)
		want, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		if want.Meta.Spec.Guesser == nil {
			t.Fatal("the command's model has no guesser")
		}
		got := trainTokens(t, o, teTok[:50], teLab[:50])
		sameModel(t, got.m, want)
		a, _ := got.m.Meta.Spec.Guesser.MarshalBinary()
		b, _ := want.Meta.Spec.Guesser.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Error("the guessers differ")
		}
		sameTagging(t, got.Tagger(), make([]labelled, len(teTok)), mp, teFile, teTok)
	})

	t.Run("attributes", func(t *testing.T) {
		// The template's attributes as items, and as a CRFsuite file.
		tk, err := format.NewTokens(format.Options{Template: mustTemplate(t, string(tpl))})
		if err != nil {
			t.Fatal(err)
		}
		items := func(toks [][][]string, labs [][]string) []labelled {
			var out []labelled
			var s format.Sequence
			for i := range toks {
				if err := tk.Sequence(&s, toks[i], nil); err != nil {
					t.Fatal(err)
				}
				q := labelled{y: labs[i]}
				for p := range s.Len() {
					var it Item
					for k := s.Ptr[p]; k < s.Ptr[p+1]; k++ {
						it = append(it, Attribute{Name: string(s.Names[k]), Value: s.Values[k]})
					}
					q.x = append(q.x, it)
				}
				out = append(out, q)
			}
			return out
		}
		train, test := items(trTok, trLab), items(teTok, teLab)
		trainFile, testFile := filepath.Join(dir, "train.attrs"), filepath.Join(dir, "test.attrs")
		writeAttrs(t, trainFile, train)
		writeAttrs(t, testFile, test)
		mp := filepath.Join(dir, "attr.model")
		run(t, append(learnArgs(o, mp), trainFile)...)
		want, err := model.Load(mp)
		if err != nil {
			t.Fatal(err)
		}
		got := trainItems(t, o, train, nil)
		sameModel(t, got.m, want)
		sameTagging(t, got.Tagger(), test, mp, testFile, nil)
	})
}

func mustTemplate(t *testing.T, text string) *format.Template {
	tp, err := format.ParseTemplate(strings.NewReader(text), "t.tpl")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}
