package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/internal/prune"
	"github.com/simdcrf/simdcrf/sparse"
)

// withPruner1 gives m (with a pruner, and sub-label weights if it is to
// have them) a first-order pruner under rule: random weights of its state
// weights' shape, transitions of its structure (the same exception pairs),
// sub-label weights if m has them.
func withPruner1(t *testing.T, r *rand.Rand, m *Model, rule prune.Rule) {
	t.Helper()
	w := sparse.MakeParams(m.State.NumParams())
	for k := range w {
		w[k] = 2 * r.NormFloat64()
	}
	state, err := WeightsLike(m.State, w)
	if err != nil {
		t.Fatal(err)
	}
	M := m.Labels.Len()
	start, end := make([]float64, M), make([]float64, M)
	for j := range M {
		start[j], end[j] = r.NormFloat64(), r.NormFloat64()
	}
	var tr *engine.Transitions
	if _, exc := m.Trans.Exceptions(); m.Trans.Structure() == engine.Tied {
		pe := slices.Clone(exc)
		for k := range pe {
			pe[k].Score = 2 * r.NormFloat64()
		}
		tr, err = engine.NewTied(M, r.NormFloat64(), pe, start, end)
	} else {
		score := make([]float64, M*M)
		for k := range score {
			score[k] = 2 * r.NormFloat64()
		}
		tr, err = engine.NewTransitionsWith(M, score, start, end, engine.Options{Structure: engine.Dense})
	}
	if err != nil {
		t.Fatal(err)
	}
	p := &FirstOrderPruner{Rule: rule, State: state, Trans: tr}
	if m.Sub != nil {
		p.Sub = make([]float64, len(m.Sub.W))
		for k := range p.Sub {
			p.Sub[k] = 2 * r.NormFloat64()
		}
	}
	m.Pruner1 = p
}

// pruner1Model returns a random model of spec s with a pruner, a
// first-order pruner (Max 2, Threshold 0.05 after a zeroth-order Max 4,
// Threshold 0.01) and, if sub, sub-label weights.
func pruner1Model(t *testing.T, r *rand.Rand, s spec, sub bool) *Model {
	t.Helper()
	m := randomModel(t, r, s)
	m.Prune = &prune.Rule{Max: 4, Threshold: 0.01}
	withPruner(t, r, m)
	if sub {
		withSub(t, r, m)
	}
	withPruner1(t, r, m, prune.Rule{Max: 2, Threshold: 0.05})
	if err := m.check(); err != nil {
		t.Fatal(err)
	}
	return m
}

