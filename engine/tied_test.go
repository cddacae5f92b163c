package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// randomTied makes a tied matrix: default def, and about nexc exceptions
// with random scores (some -Inf, some equal to the default).
func randomTied(r *rand.Rand, M, nexc int, def float64) []Exception {
	seen := map[[2]int32]bool{}
	var exc []Exception
	for range nexc {
		e := Exception{int32(r.IntN(M)), int32(r.IntN(M)), r.NormFloat64() * 2}
		switch r.IntN(8) {
		case 0:
			e.Score = math.Inf(-1)
		case 1:
			e.Score = def
		}
		if math.IsInf(def, -1) && math.IsInf(e.Score, -1) {
			e.Score = r.NormFloat64()
		}
		if !seen[[2]int32{e.From, e.To}] {
			seen[[2]int32{e.From, e.To}] = true
			exc = append(exc, e)
		}
	}
	return exc
}

// TestTiedMatchesDense runs the same matrices through the Tied and Dense
// structures: log Z, marginals, expected counts agree to rounding; Viterbi
// labellings, scores and back-pointers are identical.
func TestTiedMatchesDense(t *testing.T) {
	// It compares the full paths' δ and back-pointers (the restricted
	// Viterbi keeps neither; restrict_viterbi_test.go checks it).
	restrictOff = true
	defer func() { restrictOff = false }()
	r := rand.New(rand.NewPCG(20, 21))
	ws, wd := NewWorkspace(), NewWorkspace()
	for trial := range 200 {
		M := 1 + r.IntN(40)
		if trial%10 == 0 {
			M = 64 + r.IntN(100)
		}
		def := []float64{0, math.Inf(-1), 1.5, -3}[trial%4]
		exc := randomTied(r, M, 1+r.IntN(3*M), def)
		if trial%20 == 0 {
			// A column with more exceptions than the tied Viterbi's top
			// list holds (it then scans the column).
			have := map[[2]int32]bool{}
			for _, e := range exc {
				have[[2]int32{e.From, e.To}] = true
			}
			for i := range int32(M - 1) {
				if !have[[2]int32{i, 0}] {
					exc = append(exc, Exception{i, 0, r.NormFloat64()})
				}
			}
		}
		start, end := make([]float64, M), make([]float64, M)
		for j := range M {
			start[j], end[j] = r.NormFloat64(), r.NormFloat64()
		}
		tied, err := NewTied(M, def, exc, start, end)
		if err != nil {
			t.Fatal(err)
		}
		if tied.Structure() != Tied {
			t.Fatal("NewTied did not use the Tied structure")
		}
		dense, err := NewTransitionsWith(M, tied.score, start, end, Options{Structure: Dense})
		if err != nil || dense.Structure() != Dense {
			t.Fatal(err)
		}
		// The column shifts and the log-domain switch, found from the
		// exceptions (tiedForm.cols), are the matrix scan's, bit for bit.
		if !slices.Equal(f64bits(tied.colShift), f64bits(dense.colShift)) || !slices.Equal(f64bits(tied.colEnd), f64bits(dense.colEnd)) || tied.logOnly != dense.logOnly {
			t.Fatalf("trial %d: column shifts tied %v (log only %v), dense %v (%v)", trial, tied.colShift, tied.logOnly, dense.colShift, dense.logOnly)
		}
		T := 1 + r.IntN(30)
		emit := make([]float64, T*M)
		for k := range emit {
			emit[k] = 2 * r.NormFloat64()
		}
		var c *ChainOptions
		if trial%3 == 1 {
			c = randomConstraint(r, T, M)
		}
		name := fmt.Sprintf("trial %d M=%d T=%d def=%v exc=%d", trial, M, T, def, len(exc))

		pt := Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M), Tied: make([]float64, len(exc)+1)}
		pd := Posteriors{Marginals: make([]float64, T*M), Transitions: make([]float64, M*M)}
		zt, errT := tied.Posteriors(ws, emit, c, &pt)
		zd, errD := dense.Posteriors(wd, emit, c, &pd)
		if errT != errD {
			t.Fatalf("%s: errors %v vs %v", name, errT, errD)
		}
		if errD == ErrNoLabelling {
			continue
		}
		if ws.logMode || wd.logMode {
			t.Fatalf("%s: left the scaled path", name)
		}
		if !near(zt, zd, 1e-12) {
			t.Fatalf("%s: log Z tied %v, dense %v", name, zt, zd)
		}
		checkNear(t, name+" marginals", pt.Marginals, pd.Marginals, 1e-10)
		checkNear(t, name+" transitions", pt.Transitions, pd.Transitions, 1e-10)
		defCount := 0.0
		isExc := make([]bool, M*M)
		for k, e := range exc {
			at := int(e.From)*M + int(e.To)
			isExc[at] = true
			if !near(pt.Tied[k], pd.Transitions[at], 1e-10) {
				t.Fatalf("%s: exception %d count %v, dense %v", name, k, pt.Tied[k], pd.Transitions[at])
			}
		}
		total := 0.0
		for k, v := range pd.Transitions {
			total += v
			if !isExc[k] {
				defCount += v
			}
		}
		if math.Abs(pt.Tied[len(exc)]-defCount) > 1e-10*(1+total) {
			t.Fatalf("%s: default count %v, dense %v", name, pt.Tied[len(exc)], defCount)
		}

		pa, pb := make([]int32, T), make([]int32, T)
		st, e1 := tied.Viterbi(ws, emit, c, pa)
		sd, e2 := dense.Viterbi(wd, emit, c, pb)
		if e1 != e2 || st != sd || !slices.Equal(pa, pb) {
			t.Fatalf("%s: Viterbi tied %v %v %v, dense %v %v %v", name, pa, st, e1, pb, sd, e2)
		}
		if !slices.Equal(ws.bp[M:T*M], denseBP(wd, dense, T, M)) {
			t.Fatalf("%s: back-pointers differ", name)
		}
		for k := range T * M {
			if math.Float64bits(ws.delta[k]) != math.Float64bits(wd.delta[k]) {
				t.Fatalf("%s: δ[%d] tied %v, dense %v", name, k, ws.delta[k], wd.delta[k])
			}
		}
	}
}

