package model

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

func testGuesser(t *testing.T) *format.Guesser {
	var b format.GuesserBuilder
	for i, w := range []string{"walking", "talking", "king", "cats", "dogs", "hits", "the", "the"} {
		b.Add([]byte(w), []byte([]string{"VBG", "VBG", "NN", "NNS", "NNS", "VBZ", "DT", "DT"}[i]))
	}
	return b.Build(0)
}

// TestGuesserModel: a model's unknown-word guesser survives WriteFile and
// Load (the same bytes, the same guesses), Compact and DropZeros; Dump
// says it is there.
func TestGuesserModel(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	m0 := randomModel(t, r, spec{m: 5, attrs: 20, layout: sparse.SparseRows, zeros: 0.3})
	m0.Meta.Spec = format.Spec{Format: "conll", Features: "pos", Guesser: testGuesser(t)}
	path := filepath.Join(t.TempDir(), "g.model")
	if err := m0.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m1, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	g0, g1 := m0.Meta.Spec.Guesser, m1.Meta.Spec.Guesser
	if g1 == nil {
		t.Fatal("the guesser was lost")
	}
	b0, _ := g0.MarshalBinary()
	b1, _ := g1.MarshalBinary()
	if !bytes.Equal(b0, b1) {
		t.Error("the guesser changed on the way")
	}
	if l, _ := g1.Guess("barking"); len(l) == 0 || l[0] != "VBG" {
		t.Errorf("the loaded guesser guessed %v for barking, want VBG first", l)
	}
	for name, f := range map[string]func(*Model) (*Model, error){
		"Compact":   (*Model).Compact,
		"DropZeros": func(m *Model) (*Model, error) { c, _, _, err := m.DropZeros(); return c, err },
	} {
		c, err := f(m1)
		if err != nil || c.Meta.Spec.Guesser != g1 {
			t.Errorf("%s lost the guesser (%v)", name, err)
		}
	}
	var dump bytes.Buffer
	if err := m1.Dump(&dump, 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump.String(), "GUESSER = guesses of 5 labels") {
		t.Errorf("Dump does not show the guesser:\n%.400s", dump.String())
	}
}

// TestGuesserSectionDamaged: a damaged guesser section is refused with the
// file's name and the problem.
func TestGuesserSectionDamaged(t *testing.T) {
	b, _ := testGuesser(t).MarshalBinary()
	for _, tc := range []struct {
		name string
		data []byte
		spec format.Spec
		want string
	}{
		{"bad magic", append([]byte("X"), b[1:]...), format.Spec{Features: "pos"}, "bad magic"},
		{"cut", b[:len(b)-3], format.Spec{Features: "pos"}, "truncated"},
		{"no feature set", b, format.Spec{Template: "U00:%x[0,0]\n"}, "no feature set"},
	} {
		m := Model{Meta: Meta{Spec: tc.spec}}
		err := parseGuesser("x.model", map[uint32][]byte{secGuesser: tc.data}, &m)
		if err == nil || !strings.Contains(err.Error(), "x.model") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
