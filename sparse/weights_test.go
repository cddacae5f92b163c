package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/kernels"
)

// forEachTier runs f once per kernel implementation the CPU has.
func forEachTier(t *testing.T, f func(t *testing.T)) {
	for _, name := range kernels.Impls() {
		t.Run(name, func(t *testing.T) {
			restore, err := kernels.Use(name)
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
			f(t)
		})
	}
}

// weightOf returns the weight of (a, j) in w, 0 if there is none.
func weightOf(w Weights, a, j int32) float64 {
	if k := w.Index(a, j); k >= 0 {
		return w.Params()[k]
	}
	return 0
}

// refScore is the straightforward loop Score must match.
func refScore(w Weights, s Seq) []float64 {
	M := w.Labels()
	emit := make([]float64, s.Len()*M)
	for t := range s.Len() {
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			for j := range M {
				emit[t*M+j] += s.Value(int(f)) * weightOf(w, s.IDs[f], int32(j))
			}
		}
	}
	return emit
}

func refGradient(w Weights, g []float64, s Seq, p []float64, c float64) {
	M := w.Labels()
	for t := range s.Len() {
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			for j := range M {
				if k := w.Index(s.IDs[f], int32(j)); k >= 0 {
					g[k] += c * s.Value(int(f)) * p[t*M+j]
				}
			}
		}
	}
}

func refObserved(w Weights, g []float64, s Seq, labels []int32, c float64) {
	for t := range s.Len() {
		for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
			if k := w.Index(s.IDs[f], labels[t]); k >= 0 {
				g[k] += c * s.Value(int(f))
			}
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func checkNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !near(got[i], want[i], tol) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// randModel builds a random pattern from random labelled data and returns
// it with the data.
func randModel(r *rand.Rand, numAttrs, m, nseq int, withVals bool) (*Pattern, []Seq) {
	var seqs []Seq
	b, err := NewPatternBuilder(numAttrs, m)
	if err != nil {
		panic(err)
	}
	for i := range nseq {
		s := randSeq(r, r.IntN(9), numAttrs, m, withVals && i%2 == 0)
		seqs = append(seqs, s)
		if err := b.AddSeq(s, false); err != nil {
			panic(err)
		}
	}
	p, err := b.Build()
	if err != nil {
		panic(err)
	}
	return p, seqs
}

func randParams(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// TestAgainstReference checks Score, AddGradient and AddObserved of both
// layouts against the reference loops, in every kernel tier.
func TestAgainstReference(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, m := range []int{1, 2, 3, 8, 9, 17, 45} {
			numAttrs := 1 + r.IntN(40)
			p, seqs := randModel(r, numAttrs, m, 20, true)
			// Sparse data that was not used to build the pattern
			// (pairs outside the pattern).
			for range 5 {
				seqs = append(seqs, randSeq(r, r.IntN(9), numAttrs, m, true))
			}
			for _, ld := range []int{m, (m + 7) &^ 7} {
				dense, err := NewDenseStride(numAttrs, m, ld, randParams(r, numAttrs*ld))
				if err != nil {
					t.Fatal(err)
				}
				sp, err := NewSparse(p, randParams(r, p.NumPairs()))
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range []Weights{dense, sp} {
					name := fmt.Sprintf("M=%d ld=%d %v", m, ld, w.Layout())
					for i, s := range seqs {
						T := s.Len()
						emit := randParams(r, T*m+3) // garbage to be overwritten; guard after
						guard := slices.Clone(emit[T*m:])
						w.Score(emit, s)
						checkNear(t, fmt.Sprintf("%s seq %d: emit", name, i), emit[:T*m], refScore(w, s), 1e-12)
						checkNear(t, name+" guard", emit[T*m:], guard, 0)

						marg := randParams(r, T*m)
						c := r.NormFloat64()
						g := randParams(r, w.NumParams()+2)
						want := slices.Clone(g)
						w.AddGradient(g, s, marg, c)
						refGradient(w, want, s, marg, c)
						checkNear(t, fmt.Sprintf("%s seq %d: gradient", name, i), g, want, 1e-12)

						w.AddObserved(g, s, s.Labels, c)
						refObserved(w, want, s, s.Labels, c)
						checkNear(t, fmt.Sprintf("%s seq %d: observed", name, i), g, want, 1e-12)
					}
				}
			}
		}
	})
}

// TestSparseMatchesDense: with dense weights that are zero off the pattern,
// both layouts give the same emissions, and the same gradients on the
// pattern.
func TestSparseMatchesDense(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, m := range []int{2, 5, 9, 33} {
			numAttrs := 30
			p, seqs := randModel(r, numAttrs, m, 30, true)
			sp, _ := NewSparse(p, randParams(r, p.NumPairs()))
			dense, _ := NewDense(numAttrs, m, make([]float64, numAttrs*m))
			var labs []int32
			for a := range int32(numAttrs) {
				labs = p.AttrLabels(labs[:0], a)
				for _, y := range labs {
					dense.Params()[dense.Index(a, y)] = sp.Params()[sp.Index(a, y)]
				}
			}
			for i, s := range seqs {
				T := s.Len()
				e1, e2 := make([]float64, T*m), make([]float64, T*m)
				sp.Score(e1, s)
				dense.Score(e2, s)
				checkNear(t, fmt.Sprintf("M=%d seq %d: emit", m, i), e1, e2, 1e-12)

				marg := randParams(r, T*m)
				g1, g2 := make([]float64, sp.NumParams()), make([]float64, dense.NumParams())
				sp.AddGradient(g1, s, marg, 0.5)
				dense.AddGradient(g2, s, marg, 0.5)
				sp.AddObserved(g1, s, s.Labels, -1)
				dense.AddObserved(g2, s, s.Labels, -1)
				for a := range int32(numAttrs) {
					labs = p.AttrLabels(labs[:0], a)
					for _, y := range labs {
						if x, z := g1[sp.Index(a, y)], g2[dense.Index(a, y)]; !near(x, z, 1e-12) {
							t.Fatalf("M=%d seq %d: gradient of (%d,%d): sparse %v, dense %v", m, i, a, y, x, z)
						}
					}
				}
			}
		}
	})
}

