package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// brute2 is a second-order chain by enumeration of its labellings.
type brute2 struct {
	brute
	tri []float64 // expected trigram counts
}

func enumerate2(t *testing.T, so *SecondOrder, emit []float64, c *ChainOptions) brute2 {
	t.Helper()
	b := brute2{brute: enumerateBy(t, so.tr.m, emit, c, so.PathScore)}
	b.tri = make([]float64, so.tg.Len())
	for k, p := range b.paths {
		pr := math.Exp(b.scores[k] - b.logZ)
		for t := 2; t < len(p); t++ {
			if i := so.tg.Index(p[t-2], p[t-1], p[t]); i >= 0 {
				b.tri[i] += pr
			}
		}
	}
	return b
}

// randomTrigrams lists a fraction frac of the M³ triples, in random order,
// with scores of the given spread (integers when whole), a fraction forbid
// of them −Inf.
func randomTrigrams(r *rand.Rand, M int, frac, spread, forbid float64, whole bool) *Trigrams {
	var tri [][3]int32
	var w []float64
	for _, k := range r.Perm(M * M * M) {
		if r.Float64() >= frac {
			continue
		}
		tri = append(tri, [3]int32{int32(k / (M * M)), int32(k / M % M), int32(k % M)})
		v := spread * r.NormFloat64()
		if whole {
			v = float64(r.IntN(3) - 1)
		}
		if r.Float64() < forbid {
			v = math.Inf(-1)
		}
		w = append(w, v)
	}
	g, err := NewTrigrams(M, tri, w)
	if err != nil {
		panic(err)
	}
	return g
}

// wholeChain is randomChain with scores in {−1, 0, 1}: exact ties.
func wholeChain(r *rand.Rand, T, M int) (*Transitions, []float64) {
	v := func() float64 { return float64(r.IntN(3) - 1) }
	score, start, end, emit := make([]float64, M*M), make([]float64, M), make([]float64, M), make([]float64, T*M)
	for _, x := range [][]float64{score, start, end, emit} {
		for k := range x {
			x[k] = v()
		}
	}
	return must(NewTransitions(M, score, start, end)), emit
}

