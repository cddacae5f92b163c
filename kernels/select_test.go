package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// selectDirect lists the selection kernels that no tier's table runs yet
// but this CPU can (select_avx512_amd64_test.go): FuzzSelect and
// TestSelectPageEnd check them beside the tiers.
var selectDirect []*impl

// selectFns are one tier's selection kernels for one element type.
type selectFns[F float] struct {
	ge  func(dst []int32, x []F, bound F) int
	sum func(dst []int32, x, y []F, bound F) int
	max func(x []F) F
}

func select64(p *impl) selectFns[float64] {
	return selectFns[float64]{p.selectGE, p.selectSumGE, p.max}
}

func select32(p *impl) selectFns[float32] {
	return selectFns[float32]{p.selectGE32, p.selectSumGE32, p.max32}
}

// selectLengths are the lengths the selection tests sweep: every one up to
// 4·16+3 (four vectors of the widest tier, AVX-512 float32, and every
// tail), then label counts of large tag sets and a long one.
func selectLengths() []int {
	var n []int
	for k := 0; k <= 4*16+3; k++ {
		n = append(n, k)
	}
	return append(n, 100, 255, 256, 257, 304, 1023, 1024, 1341, 4099)
}

// selCase is one input of the selection kernels: y is nil for SelectGE.
type selCase[F float] struct {
	name   string
	x, y   []F
	bounds []F
}

// sNaN64 and sNaN32 are signalling NaNs (quiet bit clear): a tier whose
// compare or max treated them unlike quiet ones would show it.
var (
	sNaN64 = math.Float64frombits(0x7ff0_0000_0000_0bad)
	sNaN32 = math.Float32frombits(0x7f80_0bad)
)

func fval[F float](v float64) F { return F(v) }

// nanOf returns a quiet NaN (k even) or a signalling one of type F.
func nanOf[F float](k int) F {
	var z F
	if k%2 == 0 {
		return F(math.NaN())
	}
	if _, ok := any(z).(float32); ok {
		return any(sNaN32).(F)
	}
	return any(sNaN64).(F)
}

// quantileBounds returns bounds that select none, all, the top k (k ∈
// {1, 1 %, 5 %, 50 %} of n; more where values tie), exactly the entries
// equal to some value, and the special bounds ±Inf, NaN, ±0.
func quantileBounds[F float](v []F) []F {
	var ok []F
	for _, x := range v {
		if x == x {
			ok = append(ok, x)
		}
	}
	slices.Sort(ok)
	b := []F{F(math.Inf(-1)), F(math.Inf(1)), nanOf[F](0), nanOf[F](1), 0, F(math.Copysign(0, -1))}
	if n := len(ok); n > 0 {
		b = append(b, ok[0], ok[n-1])
		for _, k := range []int{1, n / 100, n / 20, n / 2} {
			if k >= 1 {
				b = append(b, ok[n-k])
			}
		}
		// Just above the largest: none (unless it is +Inf or MaxFloat).
		b = append(b, F(math.Nextafter(float64(ok[n-1]), math.Inf(1))))
	}
	return b
}