// TestFullPatternIsDense: the possible-states pattern makes sparse rows
// equivalent to dense ones, parameter for parameter.
func TestFullPatternIsDense(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const numAttrs, m = 12, 7
	full, err := FullPattern(numAttrs, m)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCorpus()
	for range 40 {
		c.Append(randSeq(r, 1+r.IntN(6), numAttrs, m, false))
	}
	ps, err := BuildPattern(c, numAttrs, m, true)
	if err != nil {
		t.Fatal(err)
	}
	counts := c.AttrCounts(numAttrs)
	for a := range int32(numAttrs) {
		got := ps.AttrLabels(nil, a)
		if counts[a] > 0 && !slices.Equal(got, full.AttrLabels(nil, a)) || counts[a] == 0 && len(got) != 0 {
			t.Fatalf("possible states: attribute %d (seen %d times) has labels %v", a, counts[a], got)
		}
	}
	params := randParams(r, numAttrs*m)
	sp, _ := NewSparse(full, params)
	dense, _ := NewDense(numAttrs, m, params)
	for i := range c.Len() {
		s := c.Seq(i)
		e1, e2 := make([]float64, s.Len()*m), make([]float64, s.Len()*m)
		sp.Score(e1, s)
		dense.Score(e2, s)
		checkNear(t, "emit", e1, e2, 1e-12)
	}
	if ChooseLayout(full, counts, DefaultDenseBudget) != DenseRows {
		t.Fatal("ChooseLayout picks sparse rows for a full pattern")
	}
}

