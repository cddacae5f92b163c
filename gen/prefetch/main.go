// Command prefetch generates the software-prefetch kernels of package
// kernels: hints that ask the memory system for cache lines a caller will
// read soon, so that their misses overlap with other work. PREFETCHT0 is in
// every amd64 CPU (SSE), so there is one version and no ISA tier.
package main

//go:generate go run . -out ../../kernels/prefetch_amd64.s -stubs ../../kernels/prefetch_amd64.go -pkg kernels

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	genLines()
	genRows()
	Emit()
}

// genLines: one PREFETCHT0 per offset, at base + offs[k]·scale.
func genLines() {
	Kernel("prefetchLinesAsm", NOSPLIT, "func(base uintptr, offs []int32, scale int)", "prefetches the cache line at base + offs[k]·scale bytes for every k.")
	base := Load(Param("base"), GP64())
	p := Load(Param("offs").Base(), GP64())
	n := Load(Param("offs").Len(), GP64())
	scale := Load(Param("scale"), GP64())
	eachID("lines", p, n, scale, func(a reg.GPVirtual) {
		PREFETCHT0(Mem{Base: base, Index: a, Scale: 1})
	})
}

// genRows: every cache line of the rows [base + ids[k]·ld, + size) bytes.
func genRows() {
	Kernel("prefetchRowsAsm", NOSPLIT, "func(base uintptr, ids []int32, ld, size int)", "prefetches every cache line of the bytes [base + ids[k]·ld, + size) for every k; size > 0.")
	base := Load(Param("base"), GP64())
	p := Load(Param("ids").Base(), GP64())
	n := Load(Param("ids").Len(), GP64())
	ld := Load(Param("ld"), GP64())
	size := Load(Param("size"), GP64())
	eachID("rows", p, n, ld, func(a reg.GPVirtual) {
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
	})
}

// eachID emits the loop of both kernels and their RET: for each of the n
// int32s at p, body(a) with a = k·stride (a byte offset); p and n are
// consumed. Its labels start with tag.
func eachID(tag string, p, n, stride reg.Register, body func(a reg.GPVirtual)) {
	TESTQ(n, n)
	JZ(LabelRef(tag + "_done"))
	Label(tag + "_loop")
	a := GP64()
	MOVLQSX(Mem{Base: p}, a)
	IMULQ(stride, a)
	body(a)
	ADDQ(U8(4), p)
	DECQ(n)
	JNZ(LabelRef(tag + "_loop"))
	Label(tag + "_done")
	RET()
}