// TestSecondOrderAgainstBruteForce checks log Z, marginals, edge
// marginals, expected bigram, start, end and trigram counts, Viterbi and
// k-best of second-order chains, free and over label sets (Allowed and
// Forced), with forbidden transitions and triples and exact ties, against
// enumeration of every labelling.
func TestSecondOrderAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	ws := NewWorkspace()
	impossible := 0
	for trial := range 600 {
		M, T := 1+r.IntN(4), r.IntN(7)
		whole := trial%5 == 4
		var tr *Transitions
		var emit []float64
		tied := trial%7 == 3 && !whole
		switch {
		case whole:
			tr, emit = wholeChain(r, T, M)
		case tied:
			def := []float64{0, -1, math.Inf(-1)}[trial%3]
			tr = must(NewTied(M, def, randomTied(r, M, 1+r.IntN(M*M), def), nil, nil))
			emit = make([]float64, T*M)
			for k := range emit {
				emit[k] = 1.5 * r.NormFloat64()
			}
		default:
			tr, emit = randomChain(r, T, M, 1.5, []float64{0, 0, 0.2}[trial%3])
		}
		tg := randomTrigrams(r, M, []float64{0, 0.3, 1}[trial%3], 1.5, []float64{0, 0.1}[trial%2], whole)
		so := must(NewSecondOrder(tr, tg))
		var c *ChainOptions
		switch trial % 4 {
		case 1:
			c = randomConstraint(r, T, M)
		case 2:
			c = &ChainOptions{Allowed: randomSets(r, T, M, 2, 0.2, nil)}
		}
		name := fmt.Sprintf("trial %d M=%d T=%d trigrams=%d options=%+v", trial, M, T, tg.Len(), c)
		b := enumerate2(t, so, emit, c)
		if b.nPossible == 0 {
			impossible++
			if _, err := so.LogZ(ws, emit, c); err != ErrNoLabelling {
				t.Fatalf("%s: no labelling possible, LogZ err = %v", name, err)
			}
			if _, err := so.Viterbi(ws, emit, c, make([]int32, T)); err != ErrNoLabelling {
				t.Fatalf("%s: no labelling possible, Viterbi err = %v", name, err)
			}
			continue
		}
		p := Posteriors2{
			Posteriors: Posteriors{
				Marginals:   make([]float64, T*M),
				Edges:       make([]float64, max(T-1, 0)*M*M),
				Transitions: make([]float64, M*M),
				Start:       make([]float64, M),
				End:         make([]float64, M),
			},
			Trigrams: make([]float64, tg.Len()),
		}
		var exc []Exception
		if tied {
			_, exc = tr.Exceptions()
			p.Tied = make([]float64, len(exc)+1)
		}
		fill(p.Marginals, 7) // set, not added
		logZ, err := so.Posteriors(ws, emit, c, &p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !near(logZ, b.logZ, 1e-10) {
			t.Fatalf("%s: log Z = %v, want %v", name, logZ, b.logZ)
		}
		if T > 0 {
			checkNear(t, name+" marginals", p.Marginals, b.marg, 1e-9)
			checkNear(t, name+" edges", p.Edges, b.edges, 1e-9)
			checkNear(t, name+" transitions", p.Transitions, b.trans, 1e-9)
			checkNear(t, name+" start", p.Start, b.start, 1e-9)
			checkNear(t, name+" end", p.End, b.end, 1e-9)
			checkNear(t, name+" trigrams", p.Trigrams, b.tri, 1e-9)
		}
		if tied {
			want := make([]float64, len(exc)+1)
			for k, q := range b.trans {
				e := slices.IndexFunc(exc, func(x Exception) bool { return int(x.From)*M+int(x.To) == k })
				if e < 0 {
					e = len(exc)
				}
				want[e] += q
			}
			checkNear(t, name+" tied counts", p.Tied, want, 1e-9)
		}
		path := make([]int32, T)
		best, err := so.Viterbi(ws, emit, c, path)
		if err != nil {
			t.Fatalf("%s: Viterbi: %v", name, err)
		}
		if !near(best, b.scores[0], 1e-12) || !slices.Equal(path, b.paths[0]) {
			t.Fatalf("%s: Viterbi %v (%v), want %v (%v)", name, path, best, b.paths[0], b.scores[0])
		}
		k := 1 + r.IntN(b.nPossible+2)
		paths := make([][]int32, k)
		for i := range paths {
			paths[i] = make([]int32, T)
		}
		scores := make([]float64, k)
		n, err := so.NBest(ws, emit, c, paths, scores)
		if err != nil {
			t.Fatalf("%s: NBest: %v", name, err)
		}
		if n != min(k, b.nPossible) {
			t.Fatalf("%s: NBest found %d of %d, want %d", name, n, k, min(k, b.nPossible))
		}
		for i := range n {
			if !near(scores[i], b.scores[i], 1e-12) {
				t.Fatalf("%s: NBest[%d] scores %v, want %v", name, i, scores[i], b.scores[i])
			}
			// Paths agree exactly where the scores are exact (whole
			// scores) or clearly apart from their neighbours.
			apart := (i == 0 || b.scores[i-1]-b.scores[i] > 1e-9) && (i+1 >= b.nPossible || b.scores[i]-b.scores[i+1] > 1e-9)
			if (whole || apart) && !slices.Equal(paths[i], b.paths[i]) {
				t.Fatalf("%s: NBest[%d] = %v, want %v", name, i, paths[i], b.paths[i])
			}
			s, _ := so.PathScore(emit, paths[i], nil)
			if !near(s, scores[i], 1e-12) {
				t.Fatalf("%s: NBest[%d] says %v, its path scores %v", name, i, scores[i], s)
			}
		}
	}
	if impossible == 0 || impossible > 300 {
		t.Fatalf("%d of 600 chains had no labelling: the cases do not cover both kinds", impossible)
	}
}

