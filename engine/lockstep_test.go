package engine

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// lockCase is a group of chains over one Transitions with what the
// single-chain path (Posteriors one by one) gives for them.
type lockCase struct {
	tr                *Transitions
	emits, marg       [][]float64
	logZ              []float64
	trans, start, end []float64
}

// singlePath runs Posteriors on each chain, summing the counts.
func singlePath(t *testing.T, tr *Transitions, emits [][]float64) lockCase {
	t.Helper()
	M := tr.m
	c := lockCase{tr: tr, emits: emits, trans: make([]float64, M*M), start: make([]float64, M), end: make([]float64, M)}
	ws := NewWorkspace()
	for _, e := range emits {
		mg := make([]float64, len(e))
		z, err := tr.Posteriors(ws, e, nil, &Posteriors{Marginals: mg, Transitions: c.trans, Start: c.start, End: c.end})
		if err != nil {
			t.Fatal(err)
		}
		c.marg = append(c.marg, mg)
		c.logZ = append(c.logZ, z)
	}
	return c
}

// runLockstep runs posteriorsLockstep on the chains of c.
func runLockstep(t *testing.T, ws *Workspace, tr *Transitions, emits [][]float64) lockCase {
	t.Helper()
	M := tr.m
	c := lockCase{tr: tr, emits: emits, trans: make([]float64, M*M), start: make([]float64, M), end: make([]float64, M), logZ: make([]float64, len(emits))}
	for _, e := range emits {
		c.marg = append(c.marg, make([]float64, len(e)))
	}
	if k, err := tr.posteriorsLockstep(ws, emits, c.marg, c.logZ, &Posteriors{Transitions: c.trans, Start: c.start, End: c.end}); err != nil {
		t.Fatalf("chain %d: %v", k, err)
	}
	return c
}

// inLockstep returns how many chains of the last group ran in lockstep.
func inLockstep(ws *Workspace, emits [][]float64, M int) int {
	T := 0
	for _, e := range emits {
		T = max(T, len(e)/M)
	}
	n := 0
	for _, p := range ws.lock.pad[:len(emits)] {
		if int(p) < T {
			n++
		}
	}
	return n
}

func checkLockCase(t *testing.T, what string, got, want lockCase, tol float64) {
	t.Helper()
	checkNear(t, what+" logZ", got.logZ, want.logZ, tol)
	for k := range want.marg {
		checkNear(t, what+" marginals", got.marg[k], want.marg[k], tol)
	}
	checkNear(t, what+" transitions", got.trans, want.trans, tol)
	checkNear(t, what+" start", got.start, want.start, tol)
	checkNear(t, what+" end", got.end, want.end, tol)
}

