package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// scaledCase is a dense chain model and some chains for the Scaled tests.
type scaledCase struct {
	M      int
	sc     []float64 // M×M, start, end
	tr     *Transitions
	emits  [][]float64
	margs  [][]float64 // Posteriors' marginals
	logZ   []float64
	counts []float64 // Posteriors' transition counts summed over the chains
}

func newScaledCase(t *testing.T, seed uint64, M int, lens []int) *scaledCase {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	c := &scaledCase{M: M, sc: make([]float64, M*M+2*M), counts: make([]float64, M*M)}
	for k := range c.sc {
		c.sc[k] = r.NormFloat64() * 2
	}
	var err error
	c.tr, err = NewTransitionsWith(M, c.sc[:M*M], c.sc[M*M:M*M+M], c.sc[M*M+M:], Options{Structure: Dense})
	if err != nil {
		t.Fatal(err)
	}
	ws := NewWorkspace()
	for _, L := range lens {
		e := make([]float64, L*M)
		for k := range e {
			e[k] = r.NormFloat64() * 3
		}
		p := Posteriors{Marginals: make([]float64, L*M), Transitions: c.counts}
		z, err := c.tr.Posteriors(ws, e, nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		c.emits, c.margs, c.logZ = append(c.emits, e), append(c.margs, p.Marginals), append(c.logZ, z)
	}
	return c
}

func to[E Float](x []float64) []E {
	y := make([]E, len(x))
	for k, v := range x {
		y[k] = E(v)
	}
	return y
}

// checkScaled runs Scaled[E] (Forward, AddCounts, Viterbi, Lockstep) on c's
// chains against Transitions' answers, within tol (log Z relative, the rest
// absolute).
func checkScaled[E Float](t *testing.T, c *scaledCase, tol float64) {
	t.Helper()
	M := c.M
	var p Scaled[E]
	p.Set(c.sc, M)
	var w ScaledWork[E]
	var cnt Counts[E]
	counts := make([]float64, M*M)
	ws := NewWorkspace()
	emits := make([][]E, len(c.emits))
	for i, e64 := range c.emits {
		e := to[E](e64)
		emits[i] = e
		z, ok := p.Forward(&w, e, true)
		checkChain(t, "", c, i, z, ok, &w, tol)
		p.AddCounts(&w, &cnt, counts, 1)
		// Viterbi against the float64 engine's.
		L := len(e64) / M
		path, want := make([]int32, L), make([]int32, L)
		s, ok := p.Viterbi(&w, path, e)
		ws64, err := c.tr.Viterbi(ws, e64, nil, want)
		if err != nil || !ok || math.Abs(s-ws64) > tol*(1+math.Abs(ws64)) {
			t.Fatalf("chain %d: Viterbi score %v (%v), want %v (%v)", i, s, ok, ws64, err)
		}
		if tol < 1e-9 {
			for k := range path {
				if path[k] != want[k] {
					t.Fatalf("chain %d: Viterbi path %v, want %v", i, path, want)
				}
			}
		}
	}
	cnt.Flush(counts, 1)
	for k, v := range counts {
		if d := math.Abs(v - c.counts[k]); d > tol*float64(len(c.emits))*10 {
			t.Fatalf("transition count %d: %v, want %v", k, v, c.counts[k])
		}
	}
	// ForwardCounts: Forward and AddCounts in one (the counts from the
	// backward pass up to countChunk transitions).
	clear(counts)
	for i, e := range emits {
		z, ok := p.ForwardCounts(&w, e, &cnt, counts, 1)
		checkChain(t, "ForwardCounts ", c, i, z, ok, &w, tol)
	}
	cnt.Flush(counts, 1)
	for k, v := range counts {
		if d := math.Abs(v - c.counts[k]); d > tol*float64(len(c.emits))*10 {
			t.Fatalf("ForwardCounts: transition count %d: %v, want %v", k, v, c.counts[k])
		}
	}
	// The chains as one lockstep group.
	clear(counts)
	p.Lockstep(&w, emits, true, &cnt, counts)
	cnt.Flush(counts, 1)
	for i := range emits {
		z, ok := w.GroupChain(i)
		if !ok || math.Abs(z-c.logZ[i]) > tol*math.Abs(c.logZ[i]) {
			t.Fatalf("lockstep chain %d: log Z %v (%v), want %v", i, z, ok, c.logZ[i])
		}
		for tt := range len(c.emits[i]) / M {
			a, b := w.GroupRow(i, tt)
			for j := range M {
				if d := math.Abs(float64(a[j]*b[j]) - c.margs[i][tt*M+j]); d > tol {
					t.Fatalf("lockstep chain %d: marginal [%d][%d] off by %.3g", i, tt, j, d)
				}
			}
		}
	}
	for k, v := range counts {
		if d := math.Abs(v - c.counts[k]); d > tol*float64(len(c.emits))*10 {
			t.Fatalf("lockstep transition count %d: %v, want %v", k, v, c.counts[k])
		}
	}
}

// checkChain checks chain i's log Z z (ok: not refused) and the marginals
// α∘β of w against c's, within tol (log Z relative, marginals absolute).
func checkChain[E Float](t *testing.T, what string, c *scaledCase, i int, z float64, ok bool, w *ScaledWork[E], tol float64) {
	t.Helper()
	if !ok || math.Abs(z-c.logZ[i]) > tol*math.Abs(c.logZ[i]) {
		t.Fatalf("%schain %d: log Z %v (%v), want %v", what, i, z, ok, c.logZ[i])
	}
	a, b := w.Alpha(), w.Beta()
	for k := range a {
		if d := math.Abs(float64(a[k]*b[k]) - c.margs[i][k]); d > tol {
			t.Fatalf("%schain %d: marginal %d off by %.3g", what, i, k, d)
		}
	}
}

// TestScaled: the float64 and float32 scaled paths (one shift for the whole
// matrix, counts in chunks, lockstep groups, Viterbi) against Transitions'
// (column shifts); chains longer than countChunk flush mid-chain.
func TestScaled(t *testing.T) {
	lens := []int{1, 2, 3, 17, 70, 150}
	for _, M := range []int{3, 8, 22, 40} {
		c := newScaledCase(t, uint64(M), M, lens)
		checkScaled[float64](t, c, 1e-10)
		checkScaled[float32](t, c, 2e-4)
	}
}

// TestScaledRefuses: what the scaled path leaves to a Transitions: NaN
// and ±Inf emissions, a spread beyond the range of E, no labelling; a
// lockstep group leaves those chains out and runs the others.
func TestScaledRefuses(t *testing.T) {
	const M = 4
	c := newScaledCase(t, 9, M, []int{5})
	var p Scaled[float32]
	p.Set(c.sc, M)
	var w ScaledWork[float32]
	good := to[float32](c.emits[0])
	wide := append([]float32(nil), good...)
	wide[M+1] = -200 // a spread of 200 nats: beyond ScaledRange32
	nan := append([]float32(nil), good...)
	nan[3] = float32(math.NaN())
	inf := append([]float32(nil), good...)
	inf[2] = float32(math.Inf(1))
	for name, e := range map[string][]float32{"wide": wide, "NaN": nan, "+Inf": inf} {
		if _, ok := p.Forward(&w, e, true); ok {
			t.Errorf("%s: Forward took it", name)
		}
	}
	if _, ok := p.Viterbi(&w, make([]int32, 5), nan); ok {
		t.Error("NaN: Viterbi took it")
	}
	p.Lockstep(&w, [][]float32{good, wide, nan, good[:2*M]}, true, nil, nil)
	for k, want := range []bool{true, false, false, true} {
		if _, ok := w.GroupChain(k); ok != want {
			t.Errorf("lockstep chain %d ran: %v, want %v", k, ok, want)
		}
	}
	// No labelling: every start score forbidden.
	sc := append([]float64(nil), c.sc...)
	for j := range M {
		sc[M*M+j] = math.Inf(-1)
	}
	p.Set(sc, M)
	if _, ok := p.Forward(&w, good, false); ok {
		t.Error("no labelling: Forward took it")
	}
	if _, ok := p.Viterbi(&w, make([]int32, 5), good); ok {
		t.Error("no labelling: Viterbi took it")
	}
}

// TestNoNaNPosInf: the summed check agrees with the scalar definition for
// a bad value at every position, −Inf beside it or not, and for sums that
// overflow with nothing bad (the scalar scan's case).
func TestNoNaNPosInf(t *testing.T) {
	testNoNaNPosInf[float32](t)
	testNoNaNPosInf[float64](t)
}

func testNoNaNPosInf[E Float](t *testing.T) {
	t.Helper()
	want := func(x []E) bool {
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 1) {
				return false
			}
		}
		return true
	}
	h := math.MaxFloat64
	if is32[E]() {
		h = math.MaxFloat32
	}
	huge := E(h)
	var ones []E
	for n := 0; n <= 70; n++ {
		x := make([]E, n)
		for k := range x {
			x[k] = E(k%7) - 3
		}
		check := func(what string) {
			if got := noNaNPosInf(x, &ones); got != want(x) {
				t.Fatalf("%T n=%d %s: %v, want %v (%v)", E(0), n, what, got, want(x), x)
			}
		}
		check("finite")
		for i := range n {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), float64(huge)} {
				old := x[i]
				x[i] = E(bad)
				check(fmt.Sprintf("x[%d]=%v", i, bad))
				x[(i+n/2)%n] = E(math.Inf(-1))
				check(fmt.Sprintf("x[%d]=%v with −Inf", i, bad))
				x[(i+n/2)%n] = huge
				check(fmt.Sprintf("x[%d]=%v with huge", i, bad))
				x[i], x[(i+n/2)%n] = old, E((i+n/2)%n%7)-3
			}
		}
	}
	// A sum that overflows though every value is finite: the scan decides.
	x := make([]E, 64)
	fill(x, huge)
	if !noNaNPosInf(x, &ones) {
		t.Errorf("%T: %d values of %v refused", E(0), len(x), huge)
	}
}
