package crfbeam

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/simdcrf/simdcrf/format"
)

// The tests run pipelines on Prism, in this process, and compare what they
// write with what the simdcrf command prints for the same files.

func TestMain(m *testing.M) { ptest.Main(m) }

// demo is the core module's embedded demo data (UD English EWT samples).
const demo = "../../cmd/simdcrf/demodata/"

// fixture is a model and input files of one format, and the simdcrf
// command to compare with.
type fixture struct {
	name    string
	dir     string // the input files, and nothing else
	model   string
	files   []string // the input files, sorted (the glob's order)
	simdcrf string   // the simdcrf binary
}

var (
	setupOnce sync.Once
	setupErr  error
	fixtures  map[string]*fixture
	work      string
)

// setup builds the simdcrf command, makes input files of each format from
// the demo data and trains a small model on each; once per test binary.
func setup(t *testing.T) map[string]*fixture {
	t.Helper()
	setupOnce.Do(func() { setupErr = makeFixtures() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return fixtures
}

func makeFixtures() error {
	var err error
	work, err = os.MkdirTemp("", "crfbeam-test-")
	if err != nil {
		return err
	}
	bin := filepath.Join(work, "simdcrf")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/simdcrf/simdcrf/cmd/simdcrf").CombinedOutput(); err != nil {
		return fmt.Errorf("building simdcrf: %v\n%s", err, out)
	}
	train, err := gunzip(demo + "en_ewt-sample-train.conllu.gz")
	if err != nil {
		return err
	}
	test, err := gunzip(demo + "en_ewt-sample-test.conllu.gz")
	if err != nil {
		return err
	}
	train, test = firstSentences(train, 1500), firstSentences(test, 900)
	fixtures = map[string]*fixture{}
	for _, f := range []struct {
		name, ext string
		convert   func([]byte) ([]byte, error)
		learn     []string
	}{
		{"conllu", ".conllu", nil, []string{"--features", "pos"}},
		{"conll", ".txt", toColumns, []string{"--template", "TEMPLATE"}},
		{"crfsuite", ".txt", toCRFsuite, nil},
		// A model tagged over a zeroth-order pruner's sets (issue 29).
		{"conllu-pruned", ".conllu", nil, []string{"--features", "pos", "-p", "prune.max=4", "-p", "prune.by=zeroth"}},
		// A second-order model (issue 30), over its pruner's sets.
		{"conllu-order2", ".conllu", nil, []string{"--features", "pos", "-p", "order=2", "-p", "prune.max=4"}},
		// Order 2 over a first-order pruner's sets (issues 29, 30).
		{"conllu-first", ".conllu", nil, []string{"--features", "pos", "-p", "order=2", "-p", "prune.max=4", "-p", "prune.by=first"}},
	} {
		fx := &fixture{name: f.name, dir: filepath.Join(work, f.name), simdcrf: bin, model: filepath.Join(work, f.name+".model")}
		if err := os.MkdirAll(fx.dir, 0o755); err != nil {
			return err
		}
		tr, te := train, test
		if f.convert != nil {
			if tr, err = f.convert(train); err != nil {
				return err
			}
			if te, err = f.convert(test); err != nil {
				return err
			}
		}
		trainFile := filepath.Join(work, f.name+"-train"+f.ext)
		if err := os.WriteFile(trainFile, tr, 0o644); err != nil {
			return err
		}
		args := []string{"learn", "-m", fx.model, "-p", "max_iterations=15"}
		for _, a := range f.learn {
			if a == "TEMPLATE" {
				a = filepath.Join(work, "template")
				if err := os.WriteFile(a, []byte("U00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[1,0]\nU03:%x[0,0]/%x[1,0]\nB\n"), 0o644); err != nil {
					return err
				}
			}
			args = append(args, a)
		}
		if f.name == "conll" {
			args = append(args, "--format", "conll")
		}
		args = append(args, trainFile)
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("simdcrf %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		// Several files: one large enough to be split (with the tests'
		// split size), a small one, and a gzip-compressed one (read whole).
		seqs := blocksOf(te)
		large := bytes.Join([][]byte{join(seqs), join(seqs), join(seqs)}, nil)
		inputs := map[string][]byte{
			"a-large" + f.ext:          large,
			"b-small" + f.ext:          join(seqs[:40]),
			"c-zipped" + f.ext + ".gz": gz(join(seqs[40:300])),
		}
		for name, data := range inputs {
			if err := os.WriteFile(filepath.Join(fx.dir, name), data, 0o644); err != nil {
				return err
			}
			fx.files = append(fx.files, filepath.Join(fx.dir, name))
		}
		slices.Sort(fx.files)
		fixtures[f.name] = fx
	}
	return nil
}

func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// blocksOf splits text into its blank-line-separated blocks, each with its
// lines' ends and without the blank line.
func blocksOf(text []byte) [][]byte {
	var out [][]byte
	for _, b := range bytes.Split(text, []byte("\n\n")) {
		b = bytes.Trim(b, "\n")
		if len(b) > 0 {
			out = append(out, append(b, '\n'))
		}
	}
	return out
}

// join writes blocks separated by blank lines.
func join(blocks [][]byte) []byte {
	var out []byte
	for _, b := range blocks {
		out = append(out, b...)
		out = append(out, '\n')
	}
	return out
}

func firstSentences(text []byte, n int) []byte {
	b := blocksOf(text)
	return join(b[:min(n, len(b))])
}

// toColumns turns CoNLL-U into two columns, FORM and UPOS.
func toColumns(conllu []byte) ([]byte, error) {
	var out []byte
	for _, b := range blocksOf(conllu) {
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 10 || strings.ContainsAny(f[0], "-.") {
				continue
			}
			out = fmt.Appendf(out, "%s %s\n", strings.ReplaceAll(f[1], " ", "_"), f[3])
		}
		out = append(out, '\n')
	}
	return out, nil
}

// toCRFsuite turns CoNLL-U into CRFsuite's attribute format, with the
// built-in pos features as attributes.
func toCRFsuite(conllu []byte) ([]byte, error) {
	r, err := format.NewReader(bytes.NewReader(conllu), "conllu", format.Options{Format: "conllu", Features: "pos"})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	var s format.Sequence
	for {
		err := r.Read(&s)
		if errors.Is(err, io.EOF) {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		if err := format.WriteCRFsuite(&buf, &s); err != nil {
			return nil, err
		}
	}
}

// simdcrf runs the command and returns its standard output.
func (fx *fixture) run(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(fx.simdcrf, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("simdcrf %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func newCmd(bin string, args ...string) *exec.Cmd { return exec.Command(bin, args...) }
