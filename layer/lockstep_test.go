package layer

import (
	"errors"
	"math"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
)

// lockProblem is a ragged batch at M = engine.LockstepLabels (the engine's
// lockstep threshold; the layer's, lowered to it) with lengths 1, 2 and T
// among random ones.
func lockProblem(t *testing.T, seed uint64, B, T int) *problem {
	setLockMin(t, engine.LockstepLabels)
	p := newProblem(seed, engine.LockstepLabels, B, T, 1.5)
	p.lengths[1], p.lengths[2] = 1, 2
	return p
}

// setLockMin lowers the layer's float64 lockstep threshold until the test
// ends.
func setLockMin(t *testing.T, m int) {
	old := lockstepMin64
	lockstepMin64 = m
	t.Cleanup(func() { lockstepMin64 = old })
}

type nllOut[F float32 | float64] struct {
	v   float64
	per []float64
	g   *Grad[F]
}

func runNLL[F float32 | float64](t *testing.T, c *CRF[F], bt Batch[F], p *problem, red Reduction) nllOut[F] {
	t.Helper()
	M, B, T := p.M, p.B, p.T
	o := nllOut[F]{per: make([]float64, B), g: &Grad[F]{Emissions: make([]F, B*T*M), Trans: make([]F, M*M), Start: make([]F, M), End: make([]F, M)}}
	for k := range o.g.Emissions {
		o.g.Emissions[k] = 7 // overwritten, 0 beyond the lengths
	}
	var err error
	if o.v, err = c.NLL(bt, p.tags, red, o.per, o.g); err != nil {
		t.Fatal(err)
	}
	return o
}

func maxRel[F float32 | float64](a []F, b []float64) float64 {
	d := 0.0
	for k := range a {
		d = math.Max(d, math.Abs(float64(a[k])-b[k])/math.Max(1, math.Abs(b[k])))
	}
	return d
}

func compareNLL[F float32 | float64](t *testing.T, what string, got nllOut[F], want nllOut[float64], tol float64) {
	t.Helper()
	if !near(got.v, want.v, tol) {
		t.Errorf("%s: NLL %v, per sequence %v", what, got.v, want.v)
	}
	for b := range want.per {
		if !near(got.per[b], want.per[b], tol) {
			t.Errorf("%s: sequence %d NLL %v, per sequence %v", what, b, got.per[b], want.per[b])
		}
	}
	for _, x := range []struct {
		n string
		a []F
		b []float64
	}{{"emissions", got.g.Emissions, want.g.Emissions}, {"trans", got.g.Trans, want.g.Trans}, {"start", got.g.Start, want.g.Start}, {"end", got.g.End, want.g.End}} {
		if d := maxRel(x.a, x.b); !(d <= tol) {
			t.Errorf("%s: gradient %s differs by %v", what, x.n, d)
		}
	}
}

// TestLockstep: NLL (every reduction: value, per-sequence values, every
// gradient) and Marginals (with log Z) on the lockstep path equal the
// per-sequence path's, on 1 and 3 threads, and the lockstep path ran.
func TestLockstep(t *testing.T) {
	p := lockProblem(t, 31, 11, 13)
	M, B, T := p.M, p.B, p.T
	for _, th := range []int{1, 3} {
		c := crfOf[float64](p)
		c.Threads = th
		bt := batchOf[float64](p)
		for red := ReduceNone; red <= ReduceTokenMean; red++ {
			useLockstep = false
			want := runNLL(t, c, bt, p, red)
			useLockstep = true
			tl := countPaths(t)
			got := runNLL(t, c, bt, p, red)
			if n := tl.lockstep.Load(); n != int64(B) || tl.exact.Load() != 0 {
				t.Fatalf("threads %d: %d sequences in lockstep, %d alone; want %d, 0", th, n, tl.exact.Load(), B)
			}
			compareNLL(t, "float64", got, want, 1e-9)
		}
		useLockstep = false
		wantM, wantZ := make([]float64, B*T*M), make([]float64, B)
		if err := c.Marginals(bt, wantM, wantZ); err != nil {
			t.Fatal(err)
		}
		useLockstep = true
		tl := countPaths(t)
		gotM, gotZ := make([]float64, B*T*M), make([]float64, B)
		for k := range gotM {
			gotM[k] = 7
		}
		if err := c.Marginals(bt, gotM, gotZ); err != nil {
			t.Fatal(err)
		}
		if n := tl.lockstep.Load(); n != int64(B) {
			t.Fatalf("threads %d: %d sequences' marginals in lockstep, want %d", th, n, B)
		}
		if d := maxRel(gotM, wantM); d > 1e-9 {
			t.Errorf("threads %d: marginals differ by %v", th, d)
		}
		if d := maxRel(gotZ, wantZ); d > 1e-9 {
			t.Errorf("threads %d: log Z differs by %v", th, d)
		}
		// log Z may be nil; gradients may be partly wanted.
		if err := c.Marginals(bt, gotM, nil); err != nil || maxRel(gotM, wantM) > 1e-9 {
			t.Errorf("threads %d: marginals without log Z: %v", th, err)
		}
		g := &Grad[float64]{Trans: make([]float64, M*M)}
		v, err := c.NLL(bt, p.tags, ReduceSum, nil, g)
		want := runNLL(t, c, bt, p, ReduceSum)
		if err != nil || !near(v, want.v, 1e-9) || maxRel(g.Trans, want.g.Trans) > 1e-9 {
			t.Errorf("threads %d: NLL with the transition gradient only: %v, %v (%v)", th, v, want.v, err)
		}
	}
	useLockstep = true
}

