package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// withTrigrams gives m trigram scores for a fraction of the M³ triples.
func withTrigrams(t *testing.T, r *rand.Rand, m *Model, frac float64) {
	t.Helper()
	M := m.Labels.Len()
	var tri [][3]int32
	var w []float64
	for k := range M * M * M {
		if r.Float64() < frac {
			tri = append(tri, [3]int32{int32(k / (M * M)), int32(k / M % M), int32(k % M)})
			w = append(w, 2*r.NormFloat64())
		}
	}
	g, err := engine.NewTrigrams(M, tri, w)
	if err != nil {
		t.Fatal(err)
	}
	m.Trigrams = g
}

// TestSecondOrderModel: a second-order model (Model.Trigrams) survives
// WriteFile and Load, Compact and DropZeros; its tagger answers what
// engine.SecondOrder answers over the pruner's sets (Viterbi, log Z,
// marginals, n-best, LogProb), or over all labels without pruning;
// CRFsuite's format refuses it; Dump lists its trigrams.
func TestSecondOrderModel(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	for _, pruned := range []bool{true, false} {
		m0 := randomModel(t, r, spec{m: 6, attrs: 20, layout: sparse.SparseRows, tied: pruned, zeros: 0.3})
		if pruned {
			m0.Prune = &prune.Rule{Max: 3, Threshold: 0.05}
			withPruner(t, r, m0)
		} else {
			c, _, _, err := m0.DropZeros()
			if err != nil {
				t.Fatal(err)
			}
			if c == m0 {
				t.Fatal("DropZeros dropped nothing: the test does not check that it keeps the trigrams")
			}
		}
		withTrigrams(t, r, m0, 0.3)
		if c, err := m0.Compact(); err != nil || c.Trigrams != m0.Trigrams {
			t.Fatalf("Compact dropped the trigrams (%v)", err)
		}
		if c, _, _, err := m0.DropZeros(); err != nil || c.Trigrams != m0.Trigrams {
			t.Fatalf("DropZeros dropped the trigrams (%v)", err)
		}
		path := filepath.Join(t.TempDir(), "order2.model")
		if err := m0.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		g0, g := m0.Trigrams, m.Trigrams
		if g == nil || g.Len() != g0.Len() {
			t.Fatalf("trigrams lost by WriteFile and Load")
		}
		for k := range g.Len() {
			h, i, j := g.Triple(k)
			h0, i0, j0 := g0.Triple(k)
			if h != h0 || i != i0 || j != j0 || g.Score(k) != g0.Score(k) {
				t.Fatalf("trigram %d changed by WriteFile and Load", k)
			}
		}
		if err := m.CRFsuiteCompatible(); err == nil || !strings.Contains(err.Error(), "second-order") {
			t.Errorf("CRFsuite's format takes a second-order model: %v", err)
		}
		var dump bytes.Buffer
		if err := m.Dump(&dump, 5); err != nil || !strings.Contains(dump.String(), "TRIGRAMS (second order, ") {
			t.Errorf("Dump does not list the trigrams (%v)", err)
		}

		M := m.Labels.Len()
		so, err := engine.NewSecondOrder(m.Trans, m.Trigrams)
		if err != nil {
			t.Fatal(err)
		}
		tg := m.NewTagger()
		ws := engine.NewWorkspace()
		var buf prune.Buf
		var out Output
		for range 30 {
			T := 1 + r.IntN(7)
			seq := randomSeq(r, 20, T, false)
			if err := tg.Tag(seq, Options{Prob: true, AllMarginals: true, NBest: 4}, &out); err != nil {
				t.Fatal(err)
			}
			emit := make([]float64, T*M)
			m.State.Score(emit, seq)
			var c *engine.ChainOptions
			if pruned {
				pemit := make([]float64, T*M)
				m.Pruner.Score(pemit, seq)
				c = &engine.ChainOptions{Allowed: m.Prune.Sets(&buf, pemit, M, nil, nil)}
			}
			want := make([]int32, T)
			score, err := so.Viterbi(ws, emit, c, want)
			if err != nil {
				t.Fatal(err)
			}
			// (the tagger scores in another order: to rounding)
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
			if !slices.Equal(out.Labels, want) || !close(out.Score, score) {
				t.Fatalf("Tag %v (%v), second-order Viterbi %v (%v)", out.Labels, out.Score, want, score)
			}
			p := engine.Posteriors2{Posteriors: engine.Posteriors{Marginals: make([]float64, T*M)}}
			logZ, err := so.Posteriors(ws, emit, c, &p)
			if err != nil {
				t.Fatal(err)
			}
			if !close(out.LogZ, logZ) {
				t.Fatalf("Tag's log Z %v, the engine's %v", out.LogZ, logZ)
			}
			for k, v := range p.Marginals {
				if math.Abs(out.AllMarginals[k]-v) > 1e-12 {
					t.Fatalf("Tag's marginal %d: %v, the engine's %v", k, out.AllMarginals[k], v)
				}
			}
			paths := make([][]int32, 4)
			for k := range paths {
				paths[k] = make([]int32, T)
			}
			scores := make([]float64, 4)
			n, err := so.NBest(ws, emit, c, paths, scores)
			if err != nil || n != len(out.NBest) {
				t.Fatalf("n-best: %d paths, the engine's %d (%v)", len(out.NBest), n, err)
			}
			for k := range n {
				if !slices.Equal(out.NBest[k].Labels, paths[k]) || !close(out.NBest[k].Score, scores[k]) {
					t.Fatalf("n-best %d: %v, the engine's %v", k, out.NBest[k].Labels, paths[k])
				}
			}
			lp, err := tg.LogProb(seq, Options{}, out.Labels)
			if err != nil || !close(lp, score-logZ) {
				t.Fatalf("LogProb %v, want %v (%v)", lp, score-logZ, err)
			}
		}
		if !raceEnabled { // (see TestTaggerAllocs)
			seq := randomSeq(r, 20, 12, false)
			o := Options{Prob: true, Marginals: true, AllMarginals: true, NBest: 4}
			tg.Tag(seq, o, &out)
			if a := testing.AllocsPerRun(50, func() { tg.Tag(seq, o, &out) }); a != 0 {
				t.Errorf("second-order Tag with -p -i -l -n: %v allocations per sequence", a)
			}
		}
	}

	// Refused: trigrams over another label count, or beside bigram weights.
	m := randomModel(t, r, spec{m: 4, attrs: 10, layout: sparse.SparseRows})
	g, _ := engine.NewTrigrams(5, nil, nil)
	m.Trigrams = g
	if err := m.check(); err == nil {
		t.Error("trigrams over 5 labels in a model of 4 accepted")
	}
	m.Trigrams, _ = engine.NewTrigrams(4, nil, nil)
	m.Bigram = &Bigrams{}
	if err := m.check(); err == nil {
		t.Error("trigrams beside bigram weights accepted")
	}
}

