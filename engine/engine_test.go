package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// brute is the answer of enumerating every labelling of a small chain.
type brute struct {
	logZ      float64
	marg      []float64 // T×M
	edges     []float64 // (T−1)×M×M
	trans     []float64 // M×M
	start     []float64
	end       []float64
	paths     [][]int32 // admitted labellings, best first (ties: reversed-lexicographic)
	scores    []float64
	nPossible int
}

func enumerate(t *testing.T, tr *Transitions, emit []float64, c *ChainOptions) brute {
	t.Helper()
	return enumerateBy(t, tr.m, emit, c, tr.PathScore)
}

// enumerateBy is enumerate for any chain model over M labels: score gives
// a labelling's score.
func enumerateBy(t *testing.T, M int, emit []float64, c *ChainOptions, score func([]float64, []int32, *ChainOptions) (float64, error)) brute {
	t.Helper()
	T := len(emit) / M
	n := 1
	for range T {
		n *= M
	}
	var b brute
	y := make([]int32, T)
	var all []float64
	for k := range n {
		x := k
		for p := T - 1; p >= 0; p-- { // y_0 varies slowest
			y[p] = int32(x % M)
			x /= M
		}
		if !c.admits(y) {
			continue
		}
		s, err := score(emit, y, c)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(s, -1) {
			continue
		}
		b.paths = append(b.paths, slices.Clone(y))
		b.scores = append(b.scores, s)
		all = append(all, s)
	}
	b.nPossible = len(all)
	b.logZ = logSumExp(all)
	b.marg = make([]float64, T*M)
	b.edges = make([]float64, max(T-1, 0)*M*M)
	b.trans = make([]float64, M*M)
	b.start, b.end = make([]float64, M), make([]float64, M)
	for k, p := range b.paths {
		pr := math.Exp(b.scores[k] - b.logZ)
		for t, l := range p {
			b.marg[t*M+int(l)] += pr
			if t > 0 {
				b.edges[((t-1)*M+int(p[t-1]))*M+int(l)] += pr
				b.trans[int(p[t-1])*M+int(l)] += pr
			}
		}
		if T > 0 {
			b.start[p[0]] += pr
			b.end[p[T-1]] += pr
		}
	}
	b.paths, b.scores = bestFirst(b.paths, b.scores)
	return b
}

// bestFirst orders labellings as NBest does: score descending, then
// labels compared from the last position back, lowest first.
func bestFirst(paths [][]int32, scores []float64) ([][]int32, []float64) {
	idx := make([]int, len(paths))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, c int) bool {
		sa, sc := scores[idx[a]], scores[idx[c]]
		if sa != sc {
			return sa > sc
		}
		pa, pc := paths[idx[a]], paths[idx[c]]
		for t := len(pa) - 1; t >= 0; t-- {
			if pa[t] != pc[t] {
				return pa[t] < pc[t]
			}
		}
		return false
	})
	ps, ss := make([][]int32, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		ps[i], ss[i] = paths[j], scores[j]
	}
	return ps, ss
}

// randomChain makes a chain with scores of the given spread; a fraction
// forbid of transitions is -Inf.
func randomChain(r *rand.Rand, T, M int, spread, forbid float64) (*Transitions, []float64) {
	score := make([]float64, M*M)
	for k := range score {
		score[k] = spread * r.NormFloat64()
		if r.Float64() < forbid {
			score[k] = math.Inf(-1)
		}
	}
	start, end := make([]float64, M), make([]float64, M)
	for j := range M {
		start[j], end[j] = spread*r.NormFloat64(), spread*r.NormFloat64()
	}
	emit := make([]float64, T*M)
	for k := range emit {
		emit[k] = spread * r.NormFloat64()
	}
	tr, err := NewTransitions(M, score, start, end)
	if err != nil {
		panic(err)
	}
	return tr, emit
}

func randomConstraint(r *rand.Rand, T, M int) *ChainOptions {
	c := &ChainOptions{Allowed: make([][]int32, T), Forced: make([]int32, T)}
	for t := range T {
		c.Forced[t] = -1
		switch r.IntN(4) {
		case 0:
			c.Forced[t] = int32(r.IntN(M))
		case 1:
			for j := range M {
				if r.IntN(2) == 0 {
					c.Allowed[t] = append(c.Allowed[t], int32(j))
				}
			}
			if c.Allowed[t] == nil {
				c.Allowed[t] = []int32{int32(r.IntN(M))}
			}
		}
	}
	return c
}

