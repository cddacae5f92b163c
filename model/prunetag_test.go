package model

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestPruneModel: the pruning survives WriteFile, Load and Compact, makes
// the model CRFsuite-incompatible, and a tagger tags over the sets it
// gives (within the lexicon's candidates): Tag and Viterbi equal the
// engine's Viterbi and posteriors with those sets as allowed labels.
func TestPruneModel(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	for _, lex := range []bool{false, true} {
		var m0 *Model
		if lex {
			m0 = lexModel(t, r)
		} else {
			m0 = randomModel(t, r, spec{m: 6, attrs: 20, layout: sparse.SparseRows, tied: true})
		}
		m0.Prune = &prune.Rule{Max: 2, Threshold: 0.2}
		path := filepath.Join(t.TempDir(), "prune.model")
		if err := m0.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if m.Prune == nil || *m.Prune != *m0.Prune {
			t.Fatalf("pruning after Load: %+v, want %+v", m.Prune, m0.Prune)
		}
		if c, err := m.Compact(); err != nil || c.Prune != m.Prune {
			t.Fatalf("Compact dropped the pruning (%v)", err)
		}
		if err := m.CRFsuiteCompatible(); err == nil || !lex && !strings.Contains(err.Error(), "pruned") {
			t.Errorf("CRFsuiteCompatible with pruning: %v", err)
		}
		M := m.Labels.Len()
		tg := m.NewTagger()
		ws := engine.NewWorkspace()
		var buf prune.Buf
		var out Output
		narrowed := 0
		for range 40 {
			T := 1 + r.IntN(5)
			seq := randomSeq(r, 20, T, false)
			var cands []int32
			var allowed [][]int32
			if lex {
				words := make([][]byte, T)
				for k := range words {
					words[k] = []byte{'v', byte('0' + r.IntN(6))}
				}
				cands = m.Candidates(nil, words, T)
				allowed = make([][]int32, T)
				for k, c := range cands {
					allowed[k] = m.Lexicon.Allowed(c)
				}
			}
			if err := tg.Tag(seq, Options{Prob: true, AllMarginals: true, Candidates: cands}, &out); err != nil {
				t.Fatal(err)
			}
			emit := make([]float64, T*M)
			m.State.Score(emit, seq)
			sets := m.Prune.Sets(&buf, emit, M, allowed, nil)
			for _, s := range sets {
				if len(s) < M {
					narrowed++
				}
			}
			taggedOver(t, tg, ws, &out, seq, cands, emit, sets)
		}
		if narrowed == 0 {
			t.Fatal("the pruning never narrowed a position: the test checks nothing")
		}
	}
	// A damaged section is refused.
	m := randomModel(t, r, spec{m: 4, attrs: 10, layout: sparse.SparseRows})
	m.Prune = &prune.Rule{Max: 0}
	if err := m.WriteFile(filepath.Join(t.TempDir(), "bad.model")); err == nil {
		t.Error("a model with prune.max = 0 written")
	}
}

