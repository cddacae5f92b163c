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

// randomSets gives every position a few allowed labels: ragged sizes from
// 1 to kmax, sometimes unsorted or with a duplicate, sometimes (free) nil,
// and when gold is not nil its label inside.
func randomSets(r *rand.Rand, T, M, kmax int, free float64, gold []int32) [][]int32 {
	sets := make([][]int32, T)
	for t := range sets {
		if r.Float64() < free {
			continue
		}
		n := 1 + r.IntN(min(kmax, M))
		set := make([]int32, 0, n+2)
		for _, y := range r.Perm(M)[:n] {
			set = append(set, int32(y))
		}
		if gold != nil && !slices.Contains(set, gold[t]) {
			set[0] = gold[t]
		}
		switch r.IntN(3) {
		case 0:
			slices.Sort(set)
		case 1:
			set = append(set, set[r.IntN(len(set))]) // a duplicate
		}
		sets[t] = set
	}
	return sets
}

// restrictCase is one random chain for the restricted path's tests: dense
// or tied transitions (some −Inf), emissions, sets, sometimes forced labels
// and transition deltas.
func restrictCase(r *rand.Rand, T, M int, tied bool, kmax int, free float64) (*Transitions, []float64, *ChainOptions) {
	var tr *Transitions
	var emit []float64
	if tied {
		def := []float64{0, -2, math.Inf(-1)}[r.IntN(3)]
		exc := randomTied(r, M, 1+r.IntN(3*M), def)
		start, end := make([]float64, M), make([]float64, M)
		for j := range M {
			start[j], end[j] = r.NormFloat64(), r.NormFloat64()
		}
		var err error
		if tr, err = NewTied(M, def, exc, start, end); err != nil {
			panic(err)
		}
		emit = make([]float64, T*M)
		for k := range emit {
			emit[k] = 2 * r.NormFloat64()
		}
	} else {
		tr, emit = randomChain(r, T, M, 2, 0.1)
		tr.tied = nil
	}
	c := &ChainOptions{Allowed: randomSets(r, T, M, kmax, free, nil)}
	if r.IntN(4) == 0 {
		c.Forced = make([]int32, T)
		for t := range c.Forced {
			c.Forced[t] = -1
			if r.IntN(5) == 0 {
				c.Forced[t] = int32(r.IntN(M))
				if c.Allowed[t] != nil && r.IntN(2) == 0 {
					c.Forced[t] = c.Allowed[t][0]
				}
			}
		}
	}
	if T > 1 && r.IntN(4) == 0 {
		c.TransDelta = make([][]float64, T)
		for t := 1; t < T; t++ {
			if r.IntN(2) == 0 {
				d := make([]float64, M*M)
				for k := range d {
					d[k] = r.NormFloat64()
				}
				c.TransDelta[t] = d
			}
		}
	}
	return tr, emit, c
}

// posteriorsOf runs one path (restricted or the full one) with every
// output asked for, and reports whether the restricted path answered.
type postOut struct {
	logZ                        float64
	err                         error
	marg, edges, trans, st, end []float64
	tied                        []float64
	restricted                  bool
}

// fullTied: take the full path's own tied counts (else they are derived
// from its expected transition counts).
var fullTied bool

func runPosteriors(tr *Transitions, ws *Workspace, emit []float64, c *ChainOptions, restricted bool) postOut {
	M := tr.m
	T := len(emit) / M
	o := postOut{marg: make([]float64, T*M), edges: make([]float64, max(T-1, 0)*M*M),
		trans: make([]float64, M*M), st: make([]float64, M), end: make([]float64, M)}
	// Non-zero starting values: the counts must be added, not set.
	for k := range o.trans {
		o.trans[k] = 0.25
	}
	p := &Posteriors{Marginals: o.marg, Edges: o.edges, Transitions: o.trans, Start: o.st, End: o.end}
	if tr.tied != nil {
		o.tied = make([]float64, len(tr.tied.exc)+1)
		o.tied[0] = 0.5
		p.Tied = o.tied
	}
	if restricted {
		o.logZ, o.restricted = tr.restricted(ws, emit, T, c, p)
		if !o.restricted {
			o.logZ, o.err = tr.posteriorsFull(ws, emit, T, c, p)
		}
	} else {
		o.logZ, o.err = tr.posteriorsFull(ws, emit, T, c, p)
		if o.tied != nil && !fullTied {
			// The full path's tied counts come from its own pass, which
			// the log domain (deltas, wide spreads) does not run: take
			// them from its expected transition counts instead.
			clear(o.tied)
			o.tied[0] = 0.5
			n := len(o.tied) - 1
			for _, v := range o.trans {
				o.tied[n] += v - 0.25
			}
			for k, e := range tr.tied.exc {
				v := o.trans[int(e.From)*M+int(e.To)] - 0.25
				o.tied[k] += v
				o.tied[n] -= v
			}
		}
	}
	return o
}