// TestSecondOrderWithoutTrigrams: with no triples a second-order chain is
// its first-order one, which the first-order engine computes (dense and
// tied, free and over sets).
func TestSecondOrderWithoutTrigrams(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 3))
	ws, ws1 := NewWorkspace(), NewWorkspace()
	for trial := range 40 {
		M, T := 2+r.IntN(7), 1+r.IntN(12)
		tr, emit, c := restrictCase(r, T, M, trial%2 == 1, 4, 0.3)
		if c != nil {
			c.TransDelta = nil
		}
		so := must(NewSecondOrder(tr, must(NewTrigrams(M, nil, nil))))
		name := fmt.Sprintf("trial %d M=%d T=%d", trial, M, T)
		p := Posteriors2{Posteriors: Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M)}}
		q := Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M)}
		got, err := so.Posteriors(ws, emit, c, &p)
		want, err1 := tr.Posteriors(ws1, emit, c, &q)
		if !errors.Is(err, err1) {
			t.Fatalf("%s: error %v, first order %v", name, err, err1)
		}
		if err != nil {
			continue
		}
		if !near(got, want, 1e-10) {
			t.Fatalf("%s: log Z %v, first order %v", name, got, want)
		}
		checkNear(t, name+" marginals", p.Marginals, q.Marginals, 1e-9)
		checkNear(t, name+" transitions", p.Transitions, q.Transitions, 1e-9)
		path, path1 := make([]int32, T), make([]int32, T)
		s, _ := so.Viterbi(ws, emit, c, path)
		s1, _ := tr.Viterbi(ws1, emit, c, path1)
		if !near(s, s1, 1e-12) || !slices.Equal(path, path1) {
			t.Fatalf("%s: Viterbi %v (%v), first order %v (%v)", name, path, s, path1, s1)
		}
	}
}

// TestSecondOrderGradient checks the NLL's gradient (emissions, bigrams,
// start, end, trigrams) by finite differences, free and over sets that
// hold the gold labels.
func TestSecondOrderGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 4))
	ws := NewWorkspace()
	for trial := range 24 {
		M, T := 2+r.IntN(3), 1+r.IntN(6)
		tr, emit := randomChain(r, T, M, 1, 0)
		tg := randomTrigrams(r, M, 0.5, 1, 0, false)
		labels := make([]int32, T)
		for i := range labels {
			labels[i] = int32(r.IntN(M))
		}
		var c *ChainOptions
		if trial%2 == 1 {
			c = &ChainOptions{Allowed: randomSets(r, T, M, 2, 0.3, labels)}
		}
		so := must(NewSecondOrder(tr, tg))
		g := Gradient2{Gradient: Gradient{DEmit: make([]float64, T*M), DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}, DTri: make([]float64, tg.Len())}
		if _, err := so.NLL(ws, emit, labels, c, &g); err != nil {
			t.Fatal(err)
		}
		nll := func(score, start, end, tri, emit []float64) float64 {
			so := must(NewSecondOrder(must(NewTransitions(M, score, start, end)), must(NewTrigrams(M, tg.tri, tri))))
			return must(so.NLL(ws, emit, labels, c, nil))
		}
		parts := [][]float64{tr.score, tr.start, tr.end, tg.w, emit}
		grads := [][]float64{g.DTrans, g.DStart, g.DEnd, g.DTri, g.DEmit}
		for w, part := range parts {
			for k := range part {
				const h = 1e-5
				at := func(d float64) float64 {
					args := make([][]float64, len(parts))
					for i, x := range parts {
						args[i] = slices.Clone(x)
					}
					args[w][k] += d
					return nll(args[0], args[1], args[2], args[3], args[4])
				}
				fd := (at(h) - at(-h)) / (2 * h)
				if math.Abs(fd-grads[w][k]) > 1e-7 {
					t.Fatalf("trial %d: part %d [%d]: gradient %v, finite difference %v", trial, w, k, grads[w][k], fd)
				}
			}
		}
	}
}