// selectCases returns the inputs of length n: random values; few finite
// entries in −Inf (a trained model's δ: 1–5 % of them); small integers
// (many ties at each bound); special values (±Inf, NaN of both kinds, ±0,
// subnormals, the largest finite). With sum, y is of the same kind, and
// the bounds include sums x[k] + y[k] (ties in rounded arithmetic) and
// their neighbours.
func selectCases[F float](r *rand.Rand, n int, sum bool) []selCase[F] {
	kinds := map[string]func(i int) F{
		"random": func(int) F { return fval[F](20*r.Float64() - 10) },
		"sparse": func(int) F {
			if r.IntN(100) < 1+r.IntN(5) {
				return fval[F](r.NormFloat64())
			}
			return F(math.Inf(-1))
		},
		"ties": func(int) F { return F(r.IntN(5) - 2) },
		"special": func(i int) F {
			sp := []F{F(math.Inf(1)), F(math.Inf(-1)), nanOf[F](i), 0, F(math.Copysign(0, -1)),
				F(math.SmallestNonzeroFloat32), -F(math.SmallestNonzeroFloat32), F(math.MaxFloat32), 1, -1}
			return sp[r.IntN(len(sp))]
		},
	}
	var cs []selCase[F]
	for _, name := range []string{"random", "sparse", "ties", "special"} {
		gen := kinds[name]
		c := selCase[F]{name: name, x: make([]F, n)}
		for i := range c.x {
			c.x[i] = gen(i)
		}
		if !sum {
			c.bounds = quantileBounds(c.x)
			cs = append(cs, c)
			continue
		}
		c.y = make([]F, n)
		for i := range c.y {
			c.y[i] = gen(i)
		}
		if name == "special" && n > 0 {
			// +Inf + −Inf is NaN: never selected.
			c.x[0], c.y[0] = F(math.Inf(1)), F(math.Inf(-1))
		}
		s := make([]F, n)
		for i := range s {
			s[i] = c.x[i] + c.y[i]
		}
		c.bounds = quantileBounds(s)
		for k := 0; k < min(n, 3); k++ {
			v := s[r.IntN(n)]
			c.bounds = append(c.bounds, v,
				F(math.Nextafter(float64(v), math.Inf(1))), F(math.Nextafter(float64(v), math.Inf(-1))))
		}
		cs = append(cs, c)
	}
	if sum && n > 0 {
		// Sums that round: 1 + 2^-60 is 1, and 2^-60 + … ties exactly.
		c := selCase[F]{name: "rounding", x: make([]F, n), y: make([]F, n)}
		for i := range c.x {
			c.x[i] = 1
			c.y[i] = F(math.Ldexp(float64(r.IntN(3)), -60+r.IntN(40)))
		}
		c.bounds = []F{1, F(math.Nextafter(1, 2)), F(math.Nextafter32(1, 2)), 1 + F(math.Ldexp(1, -23))}
		cs = append(cs, c)
	}
	return cs
}

// capsFor returns the dst lengths tried for a result of c entries out of
// n: exactly c, one more, many more, one fewer (overflow), half, none, a
// few, and extra.
func capsFor(c, n int, extra ...int) []int {
	caps := append([]int{c, c + 1, c + 17, 0, 1, 2, 3, n + 20}, extra...)
	if c > 0 {
		caps = append(caps, c-1, c/2)
	}
	slices.Sort(caps)
	return slices.Compact(caps)
}

// checkSelection runs a selection (got) and its reference (want) into dst
// of every length of capsFor (extra included), inside guard zones, and
// compares the counts and the indices up to the count.
func checkSelection(t *testing.T, what string, n int, extra []int, got, want func(dst []int32) int) {
	t.Helper()
	all := make([]int32, n)
	c := want(all)
	if c < 0 {
		t.Fatalf("%s: reference overflowed a dst of len(x)", what)
	}
	for _, cp := range capsFor(c, n, extra...) {
		wd := make([]int32, cp)
		wn := want(wd)
		buf, dst := guardedInt32(cp)
		for k := range dst {
			dst[k] = -7
		}
		gn := got(dst)
		checkGuardsInt32(t, fmt.Sprintf("%s cap=%d", what, cp), buf)
		if gn != wn {
			t.Fatalf("%s cap=%d: returned %d, want %d", what, cp, gn, wn)
		}
		k := gn
		if k < 0 {
			k = cp
		}
		if !slices.Equal(dst[:k], wd[:k]) {
			t.Fatalf("%s cap=%d: indices\n%v\nwant\n%v", what, cp, dst[:k], wd[:k])
		}
	}
}

// testSelectTier compares tier's selection kernels with generic's on
// every case; off shifts x and y in their buffers (alignment).
func testSelectTier[F float](t *testing.T, name string, tier, ref selectFns[F], r *rand.Rand) {
	for _, n := range selectLengths() {
		off := n % 7
		for _, sum := range []bool{false, true} {
			for _, c := range selectCases[F](r, n, sum) {
				x := append(make([]F, off, off+n), c.x...)[off:]
				var y []F
				if sum {
					y = append(make([]F, off+3, off+3+n), c.y...)[off+3:]
				}
				for bi, b := range c.bounds {
					what := fmt.Sprintf("%s selectGE n=%d %s bound[%d]=%v", name, n, c.name, bi, b)
					if sum {
						what = fmt.Sprintf("%s selectSumGE n=%d %s bound[%d]=%v", name, n, c.name, bi, b)
						checkSelection(t, what, n, nil,
							func(dst []int32) int { return tier.sum(dst, x, y, b) },
							func(dst []int32) int { return ref.sum(dst, c.x, c.y, b) })
						continue
					}
					checkSelection(t, what, n, nil,
						func(dst []int32) int { return tier.ge(dst, x, b) },
						func(dst []int32) int { return ref.ge(dst, c.x, b) })
				}
				if !sum {
					got, want := tier.max(x), ref.max(c.x)
					if !sameBits(float64(got), float64(want)) {
						t.Fatalf("%s max n=%d %s: %v, want %v", name, n, c.name, got, want)
					}
				}
			}
		}
	}
}