func (o postOut) compare(t *testing.T, what string, want postOut, tol float64) {
	t.Helper()
	if (o.err != nil) != (want.err != nil) {
		t.Fatalf("%s: error %v, want %v", what, o.err, want.err)
	}
	if o.err != nil {
		return
	}
	if !near(o.logZ, want.logZ, tol) {
		t.Fatalf("%s: log Z %v, want %v", what, o.logZ, want.logZ)
	}
	checkNear(t, what+" marginals", o.marg, want.marg, tol)
	checkNear(t, what+" edges", o.edges, want.edges, tol)
	checkNear(t, what+" transitions", o.trans, want.trans, tol)
	checkNear(t, what+" start", o.st, want.st, tol)
	checkNear(t, what+" end", o.end, want.end, tol)
	checkNear(t, what+" tied", o.tied, want.tied, tol)
}

// TestRestrictedMatchesConstrained runs random chains with few allowed
// labels per position (ragged, sets of one, duplicates, unsorted, forced
// labels, deltas) through the restricted path and through the constrained
// full path: every output agrees to 1e-12.
func TestRestrictedMatchesConstrained(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(170, 171))
		ws, wf := NewWorkspace(), NewWorkspace()
		answered := 0
		const trials = 300
		for trial := range trials {
			M := 1 + r.IntN(30)
			if trial%10 == 0 {
				M = 100 + r.IntN(200)
			}
			T := 1 + r.IntN(25)
			tied := trial%2 == 1
			free := 0.0
			if M < 40 && trial%3 == 0 {
				free = 0.2 // some positions with all labels
			}
			tr, emit, c := restrictCase(r, T, M, tied, 6, free)
			what := fmt.Sprintf("trial %d (M=%d T=%d tied=%v)", trial, M, T, tied)
			got := runPosteriors(tr, ws, emit, c, true)
			want := runPosteriors(tr, wf, emit, c, false)
			got.compare(t, what, want, 1e-12)
			if got.restricted || want.err != nil {
				answered++
			}
		}
		// The path must answer every chain that has a labelling itself
		// (the spreads here are far below scaledRange).
		if answered < trials {
			t.Fatalf("the restricted path answered %d of %d chains", answered, trials)
		}
	})
}

// TestRestrictedAgainstBruteForce checks the restricted path against the
// enumeration of every labelling the sets admit, dense and tied.
func TestRestrictedAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(172, 173))
	ws := NewWorkspace()
	for trial := range 200 {
		M := 1 + r.IntN(5)
		T := 1 + r.IntN(5)
		tied := trial%2 == 1
		tr, emit, c := restrictCase(r, T, M, tied, 3, 0.15)
		what := fmt.Sprintf("trial %d (M=%d T=%d tied=%v)", trial, M, T, tied)
		got := runPosteriors(tr, ws, emit, c, true)
		b := enumerate(t, tr, emit, c)
		if b.nPossible == 0 {
			if !errors.Is(got.err, ErrNoLabelling) {
				t.Fatalf("%s: no labelling possible, got log Z %v, error %v", what, got.logZ, got.err)
			}
			continue
		}
		if got.err != nil {
			t.Fatalf("%s: %v", what, got.err)
		}
		if !near(got.logZ, b.logZ, 1e-12) {
			t.Fatalf("%s: log Z %v, want %v", what, got.logZ, b.logZ)
		}
		checkNear(t, what+" marginals", got.marg, b.marg, 1e-12)
		checkNear(t, what+" edges", got.edges, b.edges, 1e-12)
		trans := slices.Clone(b.trans)
		for k := range trans {
			trans[k] += 0.25
		}
		checkNear(t, what+" transitions", got.trans, trans, 1e-12)
		checkNear(t, what+" start", got.st, b.start, 1e-12)
		checkNear(t, what+" end", got.end, b.end, 1e-12)
		if tied {
			want := make([]float64, len(tr.tied.exc)+1)
			want[0] = 0.5
			total := 0.0
			for _, v := range b.trans {
				total += v
			}
			want[len(want)-1] = total
			for k, e := range tr.tied.exc {
				v := b.trans[int(e.From)*M+int(e.To)]
				want[k] += v
				want[len(want)-1] -= v
			}
			checkNear(t, what+" tied", got.tied, want, 1e-12)
		}
	}
}