// TestTaggerAllocsPruned: tagging a pruned model at M = 40 (its sets of
// at most 3 labels take engine's restricted Viterbi) allocates nothing
// per sequence once the tagger's work is warm.
func TestTaggerAllocsPruned(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector empties sync.Pool at random (the test runs without -race)")
	}
	r := rand.New(rand.NewPCG(21, 21))
	for _, c := range []struct{ tied, pruner bool }{{false, false}, {true, false}, {true, true}} {
		tied := c.tied
		m := randomModel(t, r, spec{m: 40, attrs: 20, layout: sparse.SparseRows, tied: tied})
		m.Prune = &prune.Rule{Max: 3, Threshold: 0.01}
		if c.pruner {
			withPruner(t, r, m)
		}
		tg := m.NewTagger()
		seq := randomSeq(r, 20, 30, false)
		dst := make([]int32, 0, 64)
		var err error
		dst, _, err = tg.Viterbi(dst, seq)
		if a := testing.AllocsPerRun(100, func() { dst, _, err = tg.Viterbi(dst, seq) }); a != 0 {
			t.Errorf("tied=%v, pruner=%v: Viterbi: %v allocations per sequence", tied, c.pruner, a)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// taggedOver checks what tg tagged seq into out (Tag with all marginals,
// under the candidates cands) against the engine over sets, emit being
// the model's emissions: the same labels, marginals and Viterbi path.
func taggedOver(t *testing.T, tg *Tagger, ws *engine.Workspace, out *Output, seq sparse.Seq, cands []int32, emit []float64, sets [][]int32) {
	t.Helper()
	m := tg.Model()
	M := m.Labels.Len()
	c := &engine.ChainOptions{Allowed: sets}
	want := make([]int32, seq.Len())
	if _, err := m.Trans.Viterbi(ws, emit, c, want); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Labels, want) {
		t.Fatalf("Tag %v, Viterbi over the pruned sets %v", out.Labels, want)
	}
	marg := make([]float64, seq.Len()*M)
	if _, err := m.Trans.Posteriors(ws, emit, c, &engine.Posteriors{Marginals: marg}); err != nil {
		t.Fatal(err)
	}
	for k, v := range marg {
		if d := v - out.AllMarginals[k]; d > 1e-12 || d < -1e-12 {
			t.Fatalf("marginal %d: Tag %v, pruned sets %v", k, out.AllMarginals[k], v)
		}
	}
	vit, _, err := tg.ViterbiCandidates(nil, seq, cands)
	if err != nil || !slices.Equal(vit, want) {
		t.Fatalf("ViterbiCandidates %v (%v), want %v", vit, err, want)
	}
}

// withPruner gives m a pruner (prune.by=zeroth): random weights of its
// state weights' shape.
func withPruner(t *testing.T, r *rand.Rand, m *Model) {
	t.Helper()
	w := sparse.MakeParams(m.State.NumParams())
	for k := range w {
		w[k] = 2 * r.NormFloat64()
	}
	var err error
	if m.Pruner, err = WeightsLike(m.State, w); err != nil {
		t.Fatal(err)
	}
}

// withSub gives m sub-label weights (two parts per label, from a random
// corpus), and its pruner (m.Pruner, if any) its own.
func withSub(t *testing.T, r *rand.Rand, m *Model) {
	t.Helper()
	M, nattr := m.Labels.Len(), m.Attrs.Len()
	c := sparse.NewCorpus()
	var b sparse.Builder
	for range 20 {
		b.Reset()
		for range 5 {
			b.Add(int32(r.IntN(nattr)), 1)
			b.Add(int32(r.IntN(nattr)), 1)
			b.End(int32(r.IntN(M)))
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := sparse.NewSubLabels(m.LabelNames(), sparse.Positions(2), c, nattr)
	if err != nil {
		t.Fatal(err)
	}
	if m.Pruner != nil {
		m.PrunerSub = make([]float64, len(sub.W))
	}
	for k := range sub.W {
		sub.W[k] = r.NormFloat64()
		if m.Pruner != nil {
			m.PrunerSub[k] = 2 * r.NormFloat64()
		}
	}
	m.Sub = sub
}

// TestPrunerModel: a model's zeroth-order pruner (prune.by=zeroth)
// survives WriteFile, Load and Compact, and its tagger takes the pruned
// sets from the pruner's emission scores, not the model's: Tag and
// Viterbi equal the engine's over those sets, which differ from the sets
// the model's own scores give. A pruner of another shape is refused.
func TestPrunerModel(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 19))
	for _, tc := range []struct {
		layout sparse.Layout
		sub    bool
		m      int // labels; rows draw up to m/2 of them, the tagger's three kinds (one label, narrow, wide)
		values bool
	}{{sparse.SparseRows, false, 7, false}, {sparse.DenseRows, false, 7, false}, {sparse.SparseRows, true, 7, false},
		{sparse.SparseRows, false, 40, true}, {sparse.SparseRows, true, 40, true}} {
		layout := tc.layout
		nattr := 20 + 3*tc.m // enough for rows of one label, at M = 40
		m0 := randomModel(t, r, spec{m: tc.m, attrs: nattr, layout: layout, tied: layout == sparse.SparseRows, labels: tc.m / 2})
		m0.Prune = &prune.Rule{Max: 2, Threshold: 0.05}
		if tc.m > 7 {
			m0.Prune = &prune.Rule{Max: 5, Threshold: 0.001}
		}
		withPruner(t, r, m0)
		if tc.sub { // sub-label weights, the pruner's its own
			withSub(t, r, m0)
		}
		path := filepath.Join(t.TempDir(), "pruner.model")
		if err := m0.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if m.Pruner == nil || !slices.Equal(params(m.Pruner), params(m0.Pruner)) || !slices.Equal(m.PrunerSub, m0.PrunerSub) {
			t.Fatalf("layout %v, sub-labels %v: pruner weights lost or changed by WriteFile and Load", layout, tc.sub)
		}
		if c, err := m.Compact(); err != nil || c.Pruner != m.Pruner || c.Prune != m.Prune {
			t.Fatalf("Compact dropped the pruner (%v)", err)
		}
		M := m.Labels.Len()
		tg := m.NewTagger()
		if tc.layout == sparse.SparseRows && tc.m > 7 {
			var one, narrow, wide int
			for _, rec := range tg.hot.rec {
				switch rec.n {
				case 1:
					one++
				case wideRow:
					wide++
				default:
					narrow++
				}
			}
			if one == 0 || narrow == 0 || wide == 0 {
				t.Fatalf("the tagger's rows: %d one-label, %d narrow, %d wide; want some of each", one, narrow, wide)
			}
		}
		ws := engine.NewWorkspace()
		var buf, own prune.Buf
		var out Output
		differ := 0
		for range 40 {
			T := 1 + r.IntN(6)
			seq := randomSeq(r, nattr, T, tc.values)
			if err := tg.Tag(seq, Options{AllMarginals: true}, &out); err != nil {
				t.Fatal(err)
			}
			emit, pemit := make([]float64, T*M), make([]float64, T*M)
			m.State.Score(emit, seq)
			m.Pruner.Score(pemit, seq)
			if m.Sub != nil {
				sbuf := make([]float64, T*m.Sub.NSub)
				m.Sub.AddScores(emit, seq, sbuf)
				ps := *m.Sub
				ps.W = m.PrunerSub
				ps.AddScores(pemit, seq, sbuf)
			}
			sets := m.Prune.Sets(&buf, pemit, M, nil, nil)
			got, err := tg.PrunedSets(nil, seq, nil)
			if err != nil || len(got) != T {
				t.Fatalf("PrunedSets: %d sets for %d positions (%v)", len(got), T, err)
			}
			for k := range got {
				if !slices.Equal(got[k], sets[k]) {
					t.Fatalf("PrunedSets at %d: %v, the pruner's %v", k, got[k], sets[k])
				}
			}
			for k, s := range m.Prune.Sets(&own, emit, M, nil, nil) {
				if !slices.Equal(s, sets[k]) {
					differ++
				}
			}
			taggedOver(t, tg, ws, &out, seq, nil, emit, sets)
		}
		if differ == 0 {
			t.Fatal("the pruner's sets always equal the model's own: the test checks nothing")
		}
	}
	// Refused: a pruner without a rule, or of another shape, or without
	// sub-label weights beside the model's.
	m := randomModel(t, r, spec{m: 4, attrs: 10, layout: sparse.SparseRows})
	withPruner(t, r, m)
	if err := m.WriteFile(filepath.Join(t.TempDir(), "bad.model")); err == nil {
		t.Error("a model with a pruner and no pruning rule written")
	}
	m.Prune = &prune.Rule{Max: 2}
	m.Pruner = randomModel(t, r, spec{m: 4, attrs: 10, layout: sparse.DenseRows}).State
	if err := m.WriteFile(filepath.Join(t.TempDir(), "bad.model")); err == nil {
		t.Error("a model with a dense pruner over sparse weights written")
	}
	m.Pruner = nil
	withPruner(t, r, m)
	m.Sub = &sparse.SubLabels{}
	if err := m.checkPruner(); err == nil {
		t.Error("a pruner without sub-label weights beside the model's accepted")
	}
}