func TestAutoStructure(t *testing.T) {
	for _, c := range []struct {
		M, exc int
		def    float64
		want   Structure
	}{
		{8, 3, 0, Dense},                     // small M: dense kernels win
		{64, 100, 0, Tied},                   // few exceptions to 0
		{64, 100, math.Inf(-1), Tied},        // few allowed transitions
		{64, 64 * 64, 0, Dense},              // every entry distinct
		{128, 128 * 128 / 2, 0, Dense},       // half the matrix
		{1024, 2 * 1024, math.Inf(-1), Tied}, // large, sparse
	} {
		r := rand.New(rand.NewPCG(uint64(c.M), uint64(c.exc)))
		score := make([]float64, c.M*c.M)
		for k := range score {
			score[k] = c.def
		}
		for k := range c.exc {
			score[(k*7919)%(c.M*c.M)] = r.NormFloat64()
		}
		tr, err := NewTransitions(c.M, score, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Structure() != c.want {
			t.Errorf("M=%d with %d exceptions to %v: %v, want %v", c.M, c.exc, c.def, tr.Structure(), c.want)
		}
	}
}

func TestNewTiedErrors(t *testing.T) {
	if _, err := NewTied(3, 0, []Exception{{0, 3, 1}}, nil, nil); err == nil {
		t.Error("out-of-range exception accepted")
	}
	if _, err := NewTied(3, 0, []Exception{{0, 1, 1}, {0, 1, 2}}, nil, nil); err == nil {
		t.Error("duplicate exception accepted")
	}
	if _, err := NewTied(3, math.NaN(), nil, nil, nil); err == nil {
		t.Error("NaN default accepted")
	}
	tr, _ := NewTransitionsWith(3, make([]float64, 9), nil, nil, Options{Structure: Dense})
	if _, err := tr.Posteriors(NewWorkspace(), make([]float64, 3), nil, &Posteriors{Tied: make([]float64, 1)}); err == nil {
		t.Error("Tied counts from a dense structure accepted")
	}
}

// TestTiedViterbiTies is TestTiedMatchesDense's Viterbi check with scores
// drawn from a few small integers (and −0), so that exact ties between
// candidates are everywhere, and with exceptions covering up to most of the
// matrix, so that every entry of the tied Viterbi's short top list is often
// an exception of a column (it then scans all of δ): δ, back-pointers,
// labellings and scores must be bit-identical to the dense kernel's.
//
// It runs under every kernel implementation: the exceptions are scored by
// kernels.Rows.MaxPlus with a vector tier, by a flat loop without one.
func TestTiedViterbiTies(t *testing.T) { forEachTier(t, tiedViterbiTies) }

func tiedViterbiTies(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 23))
	vals := []float64{-1, 0, math.Copysign(0, -1), 1, 2}
	pick := func() float64 { return vals[r.IntN(len(vals))] }
	ws, wd := NewWorkspace(), NewWorkspace()
	for trial := range 300 {
		M := 1 + r.IntN(24)
		if trial%10 == 0 {
			M = 40 + r.IntN(60)
		}
		def := []float64{0, math.Inf(-1), 1, -1}[trial%4]
		var exc []Exception
		frac := r.Float64()
		for i := range int32(M) {
			for j := range int32(M) {
				if r.Float64() < frac {
					s := pick()
					if r.IntN(8) == 0 {
						s = math.Inf(-1)
					}
					exc = append(exc, Exception{i, j, s})
				}
			}
		}
		tied, err := NewTied(M, def, exc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		dense, err := NewTransitionsWith(M, tied.score, nil, nil, Options{Structure: Dense})
		if err != nil {
			t.Fatal(err)
		}
		T := 1 + r.IntN(20)
		emit := make([]float64, T*M)
		for k := range emit {
			emit[k] = pick()
		}
		name := fmt.Sprintf("trial %d M=%d T=%d def=%v exc=%d", trial, M, T, def, len(exc))
		pa, pb := make([]int32, T), make([]int32, T)
		st, e1 := tied.Viterbi(ws, emit, nil, pa)
		sd, e2 := dense.Viterbi(wd, emit, nil, pb)
		if e1 != e2 || math.Float64bits(st) != math.Float64bits(sd) || !slices.Equal(pa, pb) {
			t.Fatalf("%s: Viterbi tied %v %v %v, dense %v %v %v", name, pa, st, e1, pb, sd, e2)
		}
		if !slices.Equal(ws.bp[M:T*M], denseBP(wd, dense, T, M)) {
			t.Fatalf("%s: back-pointers differ", name)
		}
		for k := range T * M {
			if math.Float64bits(ws.delta[k]) != math.Float64bits(wd.delta[k]) {
				t.Fatalf("%s: δ[%d] tied %v, dense %v", name, k, ws.delta[k], wd.delta[k])
			}
		}
	}
}