// TestRestrictedNLL routes NLL through the restricted path with the gold
// labelling inside the sets and compares value and gradient with the full
// path's.
func TestRestrictedNLL(t *testing.T) {
	r := rand.New(rand.NewPCG(174, 175))
	ws := NewWorkspace()
	for trial := range 60 {
		M := 50 + r.IntN(150)
		T := 1 + r.IntN(30)
		tr, emit := randomChain(r, T, M, 2, 0)
		if trial%2 == 1 {
			tr = must(NewTransitionsWith(M, tr.score, tr.start, tr.end, Options{Structure: Tied}))
		} else {
			tr.tied = nil
		}
		gold := make([]int32, T)
		for k := range gold {
			gold[k] = int32(r.IntN(M))
		}
		c := &ChainOptions{Allowed: randomSets(r, T, M, 8, 0, gold)}
		if !tr.restrictPays(c, T) {
			t.Fatalf("trial %d: %d labels, sets of ≤ 8: the restricted path should pay", trial, M)
		}
		grad := func(full bool) (float64, Gradient) {
			g := Gradient{DEmit: make([]float64, T*M), DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
			if full {
				// The constrained full path: the same sets, too many to
				// pay (one free position at the end forces it).
				saved := restrictOff
				restrictOff = true
				defer func() { restrictOff = saved }()
			}
			v, err := tr.NLL(ws, emit, gold, c, &g)
			if err != nil {
				t.Fatal(err)
			}
			return v, g
		}
		v1, g1 := grad(false)
		v2, g2 := grad(true)
		if !near(v1, v2, 1e-12) {
			t.Fatalf("trial %d: NLL %v, full path %v", trial, v1, v2)
		}
		checkNear(t, "DEmit", g1.DEmit, g2.DEmit, 1e-12)
		checkNear(t, "DTrans", g1.DTrans, g2.DTrans, 1e-12)
		checkNear(t, "DStart", g1.DStart, g2.DStart, 1e-12)
		checkNear(t, "DEnd", g1.DEnd, g2.DEnd, 1e-12)
	}
}

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// TestRestrictedHandsBack covers the chains the restricted path gives to
// the full one: wide score spreads (the log domain), no labelling, bad
// emissions; the answers (and errors) are the full path's.
func TestRestrictedHandsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(176, 177))
	ws, wf := NewWorkspace(), NewWorkspace()
	M, T := 60, 12
	tr, emit := randomChain(r, T, M, 1, 0)
	tr.tied = nil
	c := &ChainOptions{Allowed: randomSets(r, T, M, 4, 0, nil)}
	check := func(what string, emit []float64, c *ChainOptions, wantOK bool) {
		t.Helper()
		got := runPosteriors(tr, ws, emit, c, true)
		if got.restricted != wantOK {
			t.Fatalf("%s: restricted path answered: %v, want %v", what, got.restricted, wantOK)
		}
		want := runPosteriors(tr, wf, emit, c, false)
		got.compare(t, what, want, 1e-12)
		// And through the public entry point.
		l1, err1 := tr.LogZ(ws, emit, c)
		l2, err2 := tr.posteriorsFull(wf, emit, T, c, nil)
		if (err1 != nil) != (err2 != nil) || err1 == nil && !near(l1, l2, 1e-12) {
			t.Fatalf("%s: LogZ %v (%v), full path %v (%v)", what, l1, err1, l2, err2)
		}
	}
	check("ordinary", emit, c, true)
	wide := slices.Clone(emit)
	y := c.Allowed[3][0]
	wide[3*M+int(y)] += 1000 // the spread of position 3 exceeds scaledRange
	if len(c.Allowed[3]) > 1 || c.Allowed[3][0] != y {
		check("wide spread", wide, c, false)
	}
	bad := slices.Clone(emit)
	bad[5*M+7] = math.NaN()
	check("NaN emission", bad, c, false)
	empty := &ChainOptions{Allowed: slices.Clone(c.Allowed)}
	empty.Allowed[2] = []int32{}
	check("empty set", emit, empty, false)
	forced := &ChainOptions{Allowed: c.Allowed, Forced: make([]int32, T)}
	for t := range forced.Forced {
		forced.Forced[t] = -1
	}
	forced.Forced[4] = int32(M - 1)
	if !slices.Contains(c.Allowed[4], int32(M-1)) {
		check("forced outside its set", emit, forced, false)
	}
}

