package engine

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// tol32 is how far below the best score a labelling float32 picks may
// score: the float32 sums of a chain round at most 2·T times, each by
// 2⁻²⁴ of the running magnitude.
func tol32(emit []float64, tr *Transitions, T int) float64 {
	mag := 0.0
	for _, v := range emit {
		if !math.IsInf(v, 0) {
			mag = max(mag, math.Abs(v))
		}
	}
	for _, v := range tr.score {
		if !math.IsInf(v, 0) {
			mag = max(mag, math.Abs(v))
		}
	}
	for j := range tr.m {
		mag = max(mag, math.Abs(tr.start[j])+math.Abs(tr.end[j]))
	}
	return 4 * float64(2*T+2) * float64(2*T+2) * mag * 0x1p-24
}

// TestViterbi32AgainstBruteForce: on every small chain (M^T ≤ 15 625, with
// and without −Inf transitions), Viterbi32's labelling scores within
// float32 rounding of the best one, is the best one when no other comes
// that close, and its score is the float64 score of that labelling; on
// integer scores (exact in float32: no rounding at all) it is Viterbi's
// labelling and score bit for bit, ties included, also from
// maxOnlyLabels labels (the max-only kernel), under every kernel tier.
func TestViterbi32AgainstBruteForce(t *testing.T) { forEachTier(t, viterbi32AgainstBruteForce) }