// denseBP returns the dense kernel's back-pointers (rows 1..T−1) for the
// scores the dense Viterbi just left in wd.s (the engine's dense Viterbi
// may have run the max-only kernel, which keeps none).
func denseBP(wd *Workspace, dense *Transitions, T, M int) []int32 {
	bp, delta, path := make([]int32, T*M), make([]float64, T*M), make([]int32, T)
	kernels.Viterbi(path, delta, bp, wd.s[:T*M], dense.score, T, M)
	return bp[M:]
}

// TestTiedDenseFormsConcurrent shares one NewTied Transitions, whose dense
// forms are made on first use, among goroutines that all need them at once
// (edge marginals): each gets what a Dense copy gives (run with -race).
func TestTiedDenseFormsConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const M, T = 40, 6
	exc := randomTied(r, M, 3*M, -2)
	emit := make([]float64, T*M)
	for k := range emit {
		emit[k] = r.NormFloat64()
	}
	tied, err := NewTied(M, -2, exc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dense, err := NewTransitionsWith(M, tied.score, nil, nil, Options{Structure: Dense})
	if err != nil {
		t.Fatal(err)
	}
	want := Posteriors{Edges: make([]float64, (T-1)*M*M)}
	if _, err := dense.Posteriors(NewWorkspace(), emit, nil, &want); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := Posteriors{Edges: make([]float64, (T-1)*M*M)}
			if _, err := tied.Posteriors(NewWorkspace(), emit, nil, &got); err != nil {
				errs <- err
				return
			}
			for k, v := range got.Edges {
				if math.Abs(v-want.Edges[k]) > 1e-12 {
					errs <- fmt.Errorf("edge %d: %v, dense %v", k, v, want.Edges[k])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestTiedViterbiBounded checks the bounded tied Viterbi step (only the
// rows that can win scored) on scores shaped like a trained model's: a low
// default, exceptions mostly above it (some −Inf, some tied), and sharp
// emissions (a few labels fit each position), drawn from few values so
// that ties are common. Each step is checked against the full step on the
// same δ (the bounded one must run in many of them), and whole chains
// against the dense kernel, bit for bit.
func TestTiedViterbiBounded(t *testing.T) { forEachTier(t, tiedViterbiBounded) }

func tiedViterbiBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 25))
	ws, wd := NewWorkspace(), NewWorkspace()
	vals := []float64{-2, -1, 0, math.Copysign(0, -1), 1, 2, 3}
	steps, kept := 0, 0
	for trial := range 200 {
		M := 2 + r.IntN(60)
		if trial%10 == 0 {
			M = 100 + r.IntN(300)
		}
		def := []float64{-6, -3, 0, -4.5}[trial%4]
		seen := map[[2]int32]bool{}
		var exc []Exception
		for range 1 + r.IntN(4*M) {
			e := Exception{int32(r.IntN(M)), int32(r.IntN(M)), vals[r.IntN(len(vals))]}
			switch r.IntN(10) {
			case 0:
				e.Score = math.Inf(-1)
			case 1:
				e.Score = def - 1
			}
			if !seen[[2]int32{e.From, e.To}] {
				seen[[2]int32{e.From, e.To}] = true
				exc = append(exc, e)
			}
		}
		if trial%7 == 0 { // a row with every column an exception
			i := int32(r.IntN(M))
			for j := range int32(M) {
				if !seen[[2]int32{i, j}] {
					exc = append(exc, Exception{i, j, vals[r.IntN(len(vals))]})
				}
			}
		}
		tied, err := NewTied(M, def, exc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		dense, err := NewTransitionsWith(M, tied.score, nil, nil, Options{Structure: Dense})
		if err != nil {
			t.Fatal(err)
		}
		T := 1 + r.IntN(20)
		emit := make([]float64, T*M)
		for k := range emit {
			emit[k] = -8 + vals[r.IntN(len(vals))]
			if r.IntN(M) < 3 {
				emit[k] += 8 // a label that fits
			}
		}
		name := fmt.Sprintf("trial %d M=%d T=%d def=%v exc=%d", trial, M, T, def, len(exc))
		pa, pb := make([]int32, T), make([]int32, T)
		st, e1 := tied.Viterbi(ws, emit, nil, pa)
		sd, e2 := dense.Viterbi(wd, emit, nil, pb)
		if e1 != e2 || math.Float64bits(st) != math.Float64bits(sd) || !slices.Equal(pa, pb) {
			t.Fatalf("%s: Viterbi tied %v %v %v, dense %v %v %v", name, pa, st, e1, pb, sd, e2)
		}
		if !slices.Equal(ws.bp[M:T*M], denseBP(wd, dense, T, M)) {
			t.Fatalf("%s: back-pointers differ", name)
		}
		for k := range T * M {
			if math.Float64bits(ws.delta[k]) != math.Float64bits(wd.delta[k]) {
				t.Fatalf("%s: δ[%d] tied %v, dense %v", name, k, ws.delta[k], wd.delta[k])
			}
		}
		// Step by step, on the δ rows of that run.
		tf := tied.tied
		K := min(tf.maxCol+1, M, shortTop)
		top, cand := make([]int32, min(M, maxTop)), make([]int32, min(M, maxBounded))
		cur1, cur2 := make([]float64, M), make([]float64, M)
		arg1, arg2 := make([]int32, M), make([]int32, M)
		vec := kernels.MaxPlusCSRVector() && len(tf.colI) >= maxPlusMinPerCol*M
		for s := range T - 1 {
			prev := ws.delta[s*M : (s+1)*M]
			lv1 := topLevels{mark: make([]int32, K*M), m: M}
			lv2 := topLevels{mark: make([]int32, K*M), m: M}
			steps++
			if !tf.bounded(prev, cur1, arg1, cand, make([]float64, M+2), &lv1, 1, K) {
				continue
			}
			kept++
			tf.fullStep(prev, cur2, arg2, top[:K], top[K:], &lv2, 1, vec, true)
			for j := range M {
				if math.Float64bits(cur1[j]) != math.Float64bits(cur2[j]) || arg1[j] != arg2[j] {
					t.Fatalf("%s: step %d column %d: bounded %v (%d), full %v (%d)", name, s+1, j, cur1[j], arg1[j], cur2[j], arg2[j])
				}
			}
		}
	}
	if kept < steps/2 {
		t.Fatalf("the bounded step ran in %d of %d steps", kept, steps)
	}
	t.Logf("the bounded step ran in %d of %d steps", kept, steps)
}

// f64bits returns the bit patterns of x (to compare −0 and +0 apart).
func f64bits(x []float64) []uint64 {
	b := make([]uint64, len(x))
	for k, v := range x {
		b[k] = math.Float64bits(v)
	}
	return b
}

// TestTiedColumnShifts checks the column shifts and the log-domain switch
// that NewTied and SetTied find from the exceptions (tiedForm.cols)
// against the matrix scan of the Dense structure, bit for bit, with
// spreads on both sides of scaledRange, −Inf and ±0 entries and columns
// that are all exceptions.
func TestTiedColumnShifts(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 27))
	for trial := range 300 {
		M := 1 + r.IntN(12)
		def := []float64{0, math.Copysign(0, -1), math.Inf(-1), -2, 3}[trial%5]
		spread := []float64{1, 50, 400}[trial%3]
		var exc []Exception
		for i := range int32(M) {
			for j := range int32(M) {
				if r.IntN(3) > 0 && (j != 0 || r.IntN(4) > 0) {
					continue
				}
				v := spread * (r.Float64() - 0.5)
				switch r.IntN(6) {
				case 0:
					v = math.Inf(-1)
				case 1:
					v = math.Copysign(0, float64(r.IntN(2))-0.5)
				}
				exc = append(exc, Exception{i, j, v})
			}
		}
		if trial%4 == 0 { // column 0 all exceptions
			exc = exc[:0]
			for i := range int32(M) {
				exc = append(exc, Exception{i, 0, spread * (r.Float64() - 0.5)})
			}
		}
		tied, err := NewTied(M, def, exc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string) {
			t.Helper()
			dense, err := NewTransitionsWith(M, tied.score, nil, nil, Options{Structure: Dense})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f64bits(tied.colShift), f64bits(dense.colShift)) || tied.logOnly != dense.logOnly {
				t.Fatalf("trial %d (%s): column shifts %v (log only %v), matrix scan %v (%v)", trial, what, tied.colShift, tied.logOnly, dense.colShift, dense.logOnly)
			}
		}
		check("NewTied")
		scores := make([]float64, len(exc))
		for k := range scores {
			scores[k] = spread * (r.Float64() - 0.5)
		}
		if err := tied.SetTied(def-1, scores, nil, nil); err != nil && !math.IsInf(def, -1) {
			t.Fatal(err)
		}
		check("SetTied")
	}
}