// TestLockstepFloat32: a float32 batch on the float32 lockstep path
// (lockstep32.go), and on the engine's (widened, with the float32 kernels
// off), agrees with the float64 per-sequence path as the float32 kernels
// do, on 1 and 3 threads, for NLL (every gradient) and Marginals.
func TestLockstepFloat32(t *testing.T) {
	p := lockProblem(t, 32, 23, 12)
	M, B, T := p.M, p.B, p.T
	c64, c32, b64, b32 := roundedTwins(p)
	useLockstep = false
	want := runNLL(t, c64, b64, p, ReduceMean)
	wantM, wantZ := make([]float64, B*T*M), make([]float64, B)
	if err := c64.Marginals(b64, wantM, wantZ); err != nil {
		t.Fatal(err)
	}
	useLockstep = true
	old, oldK := lockstepMin32, useKernels32
	defer func() { lockstepMin32, useKernels32 = old, oldK }()
	lockstepMin32 = 0
	for _, mode := range []string{"float32 kernels", "widened"} {
		useKernels32 = mode == "float32 kernels"
		for _, th := range []int{1, 3} {
			c32.Threads = th
			tl := countPaths(t)
			got := runNLL(t, c32, b32, p, ReduceMean)
			compareNLL(t, mode, got, want, 1e-5)
			m32, z := make([]float32, B*T*M), make([]float64, B)
			for k := range m32 {
				m32[k] = 7
			}
			if err := c32.Marginals(b32, m32, z); err != nil {
				t.Fatal(err)
			}
			if d := maxRel(m32, wantM); d > 1e-5 {
				t.Errorf("%s, threads %d: marginals differ by %v", mode, th, d)
			}
			if d := maxRel(z, wantZ); d > 1e-6 {
				t.Errorf("%s, threads %d: log Z differs by %v", mode, th, d)
			}
			// Most sequences run in groups (a few may be left alone).
			if n := tl.lockstep.Load(); n < int64(B) {
				t.Errorf("%s, threads %d: %d sequences in lockstep over two calls of %d", mode, th, n, B)
			}
		}
	}
}