func viterbi32AgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 33))
	ws := NewWorkspace()
	checked := 0
	for T := 1; T <= 5; T++ {
		for M := 1; M <= 6; M++ {
			if math.Pow(float64(M), float64(T)) > 15625 {
				continue
			}
			for trial := range 6 {
				forbid := []float64{0, 0.3}[trial%2]
				tr, emit := randomChain(r, T, M, 3, forbid)
				b := enumerate(t, tr, emit, nil)
				path := make([]int32, T)
				sc, err := tr.Viterbi32(ws, emit, nil, path)
				if b.nPossible == 0 {
					if !errors.Is(err, ErrNoLabelling) {
						t.Fatalf("T=%d M=%d: no labelling possible, got %v, %v", T, M, sc, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("T=%d M=%d: %v", T, M, err)
				}
				want, _ := tr.PathScore(emit, path, nil)
				if !near(sc, want, 1e-12) {
					t.Fatalf("T=%d M=%d: score %v, PathScore of its labelling %v", T, M, sc, want)
				}
				tol := tol32(emit, tr, T)
				if sc < b.scores[0]-tol {
					t.Fatalf("T=%d M=%d: labelling %v scores %v, best %v (tolerance %v)", T, M, path, sc, b.scores[0], tol)
				}
				if len(b.scores) == 1 || b.scores[1] < b.scores[0]-tol {
					if !slices.Equal(path, b.paths[0]) {
						t.Fatalf("T=%d M=%d: labelling %v, best by %v: %v", T, M, path, b.scores[0]-b.scores[1], b.paths[0])
					}
					checked++
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d chains had a clear best labelling", checked)
	}
	// Integer scores: float32 is exact, ties are decided alike.
	vals := []float64{-2, -1, 0, 1, 2, math.Inf(-1)}
	for _, M := range []int{1, 2, 5, 7, 22, maxOnlyLabels - 1, maxOnlyLabels, 45} {
		for trial := range 8 {
			T := 1 + r.IntN(30)
			pick := func(inf bool) float64 {
				v := vals[r.IntN(len(vals))]
				if !inf && math.IsInf(v, -1) || r.IntN(8) != 0 && math.IsInf(v, -1) {
					return 0
				}
				return v
			}
			score, start, end := make([]float64, M*M), make([]float64, M), make([]float64, M)
			for k := range score {
				score[k] = pick(true)
			}
			for j := range M {
				start[j], end[j] = pick(false), pick(false)
			}
			emit := make([]float64, T*M)
			for k := range emit {
				emit[k] = pick(trial%2 == 0)
			}
			tr, err := NewTransitionsWith(M, score, start, end, Options{Structure: Dense})
			if err != nil {
				t.Fatal(err)
			}
			p64, p32 := make([]int32, T), make([]int32, T)
			s64, e64 := tr.Viterbi(ws, emit, nil, p64)
			s32, e32 := tr.Viterbi32(ws, emit, nil, p32)
			if !errors.Is(e32, e64) || math.Float64bits(s32) != math.Float64bits(s64) || e64 == nil && !slices.Equal(p32, p64) {
				t.Fatalf("M=%d T=%d: Viterbi32 %v %v %v, Viterbi %v %v %v", M, T, p32, s32, e32, p64, s64, e64)
			}
		}
	}
}

// TestViterbi32Agrees: on random chains of real-valued scores at the label
// counts of the real tasks (chunking's 22, the max-only kernel's from
// maxOnlyLabels), Viterbi32 finds Viterbi's labelling and score, bit for
// bit, except where a labelling scores within float32 rounding of the best
// (counted; they must be rare).
func TestViterbi32Agrees(t *testing.T) { forEachTier(t, viterbi32Agrees) }

func viterbi32Agrees(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 35))
	ws := NewWorkspace()
	for _, M := range []int{3, 22, maxOnlyLabels, 50} {
		same, n := 0, 0
		for range 40 {
			T := 1 + r.IntN(60)
			tr, emit := randomChain(r, T, M, 2, 0.05)
			p64, p32 := make([]int32, T), make([]int32, T)
			s64, err := tr.Viterbi(ws, emit, nil, p64)
			if err != nil {
				t.Fatal(err)
			}
			s32, err := tr.Viterbi32(ws, emit, nil, p32)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if slices.Equal(p32, p64) {
				if math.Float64bits(s32) != math.Float64bits(s64) {
					t.Fatalf("M=%d T=%d: same labelling, score %v, Viterbi's %v", M, T, s32, s64)
				}
				same++
				continue
			}
			if tol := tol32(emit, tr, T); !(s32 <= s64 && s32 >= s64-tol) {
				t.Fatalf("M=%d T=%d: labelling %v scores %v, Viterbi's %v scores %v (tolerance %v)", M, T, p32, s32, p64, s64, tol)
			}
		}
		if same < n-2 {
			t.Fatalf("M=%d: Viterbi32 found Viterbi's labelling on %d of %d chains", M, same, n)
		}
	}
}

// TestViterbi32Fallback: where float32 does not serve, Viterbi32 is
// Viterbi, result and error: NaN and +Inf emissions (the error names the
// position), finite scores beyond float32's range (emissions, transitions,
// start), no possible labelling, chain options, the Tied structure, and
// boundedDenseLabels labels. Scores of −Inf stay on the float32 path.
func TestViterbi32Fallback(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 37))
	ws := NewWorkspace()
	same := func(what string, tr *Transitions, emit []float64, c *ChainOptions) {
		t.Helper()
		T := len(emit) / tr.m
		p64, p32 := make([]int32, T), make([]int32, T)
		s64, e64 := tr.Viterbi(ws, emit, c, p64)
		s32, e32 := tr.Viterbi32(ws, emit, c, p32)
		if (e32 == nil) != (e64 == nil) || e64 != nil && e32.Error() != e64.Error() ||
			math.Float64bits(s32) != math.Float64bits(s64) || !slices.Equal(p32, p64) {
			t.Fatalf("%s: Viterbi32 %v %v %v, Viterbi %v %v %v", what, p32, s32, e32, p64, s64, e64)
		}
	}
	for _, M := range []int{4, 40} {
		T := 9
		tr, emit := randomChain(r, T, M, 1, 0)
		for _, bad := range []float64{math.NaN(), math.Inf(1)} {
			for _, tt := range []int{0, 4, T - 1} {
				e := slices.Clone(emit)
				e[tt*M+1] = bad
				same("bad emission", tr, e, nil)
				if _, err := tr.Viterbi32(ws, e, nil, make([]int32, T)); err == nil {
					t.Fatalf("M=%d: %v emission accepted", M, bad)
				}
			}
		}
		// Huge finite scores: float32 would make them ±Inf and tie
		// everything; the float64 path ranks them.
		huge := slices.Clone(emit)
		for k := range huge {
			huge[k] = 1e200 * r.NormFloat64()
		}
		same("huge emissions", tr, huge, nil)
		e := slices.Clone(emit)
		e[5*M+2] = 0x1p101
		same("one emission beyond 2^100", tr, e, nil)
		st := make([]float64, M)
		st[1] = -0x1p120
		trStart, err := NewTransitions(M, tr.score, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		same("start beyond 2^100", trStart, emit, nil)
		sc := slices.Clone(tr.score)
		sc[3] = 1e300
		trHuge, err := NewTransitionsWith(M, sc, nil, nil, Options{Structure: Dense})
		if err != nil {
			t.Fatal(err)
		}
		same("transition beyond 2^100", trHuge, emit, nil)
		// −Inf emissions: still float32, still right.
		e = slices.Clone(emit)
		for j := range M - 1 {
			e[3*M+j] = math.Inf(-1)
		}
		p := make([]int32, T)
		if _, err := tr.Viterbi32(ws, e, nil, p); err != nil || p[3] != int32(M-1) {
			t.Fatalf("M=%d: −Inf emissions: %v %v", M, p, err)
		}
		// No labelling: a position with every label −Inf.
		for j := range M {
			e[3*M+j] = math.Inf(-1)
		}
		same("no labelling", tr, e, nil)
		if _, err := tr.Viterbi32(ws, e, nil, p); !errors.Is(err, ErrNoLabelling) {
			t.Fatalf("M=%d: no labelling: %v", M, err)
		}
		same("constraints", tr, emit, randomConstraint(r, T, M))
		tied, err := NewTransitionsWith(M, tr.score, tr.start, tr.end, Options{Structure: Tied})
		if err != nil {
			t.Fatal(err)
		}
		same("tied", tied, emit, nil)
		for _, n := range []int{T - 1, T + 1} {
			_, e64 := tr.Viterbi(ws, emit, nil, make([]int32, n))
			_, e32 := tr.Viterbi32(ws, emit, nil, make([]int32, n))
			if e64 == nil || e32 == nil || e32.Error() != e64.Error() {
				t.Fatalf("M=%d: path of %d for %d positions: %v, Viterbi %v", M, n, T, e32, e64)
			}
		}
		_, e64 := tr.Viterbi(ws, emit[:len(emit)-1], nil, p)
		_, e32 := tr.Viterbi32(ws, emit[:len(emit)-1], nil, p)
		if e64 == nil || e32 == nil || e32.Error() != e64.Error() {
			t.Fatalf("M=%d: ragged emissions: %v, Viterbi %v", M, e32, e64)
		}
	}
	M := boundedDenseLabels
	tr, emit := randomChain(r, 5, M, 1, 0)
	same("bounded", tr, emit, nil)
	same("empty chain", tr, nil, nil)
}

// TestViterbi32SetScores: the float32 forms follow SetScores.
func TestViterbi32SetScores(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 39))
	ws := NewWorkspace()
	M, T := 6, 12
	tr, emit := randomChain(r, T, M, 1, 0)
	other, _ := randomChain(r, T, M, 1, 0)
	p, q := make([]int32, T), make([]int32, T)
	if _, err := tr.Viterbi32(ws, emit, nil, p); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetScores(other.score, other.start, other.end); err != nil {
		t.Fatal(err)
	}
	s1, err1 := tr.Viterbi32(ws, emit, nil, p)
	s2, err2 := other.Viterbi32(ws, emit, nil, q)
	if err1 != nil || err2 != nil || s1 != s2 || !slices.Equal(p, q) {
		t.Fatalf("after SetScores: %v %v %v, fresh %v %v %v", p, s1, err1, q, s2, err2)
	}
}

