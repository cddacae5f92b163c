package main

import (
	"fmt"
	"strings"
)

// arg is one word of a Go function's argument frame, as the assembler
// names it: x_base, x_len, x_cap for a slice x, ret for an unnamed result.
type arg struct {
	off int
	typ string // Go type of the word: "int" for a slice's words
}

// frame lays out the arguments of a Go signature such as
// "func(a float64, x []float64) float64" as the assembler sees them
// (ABI0): each at its alignment, the results from the next 8-byte
// boundary. It returns every argument word by name and the frame size, the
// N of TEXT's $0-N.
func frame(sig string) (map[string]arg, int) {
	params, results, ok := strings.Cut(strings.TrimPrefix(sig, "func("), ")")
	if !ok {
		panic("arm64: bad signature " + sig)
	}
	words := map[string]arg{}
	off := 0
	add := func(name, typ string) {
		size := map[string]int{"byte": 1, "int32": 4, "float32": 4}[typ]
		if size == 0 {
			size = 8 // int, uintptr, uint64, float64, slice words
		}
		off = (off + size - 1) / size * size
		words[name] = arg{off, typ}
		off += size
	}
	var names []string
	for _, p := range strings.Split(params, ", ") {
		name, typ, typed := strings.Cut(p, " ")
		names = append(names, name)
		if !typed {
			continue
		}
		for _, n := range names {
			if strings.HasPrefix(typ, "[]") {
				add(n+"_base", "int")
				add(n+"_len", "int")
				add(n+"_cap", "int")
			} else {
				add(n, typ)
			}
		}
		names = nil
	}
	if r := strings.TrimSpace(results); r != "" {
		if strings.ContainsAny(r, "( ,") {
			panic("arm64: only one unnamed result is supported: " + sig)
		}
		off = (off + 7) / 8 * 8
		add("ret", r)
	}
	if len(names) != 0 {
		panic(fmt.Sprintf("arm64: untyped arguments %v in %s", names, sig))
	}
	return words, off
}

// args loads arguments of the current function: each of loads is
// "name register", such as "x_base R0" or "a F31", in emission order.
func (g *gen) args(loads ...string) {
	for _, l := range loads {
		name, r, _ := strings.Cut(l, " ")
		a, ok := g.frame[name]
		if !ok {
			panic(fmt.Sprintf("arm64: %s has no argument %s", g.fn, name))
		}
		op := map[string]string{"float64": "FMOVD", "float32": "FMOVS", "byte": "MOVBU"}[a.typ]
		if op == "" {
			op = "MOVD"
		}
		g.i("%s %s+%d(FP), %s", op, name, a.off, r)
	}
}

// ret stores the float64 result from the register r.
func (g *gen) ret(r string) { g.i("FMOVD %s, ret+%d(FP)", r, g.frame["ret"].off) }