func near(a, b, tol float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}

func checkNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if !near(got[i], want[i], tol) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

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

// TestAgainstBruteForce checks log Z, marginals, edge marginals, expected
// transitions, Viterbi, k-best, log-probabilities and constrained versions of
// all of them against enumeration of every labelling (M^T up to 15 625).
func TestAgainstBruteForce(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		ws := NewWorkspace()
		for trial := range 300 {
			M := 1 + r.IntN(5)
			T := 1 + r.IntN(6)
			for math.Pow(float64(M), float64(T)) > 15625 {
				T--
			}
			// Spread 150 exceeds scaledRange: the log-domain path.
			forbid := []float64{0, 0, 0.3, 0.1}[trial%4]
			spread := []float64{1, 3, 0.1, 150}[trial%4]
			tr, emit := randomChain(r, T, M, spread, forbid)
			if trial%5 == 4 {
				// One hopeless label (far below the others) pushes just
				// this chain onto the log-domain path.
				emit[r.IntN(len(emit))] -= 1000
			}
			if trial%7 == 5 {
				// The same matrix with the tied structure (its most
				// common value as the default).
				var err error
				tr, err = NewTransitionsWith(M, tr.score, tr.start, tr.end, Options{Structure: Tied})
				if err != nil {
					t.Fatal(err)
				}
			}
			var c *ChainOptions
			if trial%3 == 2 {
				c = randomConstraint(r, T, M)
			}
			if trial%5 == 1 {
				// Observation-dependent transitions at some positions.
				if c == nil {
					c = &ChainOptions{}
				}
				c.TransDelta = make([][]float64, T)
				for pos := 1; pos < T; pos++ {
					if pos > 1 && trial%4 == 1 && c.TransDelta[pos-1] != nil {
						// The same slice again (one E_t for both).
						c.TransDelta[pos] = c.TransDelta[pos-1]
						continue
					}
					if r.IntN(2) == 0 {
						// Mostly small deltas (the scaled path), at times
						// wide ones (the log domain) or −Inf entries.
						sd := 1.0
						if trial%10 == 6 {
							sd = 150
						}
						d := make([]float64, M*M)
						for k := range d {
							d[k] = sd * r.NormFloat64()
							if trial%15 == 11 && r.IntN(4) == 0 {
								d[k] = math.Inf(-1)
							}
						}
						c.TransDelta[pos] = d
					}
				}
			}
			name := fmt.Sprintf("trial %d M=%d T=%d options=%+v %v", trial, M, T, c, tr.Structure())
			b := enumerate(t, tr, emit, c)
			if b.nPossible == 0 {
				if _, err := tr.LogZ(ws, emit, c); err != ErrNoLabelling {
					t.Fatalf("%s: no labelling possible, LogZ err = %v", name, err)
				}
				path := make([]int32, T)
				if _, err := tr.Viterbi(ws, emit, c, path); err != ErrNoLabelling {
					t.Fatalf("%s: no labelling possible, Viterbi err = %v", name, err)
				}
				continue
			}
			p := Posteriors{
				Marginals:   make([]float64, T*M),
				Edges:       make([]float64, (T-1)*M*M),
				Transitions: make([]float64, M*M),
				Start:       make([]float64, M),
				End:         make([]float64, M),
			}
			logZ, err := tr.Posteriors(ws, emit, c, &p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !near(logZ, b.logZ, 1e-12) {
				t.Fatalf("%s: log Z = %v, want %v", name, logZ, b.logZ)
			}
			const tol = 1e-11
			checkNear(t, name+" marginals", p.Marginals, b.marg, tol)
			checkNear(t, name+" edges", p.Edges, b.edges, tol)
			checkNear(t, name+" transitions", p.Transitions, b.trans, tol)
			checkNear(t, name+" start", p.Start, b.start, tol)
			checkNear(t, name+" end", p.End, b.end, tol)
			for pos := range T {
				sum := 0.0
				for _, v := range p.Marginals[pos*M : (pos+1)*M] {
					sum += v
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("%s: marginals at %d sum to 1%+g", name, pos, sum-1)
				}
			}

			path := make([]int32, T)
			best, err := tr.Viterbi(ws, emit, c, path)
			if err != nil {
				t.Fatalf("%s: Viterbi: %v", name, err)
			}
			if !near(best, b.scores[0], 1e-13) || !slices.Equal(path, b.paths[0]) {
				t.Fatalf("%s: Viterbi %v score %v, want %v score %v", name, path, best, b.paths[0], b.scores[0])
			}

			k := min(7, b.nPossible+2)
			paths := make([][]int32, k)
			for i := range paths {
				paths[i] = make([]int32, T)
			}
			scores := make([]float64, k)
			n, err := tr.NBest(ws, emit, c, paths, scores)
			if err != nil {
				t.Fatalf("%s: NBest: %v", name, err)
			}
			if n != min(k, b.nPossible) {
				t.Fatalf("%s: NBest found %d, want %d", name, n, min(k, b.nPossible))
			}
			for i := range n {
				if !near(scores[i], b.scores[i], 1e-13) {
					t.Fatalf("%s: NBest score %d = %v, want %v", name, i, scores[i], b.scores[i])
				}
				s, _ := tr.PathScore(emit, paths[i], c)
				if !near(s, scores[i], 1e-13) || !c.admits(paths[i]) {
					t.Fatalf("%s: NBest path %d %v has score %v, reported %v", name, i, paths[i], s, scores[i])
				}
				if scores[i] == b.scores[i] && (i+1 >= len(b.scores) || b.scores[i+1] != b.scores[i]) && (i == 0 || b.scores[i-1] != b.scores[i]) {
					if !slices.Equal(paths[i], b.paths[i]) {
						t.Fatalf("%s: NBest path %d = %v, want %v", name, i, paths[i], b.paths[i])
					}
				}
			}
			if !slices.Equal(paths[0], path) {
				t.Fatalf("%s: NBest first %v differs from Viterbi %v", name, paths[0], path)
			}

			lp, err := tr.LogProb(ws, emit, b.paths[len(b.paths)-1], c)
			if err != nil || !near(lp, b.scores[len(b.scores)-1]-b.logZ, 1e-12) {
				t.Fatalf("%s: LogProb = %v (%v), want %v", name, lp, err, b.scores[len(b.scores)-1]-b.logZ)
			}
		}
	})
}