// TestSecondOrderBadInput: errors, not panics or wrong answers.
func TestSecondOrderBadInput(t *testing.T) {
	if _, err := NewTrigrams(3, [][3]int32{{0, 1, 2}, {0, 1, 2}}, nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate triple: %v", err)
	}
	if _, err := NewTrigrams(3, [][3]int32{{0, 3, 2}}, nil); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("label out of range: %v", err)
	}
	if _, err := NewTrigrams(3, [][3]int32{{0, 1, 2}}, []float64{math.NaN()}); err == nil {
		t.Error("NaN trigram score accepted")
	}
	if _, err := NewTrigrams(3, [][3]int32{{0, 1, 2}}, []float64{1, 2}); err == nil {
		t.Error("two scores for one triple accepted")
	}
	tr := must(NewTransitions(3, make([]float64, 9), nil, nil))
	if _, err := NewSecondOrder(tr, must(NewTrigrams(4, nil, nil))); err == nil {
		t.Error("label counts that differ accepted")
	}
	so := must(NewSecondOrder(tr, must(NewTrigrams(3, [][3]int32{{0, 1, 2}}, nil))))
	ws := NewWorkspace()
	emit := make([]float64, 12)
	emit[7] = math.NaN()
	if _, err := so.LogZ(ws, emit, nil); err == nil || !strings.Contains(err.Error(), "[2][1]") {
		t.Errorf("NaN emission: %v", err)
	}
	emit[7] = 0
	c := &ChainOptions{TransDelta: make([][]float64, 4)}
	c.TransDelta[1] = make([]float64, 9)
	if _, err := so.LogZ(ws, emit, c); err == nil {
		t.Error("transition deltas accepted")
	}
	if _, err := so.Posteriors(ws, emit, nil, &Posteriors2{Trigrams: make([]float64, 2)}); err == nil {
		t.Error("trigram counts of the wrong length accepted")
	}
	if _, err := so.Viterbi(ws, emit, nil, make([]int32, 3)); err == nil {
		t.Error("short path accepted")
	}
	big := must(NewSecondOrder(must(NewTransitions(400, make([]float64, 400*400), nil, nil)), must(NewTrigrams(400, nil, nil))))
	if _, err := big.LogZ(ws, make([]float64, 3*400), nil); err == nil || !strings.Contains(err.Error(), "prune") {
		t.Errorf("a lattice of 400³ triples: %v", err)
	}
}

// TestSecondOrderNoAllocations: steady-state calls reuse the workspace.
func TestSecondOrderNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 5))
	M, T := 12, 20
	tr, emit := randomChain(r, T, M, 1, 0)
	so := must(NewSecondOrder(tr, randomTrigrams(r, M, 0.2, 1, 0, false)))
	c := &ChainOptions{Allowed: randomSets(r, T, M, 4, 0.1, nil)}
	ws := NewWorkspace()
	p := Posteriors2{Posteriors: Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M)}, Trigrams: make([]float64, so.tg.Len())}
	paths := [][]int32{make([]int32, T), make([]int32, T), make([]int32, T)}
	scores := make([]float64, 3)
	for name, f := range map[string]func(){
		"Posteriors": func() { must(so.Posteriors(ws, emit, c, &p)) },
		"Viterbi":    func() { must(so.Viterbi(ws, emit, c, paths[0])) },
		"NBest":      func() { must(so.NBest(ws, emit, c, paths, scores)) },
	} {
		f()
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Errorf("%s allocates %v times a call", name, n)
		}
	}
}

