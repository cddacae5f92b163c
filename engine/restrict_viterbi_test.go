package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// tieCase is a chain whose scores are small multiples of 1/2 (sums exact:
// many tied labellings), dense or tied (default 0 or −Inf), with some −Inf
// emissions and forbidden transitions, and sets as restrictCase's.
func tieCase(r *rand.Rand, T, M int, tied bool, kmax int, free float64) (*Transitions, []float64, *ChainOptions) {
	q := func() float64 { return float64(r.IntN(5)-2) / 2 }
	start, end := make([]float64, M), make([]float64, M)
	for j := range M {
		start[j], end[j] = q(), q()
	}
	var tr *Transitions
	var err error
	if tied {
		def := []float64{0, math.Inf(-1)}[r.IntN(2)]
		var exc []Exception
		for i := range M {
			for j := range M {
				if r.IntN(4) == 0 {
					v := q()
					if r.IntN(6) == 0 {
						v = math.Inf(-1)
					}
					exc = append(exc, Exception{int32(i), int32(j), v})
				}
			}
		}
		tr, err = NewTied(M, def, exc, start, end)
	} else {
		score := make([]float64, M*M)
		for k := range score {
			score[k] = q()
			if r.IntN(8) == 0 {
				score[k] = math.Inf(-1)
			}
		}
		tr, err = NewTransitionsWith(M, score, start, end, Options{Structure: Dense})
	}
	if err != nil {
		panic(err)
	}
	emit := make([]float64, T*M)
	for k := range emit {
		emit[k] = q()
		switch r.IntN(10) {
		case 0:
			emit[k] = math.Inf(-1)
		case 1:
			emit[k] = math.Copysign(0, -1) // −0: the score's sign must agree too
		}
	}
	c := &ChainOptions{Allowed: randomSets(r, T, M, kmax, free, nil)}
	if r.IntN(4) == 0 {
		c.Forced = make([]int32, T)
		for t := range c.Forced {
			c.Forced[t] = -1
			if r.IntN(5) == 0 {
				c.Forced[t] = int32(r.IntN(M))
			}
		}
	}
	return tr, emit, c
}

// viterbiBoth runs the restricted Viterbi (directly: it must answer) and
// the full constrained one (routing off) and checks that they agree bit
// for bit: score, path, error.
func viterbiBoth(t *testing.T, what string, tr *Transitions, emit []float64, c *ChainOptions, ws *Workspace) {
	t.Helper()
	T := len(emit) / tr.m
	got := make([]int32, T)
	best, ok := tr.restrictedViterbi(ws, emit, T, c, got)
	if !ok {
		// Only a position with no label may hand the chain back here.
		restrictOff = true
		_, err := tr.Viterbi(ws, emit, c, got)
		restrictOff = false
		if !errors.Is(err, ErrNoLabelling) {
			t.Fatalf("%s: handed back, full path gives %v", what, err)
		}
		return
	}
	restrictOff = true
	want := make([]int32, T)
	wbest, werr := tr.Viterbi(ws, emit, c, want)
	restrictOff = false
	if math.IsInf(best, -1) != errors.Is(werr, ErrNoLabelling) {
		t.Fatalf("%s: restricted best %v, full error %v", what, best, werr)
	}
	if werr != nil {
		return
	}
	if math.Float64bits(best) != math.Float64bits(wbest) || !slices.Equal(got, want) {
		t.Fatalf("%s: restricted %v %v, full %v %v", what, best, got, wbest, want)
	}
	// And through the public call.
	pb, err := tr.Viterbi(ws, emit, c, got)
	if err != nil || math.Float64bits(pb) != math.Float64bits(wbest) || !slices.Equal(got, want) {
		t.Fatalf("%s: Viterbi %v %v %v, full %v %v", what, pb, got, err, wbest, want)
	}
}

// TestRestrictedViterbiMatchesConstrained: the restricted Viterbi equals
// the full constrained one bit for bit (same additions in the same order)
// on random chains (deltas, forced labels, ragged and duplicate sets) and
// on chains full of exact ties and −Inf scores, dense and tied, small M
// and M ≥ boundedDenseLabels (the full path's bounded steps), T = 0..7
// and 40.
func TestRestrictedViterbiMatchesConstrained(t *testing.T) {
	r := rand.New(rand.NewPCG(190, 191))
	ws := NewWorkspace()
	for trial := range 1200 {
		tied := trial%2 == 1
		M := []int{1, 2, 3, 5, 9, 40}[r.IntN(6)]
		if trial%50 < 4 {
			M = 300
		}
		T := r.IntN(8)
		if trial%7 == 0 {
			T = 40
		}
		kmax := 1 + r.IntN(min(M, 6))
		var tr *Transitions
		var emit []float64
		var c *ChainOptions
		if trial%3 == 0 {
			tr, emit, c = restrictCase(r, T, M, tied, kmax, 0.1)
		} else {
			tr, emit, c = tieCase(r, T, M, tied, kmax, 0.1)
		}
		if T == 0 {
			path := []int32{}
			if s, err := tr.Viterbi(ws, emit, c, path); s != 0 || err != nil {
				t.Fatalf("T = 0: %v %v", s, err)
			}
			continue
		}
		viterbiBoth(t, fmt.Sprintf("trial %d (M=%d T=%d tied=%v)", trial, M, T, tied), tr, emit, c, ws)
	}
}