// TestGradientFiniteDifferences checks NLL's gradient with respect to
// emissions, transitions, start and end scores against central differences.
func TestGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ws := NewWorkspace()
	for trial := range 20 {
		M, T := 2+r.IntN(5), 1+r.IntN(7)
		tr, emit := randomChain(r, T, M, 1, 0)
		labels := make([]int32, T)
		for i := range labels {
			labels[i] = int32(r.IntN(M))
		}
		var opts *ChainOptions
		if trial%2 == 1 && T > 1 {
			opts = &ChainOptions{TransDelta: make([][]float64, T)}
			d := make([]float64, M*M)
			for k := range d {
				d[k] = r.NormFloat64()
			}
			opts.TransDelta[1+r.IntN(T-1)] = d
		}
		g := Gradient{DEmit: make([]float64, T*M), DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
		if _, err := tr.NLL(ws, emit, labels, opts, &g); err != nil {
			t.Fatal(err)
		}
		nll := func(tr *Transitions, emit []float64) float64 {
			v, err := tr.NLL(ws, emit, labels, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		const h = 1e-5
		diff := func(f func(d float64) float64) float64 { return (f(h) - f(-h)) / (2 * h) }
		for k := range emit {
			e2 := slices.Clone(emit)
			fd := diff(func(d float64) float64 { e2[k] = emit[k] + d; return nll(tr, e2) })
			if math.Abs(fd-g.DEmit[k]) > 1e-7 {
				t.Fatalf("trial %d: dEmit[%d] = %v, finite difference %v", trial, k, g.DEmit[k], fd)
			}
		}
		perturb := func(which string, k int, d float64) *Transitions {
			score, start, end := slices.Clone(tr.score), slices.Clone(tr.start), slices.Clone(tr.end)
			switch which {
			case "trans":
				score[k] += d
			case "start":
				start[k] += d
			case "end":
				end[k] += d
			}
			t2, err := NewTransitions(M, score, start, end)
			if err != nil {
				t.Fatal(err)
			}
			return t2
		}
		for _, c := range []struct {
			which string
			got   []float64
		}{{"trans", g.DTrans}, {"start", g.DStart}, {"end", g.DEnd}} {
			for k := range c.got {
				fd := diff(func(d float64) float64 { return nll(perturb(c.which, k, d), emit) })
				if math.Abs(fd-c.got[k]) > 1e-7 {
					t.Fatalf("trial %d: d%s[%d] = %v, finite difference %v", trial, c.which, k, c.got[k], fd)
				}
			}
		}
	}
}

// logForwardOracle is log Z by the log-domain recursion (kernels.LogMatVec),
// the oracle for long chains.
func logForwardOracle(tr *Transitions, emit []float64) float64 {
	M := tr.m
	T := len(emit) / M
	a := make([]float64, M)
	next := make([]float64, M)
	for j := range M {
		a[j] = emit[j] + tr.start[j]
	}
	for t := 1; t < T; t++ {
		kernels.LogMatVec(next, a, tr.score, M)
		for j := range M {
			a[j] = next[j] + emit[t*M+j]
		}
	}
	for j := range M {
		a[j] += tr.end[j]
	}
	return logSumExp(a)
}

// TestLongChainExtremeScores runs T = 100000 with scores up to ±700 (whose
// exponentials alone would overflow) and forbidden transitions: log Z must be
// finite and match the log-domain oracle.
func TestLongChainExtremeScores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for _, M := range []int{2, 9, 23} {
		T := 100000
		if testing.Short() {
			T = 5000
		}
		tr, emit := randomChain(r, T, M, 200, 0.2)
		for k := range emit {
			emit[k] = math.Max(-700, math.Min(700, 3*emit[k]))
		}
		want := logForwardOracle(tr, emit)
		if math.IsInf(want, -1) {
			continue
		}
		checked++
		t.Run(fmt.Sprintf("M=%d", M), func(t *testing.T) {
			forEachTier(t, func(t *testing.T) {
				got, err := tr.LogZ(NewWorkspace(), emit, nil)
				if err != nil || !near(got, want, 1e-10) {
					t.Fatalf("M=%d T=%d: log Z = %v (%v), oracle %v", M, T, got, err, want)
				}
			})
		})
	}
	if checked < 2 {
		t.Fatalf("only %d chains had a possible labelling", checked)
	}
}

// TestLongChainLargeOffsets runs T = 100000 on the scaled path with scores
// whose magnitudes (±1e4 per position, so log Z ≈ 1e9) overflow any naive
// exponential: log Z must match the log-domain oracle.
func TestLongChainLargeOffsets(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	for _, M := range []int{2, 9, 23} {
		T := 100000
		if testing.Short() {
			T = 5000
		}
		tr, emit := randomChain(r, T, M, 10, 0.2)
		for t := range T {
			off := 1e4 * r.NormFloat64()
			for j := range M {
				emit[t*M+j] += off
			}
		}
		want := logForwardOracle(tr, emit)
		t.Run(fmt.Sprintf("M=%d", M), func(t *testing.T) {
			forEachTier(t, func(t *testing.T) {
				ws := NewWorkspace()
				got, err := tr.LogZ(ws, emit, nil)
				if ws.logMode {
					t.Fatalf("M=%d: chain left the scaled path", M)
				}
				if err != nil || !near(got, want, 1e-12) {
					t.Fatalf("M=%d T=%d: log Z = %v (%v), oracle %v", M, T, got, err, want)
				}
			})
		})
	}
}

// TestSampleFrequencies draws labellings of a small chain with a fixed seed
// and compares their frequencies with the exact probabilities by a
// chi-square test.
func TestSampleFrequencies(t *testing.T) {
	for _, logMode := range []bool{false, true} {
		t.Run(fmt.Sprintf("logMode=%v", logMode), func(t *testing.T) { testSampleFrequencies(t, logMode) })
	}
}

func testSampleFrequencies(t *testing.T, logMode bool) {
	r := rand.New(rand.NewPCG(7, 8))
	M, T := 3, 3
	tr, emit := randomChain(r, T, M, 1, 0.2)
	if logMode {
		emit[4] = -2000 // out of the scaled path's range: sampled in the log domain
	}
	b := enumerate(t, tr, emit, nil)
	index := map[string]int{}
	for i, p := range b.paths {
		index[fmt.Sprint(p)] = i
	}
	const N = 200000
	counts := make([]float64, len(b.paths))
	ws := NewWorkspace()
	rng := rand.New(rand.NewPCG(42, 0))
	path := make([]int32, T)
	tr.LogZ(ws, emit, nil)
	if ws.logMode != logMode {
		t.Fatalf("chain ran with logMode %v", ws.logMode)
	}
	for range N {
		lp, err := tr.Sample(ws, emit, nil, rng, path)
		if err != nil {
			t.Fatal(err)
		}
		i, ok := index[fmt.Sprint(path)]
		if !ok {
			t.Fatalf("sampled impossible labelling %v", path)
		}
		if !near(lp, b.scores[i]-b.logZ, 1e-12) {
			t.Fatalf("sample log-probability %v, want %v", lp, b.scores[i]-b.logZ)
		}
		counts[i]++
	}
	chi2 := 0.0
	for i, c := range counts {
		e := N * math.Exp(b.scores[i]-b.logZ)
		chi2 += (c - e) * (c - e) / e
	}
	// Wilson–Hilferty: the 99.99% quantile of chi-square with df degrees.
	df := float64(len(counts) - 1)
	z := 3.719
	crit := df * math.Pow(1-2/(9*df)+z*math.Sqrt(2/(9*df)), 3)
	if chi2 > crit {
		t.Fatalf("chi-square %.1f > %.1f (df %v): sample frequencies do not match the distribution", chi2, crit, df)
	}
	// Reproducible from the seed.
	a, c := make([]int32, T), make([]int32, T)
	tr.Sample(ws, emit, nil, rand.New(rand.NewPCG(9, 9)), a)
	tr.Sample(ws, emit, nil, rand.New(rand.NewPCG(9, 9)), c)
	if !slices.Equal(a, c) {
		t.Fatal("same seed gave different samples")
	}
}

// TestTiersAgreeOnViterbi decodes the same chains with every kernel tier and
// requires identical labellings and scores.
func TestTiersAgreeOnViterbi(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	ws := NewWorkspace()
	for _, M := range []int{3, 9, 23, 45, 64} {
		for range 5 {
			T := 1 + r.IntN(40)
			tr, emit := randomChain(r, T, M, 1, 0.1)
			// Integer scores force ties.
			for k := range emit {
				emit[k] = math.Round(emit[k])
			}
			var ref []int32
			var refScore float64
			for _, name := range kernels.Impls() {
				restore, _ := kernels.Use(name)
				path := make([]int32, T)
				s, err := tr.Viterbi(ws, emit, nil, path)
				restore()
				if err != nil && err != ErrNoLabelling {
					t.Fatal(err)
				}
				if ref == nil {
					ref, refScore = path, s
				} else if !slices.Equal(path, ref) || s != refScore {
					t.Fatalf("M=%d: %s labels %v (%v), generic %v (%v)", M, name, path, s, ref, refScore)
				}
			}
		}
	}
}

func TestNoAllocationsInSteadyState(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	T, M := 30, 45
	tr, emit := randomChain(r, T, M, 1, 0)
	ws := NewWorkspace()
	p := Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M)}
	path := make([]int32, T)
	labels := make([]int32, T)
	g := Gradient{DEmit: make([]float64, T*M), DTrans: make([]float64, M*M)}
	paths := [][]int32{make([]int32, T), make([]int32, T), make([]int32, T)}
	scores := make([]float64, 3)
	rng := rand.New(rand.NewPCG(1, 1))
	for name, f := range map[string]func(){
		"Posteriors": func() { tr.Posteriors(ws, emit, nil, &p) },
		"Viterbi":    func() { tr.Viterbi(ws, emit, nil, path) },
		"NLL":        func() { tr.NLL(ws, emit, labels, nil, &g) },
		"NBest":      func() { tr.NBest(ws, emit, nil, paths, scores) },
		"Sample":     func() { tr.Sample(ws, emit, nil, rng, path) },
	} {
		f()
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := NewTransitions(0, nil, nil, nil); err == nil {
		t.Error("0 labels accepted")
	}
	if _, err := NewTransitions(2, make([]float64, 3), nil, nil); err == nil {
		t.Error("wrong matrix size accepted")
	}
	if _, err := NewTransitions(2, []float64{0, math.NaN(), 0, 0}, nil, nil); err == nil {
		t.Error("NaN transition accepted")
	}
	if _, err := NewTransitions(2, make([]float64, 4), []float64{1}, nil); err == nil {
		t.Error("short start accepted")
	}
	tr, _ := NewTransitions(2, make([]float64, 4), nil, nil)
	ws := NewWorkspace()
	if _, err := tr.LogZ(ws, make([]float64, 3), nil); err == nil {
		t.Error("emissions not a multiple of M accepted")
	}
	if _, err := tr.LogZ(ws, []float64{0, math.NaN()}, nil); err == nil {
		t.Error("NaN emission accepted")
	}
	if _, err := tr.LogZ(ws, []float64{0, math.Inf(1)}, nil); err == nil {
		t.Error("+Inf emission accepted")
	}
	if _, err := tr.LogZ(ws, make([]float64, 4), &ChainOptions{Forced: []int32{0}}); err == nil {
		t.Error("short Forced accepted")
	}
	if _, err := tr.LogZ(ws, make([]float64, 4), &ChainOptions{Forced: []int32{0, 2}}); err == nil {
		t.Error("out-of-range forced label accepted")
	}
	if _, err := tr.LogZ(ws, make([]float64, 4), &ChainOptions{TransDelta: [][]float64{nil, make([]float64, 3)}}); err == nil {
		t.Error("transition delta of the wrong size accepted")
	}
	if _, err := tr.LogZ(ws, make([]float64, 4), &ChainOptions{TransDelta: [][]float64{nil, {0, math.NaN(), 0, 0}}}); err == nil {
		t.Error("NaN transition delta accepted")
	}
	if _, err := tr.NLL(ws, make([]float64, 4), []int32{0, 5}, nil, nil); err == nil {
		t.Error("out-of-range gold label accepted")
	}
	if _, err := tr.Viterbi(ws, make([]float64, 4), nil, make([]int32, 1)); err == nil {
		t.Error("short path accepted")
	}
	if z, err := tr.LogZ(ws, nil, nil); err != nil || z != 0 {
		t.Errorf("empty chain: log Z %v, %v", z, err)
	}
}

func TestPoolMatchesSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	M := 9
	tr, _ := randomChain(r, 1, M, 1, 0)
	var emits [][]float64
	for range 37 {
		_, e := randomChain(r, 1+r.IntN(30), M, 1, 0)
		emits = append(emits, e)
	}
	want := make([]float64, len(emits))
	ws := NewWorkspace()
	for i, e := range emits {
		want[i], _ = tr.LogZ(ws, e, nil)
	}
	for _, threads := range []int{1, 2, 3, 8, 50} {
		pool := NewPool(threads)
		for range 3 { // reuse the workers
			got := make([]float64, len(emits))
			err := pool.Run(len(emits), func(ws *Workspace, _, i int) error {
				var err error
				got[i], err = tr.LogZ(ws, emits[i], nil)
				return err
			})
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("threads=%d: %v %v", threads, err, got)
			}
		}
		// The error of the lowest failing index comes back.
		err := pool.Run(len(emits), func(ws *Workspace, _, i int) error {
			if i == 5 || i == 30 {
				return fmt.Errorf("fail %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "fail 5" {
			t.Fatalf("threads=%d: error %v, want fail 5", threads, err)
		}
		f := func(ws *Workspace, _, i int) error { _, err := tr.LogZ(ws, emits[i], nil); return err }
		pool.Run(len(emits), f)
		if a := testing.AllocsPerRun(10, func() { pool.Run(len(emits), f) }); a != 0 {
			t.Errorf("threads=%d: Run allocates %v times", threads, a)
		}
		pool.Close()
	}
}

func TestBatchesMatchSingle(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 31))
	M := 7
	tr, _ := randomChain(r, 1, M, 1, 0.1)
	n := 23
	emits, labels := make([][]float64, n), make([][]int32, n)
	for i := range n {
		T := 1 + r.IntN(20)
		_, emits[i] = randomChain(r, T, M, 1, 0)
		labels[i] = make([]int32, T)
		// A labelling that is possible: the Viterbi one.
		tr.Viterbi(NewWorkspace(), emits[i], nil, labels[i])
	}
	ws := NewWorkspace()
	wantZ := make([]float64, n)
	wantNLL := 0.0
	want := Gradient{DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
	wantEmit := make([][]float64, n)
	for i := range n {
		wantZ[i], _ = tr.LogZ(ws, emits[i], nil)
		wantEmit[i] = make([]float64, len(emits[i]))
		g := want
		g.DEmit = wantEmit[i]
		v, err := tr.NLL(ws, emits[i], labels[i], nil, &g)
		if err != nil {
			t.Fatal(err)
		}
		wantNLL += v
	}
	for _, threads := range []int{1, 2, 5} {
		pool := NewPool(threads)
		z := make([]float64, n)
		if err := tr.LogZBatch(pool, emits, nil, z); err != nil || !slices.Equal(z, wantZ) {
			t.Fatalf("threads=%d: LogZBatch %v %v", threads, err, z)
		}
		paths, scores := make([][]int32, n), make([]float64, n)
		for i := range paths {
			paths[i] = make([]int32, len(labels[i]))
		}
		if err := tr.ViterbiBatch(pool, emits, nil, paths, scores); err != nil {
			t.Fatal(err)
		}
		for i := range paths {
			if !slices.Equal(paths[i], labels[i]) {
				t.Fatalf("threads=%d: ViterbiBatch chain %d: %v, want %v", threads, i, paths[i], labels[i])
			}
		}
		var first float64
		for rep := range 2 {
			g := Gradient{DTrans: make([]float64, M*M), DStart: make([]float64, M), DEnd: make([]float64, M)}
			dEmit := make([][]float64, n)
			for i := range dEmit {
				dEmit[i] = make([]float64, len(emits[i]))
			}
			v, err := tr.NLLBatch(pool, emits, labels, nil, dEmit, &g)
			if err != nil {
				t.Fatal(err)
			}
			if !near(v, wantNLL, 1e-12) {
				t.Fatalf("threads=%d: NLLBatch %v, want %v", threads, v, wantNLL)
			}
			if rep == 0 {
				first = v
			} else if v != first {
				t.Fatalf("threads=%d: NLLBatch not deterministic: %v then %v", threads, first, v)
			}
			checkNear(t, "DTrans", g.DTrans, want.DTrans, 1e-12)
			checkNear(t, "DStart", g.DStart, want.DStart, 1e-12)
			for i := range dEmit {
				checkNear(t, "DEmit", dEmit[i], wantEmit[i], 1e-12)
			}
		}
		pool.Close()
	}
	// An impossible chain reports which one.
	bad := append([][]float64(nil), emits...)
	c := make([]*ChainOptions, n)
	c[4] = &ChainOptions{Allowed: make([][]int32, len(emits[4]))}
	for p := range c[4].Allowed {
		c[4].Allowed[p] = []int32{}
	}
	c[4].Allowed[0] = nil
	err := tr.LogZBatch(NewPool(2), bad, c, make([]float64, n))
	if len(emits[4])/M > 1 && (err == nil || !strings.Contains(err.Error(), "chain 4")) {
		t.Fatalf("impossible chain: %v", err)
	}
}