// samePruner1 fails unless a and b hold equal first-order pruners.
func samePruner1(t *testing.T, a, b *FirstOrderPruner) {
	t.Helper()
	if a == nil || b == nil {
		t.Fatalf("first-order pruners %v and %v", a, b)
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	if a.Rule != b.Rule {
		t.Fatalf("first-order rule %+v vs %+v", a.Rule, b.Rule)
	}
	if !sameShape(a.State, b.State) || !slices.EqualFunc(params(a.State), params(b.State), same) {
		t.Fatal("first-order pruner weights differ")
	}
	if (a.Sub == nil) != (b.Sub == nil) || !slices.EqualFunc(a.Sub, b.Sub, same) {
		t.Fatal("first-order pruner sub-label weights differ")
	}
	ta, tb := a.Trans, b.Trans
	if ta.Structure() != tb.Structure() || ta.Labels() != tb.Labels() {
		t.Fatalf("first-order transitions %v/%d vs %v/%d", ta.Structure(), ta.Labels(), tb.Structure(), tb.Labels())
	}
	M := ta.Labels()
	for i := range M {
		if !same(ta.Start(i), tb.Start(i)) || !same(ta.End(i), tb.End(i)) {
			t.Fatalf("first-order start/end %d differ", i)
		}
		for j := range M {
			if !same(ta.Score(i, j), tb.Score(i, j)) {
				t.Fatalf("first-order transition %d→%d differs", i, j)
			}
		}
	}
	da, ea := ta.Exceptions()
	db, eb := tb.Exceptions()
	if !same(da, db) || !slices.Equal(ea, eb) {
		t.Fatal("first-order exceptions differ")
	}
}

// TestPruner1Model: a first-order pruner (prune.by=first) survives
// WriteFile then Load, Map and Decode (dense and tied transitions, with
// and without sub-label weights) and tags as before; Compact and
// DropZeros keep it; Dump mentions it; a model whose pruner does not fit
// is refused.
func TestPruner1Model(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	for _, tc := range []struct {
		layout sparse.Layout
		tied   bool
		sub    bool
	}{{sparse.SparseRows, true, false}, {sparse.DenseRows, false, false}, {sparse.SparseRows, false, true}, {sparse.DenseRows, true, true}} {
		m0 := pruner1Model(t, r, spec{m: 8, attrs: 30, layout: tc.layout, tied: tc.tied, labels: 4}, tc.sub)
		path := filepath.Join(t.TempDir(), "pruner1.model")
		if err := m0.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		l, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		mp, unmap, err := Map(path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := m0.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		d, err := Decode(path, b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var out0, out Output
		tg0 := m0.NewTagger()
		for _, m := range []*Model{l, mp, d} {
			sameModel(t, m0, m)
			samePruner1(t, m0.Pruner1, m.Pruner1)
			tg := m.NewTagger()
			for range 10 {
				seq := randomSeq(r, 30, 1+r.IntN(6), true)
				o := Options{Prob: true, AllMarginals: true, NBest: 3}
				if err := tg0.Tag(seq, o, &out0); err != nil {
					t.Fatal(err)
				}
				if err := tg.Tag(seq, o, &out); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out.Labels, out0.Labels) || out.Score != out0.Score || out.LogZ != out0.LogZ ||
					!slices.Equal(out.AllMarginals, out0.AllMarginals) || len(out.NBest) != len(out0.NBest) {
					t.Fatalf("%+v: tagged %v (%v, log Z %v) after loading, %v (%v, log Z %v) before",
						tc, out.Labels, out.Score, out.LogZ, out0.Labels, out0.Score, out0.LogZ)
				}
			}
		}
		if err := unmap(); err != nil {
			t.Fatal(err)
		}
		if c, err := l.Compact(); err != nil || c.Pruner1 != l.Pruner1 {
			t.Fatalf("Compact dropped the first-order pruner (%v)", err)
		}
		if c, _, _, err := l.DropZeros(); err != nil || c.Pruner1 != l.Pruner1 {
			t.Fatalf("DropZeros dropped the first-order pruner (%v)", err)
		}
		var dump bytes.Buffer
		if err := l.Dump(&dump, 3); err != nil || !strings.Contains(dump.String(), "first-order pruner's (") ||
			!strings.Contains(dump.String(), "at most 2 labels per position, marginal ≥ 0.05 × the best") {
			t.Errorf("Dump does not describe the first-order pruner (%v)", err)
		}
	}

	// Refused by New's checks (and so by WriteFile).
	bad := []struct {
		what   string
		change func(m *Model)
		want   string
	}{
		{"no zeroth-order pruner", func(m *Model) { m.Pruner = nil; m.PrunerSub = nil }, "needs a zeroth-order pruner"},
		{"bad rule", func(m *Model) { m.Pruner1.Rule.Max = 0 }, "first-order pruner: prune:"},
		{"other shape", func(m *Model) {
			m.Pruner1.State = randomModel(t, r, spec{m: 8, attrs: 30, layout: sparse.DenseRows}).State
		}, "first-order pruner weights of another shape"},
		{"NaN weight", func(m *Model) {
			w := slices.Clone(params(m.Pruner1.State))
			w[3] = math.NaN()
			m.Pruner1.State, _ = WeightsLike(m.State, w)
		}, "first-order pruner weight 3 is NaN"},
		{"no transitions", func(m *Model) { m.Pruner1.Trans = nil }, "no transitions"},
		{"dense transitions", func(m *Model) {
			m.Pruner1.Trans = randomModel(t, r, spec{m: 8, attrs: 1, layout: sparse.DenseRows}).Trans
		}, "dense transitions, the model's are tied"},
		{"other labels", func(m *Model) {
			m.Pruner1.Trans = randomModel(t, r, spec{m: 7, attrs: 1, layout: sparse.DenseRows, tied: true}).Trans
		}, "over 7 labels, want 8"},
		{"other exceptions", func(m *Model) {
			def, exc := m.Pruner1.Trans.Exceptions()
			exc = slices.Clone(exc)
			exc[0], exc[1] = exc[1], exc[0]
			m.Pruner1.Trans, _ = engine.NewTied(8, def, exc, nil, nil)
		}, "transition exception 0 is"},
		{"no sub-label weights", func(m *Model) { m.Pruner1.Sub = nil }, "sub-label weights exactly when"},
		{"short sub-label weights", func(m *Model) { m.Pruner1.Sub = m.Pruner1.Sub[1:] }, "sub-label weights exactly when"},
		{"NaN sub-label weight", func(m *Model) {
			m.Pruner1.Sub = slices.Clone(m.Pruner1.Sub)
			m.Pruner1.Sub[2] = math.Inf(1)
		}, "sub-label weight 2 is +Inf"},
	}
	for _, tc := range bad {
		m := pruner1Model(t, r, spec{m: 8, attrs: 30, layout: sparse.SparseRows, tied: true}, true)
		tc.change(m)
		err := m.WriteFile(filepath.Join(t.TempDir(), "bad.model"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.what, err, tc.want)
		}
	}
}

// editSection returns a copy of b with edit applied to it and to its
// section kind's table entry e (kind at e[0:], flags at e[4:], offset at
// e[8:], length at e[16:]), the checksum fixed up.
func editSection(t *testing.T, b []byte, kind uint32, edit func(b, e []byte)) []byte {
	t.Helper()
	b = bytes.Clone(b)
	le := binary.LittleEndian
	for i := range int(le.Uint32(b[24:])) {
		if e := b[headerSize+entrySize*i:]; le.Uint32(e) == kind {
			edit(b, e[:entrySize])
			fixup(b)
			return b
		}
	}
	t.Fatalf("no section of kind %d", kind)
	return nil
}

// TestPruner1SectionsDamaged: damaged, missing or stray first-order pruner
// sections are refused with an error naming the file and the problem.
func TestPruner1SectionsDamaged(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	le := binary.LittleEndian
	drop := dropSection
	shorter := func(_, e []byte) { le.PutUint64(e[16:], le.Uint64(e[16:])-8) }
	longer := func(_, e []byte) { le.PutUint64(e[16:], le.Uint64(e[16:])+8) }
	for _, tied := range []bool{true, false} {
		good := goodBytes(t, pruner1Model(t, r, spec{m: 6, attrs: 20, layout: sparse.SparseRows, tied: tied}, true))
		for _, tc := range []struct {
			what string
			kind uint32
			edit func(b, e []byte)
			want string
		}{
			{"no rule", secPruner1Rule, drop, "incomplete first-order pruner"},
			{"no weights", secPruner1State, drop, "incomplete first-order pruner"},
			{"no transitions", secPruner1Trans, drop, "incomplete first-order pruner"},
			{"no sub-label weights", secPruner1Sub, drop, "no first-order pruner sub-label section"},
			{"no zeroth-order pruner", secPruner, drop, "pruner sub-label section without the pruner's weights"},
			{"no pruning", secPrune, drop, "pruner sections without a pruning rule"},
			{"short rule", secPruner1Rule, shorter, "first-order pruning section of 8 bytes, want 16"},
			{"short weights", secPruner1State, shorter, "first-order pruner section of"},
			{"short transitions", secPruner1Trans, shorter, "first-order pruner transitions section of"},
			{"long transitions", secPruner1Trans, longer, "first-order pruner transitions section of"},
			{"short sub-label weights", secPruner1Sub, shorter, "first-order pruner sub-label section of"},
		} {
			wantErr(t, editSection(t, good, tc.kind, tc.edit), tc.what, tc.want)
		}
		// The zeroth-order pruner's sections both gone.
		b := editSection(t, editSection(t, good, secPruner, drop), secPrunerSub, drop)
		wantErr(t, b, "no zeroth-order pruner at all", "first-order pruner sections without a zeroth-order pruner")
		// A rule of Max 0 and a NaN transition score, behind a good
		// checksum.
		b = editSection(t, good, secPruner1Rule, func(b, e []byte) {
			le.PutUint32(b[le.Uint64(e[8:]):], 0)
		})
		wantErr(t, b, "max 0", "bad first-order pruning")
		b = editSection(t, good, secPruner1Trans, func(b, e []byte) {
			off := le.Uint64(e[8:]) + 8*uint64(2*6) // the first score after start and end
			le.PutUint64(b[off:], math.Float64bits(math.NaN()))
		})
		wantErr(t, b, "NaN transition", "bad first-order pruner transitions")
		// Random bytes in the first-order pruner's sections or their
		// table entries: errors naming the file, or a usable model.
		var spans [][2]uint64
		for i := range int(le.Uint32(good[24:])) {
			e := good[headerSize+entrySize*i:]
			if k := le.Uint32(e); k >= secPruner1Rule && k <= secPruner1Sub {
				at := uint64(headerSize + entrySize*i)
				spans = append(spans, [2]uint64{at, at + entrySize}, [2]uint64{le.Uint64(e[8:]), le.Uint64(e[8:]) + le.Uint64(e[16:])})
			}
		}
		for range 300 {
			b := bytes.Clone(good)
			for range 1 + r.IntN(3) {
				sp := spans[r.IntN(len(spans))]
				b[sp[0]+r.Uint64N(sp[1]-sp[0])] = byte(r.IntN(256))
			}
			fixup(b)
			checkDecode(t, "mutated", b)
		}
	}
	// A sub-label section in a model without sub-label weights.
	m := pruner1Model(t, r, spec{m: 6, attrs: 20, layout: sparse.DenseRows}, false)
	secs := map[uint32][]byte{}
	all, err := m.sections()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		secs[s.kind] = s.data
	}
	secs[secPruner1Sub] = make([]byte, 16)
	l := *m
	l.Pruner1 = nil
	if err := parsePruner1("x.model", secs, &l); err == nil || !strings.Contains(err.Error(), "x.model") ||
		!strings.Contains(err.Error(), "model without sub-label weights") {
		t.Errorf("sub-label section without sub-label weights: %v", err)
	}
}

// TestPruner1Sets: the tagger's sets and labelling under a first-order
// pruner equal brute force's, first and second order: the zeroth-order
// sets S0 from the pruner's scores; the first-order pruner's exact
// marginals by enumerating every labelling within S0; S1 the labels
// within S0 of marginal at least Threshold × the position's best, at most
// Max (ties kept together); the Viterbi path the best labelling within
// S1 by enumeration.
func TestPruner1Sets(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 5))
	for _, tc := range []struct {
		layout sparse.Layout
		tied   bool
		sub    bool
		order2 bool
	}{
		{sparse.SparseRows, true, false, false}, {sparse.DenseRows, false, true, false},
		{sparse.SparseRows, false, false, true}, {sparse.SparseRows, true, true, true},
	} {
		const M, nattr = 7, 25
		m := pruner1Model(t, r, spec{m: M, attrs: nattr, layout: tc.layout, tied: tc.tied, labels: 5}, tc.sub)
		if tc.order2 {
			withTrigrams(t, r, m, 0.3)
		}
		rule0, rule1 := *m.Prune, m.Pruner1.Rule
		tri := map[[3]int32]float64{}
		if g := m.Trigrams; g != nil {
			for k := range g.Len() {
				h, i, j := g.Triple(k)
				tri[[3]int32{h, i, j}] = g.Score(k)
			}
		}
		tg := m.NewTagger()
		var buf prune.Buf
		narrowed, checked, skipped := 0, 0, 0
		for range 60 {
			T := 1 + r.IntN(5)
			seq := randomSeq(r, nattr, T, true)
			// Emission scores over all labels: the model's, the
			// zeroth-order pruner's, the first-order one's.
			emit, pemit, e1 := make([]float64, T*M), make([]float64, T*M), make([]float64, T*M)
			m.State.Score(emit, seq)
			m.Pruner.Score(pemit, seq)
			m.Pruner1.State.Score(e1, seq)
			if m.Sub != nil {
				sbuf := make([]float64, T*m.Sub.NSub)
				m.Sub.AddScores(emit, seq, sbuf)
				for _, x := range []struct {
					w []float64
					e []float64
				}{{m.PrunerSub, pemit}, {m.Pruner1.Sub, e1}} {
					s := *m.Sub
					s.W = x.w
					s.AddScores(x.e, seq, sbuf)
				}
			}
			s0 := rule0.Sets(&buf, pemit, M, nil, nil)

			// The first-order pruner's marginals within S0.
			tr1 := m.Pruner1.Trans
			marg := make([]float64, T*M)
			var paths [][]int32
			var scores []float64
			eachPath(s0, func(y []int32) {
				paths = append(paths, slices.Clone(y))
				scores = append(scores, chainScore(tr1, nil, e1, y, M))
			})
			top := slices.Max(scores)
			z := 0.0
			for _, s := range scores {
				z += math.Exp(s - top)
			}
			for k, y := range paths {
				p := math.Exp(scores[k]-top) / z
				for i, j := range y {
					marg[i*M+int(j)] += p
				}
			}
			// S1 by the rule's definition, or nil at a position too close
			// to call (a label within rounding of the threshold or of the
			// cap's cut).
			s1 := make([][]int32, T)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(a, b) }
			for i, set := range s0 {
				v := func(y int32) float64 { return marg[i*M+int(y)] }
				byMarg := slices.Clone(set)
				sort.SliceStable(byMarg, func(a, b int) bool { return v(byMarg[a]) > v(byMarg[b]) })
				cut := rule1.Threshold * v(byMarg[0])
				if len(byMarg) > rule1.Max {
					cut = max(cut, v(byMarg[rule1.Max-1]))
				}
				tight := false
				for _, y := range set {
					tight = tight || near(v(y), rule1.Threshold*v(byMarg[0]))
				}
				if len(byMarg) > rule1.Max && near(v(byMarg[rule1.Max-1]), v(byMarg[rule1.Max])) {
					tight = true
				}
				if tight {
					skipped++
					continue
				}
				for _, y := range set {
					if v(y) >= cut {
						s1[i] = append(s1[i], y)
					}
				}
			}

			got, err := tg.PrunedSets(nil, seq, nil)
			if err != nil || len(got) != T {
				t.Fatalf("PrunedSets: %d sets for %d positions (%v)", len(got), T, err)
			}
			for i := range T {
				if !isSubset(got[i], s0[i]) || len(got[i]) > rule1.Max || len(got[i]) == 0 {
					t.Fatalf("%+v: S1 at %d is %v: not a non-empty subset of S0 %v of at most %d labels", tc, i, got[i], s0[i], rule1.Max)
				}
				if len(got[i]) < len(s0[i]) {
					narrowed++
				}
				if s1[i] == nil {
					continue
				}
				checked++
				if !slices.Equal(got[i], s1[i]) {
					t.Fatalf("%+v: S1 at %d: tagger %v, brute force %v (S0 %v, marginals %v)", tc, i, got[i], s1[i], s0[i], marg[i*M:(i+1)*M])
				}
			}

			// The best labelling within S1 (the tagger's sets, checked
			// above where they could be).
			var best []int32
			bestScore, second := math.Inf(-1), math.Inf(-1)
			eachPath(got, func(y []int32) {
				s := chainScore(m.Trans, tri, emit, y, M)
				if s > bestScore {
					best, bestScore, second = slices.Clone(y), s, bestScore
				} else if s > second {
					second = s
				}
			})
			path, score, err := tg.Viterbi(nil, seq)
			if err != nil {
				t.Fatal(err)
			}
			if near(bestScore, second) {
				continue
			}
			if !slices.Equal(path, best) || math.Abs(score-bestScore) > 1e-9*math.Max(1, math.Abs(bestScore)) {
				t.Fatalf("%+v: Viterbi %v (%v), brute force within S1 %v (%v)", tc, path, score, best, bestScore)
			}
		}
		if narrowed == 0 || checked < 100 || skipped > checked/10 {
			t.Fatalf("%+v: S1 narrower than S0 at %d positions, %d checked, %d too close to call: the test checks too little", tc, narrowed, checked, skipped)
		}
	}
}

