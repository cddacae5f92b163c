package sparse

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randSeq makes a random sequence: T positions, 0–5 features each
// (duplicates included), values ≠ 1 if withVals, labels if m > 0.
func randSeq(r *rand.Rand, T, numAttrs, m int, withVals bool) Seq {
	var b Builder
	b.Reset()
	for range T {
		for range r.IntN(6) {
			a := int32(r.IntN(numAttrs))
			v := 1.0
			if withVals {
				v = r.NormFloat64()
			}
			b.Add(a, v)
			if r.IntN(8) == 0 {
				b.Add(a, v) // duplicate attribute at a position
			}
		}
		y := NoLabel
		if m > 0 {
			y = int32(r.IntN(m))
		}
		b.End(y)
	}
	s := b.Seq()
	// Detach from the builder.
	return Seq{Ptr: clone(s.Ptr), IDs: clone(s.IDs), Vals: clone(s.Vals), Labels: clone(s.Labels)}
}

func clone[E any](s []E) []E {
	if s == nil {
		return nil
	}
	return append([]E{}, s...)
}

func TestBuilder(t *testing.T) {
	var b Builder
	if s := b.Seq(); s.Len() != 0 {
		t.Fatal("empty builder has positions")
	}
	b.Add(3, 1)
	b.Add(5, 1)
	b.End(NoLabel)
	b.End(NoLabel) // a position with no features
	b.Add(3, 1)
	b.End(NoLabel)
	s := b.Seq()
	want := Seq{Ptr: []int32{0, 2, 2, 3}, IDs: []int32{3, 5, 3}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Seq = %+v, want %+v", s, want)
	}
	if err := s.Validate(6, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(5, 2); err == nil {
		t.Fatal("id 5 of 5 attributes accepted")
	}
	b.Reset()
	b.Add(1, 0.5)
	b.End(1)
	b.Add(2, 7) // not ended: not part of the sequence
	s = b.Seq()
	want = Seq{Ptr: []int32{0, 1}, IDs: []int32{1}, Vals: []float64{0.5}, Labels: []int32{1}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Seq = %+v, want %+v", s, want)
	}
	if err := s.Validate(3, 1); err == nil {
		t.Fatal("label 1 of 1 accepted")
	}
	b.Reset()
	b.Add(1, 1)
	b.End(0)
	if a := testing.AllocsPerRun(100, func() {
		b.Reset()
		for range 20 {
			b.Add(1, 1)
			b.Add(2, 2)
			b.End(0)
		}
		_ = b.Seq()
	}); a != 0 {
		t.Fatalf("Builder allocates %v times per sequence", a)
	}
}

func TestValidateErrors(t *testing.T) {
	good := Seq{Ptr: []int32{0, 1, 2}, IDs: []int32{0, 1}, Vals: []float64{1, 2}, Labels: []int32{0, 1}}
	if err := good.Validate(2, 2); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Seq{
		"ptr0":       {Ptr: []int32{1, 1}, IDs: []int32{}},
		"descending": {Ptr: []int32{0, 2, 1}, IDs: []int32{0, 0}},
		"ids":        {Ptr: []int32{0, 2}, IDs: []int32{0}},
		"vals":       {Ptr: []int32{0, 1}, IDs: []int32{0}, Vals: []float64{1, 2}},
		"nan":        {Ptr: []int32{0, 1}, IDs: []int32{0}, Vals: []float64{math.NaN()}},
		"inf":        {Ptr: []int32{0, 1}, IDs: []int32{0}, Vals: []float64{math.Inf(1)}},
		"labels":     {Ptr: []int32{0, 1}, IDs: []int32{0}, Labels: []int32{0, 0}},
		"label":      {Ptr: []int32{0, 1}, IDs: []int32{0}, Labels: []int32{-1}},
		"negative":   {Ptr: []int32{0, 1}, IDs: []int32{-1}},
		"noptr":      {IDs: []int32{1}},
	} {
		if err := s.Validate(2, 2); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, s)
		}
	}
}

func TestCorpus(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := NewCorpus()
	var seqs []Seq
	for i := range 50 {
		T := r.IntN(8)
		if i%10 == 3 {
			T = 0
		}
		s := randSeq(r, T, 20, 3, i >= 25) // values appear half way
		if err := c.Append(s); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, s)
	}
	check := func(seqs []Seq) {
		t.Helper()
		if c.Len() != len(seqs) {
			t.Fatalf("Len = %d", c.Len())
		}
		var tok, feat int64
		for i, want := range seqs {
			got := c.Seq(i)
			tok += int64(want.Len())
			feat += int64(want.NumFeatures())
			if got.Len() != want.Len() || got.NumFeatures() != want.NumFeatures() {
				t.Fatalf("seq %d: %d positions, %d features; want %d, %d", i, got.Len(), got.NumFeatures(), want.Len(), want.NumFeatures())
			}
			if want.Len() == 0 {
				continue
			}
			if !slices.Equal(got.Ptr, want.Ptr) || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Labels, want.Labels) {
				t.Fatalf("seq %d = %+v, want %+v", i, got, want)
			}
			for f := range want.NumFeatures() {
				if got.Value(f) != want.Value(f) {
					t.Fatalf("seq %d: value %d = %v, want %v", i, f, got.Value(f), want.Value(f))
				}
			}
		}
		if c.Tokens() != tok || c.Features() != feat {
			t.Fatalf("Tokens, Features = %d, %d; want %d, %d", c.Tokens(), c.Features(), tok, feat)
		}
	}
	check(seqs)
	if err := c.Validate(20, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(19, 3); err == nil {
		t.Fatal("Validate with too few attributes passed")
	}
	if err := c.Append(Seq{Ptr: []int32{0, 0}}); err == nil {
		t.Fatal("unlabelled sequence appended to a labelled corpus")
	}
	if err := c.Append(Seq{Ptr: []int32{0, 1}, IDs: []int32{}}); err == nil {
		t.Fatal("malformed sequence appended")
	}

	// Frequency order, then remap: drop attributes seen fewer than 3 times.
	counts := c.AttrCounts(20)
	order := FrequencyOrder(counts, 3)
	oldToNew := make([]int32, 20)
	for i := range oldToNew {
		oldToNew[i] = -1
	}
	for k, a := range order {
		oldToNew[a] = int32(k)
	}
	var want []Seq
	for _, s := range seqs {
		var b Builder
		b.Reset()
		for t := range s.Len() {
			for f := s.Ptr[t]; f < s.Ptr[t+1]; f++ {
				if n := oldToNew[s.IDs[f]]; n >= 0 {
					b.Add(n, s.Value(int(f)))
				}
			}
			b.End(s.Labels[t])
		}
		w := b.Seq()
		want = append(want, Seq{Ptr: clone(w.Ptr), IDs: clone(w.IDs), Vals: clone(w.Vals), Labels: clone(w.Labels)})
	}
	if err := c.Remap(oldToNew); err != nil {
		t.Fatal(err)
	}
	check(want)
	if err := c.Remap(oldToNew[:3]); err == nil {
		t.Fatal("Remap with a short map succeeded")
	}
}