// TestSelect runs every tier's SelectGE, SelectSumGE and Max (float64 and
// float32) against generic.
func TestSelect(t *testing.T) {
	forTiers(t, func(t *testing.T, p *impl) { testSelectImpl(t, p) })
}

func testSelectImpl(t *testing.T, p *impl) {
	testSelectTier(t, p.name, select64(p), select64(generic), newRand(71))
	testSelectTier(t, p.name+" f32", select32(p), select32(generic), newRand(72))
}

// TestSelectGeneric checks the reference against what it must compute,
// written out independently: the set {i : x[i] ≥ bound} in order, cut at
// len(dst); and Max's NaN and zero rules.
func TestSelectGeneric(t *testing.T) {
	x := []float64{3, math.NaN(), -1, 3, math.Inf(1), 0, math.Copysign(0, -1), 2.5}
	for _, tc := range []struct {
		bound float64
		cap   int
		want  []int32
		n     int
	}{
		{3, 8, []int32{0, 3, 4}, 3},
		{3, 3, []int32{0, 3, 4}, 3},
		{3, 2, []int32{0, 3}, -1},
		{0, 8, []int32{0, 3, 4, 5, 6, 7}, 6},
		{math.Copysign(0, -1), 8, []int32{0, 3, 4, 5, 6, 7}, 6},
		{math.Inf(1), 8, []int32{4}, 1},
		{math.Inf(-1), 8, []int32{0, 2, 3, 4, 5, 6, 7}, 7},
		{math.NaN(), 8, nil, 0},
		{math.Inf(1), 0, nil, -1},
		{math.NaN(), 0, nil, 0},
		{math.Inf(1), 1, []int32{4}, 1},
	} {
		dst := make([]int32, tc.cap)
		n := selectGEGeneric(dst, x, tc.bound)
		k := max(n, 0)
		if n < 0 {
			k = tc.cap
		}
		if n != tc.n || !slices.Equal(dst[:k], tc.want) {
			t.Errorf("bound %v cap %d: %d %v, want %d %v", tc.bound, tc.cap, n, dst[:k], tc.n, tc.want)
		}
	}
	// Sums rounded as Go rounds them: 1 + 2^-60 == 1.
	y := []float64{math.Ldexp(1, -60), math.Ldexp(1, -52), math.Inf(-1)}
	dst := make([]int32, 3)
	if n := selectSumGEGeneric(dst, []float64{1, 1, math.Inf(1)}, y, math.Nextafter(1, 2)); n != 1 || dst[0] != 1 {
		t.Errorf("selectSumGE: %d %v, want 1 [1]", n, dst[:max(n, 0)])
	}
	negz := math.Copysign(0, -1)
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{nil, math.Inf(-1)},
		{[]float64{math.NaN(), sNaN64}, math.Inf(-1)},
		{[]float64{negz}, 0},
		{[]float64{negz, 0, negz}, 0},
		{[]float64{-3, math.NaN(), -2, -7}, -2},
		{[]float64{math.Inf(-1)}, math.Inf(-1)},
		{[]float64{1, math.Inf(1), math.NaN()}, math.Inf(1)},
	} {
		if got := maxGeneric(tc.x); math.Float64bits(got) != math.Float64bits(tc.want) {
			t.Errorf("max %v = %v (bits %#x), want %v", tc.x, got, math.Float64bits(got), tc.want)
		}
		if got := maxGeneric(to32(tc.x)); math.Float32bits(got) != math.Float32bits(float32(tc.want)) {
			t.Errorf("max32 %v = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// TestSelectWrapper checks the exported functions on every tier: their
// results on overflow, that they read only len(x) entries of y, and their
// panics.
func TestSelectWrapper(t *testing.T) {
	r := newRand(73)
	for _, name := range Impls() {
		t.Run(name, func(t *testing.T) {
			useTier(t, name)
			x := randSlice(r, 300, -5, 5)
			y := randSlice(r, 310, -5, 5)
			all := make([]int32, 300)
			c, ok := SelectGE(all, x, 3)
			if !ok || c == 0 {
				t.Fatalf("SelectGE into len(x): %d %v", c, ok)
			}
			dst := make([]int32, c-1)
			if n, ok := SelectGE(dst, x, 3); n != c-1 || ok || !slices.Equal(dst, all[:c-1]) {
				t.Errorf("overflow: %d %v %v, want %d false %v", n, ok, dst, c-1, all[:c-1])
			}
			if n, ok := SelectGE(dst[:0], x, 3); n != 0 || ok {
				t.Errorf("overflow of an empty dst: %d %v", n, ok)
			}
			if n, ok := SelectGE(nil, x, 6); n != 0 || !ok {
				t.Errorf("none into nil: %d %v", n, ok)
			}
			// y past len(x) is not read: poison it.
			y[300] = math.Inf(1)
			ws := make([]int32, 300)
			wn := selectSumGEGeneric(ws, x, y[:300], 4)
			gs := make([]int32, 300)
			if n, ok := SelectSumGE(gs, x, y, 4); n != wn || !ok || !slices.Equal(gs[:n], ws[:wn]) {
				t.Errorf("SelectSumGE: %d %v, want %d", n, ok, wn)
			}
			x32, y32 := to32(x), to32(y)
			// (x and y lie in [−5, 5): no sum reaches 10; 9.5 was reached
			// by the draws of the third tier, AVX-512's.)
			if n, ok := SelectSumGE32(make([]int32, 1), x32, y32, 10); n != 0 || !ok {
				t.Errorf("SelectSumGE32 none: %d %v", n, ok)
			}
			if n, ok := SelectGE32(make([]int32, 300), x32, float32(math.Inf(-1))); n != 300 || !ok {
				t.Errorf("SelectGE32 all: %d %v", n, ok)
			}
			if m := Max(x); m != slices.Max(x) {
				t.Errorf("Max = %v, want %v", m, slices.Max(x))
			}
			if m := Max32(x32); m != slices.Max(x32) {
				t.Errorf("Max32 = %v, want %v", m, slices.Max(x32))
			}
			mustPanicT(t, "short y", "len(y)", func() { SelectSumGE(dst, x, y[:299], 0) })
			mustPanicT(t, "short y32", "SelectSumGE32", func() { SelectSumGE32(dst, x32, y32[:10], 0) })
		})
	}
	mustPanicT(t, "len(x) past int32", "int32", func() { selectArgs("SelectGE", math.MaxInt32+2) })
	selectArgs("SelectGE", math.MaxInt32+1) // indices up to MaxInt32 fit
}

// FuzzSelect compares every tier with generic on arbitrary float64 bits
// (x, then y, from data), a bound and a dst length.
func FuzzSelect(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f, 0, 0, 0, 0, 0, 0, 0xf0, 0xff, 1, 0, 0, 0, 0, 0, 0xf8, 0x7f}, 0.0, uint8(2))
	f.Add(make([]byte, 8*100), -1.0, uint8(200))
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox"), 1e-300, uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, bound float64, capN uint8) {
		x := make([]float64, len(data)/16)
		y := make([]float64, len(x))
		for i := range x {
			x[i] = math.Float64frombits(leUint64(data[16*i:]))
			y[i] = math.Float64frombits(leUint64(data[16*i+8:]))
		}
		x32, y32 := to32(x), to32(y)
		b32 := float32(bound)
		extra := []int{int(capN)}
		for _, p := range append(asmImpls(t), selectDirect...) {
			checkSelection(t, p.name+" ge", len(x), extra,
				func(dst []int32) int { return p.selectGE(dst, x, bound) },
				func(dst []int32) int { return selectGEGeneric(dst, x, bound) })
			checkSelection(t, p.name+" sum", len(x), extra,
				func(dst []int32) int { return p.selectSumGE(dst, x, y, bound) },
				func(dst []int32) int { return selectSumGEGeneric(dst, x, y, bound) })
			checkSelection(t, p.name+" ge32", len(x), extra,
				func(dst []int32) int { return p.selectGE32(dst, x32, b32) },
				func(dst []int32) int { return selectGEGeneric(dst, x32, b32) })
			checkSelection(t, p.name+" sum32", len(x), extra,
				func(dst []int32) int { return p.selectSumGE32(dst, x32, y32, b32) },
				func(dst []int32) int { return selectSumGEGeneric(dst, x32, y32, b32) })
			if got, want := p.max(x), maxGeneric(x); !sameBits(got, want) {
				t.Fatalf("%s max: %v, want %v", p.name, got, want)
			}
			if got, want := p.max32(x32), maxGeneric(x32); !sameBits(float64(got), float64(want)) {
				t.Fatalf("%s max32: %v, want %v", p.name, got, want)
			}
		}
	})
}

func leUint64(b []byte) uint64 {
	var v uint64
	for k := 7; k >= 0; k-- {
		v = v<<8 | uint64(b[k])
	}
	return v
}