// TestLockstepMasks: −Inf transitions and emissions (masked labels) go
// through the lockstep call with the per-sequence results; finite
// sentinels keep the clamped path; a sequence without a labelling gets the
// per-sequence path's error; batches of 0 and 1 sequences work.
func TestLockstepMasks(t *testing.T) {
	p := lockProblem(t, 33, 8, 10)
	M, B, T := p.M, p.B, p.T
	for k, ok := range p.tmask {
		if !ok {
			p.trans[k] = math.Inf(-1)
		}
	}
	c := crfOf[float64](p)
	c.Threads = 3
	bt := batchOf[float64](p)
	for b := range B { // label 5 impossible where the gold tag is not 5
		for u := range T {
			if p.tags[b*T+u] != 5 {
				bt.Emissions[(b*T+u)*M+5] = math.Inf(-1)
			}
		}
	}
	// The gold labelling must stay possible: allow the transitions it uses.
	for b := range B {
		for u := 1; u < int(p.lengths[b]); u++ {
			k := int(p.tags[b*T+u-1])*M + int(p.tags[b*T+u])
			c.Trans[k] = 0.5
		}
	}
	useLockstep = false
	want := runNLL(t, c, bt, p, ReduceSum)
	wantM := make([]float64, B*T*M)
	if err := c.Marginals(bt, wantM, nil); err != nil {
		t.Fatal(err)
	}
	useLockstep = true
	tl := countPaths(t)
	got := runNLL(t, c, bt, p, ReduceSum)
	if tl.lockstep.Load() != int64(B) {
		t.Fatalf("%d sequences in lockstep, want %d", tl.lockstep.Load(), B)
	}
	compareNLL(t, "masked", got, want, 1e-9)
	gotM := make([]float64, B*T*M)
	if err := c.Marginals(bt, gotM, nil); err != nil || maxRel(gotM, wantM) > 1e-9 {
		t.Errorf("masked marginals differ by %v (%v)", maxRel(gotM, wantM), err)
	}

	// float32 lockstep: chains with −Inf emissions run alone (float64).
	func() {
		old := lockstepMin32
		defer func() { lockstepMin32 = old }()
		lockstepMin32 = 0
		c32 := crfOf[float32](p)
		copy(c32.Trans, func() []float32 {
			v := make([]float32, M*M)
			for k, x := range c.Trans {
				v[k] = float32(x)
			}
			return v
		}())
		c32.Threads = 3
		b32 := batchOf[float32](p)
		for k, v := range bt.Emissions {
			b32.Emissions[k] = float32(v)
		}
		b64 := Batch[float64]{B: B, T: T, Emissions: make([]float64, len(bt.Emissions)), Lengths: p.lengths}
		for k, v := range b32.Emissions {
			b64.Emissions[k] = float64(v)
		}
		c64 := crfOf[float64](p)
		for k, v := range c32.Trans {
			c64.Trans[k] = float64(v)
		}
		useLockstep = false
		want := runNLL(t, c64, b64, p, ReduceSum)
		useLockstep = true
		tl := countPaths(t)
		got := runNLL(t, c32, b32, p, ReduceSum)
		compareNLL(t, "float32 masked", got, want, 1e-5)
		if tl.exact.Load() != int64(B) {
			t.Errorf("float32 masked: %d sequences alone on float64, want %d", tl.exact.Load(), B)
		}
		// Sentinel transitions: float32 lockstep with Scaled.Forward's check.
		s64, s32 := crfOf[float64](p), crfOf[float32](p)
		for k, ok := range p.tmask {
			if !ok {
				s64.Trans[k], s32.Trans[k] = -1e4, -1e4
			}
		}
		for k, v := range s32.Trans {
			s64.Trans[k] = float64(v)
		}
		pb32, pb64 := batchOf[float32](p), batchOf[float64](p)
		for k, v := range pb32.Emissions {
			pb64.Emissions[k] = float64(v)
		}
		useLockstep = false
		want = runNLL(t, s64, pb64, p, ReduceSum)
		useLockstep = true
		tl = countPaths(t)
		got = runNLL(t, s32, pb32, p, ReduceSum)
		compareNLL(t, "float32 sentinels", got, want, 1e-5)
		if tl.lockstep.Load() == 0 || tl.exact.Load() != 0 {
			t.Errorf("float32 sentinels: %d in lockstep, %d alone on float64", tl.lockstep.Load(), tl.exact.Load())
		}
	}()

	// No labelling for sequence 4: the per-sequence path's error.
	L := int(p.lengths[4])
	for j := range M {
		bt.Emissions[(4*T+L-1)*M+j] = math.Inf(-1)
	}
	useLockstep = false
	_, wantErr := c.NLL(bt, p.tags, ReduceSum, nil, nil)
	useLockstep = true
	_, err := c.NLL(bt, p.tags, ReduceSum, nil, nil)
	if !errors.Is(err, ErrNoLabelling) || wantErr == nil || err.Error() != wantErr.Error() {
		t.Errorf("no labelling: %v, per sequence %v", err, wantErr)
	}
	if err := c.Marginals(bt, gotM, nil); !errors.Is(err, ErrNoLabelling) {
		t.Errorf("no labelling, marginals: %v", err)
	}

	// Finite sentinels: the clamped path, not lockstep.
	c2 := crfOf[float64](p)
	for k, ok := range p.tmask {
		if !ok {
			c2.Trans[k] = -1e4
		}
	}
	tl2 := countPaths(t)
	runNLL(t, c2, batchOf[float64](p), p, ReduceSum)
	if tl2.lockstep.Load() != 0 {
		t.Errorf("sentinel transitions: %d sequences in lockstep", tl2.lockstep.Load())
	}

	// Batches of 0 and 1 sequences.
	for _, n := range []int{0, 1} {
		b := Batch[float64]{B: n, T: T, Emissions: p.em[:n*T*M], Lengths: p.lengths[:n]}
		if _, err := c2.NLL(b, p.tags[:n*T], ReduceMean, nil, &Grad[float64]{Trans: make([]float64, M*M)}); err != nil {
			t.Errorf("batch of %d: %v", n, err)
		}
	}
}