// TestLockstepAgainstBruteForce: a lockstep group of chains of different
// lengths (padded) gives the log Z, marginals and summed transition, start
// and end counts of enumeration and of Posteriors chain by chain, on every
// tier; with forbidden transitions, with chains that must leave the
// lockstep path (a hopeless label: spread beyond scaledRange; a −Inf
// emission) and with a log-only matrix (spread 150), and a Tied structure.
func TestLockstepAgainstBruteForce(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(50, 51))
		ws := NewWorkspace()
		lockstepChains, allChains := 0, 0
		defer func() {
			// Most chains take the lockstep path, not all.
			if lockstepChains < allChains/2 || lockstepChains == allChains {
				t.Errorf("%d of %d chains in lockstep", lockstepChains, allChains)
			}
		}()
		for trial := range 120 {
			M := 1 + r.IntN(5)
			maxT := 1
			for math.Pow(float64(M), float64(maxT+1)) <= 4096 && maxT < 7 {
				maxT++
			}
			forbid := []float64{0, 0, 0.3, 0.1}[trial%4]
			spread := []float64{1, 3, 0.5, 150}[trial%4]
			tr, _ := randomChain(r, 1, M, spread, forbid)
			if trial%9 == 7 {
				var err error
				if tr, err = NewTransitionsWith(M, tr.score, tr.start, tr.end, Options{Structure: Tied}); err != nil {
					t.Fatal(err)
				}
			}
			K := 1 + r.IntN(6)
			var emits [][]float64
			want := lockCase{trans: make([]float64, M*M), start: make([]float64, M), end: make([]float64, M)}
			possible := true
			for k := range K {
				T := 1 + r.IntN(maxT)
				_, e := randomChain(r, T, M, spread, 0)
				switch {
				case trial%5 == 4 && k == 1:
					e[r.IntN(len(e))] -= 1000
				case trial%6 == 5 && k == 0:
					e[r.IntN(len(e))] = math.Inf(-1)
				}
				b := enumerate(t, tr, e, nil)
				if b.nPossible == 0 {
					possible = false
					break
				}
				emits = append(emits, e)
				want.logZ = append(want.logZ, b.logZ)
				want.marg = append(want.marg, b.marg)
				for i := range want.trans {
					want.trans[i] += b.trans[i]
				}
				for j := range M {
					want.start[j] += b.start[j]
					want.end[j] += b.end[j]
				}
			}
			if !possible {
				continue
			}
			got := runLockstep(t, ws, tr, emits)
			lockstepChains += inLockstep(ws, emits, M)
			allChains += len(emits)
			checkLockCase(t, "brute force", got, want, 1e-9)
			checkLockCase(t, "single path", got, singlePath(t, tr, emits), 1e-12)
			// Log Z alone (no backward pass).
			z := make([]float64, len(emits))
			if _, err := tr.posteriorsLockstep(ws, emits, nil, z, nil); err != nil {
				t.Fatal(err)
			}
			checkNear(t, "logZ alone", z, got.logZ, 1e-15)
		}
	})
}

// TestLockstepPadding: padding makes the extra positions contribute
// nothing. A chain of 1 position and one of 3 share a group with a chain of
// 300 (297 and 299 padded rows, far more than the chains' own); each
// chain's results, and the summed counts, equal those of the chain run
// alone (a group of one, no padding) to rounding, with no NaN or Inf from
// the long runs of padding. Out of order, the backward pass moves the
// chains to the end; shortest first (as lockplan orders them), it leaves
// them at the start.
func TestLockstepPadding(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(52, 53))
		for _, c := range []struct {
			M     int
			order []int
		}{{3, []int{1, 300, 3, 40}}, {17, []int{1, 300, 3, 40}}, {70, []int{1, 300, 3, 40}},
			{3, []int{1, 3, 40, 300}}, {17, []int{1, 3, 40, 300}}, {70, []int{1, 3, 3, 300}}} {
			M := c.M
			tr, _ := randomChain(r, 1, M, 2, 0.2)
			var emits [][]float64
			for _, T := range c.order {
				_, e := randomChain(r, T, M, 2, 0)
				emits = append(emits, e)
			}
			ws := NewWorkspace()
			got := runLockstep(t, ws, tr, emits)
			if sorted := slices.IsSorted(c.order); ws.lock.atEnd == sorted {
				t.Fatalf("M=%d, lengths %v: moved to the end %v", M, c.order, ws.lock.atEnd)
			}
			if n := inLockstep(ws, emits, M); n != len(emits) {
				t.Fatalf("M=%d: %d of %d chains in lockstep", M, n, len(emits))
			}
			alone := lockCase{trans: make([]float64, M*M), start: make([]float64, M), end: make([]float64, M)}
			for _, e := range emits {
				c := runLockstep(t, ws, tr, [][]float64{e})
				alone.logZ = append(alone.logZ, c.logZ[0])
				alone.marg = append(alone.marg, c.marg[0])
				for i, v := range c.trans {
					alone.trans[i] += v
				}
				for j := range M {
					alone.start[j] += c.start[j]
					alone.end[j] += c.end[j]
				}
			}
			for _, x := range [][]float64{got.trans, got.start, got.end, got.logZ} {
				for _, v := range x {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("M=%d: %v in the results", M, v)
					}
				}
			}
			checkLockCase(t, "padded against alone", got, alone, 1e-12)
			checkLockCase(t, "padded against single path", got, singlePath(t, tr, emits), 1e-11)
		}
	})
}

