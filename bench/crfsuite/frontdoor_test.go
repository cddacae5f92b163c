package crfsuite

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf"
)

// TestFrontDoorModel: a model trained through package simdcrf's Trainer
// and saved with SaveCRFsuite is read by CRFsuite's own library, which
// tags it as simdcrf's Tagger does: the same labels, the same probability
// of each labelling, the same marginals (to the six decimals it prints).
func TestFrontDoorModel(t *testing.T) {
	ensure(t)
	r := rand.New(rand.NewPCG(5, 8))
	gen := func(n int) ([][]simdcrf.Item, [][]string) {
		var xs [][]simdcrf.Item
		var ys [][]string
		for range n {
			var x []simdcrf.Item
			var y []string
			for range 1 + r.IntN(7) {
				l := r.IntN(4)
				it := simdcrf.Binary(fmt.Sprintf("w:%d", 2*l+r.IntN(3)), fmt.Sprintf("n=%d", r.IntN(6)))
				if r.IntN(3) == 0 {
					it = append(it, simdcrf.Attribute{Name: "v", Value: 0.5 + float64(r.IntN(4))})
				}
				x, y = append(x, it), append(y, []string{"NN", "VB", "DT", "JJ"}[l])
			}
			xs, ys = append(xs, x), append(ys, y)
		}
		return xs, ys
	}
	tr, err := simdcrf.NewTrainer(simdcrf.Options{ModelFormat: "crfsuite", Params: map[string]string{"max_iterations": "25"}})
	if err != nil {
		t.Fatal(err)
	}
	xs, ys := gen(200)
	for i := range xs {
		if err := tr.Append(xs[i], ys[i]); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mp := filepath.Join(dir, "m.crfsuite")
	if err := m.SaveCRFsuite(mp); err != nil {
		t.Fatal(err)
	}
	// The test sequences as a CRFsuite attribute file.
	tx, ty := gen(50)
	var b strings.Builder
	for i := range tx {
		for p, it := range tx[i] {
			b.WriteString(ty[i][p])
			for _, a := range it {
				fmt.Fprintf(&b, "\t%s:%g", strings.ReplaceAll(a.Name, ":", `\:`), a.Value)
			}
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	data := filepath.Join(dir, "test.txt")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := TagText(context.Background(), mp, data, "-p", "-l")
	if err != nil {
		t.Fatal(err)
	}
	g := m.Tagger()
	labels := m.Labels()
	seqs := bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n"))
	if len(seqs) != len(tx) {
		t.Fatalf("CRFsuite tagged %d sequences of %d", len(seqs), len(tx))
	}
	for i, s := range seqs {
		lines := strings.Split(string(s), "\n")
		prob, _ := strconv.ParseFloat(strings.TrimPrefix(lines[1], "@probability\t"), 64)
		got, err := g.Tag(tx[i])
		if err != nil {
			t.Fatal(err)
		}
		marg, err := g.Marginals(tx[i])
		if err != nil {
			t.Fatal(err)
		}
		for p, line := range lines[2:] {
			f := strings.Split(line, "\t")
			if f[0] != got[p] {
				t.Fatalf("sequence %d position %d: CRFsuite %s, simdcrf %s", i, p, f[0], got[p])
			}
			for j, lm := range f[1:] {
				name, v, _ := strings.Cut(lm, ":")
				mv, _ := strconv.ParseFloat(v, 64)
				if name != labels[j] || math.Abs(mv-marg[p][j]) > 5e-7 {
					t.Fatalf("sequence %d position %d: CRFsuite %s, simdcrf %s:%f", i, p, lm, labels[j], marg[p][j])
				}
			}
		}
		if p, err := g.Probability(tx[i], got); err != nil || math.Abs(p-prob) > 5e-7 {
			t.Fatalf("sequence %d: CRFsuite p %v, simdcrf %v (%v)", i, prob, p, err)
		}
	}
}