func TestPattern(t *testing.T) {
	b, _ := NewPatternBuilder(5, 300)
	pairs := [][2]int32{{4, 299}, {0, 3}, {0, 1}, {4, 0}, {0, 3}, {2, 256}}
	for _, pr := range pairs {
		if err := b.Add(pr[0], pr[1]); err != nil {
			t.Fatal(err)
		}
	}
	if b.Add(5, 0) == nil || b.Add(0, 300) == nil || b.Add(-1, 0) == nil {
		t.Fatal("out-of-range pair accepted")
	}
	p, _ := b.Build()
	if p.NumPairs() != 5 || p.NumAttrs() != 5 || p.Labels() != 300 {
		t.Fatalf("pattern sizes %d %d %d", p.NumPairs(), p.NumAttrs(), p.Labels())
	}
	want := map[int32][]int32{0: {1, 3}, 1: nil, 2: {256}, 3: nil, 4: {0, 299}}
	k := 0
	for a := range int32(5) {
		got := p.AttrLabels(nil, a)
		if !slices.Equal(got, want[a]) {
			t.Fatalf("attribute %d: labels %v, want %v", a, got, want[a])
		}
		if p.RowStart(a) != k {
			t.Fatalf("RowStart(%d) = %d, want %d", a, p.RowStart(a), k)
		}
		for _, y := range got {
			if p.Index(a, y) != k {
				t.Fatalf("Index(%d,%d) = %d, want %d", a, y, p.Index(a, y), k)
			}
			k++
		}
	}
	if p.Index(0, 2) != -1 || p.Index(1, 0) != -1 || p.Index(9, 0) != -1 || p.Index(0, 999) != -1 {
		t.Fatal("Index finds pairs outside the pattern")
	}
	q, err := NewPattern(300, []int32{0, 2, 2, 3, 3, 5}, []int32{1, 3, 256, 0, 299})
	if err != nil {
		t.Fatal(err)
	}
	for a := range int32(5) {
		if !slices.Equal(q.AttrLabels(nil, a), want[a]) {
			t.Fatal("NewPattern differs from the builder's")
		}
	}
	for name, c := range map[string]struct {
		ptr, lab []int32
	}{
		"start":   {[]int32{1, 1}, []int32{}},
		"end":     {[]int32{0, 2}, []int32{1}},
		"descend": {[]int32{0, 2, 1}, []int32{1, 2}},
		"order":   {[]int32{0, 2}, []int32{2, 1}},
		"dup":     {[]int32{0, 2}, []int32{1, 1}},
		"range":   {[]int32{0, 1}, []int32{300}},
	} {
		if _, err := NewPattern(300, c.ptr, c.lab); err == nil {
			t.Errorf("%s: NewPattern accepted %v %v", name, c.ptr, c.lab)
		}
		lab16 := make([]uint16, len(c.lab))
		for k, y := range c.lab {
			lab16[k] = uint16(y)
		}
		if _, err := PatternView(300, c.ptr, lab16); err == nil {
			t.Errorf("%s: PatternView accepted %v %v", name, c.ptr, c.lab)
		}
	}
	// A row end past the labels, then a descent back to their end.
	if _, err := PatternView(300, []int32{0, 9, 1}, []uint16{1}); err == nil {
		t.Error("PatternView accepted a row past the labels")
	}
	v, err := PatternView(300, []int32{0, 2, 2, 3, 3, 5}, []uint16{1, 3, 256, 0, 299})
	if err != nil {
		t.Fatal(err)
	}
	for a := range int32(5) {
		if !slices.Equal(v.AttrLabels(nil, a), want[a]) || v.RowStart(a) != q.RowStart(a) {
			t.Fatal("PatternView differs from NewPattern")
		}
	}
	if _, err := NewPattern(MaxSparseLabels+1, []int32{0}, nil); err == nil {
		t.Fatal("too many labels accepted")
	}
	// Unlabelled data gives no pattern unless possibleStates.
	if err := b.AddSeq(Seq{Ptr: []int32{0, 1}, IDs: []int32{0}}, false); err == nil {
		t.Fatal("unlabelled sequence accepted")
	}
	if err := b.AddSeq(Seq{Ptr: []int32{0, 1}, IDs: []int32{7}, Labels: []int32{0}}, false); err == nil {
		t.Fatal("bad attribute id accepted")
	}
}