// TestSecondOrderScaled: the scaled path answers what the log domain
// answers (log Z, marginals, edges, counts) over long chains with pruned
// sets, and hands chains whose scores spread too wide to the log domain.
func TestSecondOrderScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 6))
	ws, wl := NewWorkspace(), NewWorkspace()
	tookScaled, tookLog := 0, 0
	for trial := range 60 {
		M, T := 3+r.IntN(18), 1+r.IntN(40)
		spread := []float64{0.5, 3, 200}[trial%3]
		var tr *Transitions
		var emit []float64
		if trial%4 == 1 {
			def := []float64{0, -1}[trial%2]
			tr = must(NewTied(M, def, randomTied(r, M, 1+r.IntN(3*M), def), nil, nil))
			emit = make([]float64, T*M)
			for k := range emit {
				emit[k] = spread * r.NormFloat64()
			}
		} else {
			tr, emit = randomChain(r, T, M, spread, 0.05)
		}
		so := must(NewSecondOrder(tr, randomTrigrams(r, M, 0.3, spread, []float64{0, 0, 0, 0.05}[trial%4], false)))
		c := &ChainOptions{Allowed: randomSets(r, T, M, 8, 0.05, nil)}
		name := fmt.Sprintf("trial %d M=%d T=%d spread %v", trial, M, T, spread)
		post := func(ws *Workspace) (float64, Posteriors2, error) {
			p := Posteriors2{
				Posteriors: Posteriors{Marginals: make([]float64, T*M), Edges: make([]float64, max(T-1, 0)*M*M), Transitions: make([]float64, M*M), Start: make([]float64, M), End: make([]float64, M)},
				Trigrams:   make([]float64, so.tg.Len()),
			}
			if tr.Structure() == Tied {
				_, exc := tr.Exceptions()
				p.Tied = make([]float64, len(exc)+1)
			}
			logZ, err := so.Posteriors(ws, emit, c, &p)
			return logZ, p, err
		}
		got, p, err := post(ws)
		order2LogOnly = true
		want, q, err2 := post(wl)
		order2LogOnly = false
		if !errors.Is(err, err2) {
			t.Fatalf("%s: error %v, log domain %v", name, err, err2)
		}
		if err != nil {
			continue
		}
		if T > 1 && ws.o2.scaled {
			tookScaled++
		} else if T > 1 {
			tookLog++
		}
		if !near(got, want, 1e-11) {
			t.Fatalf("%s: log Z %v, log domain %v", name, got, want)
		}
		for _, x := range []struct {
			what      string
			got, want []float64
		}{{"marginals", p.Marginals, q.Marginals}, {"edges", p.Edges, q.Edges}, {"transitions", p.Transitions, q.Transitions},
			{"start", p.Start, q.Start}, {"end", p.End, q.End}, {"trigrams", p.Trigrams, q.Trigrams}, {"tied", p.Tied, q.Tied}} {
			for k := range x.want {
				if math.Abs(x.got[k]-x.want[k]) > 1e-9*math.Max(1, math.Abs(x.want[k])) {
					t.Fatalf("%s: %s[%d] = %v, log domain %v", name, x.what, k, x.got[k], x.want[k])
				}
			}
		}
	}
	if tookScaled < 20 || tookLog < 5 {
		t.Fatalf("%d chains took the scaled path, %d the log domain: the cases do not cover both", tookScaled, tookLog)
	}
}

// BenchmarkSecondOrder times a second-order forward–backward with
// marginals and counts over sets of 8 labels per position (T = 20), the
// scaled path against the log domain; ns/op per chain.
func BenchmarkSecondOrder(b *testing.B) {
	for _, M := range []int{50, 300} {
		r := rand.New(rand.NewPCG(30, 7))
		T := 20
		tr, emit := randomChain(r, T, M, 1, 0)
		so := must(NewSecondOrder(tr, randomTrigrams(r, M, 0.002, 1, 0, false)))
		sets := make([][]int32, T)
		for t := range sets {
			for _, y := range r.Perm(M)[:8] {
				sets[t] = append(sets[t], int32(y))
			}
		}
		c := &ChainOptions{Allowed: sets}
		p := Posteriors2{Posteriors: Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M)}, Trigrams: make([]float64, so.tg.Len())}
		for _, impl := range []string{"scaled", "log"} {
			b.Run(fmt.Sprintf("M=%d/%s", M, impl), func(b *testing.B) {
				order2LogOnly = impl == "log"
				defer func() { order2LogOnly = false }()
				ws := NewWorkspace()
				for b.Loop() {
					must(so.Posteriors(ws, emit, c, &p))
				}
			})
		}
	}
}