// TestTrigramSectionsDamaged: damaged trigram sections are refused with
// the file's name and the problem.
func TestTrigramSectionsDamaged(t *testing.T) {
	le := binary.LittleEndian
	tri := func(x ...uint32) []byte {
		var b []byte
		for _, v := range x {
			b = le.AppendUint32(b, v)
		}
		return b
	}
	scores := func(n int) []byte { return make([]byte, 8*n) }
	for _, tc := range []struct {
		name string
		secs map[uint32][]byte
		want string
	}{
		{"no scores", map[uint32][]byte{secTrigrams: tri(0, 1, 2)}, "trigram sections"},
		{"scores only", map[uint32][]byte{secTrigramScores: scores(1)}, "trigram sections"},
		{"short triple", map[uint32][]byte{secTrigrams: tri(0, 1), secTrigramScores: scores(1)}, "trigram sections"},
		{"too few scores", map[uint32][]byte{secTrigrams: tri(0, 1, 2, 2, 1, 0), secTrigramScores: scores(1)}, "trigram sections"},
		{"label out of range", map[uint32][]byte{secTrigrams: tri(0, 3, 2), secTrigramScores: scores(1)}, "label 3 of 3"},
		{"twice", map[uint32][]byte{secTrigrams: tri(0, 1, 2, 0, 1, 2), secTrigramScores: scores(2)}, "twice"},
		{"NaN", map[uint32][]byte{secTrigrams: tri(0, 1, 2), secTrigramScores: le.AppendUint64(nil, math.Float64bits(math.NaN()))}, "NaN"},
	} {
		var m Model
		err := parseTrigrams("x.model", tc.secs, 3, &m)
		if err == nil || !strings.Contains(err.Error(), "x.model") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