func TestConstructorErrors(t *testing.T) {
	if _, err := NewDense(3, 4, make([]float64, 11)); err == nil {
		t.Fatal("short params accepted")
	}
	if _, err := NewDense(3, 0, nil); err == nil {
		t.Fatal("M = 0 accepted")
	}
	if _, err := NewDenseStride(3, 4, 3, make([]float64, 12)); err == nil {
		t.Fatal("ld < M accepted")
	}
	p, _ := FullPattern(3, 4)
	if _, err := NewSparse(p, make([]float64, 11)); err == nil {
		t.Fatal("short params accepted")
	}
	params := make([]float64, 20) // longer than needed: transitions may follow
	for _, l := range []Layout{DenseRows, SparseRows} {
		w, err := New(l, p, params)
		if err != nil {
			t.Fatal(err)
		}
		if w.NumParams() != 12 || len(w.Params()) != 12 || w.Layout() != l || w.Labels() != 4 || w.NumAttrs() != 3 {
			t.Fatalf("%v: sizes %d %d %d %d", l, w.NumParams(), len(w.Params()), w.Labels(), w.NumAttrs())
		}
		w2, err := w.WithParams(make([]float64, 12))
		if err != nil || w2.NumParams() != 12 {
			t.Fatal("WithParams", err)
		}
		if _, err := w.WithParams(make([]float64, 5)); err == nil {
			t.Fatal("WithParams accepted short params")
		}
	}
	if _, err := New(Layout(7), p, params); err == nil {
		t.Fatal("unknown layout accepted")
	}
}

// TestPanicsOnMisuse: short output slices are programming errors.
func TestPanicsOnMisuse(t *testing.T) {
	p, _ := FullPattern(3, 4)
	s := Seq{Ptr: []int32{0, 1, 1}, IDs: []int32{2}}
	for _, l := range []Layout{DenseRows, SparseRows} {
		w, _ := New(l, p, make([]float64, 12))
		for name, f := range map[string]func(){
			"Score":       func() { w.Score(make([]float64, 7), s) },
			"AddGradient": func() { w.AddGradient(make([]float64, 12), s, make([]float64, 7), 1) },
			"AddObserved": func() { w.AddObserved(make([]float64, 12), s, []int32{0}, 1) },
			"label":       func() { w.AddObserved(make([]float64, 12), s, []int32{0, 4}, 1) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%v %s: no panic", l, name)
					}
				}()
				f()
			}()
		}
	}
}

func TestNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const numAttrs, m = 50, 9
	p, _ := randModel(r, numAttrs, m, 30, false)
	dense, _ := NewDense(numAttrs, m, randParams(r, numAttrs*m))
	sp, _ := NewSparse(p, randParams(r, p.NumPairs()))
	for _, vals := range []bool{false, true} {
		s := randSeq(r, 20, numAttrs, m, vals)
		emit := make([]float64, 20*m)
		g := make([]float64, numAttrs*m)
		for _, w := range []Weights{dense, sp} {
			for name, f := range map[string]func(){
				"Score":       func() { w.Score(emit, s) },
				"AddGradient": func() { w.AddGradient(g, s, emit, 0.5) },
				"AddObserved": func() { w.AddObserved(g, s, s.Labels, -1) },
			} {
				f()
				if a := testing.AllocsPerRun(50, f); a != 0 {
					t.Errorf("%v %s (values %v) allocates %v times per call", w.Layout(), name, vals, a)
				}
			}
		}
	}
}