// TestSharedDeltas: a delta slice given at several positions (one E_t for
// all of them) gives what copies of it give, on the scaled path.
func TestSharedDeltas(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 20 {
		M, T := 2+r.IntN(5), 3+r.IntN(6)
		tr, emit := randomChain(r, T, M, 1, 0)
		shared := &ChainOptions{TransDelta: make([][]float64, T)}
		copies := &ChainOptions{TransDelta: make([][]float64, T)}
		a, b := make([]float64, M*M), make([]float64, M*M)
		for k := range a {
			a[k], b[k] = r.NormFloat64(), r.NormFloat64()
		}
		for pos := 1; pos < T; pos++ {
			d := a
			if pos%3 == 2 {
				d = b
			}
			shared.TransDelta[pos] = d
			copies.TransDelta[pos] = slices.Clone(d)
		}
		var out [2]Posteriors
		var logZ [2]float64
		for k, c := range []*ChainOptions{shared, copies} {
			ws := NewWorkspace()
			out[k] = Posteriors{Marginals: make([]float64, T*M), Edges: make([]float64, (T-1)*M*M), Transitions: make([]float64, M*M)}
			var err error
			if logZ[k], err = tr.Posteriors(ws, emit, c, &out[k]); err != nil {
				t.Fatal(err)
			}
			if !ws.scaledD || ws.logMode {
				t.Fatalf("trial %d: not the scaled path with deltas", trial)
			}
		}
		if logZ[0] != logZ[1] || !slices.Equal(out[0].Marginals, out[1].Marginals) || !slices.Equal(out[0].Edges, out[1].Edges) {
			t.Errorf("trial %d: shared deltas give log Z %v, copies %v", trial, logZ[0], logZ[1])
		}
	}
}

