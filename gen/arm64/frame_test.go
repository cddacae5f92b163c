package main

import "testing"

// TestFrame checks argument layouts the kernels rely on (go vet's asmdecl
// checks the generated file against the stubs as well).
func TestFrame(t *testing.T) {
	for _, c := range []struct {
		sig  string
		size int
		offs map[string]int
	}{
		{"func(x, y []float64) float64", 56, map[string]int{"x_base": 0, "x_len": 8, "y_base": 24, "ret": 48}},
		{"func(a float32, x, y []float32)", 56, map[string]int{"a": 0, "x_base": 8, "y_base": 32}},
		{"func(g []float32, ld int, p []float32, ptr, ids []int32, vals []float32, c float32, T, M int)", 152,
			map[string]int{"ld": 24, "p_base": 32, "ptr_base": 56, "vals_base": 104, "c": 128, "T": 136, "M": 144}},
		{"func(a, b []uint64, src []byte, ca, cb1, cb2 byte)", 75, map[string]int{"src_len": 56, "ca": 72, "cb2": 74}},
		{"func(n int) float64", 16, map[string]int{"n": 0, "ret": 8}},
	} {
		words, size := frame(c.sig)
		if size != c.size {
			t.Errorf("%s: size %d, want %d", c.sig, size, c.size)
		}
		for name, off := range c.offs {
			if w, ok := words[name]; !ok || w.off != off {
				t.Errorf("%s: %s at %d (present %v), want %d", c.sig, name, w.off, ok, off)
			}
		}
	}
}
