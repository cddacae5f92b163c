package model

import (
	"math/rand/v2"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestCompact checks that a dense model with mostly zero weights becomes
// sparse rows that tag identically, bit for bit.
func TestCompact(t *testing.T) {
	const A, M = 500, 12
	r := rand.New(rand.NewPCG(7, 7))
	attrs, labels := sparse.NewDict(A), sparse.NewDict(M)
	for a := range A {
		attrs.Add("a" + string(rune('A'+a%26)) + string(rune('0'+a/26%10)) + string(rune('a'+a/260)))
	}
	for j := range M {
		labels.Add("L" + string(rune('a'+j)))
	}
	p := sparse.MakeParams(A * M)
	for a := range A {
		if a%7 == 3 {
			continue // an all-zero row, dropped
		}
		for range 1 + r.IntN(2) {
			p[a*M+r.IntN(M)] = r.NormFloat64()
		}
	}
	state, err := sparse.NewDense(A, M, p)
	if err != nil {
		t.Fatal(err)
	}
	tm := make([]float64, M*M)
	for i := range tm {
		tm[i] = r.NormFloat64()
	}
	tr, err := engine.NewTransitions(M, tm, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(labels, attrs, state, tr, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.State.(*sparse.Sparse); !ok {
		t.Fatalf("compacted state is %T, want sparse rows", c.State)
	}
	if c.Attrs.Len() >= A {
		t.Errorf("no all-zero attribute was dropped")
	}
	t1, t2 := m.NewTagger(), c.NewTagger()
	var b1, b2 sparse.Builder
	for range 200 {
		T := 1 + r.IntN(20)
		ptr := []int32{0}
		var names [][]byte
		for range T {
			for range r.IntN(6) {
				names = append(names, []byte(attrs.String(int32(r.IntN(A)))))
			}
			ptr = append(ptr, int32(len(names)))
		}
		p1, s1, err1 := t1.Viterbi(nil, m.Encode(&b1, ptr, names, nil))
		p2, s2, err2 := t2.Viterbi(nil, c.Encode(&b2, ptr, names, nil))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if s1 != s2 || len(p1) != len(p2) {
			t.Fatalf("scores %v and %v differ", s1, s2)
		}
		for i := range p1 {
			if p1[i] != p2[i] {
				t.Fatalf("labellings differ: %v, %v", p1, p2)
			}
		}
	}
}