// TestEngineGradient: a tiny CRF from sparse features. The gradient of the
// corpus negative log-likelihood, assembled from Score → engine marginals →
// AddGradient − AddObserved (state weights) and engine's transition
// gradient, must match finite differences of the NLL.
func TestEngineGradient(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		const numAttrs, m = 10, 3
		p, seqs := randModel(r, numAttrs, m, 6, true)
		for _, layout := range []Layout{DenseRows, SparseRows} {
			var nState int
			if layout == DenseRows {
				nState = numAttrs * m
			} else {
				nState = p.NumPairs()
			}
			theta := randParams(r, nState+m*m)
			for i := range theta {
				theta[i] *= 0.5
			}
			ws := engine.NewWorkspace()
			// nll returns the corpus NLL at x, and adds its gradient
			// to g if g is not nil.
			nll := func(x, g []float64) float64 {
				w, err := New(layout, p, x)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := engine.NewTransitions(m, x[nState:], nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				total := 0.0
				for _, s := range seqs {
					T := s.Len()
					if T == 0 {
						continue
					}
					emit := make([]float64, T*m)
					w.Score(emit, s)
					eg := engine.Gradient{}
					marg := make([]float64, T*m)
					if g != nil {
						eg.DTrans = g[nState:]
					}
					v, err := tr.NLL(ws, emit, s.Labels, nil, &eg)
					if err != nil {
						t.Fatal(err)
					}
					total += v
					if g != nil {
						if _, err := tr.Posteriors(ws, emit, nil, &engine.Posteriors{Marginals: marg}); err != nil {
							t.Fatal(err)
						}
						w.AddGradient(g, s, marg, 1)
						w.AddObserved(g, s, s.Labels, -1)
					}
				}
				return total
			}
			g := make([]float64, len(theta))
			nll(theta, g)
			const h = 1e-5
			checked := 0
			for k := range theta {
				if g[k] == 0 && k < nState && r.IntN(4) != 0 {
					continue // mostly weights of unused attributes
				}
				x := slices.Clone(theta)
				x[k] = theta[k] + h
				fp := nll(x, nil)
				x[k] = theta[k] - h
				fm := nll(x, nil)
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-g[k]) > 1e-6*(1+math.Abs(fd)) {
					t.Fatalf("%v: dNLL/dθ[%d] = %v, finite difference %v", layout, k, g[k], fd)
				}
				checked++
			}
			if checked < 10 {
				t.Fatalf("%v: only %d weights checked", layout, checked)
			}
		}
	})
}

// TestDenseBlocks: the touch pass splits sequences into blocks of positions
// (at M = 1024 about 15 features per block); results must not depend on it.
func TestDenseBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const numAttrs, m = 50, 1024
	params := MakeParams(numAttrs * m)
	if len(params) != numAttrs*m || slices.ContainsFunc(params, func(x float64) bool { return x != 0 }) {
		t.Fatal("MakeParams: wrong length or not zeroed")
	}
	fillRand(params, 5)
	w, _ := NewDense(numAttrs, m, params)
	var b Builder
	b.Reset()
	for t := range 12 {
		for range []int{0, 3, 40, 15, 16, 1, 29, 14, 0, 60, 2, 5}[t] {
			b.Add(int32(r.IntN(numAttrs)), r.NormFloat64())
		}
		b.End(int32(r.IntN(m)))
	}
	s := b.Seq()
	T := s.Len()
	marg := randParams(r, T*m)
	run := func(touch bool) ([]float64, []float64) {
		defer func(old bool) { prefetchRows = old }(prefetchRows)
		prefetchRows = touch
		emit := make([]float64, T*m)
		w.Score(emit, s)
		g := make([]float64, numAttrs*m)
		w.AddGradient(g, s, marg, 0.25)
		return emit, g
	}
	e1, g1 := run(true)
	e2, g2 := run(false)
	checkNear(t, "emit", e1, e2, 0)
	checkNear(t, "gradient", g1, g2, 0)
	checkNear(t, "emit vs reference", e1, refScore(w, s), 1e-12)

	// Sparse rows: blocks of at most 128 features.
	p, _ := randModel(r, numAttrs, m, 40, false)
	w2, _ := NewSparse(p, randParams(r, p.NumPairs()))
	w = nil
	run2 := func(touch bool) ([]float64, []float64) {
		defer func(old bool) { prefetchRows = old }(prefetchRows)
		prefetchRows = touch
		emit := make([]float64, T*m)
		w2.Score(emit, s)
		g := make([]float64, w2.NumParams())
		w2.AddGradient(g, s, marg, 0.25)
		return emit, g
	}
	e1, g1 = run2(true)
	e2, g2 = run2(false)
	checkNear(t, "sparse emit", e1, e2, 0)
	checkNear(t, "sparse gradient", g1, g2, 0)
	checkNear(t, "sparse emit vs reference", e1, refScore(w2, s), 1e-12)
}