// TestViterbi32Concurrent: goroutines decoding with one fresh Transitions
// (each making or reading its float32 forms) find what one goroutine finds
// (run with -race to check the forms' publication), and steady-state calls
// allocate nothing.
func TestViterbi32Concurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 41))
	for _, M := range []int{9, 40} {
		ref, _ := randomChain(r, 1, M, 1, 0)
		emits := make([][]float64, 16)
		want := make([][]int32, len(emits))
		ws := NewWorkspace()
		for i := range emits {
			_, emits[i] = randomChain(r, 1+r.IntN(40), M, 1, 0)
			want[i] = make([]int32, len(emits[i])/M)
			if _, err := ref.Viterbi32(ws, emits[i], nil, want[i]); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := NewTransitions(M, ref.score, ref.start, ref.end)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ws := NewWorkspace()
				for k := range 3 * len(emits) {
					i := (k + g) % len(emits)
					p := make([]int32, len(want[i]))
					if _, err := tr.Viterbi32(ws, emits[i], nil, p); err != nil || !slices.Equal(p, want[i]) {
						errs <- errors.New("concurrent Viterbi32 differs")
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			t.Fatalf("M=%d: %v", M, err)
		}
		p := make([]int32, len(want[0]))
		if a := testing.AllocsPerRun(20, func() { tr.Viterbi32(ws, emits[0], nil, p) }); a != 0 {
			t.Fatalf("M=%d: %v allocations a call", M, a)
		}
	}
}