// TestRestrictPays checks the routing rule's cases.
func TestRestrictPays(t *testing.T) {
	r := rand.New(rand.NewPCG(178, 179))
	tr, _ := randomChain(r, 1, 300, 1, 0)
	tr.tied = nil
	few := &ChainOptions{Allowed: randomSets(r, 40, 300, 8, 0, nil)}
	if !tr.restrictPays(few, 40) {
		t.Fatal("sets of ≤ 8 of 300 labels: want the restricted path")
	}
	free := &ChainOptions{Allowed: make([][]int32, 40)}
	if tr.restrictPays(free, 40) || tr.restrictPays(nil, 40) {
		t.Fatal("no sets: want the full path")
	}
	small, _ := randomChain(r, 1, 4, 1, 0)
	if small.restrictPays(&ChainOptions{Allowed: randomSets(r, 40, 4, 3, 0, nil)}, 40) {
		t.Fatal("M = 4: want the full path")
	}
}

// TestRestrictedNoAllocations: steady-state calls through the restricted
// path allocate nothing (dense and tied).
func TestRestrictedNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(180, 181))
	for _, tied := range []bool{false, true} {
		M, T := 200, 30
		tr, emit, _ := restrictCase(r, T, M, tied, 6, 0)
		c := &ChainOptions{Allowed: randomSets(r, T, M, 6, 0, nil)}
		ws := NewWorkspace()
		p := &Posteriors{Marginals: make([]float64, T*M), Start: make([]float64, M), End: make([]float64, M)}
		if tied {
			p.Tied = make([]float64, len(tr.tied.exc)+1)
		} else {
			p.Transitions = make([]float64, M*M)
		}
		if _, ok := tr.restricted(ws, emit, T, c, p); !ok {
			t.Fatal("the restricted path handed the chain back")
		}
		if n := testing.AllocsPerRun(20, func() {
			if _, err := tr.Posteriors(ws, emit, c, p); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Fatalf("tied=%v: %v allocations per call", tied, n)
		}
	}
}