// eachPath calls f with every labelling whose position i takes a label of
// sets[i] (f must not keep y).
func eachPath(sets [][]int32, f func(y []int32)) {
	y := make([]int32, len(sets))
	var rec func(i int)
	rec = func(i int) {
		if i == len(sets) {
			f(y)
			return
		}
		for _, j := range sets[i] {
			y[i] = j
			rec(i + 1)
		}
	}
	rec(0)
}

// chainScore is the unnormalised score of labelling y: start, emissions,
// transitions, trigram scores tri (nil for a first-order chain), end.
func chainScore(tr *engine.Transitions, tri map[[3]int32]float64, emit []float64, y []int32, M int) float64 {
	s := tr.Start(int(y[0])) + tr.End(int(y[len(y)-1]))
	for i, j := range y {
		s += emit[i*M+int(j)]
		if i > 0 {
			s += tr.Score(int(y[i-1]), int(j))
		}
		if i > 1 {
			s += tri[[3]int32{y[i-2], y[i-1], j}]
		}
	}
	return s
}

func isSubset(a, b []int32) bool {
	for _, y := range a {
		if !slices.Contains(b, y) {
			return false
		}
	}
	return true
}

// TestTaggerPruner1 runs a first-order-pruned model's tagger from many
// goroutines (each sequence tags as it does alone), then checks that
// steady-state tagging allocates nothing (M = 40: the zeroth-order sets
// take the engine's restricted forward–backward).
func TestTaggerPruner1(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 5))
	for _, tc := range []struct {
		layout sparse.Layout
		tied   bool
		sub    bool
	}{{sparse.SparseRows, true, true}, {sparse.DenseRows, false, false}} {
		m := randomModel(t, r, spec{m: 40, attrs: 60, layout: tc.layout, tied: tc.tied, labels: 12})
		m.Prune = &prune.Rule{Max: 6, Threshold: 0.001}
		withPruner(t, r, m)
		if tc.sub {
			withSub(t, r, m)
		}
		withPruner1(t, r, m, prune.Rule{Max: 3, Threshold: 0.01})
		tg := m.NewTagger()
		seqs := make([]sparse.Seq, 40)
		want := make([][]int32, len(seqs))
		for k := range seqs {
			seqs[k] = randomSeq(r, 60, 1+r.IntN(20), true)
			var err error
			if want[k], _, err = tg.Viterbi(nil, seqs[k]); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				var out Output
				for k := range seqs {
					k = (k + 7*g) % len(seqs)
					if err := tg.Tag(seqs[k], Options{Marginals: true}, &out); err != nil {
						t.Error(err)
						return
					}
					if !slices.Equal(out.Labels, want[k]) {
						t.Errorf("sequence %d tagged %v concurrently, %v alone", k, out.Labels, want[k])
						return
					}
				}
			})
		}
		wg.Wait()
		if raceEnabled {
			continue // (the race detector empties sync.Pool at random)
		}
		seq := randomSeq(r, 60, 30, true)
		dst := make([]int32, 0, 64)
		var out Output
		o := Options{Prob: true, Marginals: true, NBest: 2}
		tg.Tag(seq, o, &out)
		dst, _, _ = tg.Viterbi(dst, seq)
		if a := testing.AllocsPerRun(50, func() { dst, _, _ = tg.Viterbi(dst, seq) }); a != 0 {
			t.Errorf("%+v: Viterbi: %v allocations per sequence", tc, a)
		}
		if a := testing.AllocsPerRun(50, func() { tg.Tag(seq, o, &out) }); a != 0 {
			t.Errorf("%+v: Tag with -p -i -n: %v allocations per sequence", tc, a)
		}
	}
}

// TestPrunerSectionsStray: a zeroth-order pruner's sections without the
// pruning rule, or its sub-label weights without its weights, are refused
// (a reader that skipped them would tag over all labels).
func TestPrunerSectionsStray(t *testing.T) {
	m := pruner1Model(t, rand.New(rand.NewPCG(37, 3)), spec{m: 6, attrs: 20, layout: sparse.SparseRows, tied: true}, true)
	m.Pruner1 = nil
	good := goodBytes(t, m)
	wantErr(t, editSection(t, good, secPrune, dropSection), "no pruning rule", "pruner sections without a pruning rule")
	wantErr(t, editSection(t, good, secPruner, dropSection), "no pruner weights", "pruner sub-label section without the pruner's weights")
}

// dropSection turns a section's table entry e into one of an unknown,
// optional kind, which readers skip (an editSection edit).
func dropSection(_, e []byte) {
	binary.LittleEndian.PutUint32(e, 99)
	binary.LittleEndian.PutUint32(e[4:], 0)
}

// goodBytes returns m's file, checked to load.
func goodBytes(t *testing.T, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := loadBytes(t, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