// TestLockstepNoAllocations: steady-state lockstep calls allocate nothing.
func TestLockstepNoAllocations(t *testing.T) {
	p := lockProblem(t, 34, 8, 12)
	M, B, T := p.M, p.B, p.T
	for _, th := range []int{1, 2} {
		c := crfOf[float64](p)
		c.Threads = th
		c32 := crfOf[float32](p)
		c32.Threads = th
		bt, b32 := batchOf[float64](p), batchOf[float32](p)
		g := &Grad[float64]{Emissions: make([]float64, B*T*M), Trans: make([]float64, M*M), Start: make([]float64, M), End: make([]float64, M)}
		g32 := &Grad[float32]{Emissions: make([]float32, B*T*M), Trans: make([]float32, M*M)}
		per := make([]float64, B)
		marg, m32 := make([]float64, B*T*M), make([]float32, B*T*M)
		old := lockstepMin32
		lockstepMin32 = 0
		tl := countPaths(t)
		step := func() {
			c.Trans[0] += 0.01
			if _, err := c.NLL(bt, p.tags, ReduceNone, per, g); err != nil {
				t.Fatal(err)
			}
			if err := c.Marginals(bt, marg, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c32.NLL(b32, p.tags, ReduceMean, nil, g32); err != nil {
				t.Fatal(err)
			}
			if err := c32.Marginals(b32, m32, nil); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if n := testing.AllocsPerRun(10, step); n != 0 {
			t.Errorf("threads %d: %v allocations per step", th, n)
		}
		lockstepMin32 = old
		if tl.lockstep.Load() == 0 || tl.exact.Load() != 0 {
			t.Errorf("threads %d: %d sequences in lockstep, %d alone", th, tl.lockstep.Load(), tl.exact.Load())
		}
	}
}

// TestLockstepConcurrent: calls on one CRF from several goroutines, each
// on the lockstep paths, give the results of one call alone.
func TestLockstepConcurrent(t *testing.T) {
	p := lockProblem(t, 35, 12, 10)
	old := lockstepMin32
	lockstepMin32 = engine.LockstepLabels
	defer func() { lockstepMin32 = old }()
	M, B, T := p.M, p.B, p.T
	c64, c32 := crfOf[float64](p), crfOf[float32](p)
	b64, b32 := batchOf[float64](p), batchOf[float32](p)
	want64, want32 := make([]float64, B), make([]float64, B)
	if err := c64.Marginals(b64, make([]float64, B*T*M), want64); err != nil {
		t.Fatal(err)
	}
	if err := c32.Marginals(b32, make([]float32, B*T*M), want32); err != nil {
		t.Fatal(err)
	}
	tl := countPaths(t)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			z := make([]float64, B)
			for range 20 {
				var err error
				want := want64
				if g%2 == 0 {
					err = c64.Marginals(b64, make([]float64, B*T*M), z)
				} else {
					err, want = c32.Marginals(b32, make([]float32, B*T*M), z), want32
				}
				if err == nil {
					for b := range z {
						if z[b] != want[b] {
							err = errors.New("concurrent lockstep results differ")
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if tl.lockstep.Load() == 0 {
		t.Error("no sequence ran in lockstep")
	}
}