// BenchmarkRestricted times one forward–backward (and, impl
// "<structure>-viterbi-…", one Viterbi) as training asks for it
// (log Z, marginals, start, end and expected transition counts: dense M×M
// or tied) over chains of 25 positions whose positions each allow K random
// labels: impl "<structure>-full" is the constrained full path (the sets
// applied as −Inf scores: its cost does not depend on K), "<structure>-K<k>"
// the restricted path. The tied matrices have a default of 0 and 12
// exceptions per column, as a model trained on UD Czech pooled (1,208
// labels, 15k bigrams seen). Tokens/s is reported.
func BenchmarkRestricted(b *testing.B) {
	const T, seqs = 25, 8
	for _, M := range []int{64, 256, 1024} {
		r := rand.New(rand.NewPCG(uint64(M), 1))
		score := make([]float64, M*M)
		for k := range score {
			score[k] = r.NormFloat64()
		}
		dense := must(NewTransitionsWith(M, score, nil, nil, Options{Structure: Dense}))
		var exc []Exception
		seen := map[int]bool{}
		for range 12 * M {
			i, j := r.IntN(M), r.IntN(M)
			if !seen[i*M+j] {
				seen[i*M+j] = true
				exc = append(exc, Exception{int32(i), int32(j), r.NormFloat64()})
			}
		}
		slices.SortFunc(exc, func(a, b Exception) int { return int(a.From-b.From)*M + int(a.To-b.To) })
		tied := must(NewTied(M, 0, exc, nil, nil))
		emits := make([][]float64, seqs)
		for s := range emits {
			emits[s] = make([]float64, T*M)
			for k := range emits[s] {
				emits[s][k] = 2 * r.NormFloat64()
			}
		}
		marg := make([]float64, T*M)
		for _, st := range []struct {
			name string
			tr   *Transitions
		}{{"dense", dense}, {"tied", tied}} {
			p := &Posteriors{Marginals: marg, Start: make([]float64, M), End: make([]float64, M)}
			if st.tr.tied != nil {
				p.Tied = make([]float64, len(st.tr.tied.exc)+1)
			} else {
				p.Transitions = make([]float64, M*M)
			}
			for _, K := range []int{0, 2, 4, 8, 16, 32, 64} {
				if K > M/2 {
					continue
				}
				sets := make([]*ChainOptions, seqs)
				for s := range sets {
					kk := max(K, 4)
					sets[s] = &ChainOptions{Allowed: make([][]int32, T)}
					for t := range T {
						for _, y := range r.Perm(M)[:kk] {
							sets[s].Allowed[t] = append(sets[s].Allowed[t], int32(y))
						}
						slices.Sort(sets[s].Allowed[t])
					}
				}
				impl := fmt.Sprintf("%s-K%d", st.name, K)
				if K == 0 {
					impl = st.name + "-full"
				}
				b.Run(fmt.Sprintf("M=%d/%s", M, impl), func(b *testing.B) {
					restrictOff = K == 0
					defer func() { restrictOff = false }()
					ws := NewWorkspace()
					for b.Loop() {
						for s, e := range emits {
							if _, err := st.tr.Posteriors(ws, e, sets[s], p); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.ReportMetric(float64(T*seqs*b.N)/b.Elapsed().Seconds(), "tokens/s")
				})
				// Viterbi over the same sets: "<structure>-viterbi-full"
				// the constrained full path, "-viterbi-K<k>" the restricted
				// one, whatever restrictViterbiPays says.
				b.Run(fmt.Sprintf("M=%d/%s", M, strings.Replace(impl, "-", "-viterbi-", 1)), func(b *testing.B) {
					restrictOff, restrictAlways = K == 0, K > 0
					defer func() { restrictOff, restrictAlways = false, false }()
					ws := NewWorkspace()
					path := make([]int32, T)
					for b.Loop() {
						for s, e := range emits {
							if _, err := st.tr.Viterbi(ws, e, sets[s], path); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.ReportMetric(float64(T*seqs*b.N)/b.Elapsed().Seconds(), "tokens/s")
				})
			}
		}
	}
}

// TestTiedCountsLogDomain: the full path's tied counts in the log domain
// (transition deltas, or a spread beyond scaledRange) are those derived
// from its expected transition counts; it used to leave them out.
func TestTiedCountsLogDomain(t *testing.T) {
	r := rand.New(rand.NewPCG(182, 183))
	ws := NewWorkspace()
	for trial := range 40 {
		M, T := 2+r.IntN(12), 2+r.IntN(8)
		tr, emit, c := restrictCase(r, T, M, true, M, 0)
		c.Allowed, c.Forced = nil, nil
		if trial%2 == 0 {
			c.TransDelta = nil
			emit[r.IntN(T*M)] += 800 // the log domain by spread
		} else if c.TransDelta == nil {
			c.TransDelta = make([][]float64, T)
			c.TransDelta[1] = make([]float64, M*M)
		}
		fullTied = true
		got := runPosteriors(tr, ws, emit, c, false)
		fullTied = false
		want := runPosteriors(tr, ws, emit, c, false)
		if !ws.logMode {
			t.Fatalf("trial %d: not the log domain", trial)
		}
		got.compare(t, fmt.Sprintf("trial %d", trial), want, 1e-12)
	}
}
