// Command prefetch generates the software-prefetch kernels of package
// kernels: hints that ask the memory system for cache lines a caller will
// read soon, so that their misses overlap with other work. PREFETCHT0 is in
// every amd64 CPU (SSE), so there is one version and no ISA tier.
package main

//go:generate go run . -out ../../kernels/prefetch_amd64.s -stubs ../../kernels/prefetch_amd64.go -pkg kernels

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

func main() {
	ConstraintExpr("!purego")
	genLines()
	genRows()
	Generate()
}

// genLines: one PREFETCHT0 per offset, at base + offs[k]·scale.
func genLines() {
	TEXT("prefetchLinesAsm", NOSPLIT, "func(base uintptr, offs []int32, scale int)")
	Pragma("noescape")
	Doc("prefetchLinesAsm prefetches the cache line at base + offs[k]·scale bytes for every k.")
	base := Load(Param("base"), GP64())
	p := Load(Param("offs").Base(), GP64())
	n := Load(Param("offs").Len(), GP64())
	scale := Load(Param("scale"), GP64())
	TESTQ(n, n)
	JZ(LabelRef("lines_done"))
	Label("lines_loop")
	a := GP64()
	MOVLQSX(Mem{Base: p}, a)
	IMULQ(scale, a)
	PREFETCHT0(Mem{Base: base, Index: a, Scale: 1})
	ADDQ(U8(4), p)
	DECQ(n)
	JNZ(LabelRef("lines_loop"))
	Label("lines_done")
	RET()
}

// genRows: every cache line of the rows [base + ids[k]·ld, + size) bytes.
func genRows() {
	TEXT("prefetchRowsAsm", NOSPLIT, "func(base uintptr, ids []int32, ld, size int)")
	Pragma("noescape")
	Doc("prefetchRowsAsm prefetches every cache line of the bytes [base + ids[k]·ld, + size) for every k; size > 0.")
	base := Load(Param("base"), GP64())
	p := Load(Param("ids").Base(), GP64())
	n := Load(Param("ids").Len(), GP64())
	ld := Load(Param("ld"), GP64())
	size := Load(Param("size"), GP64())
	TESTQ(n, n)
	JZ(LabelRef("rows_done"))
	Label("rows_loop")
	a := GP64()
	MOVLQSX(Mem{Base: p}, a)
	IMULQ(ld, a)
	ADDQ(base, a)
	last := GP64() // the row's last byte
	LEAQ(Mem{Base: a, Index: size, Scale: 1, Disp: -1}, last)
	Label("rows_line")
	PREFETCHT0(Mem{Base: a})
	ADDQ(U8(64), a)
	CMPQ(a, last)
	JBE(LabelRef("rows_line"))
	// The line of the last byte, when the row does not start on a line.
	PREFETCHT0(Mem{Base: last})
	ADDQ(U8(4), p)
	DECQ(n)
	JNZ(LabelRef("rows_loop"))
	Label("rows_done")
	RET()
}