// TestSumLogs checks sumLogs against a sum of logarithms, on scales near 1,
// spread over the whole float64 range (subnormals included) and long runs
// whose product leaves it, and that a scale that is not > 0 is refused.
func TestSumLogs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for _, kind := range []string{"near1", "wide", "small", "large"} {
		for _, n := range []int{0, 1, 2, 7, 100, 3000} {
			s := make([]float64, n)
			for i := range s {
				switch kind {
				case "near1":
					s[i] = 0.01 + 20*r.Float64()
				case "wide":
					s[i] = math.Ldexp(0.5+r.Float64(), r.IntN(2098)-1074)
				case "small":
					s[i] = 1e-30 * r.Float64()
				case "large":
					s[i] = 1e30 * (1 + r.Float64())
				}
				if s[i] == 0 {
					s[i] = math.SmallestNonzeroFloat64
				}
			}
			want, abs := 0.0, 0.0
			for _, x := range s {
				want += math.Log(x)
				abs += math.Abs(math.Log(x))
			}
			got, ok := sumLogs(s)
			if !ok || math.Abs(got-want) > 1e-14*abs+1e-15*float64(n) {
				t.Errorf("%s/n=%d: %v, %v; want %v", kind, n, got, ok, want)
			}
			// A lockstep chain's scales, K = 3 apart, between values
			// (−1) that would fail the sum if read.
			w := make([]float64, 3*n+2)
			for i := range w {
				w[i] = -1
			}
			for i, x := range s {
				w[1+3*i] = x
			}
			if gs, ok := sumLogsStrided(w[1:], n, 3); !ok || gs != got {
				t.Errorf("%s/n=%d: strided %v, %v; want %v", kind, n, gs, ok, got)
			}
			s32 := make([]float32, n)
			want32 := 0.0
			for i := range s32 {
				s32[i] = float32(min(max(s[i], 1e-38), 1e38))
				want32 += math.Log(float64(s32[i]))
			}
			if got, ok := sumLogs(s32); !ok || math.Abs(got-want32) > 1e-13*max(1, math.Abs(want32))+1e-15*float64(n) {
				t.Errorf("float32 %s/n=%d: %v, %v; want %v", kind, n, got, ok, want32)
			}
		}
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(-1)} {
		s := []float64{1, 2, bad, 3}
		if _, ok := sumLogs(s); ok {
			t.Errorf("scale %v accepted", bad)
		}
	}
	if got, ok := sumLogs([]float64{2, math.Inf(1)}); !ok || !math.IsInf(got, 1) {
		t.Errorf("+Inf scale: %v, %v", got, ok)
	}
}

// BenchmarkSumLogs sums the logs of a sentence's scales (T = 37, the
// layer benchmark's mean length), float64 and float32.
func BenchmarkSumLogs(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 10))
	s := make([]float64, 37)
	for i := range s {
		s[i] = 0.5 + 20*r.Float64()
	}
	s32 := make([]float32, len(s))
	for i, v := range s {
		s32[i] = float32(v)
	}
	var sink float64
	b.Run("float64", func(b *testing.B) {
		for b.Loop() {
			z, _ := sumLogs(s)
			sink += z
		}
	})
	b.Run("float32", func(b *testing.B) {
		for b.Loop() {
			z, _ := sumLogs(s32)
			sink += z
		}
	})
	_ = sink
}