// TestConcurrentScoring: Weights may be shared by goroutines that score and
// write their own gradients (run with -race).
func TestConcurrentScoring(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const numAttrs, m = 40, 7
	p, seqs := randModel(r, numAttrs, m, 20, true)
	dense, _ := NewDense(numAttrs, m, randParams(r, numAttrs*m))
	sp, _ := NewSparse(p, randParams(r, p.NumPairs()))
	for _, w := range []Weights{dense, sp} {
		want := make([]float64, w.NumParams())
		for _, s := range seqs {
			e := make([]float64, s.Len()*m)
			w.Score(e, s)
			w.AddGradient(want, s, e, 1)
		}
		done := make(chan []float64)
		for range 4 {
			go func() {
				g := make([]float64, w.NumParams())
				for _, s := range seqs {
					e := make([]float64, s.Len()*m)
					w.Score(e, s)
					w.AddGradient(g, s, e, 1)
				}
				done <- g
			}()
		}
		for range 4 {
			checkNear(t, w.Layout().String()+" gradient", <-done, want, 0)
		}
	}
}

func TestChooseLayout(t *testing.T) {
	for _, c := range []struct {
		m, k   int
		budget int64
		want   Layout
	}{
		{9, 1, DefaultDenseBudget, SparseRows},
		{9, 3, DefaultDenseBudget, DenseRows},
		{9, 9, DefaultDenseBudget, DenseRows},
		{9, 9, 100, SparseRows}, // over budget
		{45, 5, DefaultDenseBudget, SparseRows},
		{45, 15, DefaultDenseBudget, DenseRows},
		{1024, 40, DefaultDenseBudget, SparseRows},
	} {
		p := benchPattern(100, c.m, c.k)
		if got := ChooseLayout(p, nil, c.budget); got != c.want {
			t.Errorf("M=%d k=%d budget %d: %v, want %v", c.m, c.k, c.budget, got, c.want)
		}
	}
	// Weighted by counts: a frequent attribute with all labels among many
	// rare ones with one label.
	p, _ := NewPattern(45, []int32{0, 45, 46, 47, 48, 49}, append(seq(45), 3, 7, 1, 2))
	if got := ChooseLayout(p, nil, DefaultDenseBudget); got != SparseRows {
		t.Errorf("unweighted: %v", got)
	}
	if got := ChooseLayout(p, []int64{100, 1, 1, 1, 1}, DefaultDenseBudget); got != DenseRows {
		t.Errorf("weighted: %v", got)
	}
	if DenseRows.String() != "dense" || SparseRows.String() != "sparse" || Layout(5).String() != "Layout(5)" {
		t.Error("Layout.String")
	}
}

func seq(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// TestPatternBuilderMany: thousands of pairs (the set grows several times)
// against a map.
func TestPatternBuilderMany(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const numAttrs, m = 3000, 700
	b, _ := NewPatternBuilder(numAttrs, m)
	want := map[[2]int32]bool{}
	for range 20000 {
		a, y := int32(r.IntN(numAttrs)), int32(r.IntN(m))
		if r.IntN(3) == 0 {
			y = int32(r.IntN(3)) // some repeats
		}
		want[[2]int32{a, y}] = true
		if err := b.Add(a, y); err != nil {
			t.Fatal(err)
		}
	}
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p.NumPairs() != len(want) {
		t.Fatalf("%d pairs, want %d", p.NumPairs(), len(want))
	}
	for pr := range want {
		if p.Index(pr[0], pr[1]) < 0 {
			t.Fatalf("pair %v missing", pr)
		}
	}
	if p.MemoryBytes() < int64(2*len(want)) {
		t.Fatal("MemoryBytes too small")
	}
	// BuildPattern reports bad sequences with their index.
	c := NewCorpus()
	c.Append(Seq{Ptr: []int32{0, 1}, IDs: []int32{5}, Labels: []int32{0}})
	if _, err := BuildPattern(c, 5, 2, false); err == nil {
		t.Fatal("BuildPattern accepted attribute 5 of 5")
	}
	if _, err := BuildPattern(c, 6, 0, false); err == nil {
		t.Fatal("BuildPattern accepted 0 labels")
	}
	if c.MaxLen() != 1 || !c.Labelled() || c.MemoryBytes() == 0 {
		t.Fatal("corpus accessors")
	}
}