// TestRestrictedViterbiAgainstBruteForce: the best of every labelling the
// sets admit, with the engine's tie rule (the enumeration's order: lowest
// last label, then lowest label before it, …); exact ties from half-unit
// scores.
func TestRestrictedViterbiAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(192, 193))
	ws := NewWorkspace()
	for trial := range 400 {
		M := 1 + r.IntN(4)
		T := 1 + r.IntN(5)
		tied := trial%2 == 1
		tr, emit, c := tieCase(r, T, M, tied, 3, 0.15)
		what := fmt.Sprintf("trial %d (M=%d T=%d tied=%v)", trial, M, T, tied)
		b := enumerate(t, tr, emit, c)
		path := make([]int32, T)
		best, ok := tr.restrictedViterbi(ws, emit, T, c, path)
		if b.nPossible == 0 {
			if ok && !math.IsInf(best, -1) {
				t.Fatalf("%s: no labelling possible, got %v %v", what, best, path)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s: handed back", what)
		}
		if best != b.scores[0] || !slices.Equal(path, b.paths[0]) {
			t.Fatalf("%s: %v %v, want %v %v", what, best, path, b.scores[0], b.paths[0])
		}
	}
}

// TestRestrictedViterbiHandsBack: NaN and +Inf emissions (even of excluded
// labels) and positions with no label go to the full path, whose errors
// the caller gets.
func TestRestrictedViterbiHandsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(194, 195))
	ws := NewWorkspace()
	for _, tied := range []bool{false, true} {
		tr, emit, _ := restrictCase(r, 5, 30, tied, 3, 0)
		c := &ChainOptions{Allowed: [][]int32{{1}, {2, 3}, {4}, {0, 9}, {7}}}
		path := make([]int32, 5)
		if _, ok := tr.restrictedViterbi(ws, emit, 5, c, path); !ok {
			t.Fatal("finite chain handed back")
		}
		for _, v := range []float64{math.NaN(), math.Inf(1)} {
			e := slices.Clone(emit)
			e[2*30+17] = v // an excluded label
			if _, ok := tr.restrictedViterbi(ws, e, 5, c, path); ok {
				t.Fatalf("emission %v: not handed back", v)
			}
			if _, err := tr.Viterbi(ws, e, c, path); err == nil || errors.Is(err, ErrNoLabelling) {
				t.Fatalf("emission %v: error %v", v, err)
			}
		}
		empty := &ChainOptions{Allowed: [][]int32{{1}, {2}, {4}, {0}, {7}}, Forced: []int32{-1, 3, -1, -1, -1}}
		if _, ok := tr.restrictedViterbi(ws, emit, 5, empty, path); ok {
			t.Fatal("forced label outside its set: not handed back")
		}
		if _, err := tr.Viterbi(ws, emit, empty, path); !errors.Is(err, ErrNoLabelling) {
			t.Fatalf("forced label outside its set: %v", err)
		}
	}
}

// TestRestrictViterbiPays checks the routing rule's cases.
func TestRestrictViterbiPays(t *testing.T) {
	r := rand.New(rand.NewPCG(196, 197))
	for _, M := range []int{64, 300} {
		tr, _ := randomChain(r, 1, M, 1, 0)
		tr.tied = nil
		if !tr.restrictViterbiPays(&ChainOptions{Allowed: randomSets(r, 40, M, 8, 0, nil)}, 40) {
			t.Fatalf("M = %d, sets of ≤ 8: want the restricted path", M)
		}
		if tr.restrictViterbiPays(&ChainOptions{Allowed: make([][]int32, 40)}, 40) || tr.restrictViterbiPays(nil, 40) {
			t.Fatalf("M = %d, no sets: want the full path", M)
		}
	}
	small, _ := randomChain(r, 1, 4, 1, 0)
	if small.restrictViterbiPays(&ChainOptions{Allowed: randomSets(r, 40, 4, 3, 0, nil)}, 40) {
		t.Fatal("M = 4: want the full path")
	}
}

// TestRestrictedViterbiNoAllocations: steady-state Viterbi calls through
// the restricted path allocate nothing (dense and tied).
func TestRestrictedViterbiNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(198, 199))
	for _, tied := range []bool{false, true} {
		M, T := 300, 30
		tr, emit, _ := restrictCase(r, T, M, tied, 6, 0)
		c := &ChainOptions{Allowed: randomSets(r, T, M, 6, 0, nil)}
		ws := NewWorkspace()
		path := make([]int32, T)
		if _, ok := tr.restrictedViterbi(ws, emit, T, c, path); !ok || !tr.restrictViterbiPays(c, T) {
			t.Fatal("not on the restricted path")
		}
		if n := testing.AllocsPerRun(20, func() {
			if _, err := tr.Viterbi(ws, emit, c, path); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Fatalf("tied=%v: %v allocations per call", tied, n)
		}
	}
}

// FuzzRestrictedViterbi: random tie-heavy chains from the fuzzer's seed,
// restricted against full.
func FuzzRestrictedViterbi(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(4), true)
	f.Add(uint64(2), uint8(9), uint8(1), false)
	f.Fuzz(func(t *testing.T, seed uint64, m, tl uint8, tied bool) {
		M, T := 1+int(m%12), int(tl%10)
		if T == 0 {
			return
		}
		r := rand.New(rand.NewPCG(seed, 7))
		tr, emit, c := tieCase(r, T, M, tied, 1+r.IntN(M), 0.1)
		viterbiBoth(t, fmt.Sprintf("seed %d M=%d T=%d", seed, M, T), tr, emit, c, NewWorkspace())
	})
}