// TestLockstepErrors: a chain with no possible labelling, NaN emissions or
// a bad length reports its index; posteriorsLockstep checks its arguments.
func TestLockstepErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(54, 55))
	M := 4
	score := make([]float64, M*M)
	for k := range score {
		score[k] = math.Inf(-1) // no transition at all: chains of 2+ are impossible
	}
	tr, err := NewTransitions(M, score, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := randomChain(r, 1, M, 1, 0)
	_, one := randomChain(r, 1, M, 1, 0)
	_, two := randomChain(r, 2, M, 1, 0)
	ws := NewWorkspace()
	z := make([]float64, 3)
	if k, err := tr.posteriorsLockstep(ws, [][]float64{one, two, one}, nil, z, &Posteriors{Transitions: make([]float64, M*M)}); k != 1 || !errors.Is(err, ErrNoLabelling) {
		t.Errorf("impossible chain: %d %v", k, err)
	}
	_, a := randomChain(r, 3, M, 1, 0)
	bad := slices.Clone(a)
	bad[5] = math.NaN()
	if k, err := ok.posteriorsLockstep(ws, [][]float64{a, bad, a}, nil, z, nil); k != 1 || err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN emission: %d %v", k, err)
	}
	if k, err := ok.posteriorsLockstep(ws, [][]float64{a, a[:5], a}, nil, z, nil); k != 1 || err == nil {
		t.Errorf("bad length: %d %v", k, err)
	}
	if _, err := ok.posteriorsLockstep(ws, [][]float64{a}, nil, z, nil); err == nil {
		t.Error("3 log Z for 1 chain: no error")
	}
	if _, err := ok.posteriorsLockstep(ws, [][]float64{a}, nil, z[:1], &Posteriors{Transitions: make([]float64, 3)}); err == nil {
		t.Error("short Transitions: no error")
	}
	if _, err := ok.posteriorsLockstep(ws, [][]float64{a}, [][]float64{make([]float64, 2)}, z[:1], nil); err == nil {
		t.Error("short marginals: no error")
	}
}

// TestLockstepBatches: with the lockstep path on at small M, LogZBatch,
// MarginalsBatch and NLLBatch equal the single-chain calls (chains with
// options run alone), NLLBatch is deterministic, and steady-state calls
// allocate nothing.
func TestLockstepBatches(t *testing.T) {
	defer func(v int) { lockstepMinLabels = v }(lockstepMinLabels)
	lockstepMinLabels = 1
	r := rand.New(rand.NewPCG(58, 59))
	for _, M := range []int{5, 40} {
		tr, _ := randomChain(r, 1, M, 1, 0.1)
		n := 41
		emits, labels, opts := make([][]float64, n), make([][]int32, n), make([]*ChainOptions, n)
		for i := range n {
			T := 1 + r.IntN(25)
			if i == 7 {
				T = 0
			}
			_, emits[i] = randomChain(r, T, M, 1, 0)
			labels[i] = make([]int32, T)
			tr.Viterbi(NewWorkspace(), emits[i], nil, labels[i])
			if i%10 == 3 && T > 0 {
				opts[i] = randomConstraint(r, T, M)
				opts[i].Forced = nil
				for t := range T { // the gold label stays allowed
					if opts[i].Allowed[t] != nil && !slices.Contains(opts[i].Allowed[t], labels[i][t]) {
						opts[i].Allowed[t] = append(opts[i].Allowed[t], labels[i][t])
					}
				}
			}
		}
		ws := NewWorkspace()
		wantZ, wantMarg := make([]float64, n), make([][]float64, n)
		want := Gradient{DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
		wantEmit := make([][]float64, n)
		wantNLL, wantEach := 0.0, make([]float64, n)
		for i := range n {
			wantMarg[i] = make([]float64, len(emits[i]))
			var err error
			if wantZ[i], err = tr.Posteriors(ws, emits[i], opts[i], &Posteriors{Marginals: wantMarg[i]}); err != nil {
				t.Fatal(err)
			}
			wantEmit[i] = make([]float64, len(emits[i]))
			g := want
			g.DEmit = wantEmit[i]
			v, err := tr.NLL(ws, emits[i], labels[i], opts[i], &g)
			if err != nil {
				t.Fatal(err)
			}
			wantNLL += v
			wantEach[i] = v
		}
		for _, threads := range []int{1, 2, 3} {
			pool := NewPool(threads)
			z := make([]float64, n)
			if err := tr.LogZBatch(pool, emits, opts, z); err != nil {
				t.Fatal(err)
			}
			checkNear(t, "LogZBatch", z, wantZ, 1e-12)
			marg := make([][]float64, n)
			for i := range marg {
				marg[i] = make([]float64, len(emits[i]))
			}
			if err := tr.MarginalsBatch(pool, emits, opts, marg, z); err != nil {
				t.Fatal(err)
			}
			checkNear(t, "MarginalsBatch log Z", z, wantZ, 1e-12)
			for i := range marg {
				checkNear(t, "MarginalsBatch", marg[i], wantMarg[i], 1e-12)
			}
			var first float64
			for rep := range 2 {
				g := Gradient{DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
				dEmit := make([][]float64, n)
				for i := range dEmit {
					if i != 11 {
						dEmit[i] = make([]float64, len(emits[i]))
					}
				}
				each := make([]float64, n)
				v, err := tr.NLLBatchEach(pool, emits, labels, opts, dEmit, &g, each)
				if err != nil {
					t.Fatal(err)
				}
				checkNear(t, "NLLBatchEach per chain", each, wantEach, 1e-12)
				if !near(v, wantNLL, 1e-12) {
					t.Fatalf("M=%d threads=%d: NLLBatch %v, want %v", M, threads, v, wantNLL)
				}
				if rep == 0 {
					first = v
				} else if v != first {
					t.Fatalf("threads=%d: NLLBatch not deterministic: %v then %v", threads, first, v)
				}
				checkNear(t, "DTrans", g.DTrans, want.DTrans, 1e-11)
				checkNear(t, "DStart", g.DStart, want.DStart, 1e-12)
				checkNear(t, "DEnd", g.DEnd, want.DEnd, 1e-12)
				for i := range dEmit {
					if dEmit[i] != nil {
						checkNear(t, "DEmit", dEmit[i], wantEmit[i], 1e-12)
					}
				}
			}
			g := Gradient{DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
			scratch := make([][]float64, n)
			for i := range scratch {
				scratch[i] = make([]float64, len(emits[i]))
			}
			for name, f := range map[string]func() error{
				"LogZBatch":      func() error { return tr.LogZBatch(pool, emits, opts, z) },
				"MarginalsBatch": func() error { return tr.MarginalsBatch(pool, emits, opts, marg, z) },
				"NLLBatch": func() error {
					_, err := tr.NLLBatch(pool, emits, labels, opts, scratch, &g)
					return err
				},
			} {
				if err := f(); err != nil {
					t.Fatal(err)
				}
				if a := steadyAllocs(func() { f() }); a != 0 {
					t.Errorf("M=%d threads=%d: %s allocates %v times per call", M, threads, name, a)
				}
			}
			// A bad label is reported with its chain.
			bad := slices.Clone(labels)
			bad[20] = slices.Clone(labels[20])
			bad[20][0] = int32(M)
			if _, err := tr.NLLBatch(pool, emits, bad, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "chain 20") {
				t.Errorf("bad label: %v", err)
			}
			pool.Close()
		}
	}
}
