// Command fb generates the scaled forward–backward kernels of package kernels:
// Forward, Backward, ForwardBatch and Transitions.
//
// All four are built from one register-blocked micro-kernel (block): kb rows
// of broadcast scalars times nb vectors of a matrix row, accumulated over n
// steps, with the last of the nb vectors loaded under a tail mask (all ones
// when the chunk is full). Forward and Backward use kb = 1 and split the steps
// into independent accumulator chains (seqChains) to hide the FMA latency;
// the batch and Transitions use kb > 1, whose kb·nb accumulators are
// independent already. Every leaf variant (kb, nb) is generated and chosen
// at run time.
//
// Misaligned 64-byte loads straddle two cache lines, which halves the load
// rate the small-M steps live on; so the matrix is first copied ("packed")
// into a 64-byte-aligned stack buffer with rows padded to whole vectors:
// all of E (Eᵀ) when a row is at most 8 (AVX2: 6) vectors, and for the batch
// and Transitions a panel of up to 64 (128) rows × one chunk of columns that
// stays in L1 while every sequence (every block of rows i) uses it. Those
// functions therefore have large frames and are not NOSPLIT. On AVX2,
// float64 rows of several chunks are packed too, chunk by chunk, up to a
// 20 KiB buffer (M ≤ 49), and a row's chunks are of equal size rather
// than full ones and a rest (balancedChunks, packsMulti).
package main

//go:generate go run . -out ../../kernels/fb_amd64.s -stubs ../../kernels/fb_amd64.go -pkg kernels

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	. "github.com/simdcrf/simdcrf/gen/internal/isa"
)

func main() {
	for _, i := range ISAs {
		genForward(i)
		genBackward(i)
		genBatch(i, false)
		genTransitions(i)
		genShiftRows(i)
	}
	// BackwardBatch (after the others, so that their output is unchanged).
	for _, i := range ISAs {
		genBatch(i, true)
	}
	// The float32 kernels: the same code with float32 elements (twice the
	// lanes per vector).
	for _, i := range ISAs32 {
		genForward(i)
		genBackward(i)
		genTransitions(i)
		genShiftRows(i)
		genBatch(i, false)
		genBatch(i, true)
	}
	// Backward with the transition counts (after the others, as above).
	for _, i := range append(append([]*ISA{}, ISAs...), ISAs32...) {
		genBackwardTransitions(i)
	}
	Emit()
}

// Blocking parameters per tier. AVX2 has 16 vector registers: 2 chains × 6
// vectors + broadcast + mask + temporary; 3 × 3 accumulators + 3 matrix
// vectors + broadcast + mask. AVX-512 has 32: 2 × 12 + 2; 6 × 4 + 4 + 1.
func seqVecs(i *ISA) int { return i.Tier(6, 12) }

// maxPackVecs is the longest row (in vectors) for which Forward and Backward
// pack all of E (Eᵀ) into an aligned stack buffer, padded to whole vectors:
// no load of the hot loop then straddles two cache lines.
func maxPackVecs(i *ISA) int { return i.Tier(6, 8) }

func gemmShape(i *ISA) (kbMax, nbMax int) { return i.Tier(3, 6), i.Tier(3, 4) }

// batchPanelRows is the most rows of E a block of ForwardBatch's product
// takes at a time (partial sums kept in α between blocks); where it packs
// them (AVX2 with a tail), its panel is batchPanelRows × nbMax vectors.
const batchPanelRows = 64

// transPanelRows is the most positions Transitions packs at a time (32 KiB
// of work on AVX-512).
const transPanelRows = 128

var labelN int

// newLabel returns a label unique in the generated file.
func newLabel(i *ISA, tag string) string {
	labelN++
	return fmt.Sprintf("fb%s_%s_%d", i.Name, tag, labelN)
}

var label2N int

// newLabel2 is newLabel with a counter of its own, for code added to a
// kernel after the others were generated: their labels stay as they were.
func newLabel2(i *ISA, tag string) string {
	label2N++
	return fmt.Sprintf("fb%s_%s_x%d", i.Name, tag, label2N)
}

// switchN jumps on x (1..n) to body(v) for v = x; all bodies end at a common
// label.
func switchN(i *ISA, x reg.Register, n int, body func(v int)) {
	end := newLabel(i, "swend")
	labels := make([]string, n+1)
	for v := 1; v <= n; v++ {
		labels[v] = newLabel(i, fmt.Sprintf("case%d", v))
	}
	for v := 1; v < n; v++ {
		CMPQ(x, U32(v))
		JEQ(LabelRef(labels[v]))
	}
	for v := n; v >= 1; v-- {
		Label(labels[v])
		body(v)
		if v > 1 {
			JMP(LabelRef(end))
		}
	}
	Label(end)
}

// kaddr addresses row k of a group of up to 8 rows: rows 0..3 from p, rows
// 4..7 from p2 = p + 4·sk, with sk3 = 3·sk.
func kaddr(p, p2, sk, sk3 reg.Register, k, disp int) Mem {
	b := p
	if k >= 4 {
		b = p2
		k -= 4
	}
	switch k {
	case 0:
		return Mem{Base: b, Disp: disp}
	case 1:
		return Mem{Base: b, Index: sk, Scale: 1, Disp: disp}
	case 2:
		return Mem{Base: b, Index: sk, Scale: 2, Disp: disp}
	}
	return Mem{Base: b, Index: sk3, Scale: 1, Disp: disp}
}

// kaddr2 returns kaddr's p2 = p + 4·sk for a group of kb rows, or nil when
// there are no rows 4..7 (saving the register).
func kaddr2(p, sk reg.Register, kb int) reg.GPVirtual {
	if kb <= 4 {
		return nil
	}
	p2 := GP64()
	LEAQ(Mem{Base: p, Index: sk, Scale: 4}, p2)
	return p2
}

// chunkVecs stands for the n vectors of one chunk of a row. The last is read
// and written under the tail mask m, so no lane past the row's end is
// touched; padded rows (copies padded with zeros to whole vectors) need no
// mask.
type chunkVecs struct {
	i      *ISA
	n      int
	m      Mask
	padded bool
}

func (c chunkVecs) masked(k int) bool { return !c.padded && k == c.n-1 }

// load sets dst to vector k at src (masked: its lanes, zeros past them).
func (c chunkVecs) load(k int, src Mem, dst reg.VecVirtual) {
	if c.masked(k) {
		c.i.LoadMasked(c.m, src, dst)
		return
	}
	c.i.VMOVU(src, dst)
}

// store stores src as vector k at dst.
func (c chunkVecs) store(k int, src reg.VecVirtual, dst Mem) {
	if c.masked(k) {
		c.i.StoreMasked(c.m, src, dst)
		return
	}
	c.i.VMOVU(src, dst)
}

// operand returns vector k at src as an instruction's operand: src itself,
// or for the masked vector a new register loaded from it.
func (c chunkVecs) operand(k int, src Mem) Op {
	if !c.masked(k) {
		return src
	}
	t := c.i.Vec()
	c.i.LoadMasked(c.m, src, t)
	return t
}

// add adds vector k, x, to sum (masked: only its lanes; see addMasked).
func (c chunkVecs) add(k int, x, sum reg.VecVirtual) {
	if c.masked(k) {
		addMasked(c.i, c.m, x, sum)
		return
	}
	c.i.VADD(x, sum, sum)
}

// block describes one run of the micro-kernel.
type block struct {
	kb, chains int
	cols       chunkVecs    // the nb vectors of a matrix row
	q          reg.Register // matrix row pointer
	s2         Op           // its per-step stride (bytes)
	n          reg.Register // step count ≥ 1 (clobbered)
	bcast      func(k int, dst reg.VecVirtual)
	step       func() // advances the broadcast pointers by one step
	// p, when set (kb = 1), is the pointer bcast reads and step advances by
	// one element. With a constant stride s2, a round of the chains then
	// addresses its rows by displacement and moves p and q once.
	p reg.Register
}

// emit runs the block and returns the accumulators acc[k][v].
func (b *block) emit(i *ISA) [][]reg.VecVirtual {
	nb := b.cols.n
	acc := make([][][]reg.VecVirtual, b.chains)
	for c := range acc {
		acc[c] = make([][]reg.VecVirtual, b.kb)
		for k := range acc[c] {
			acc[c][k] = i.Vecs(nb)
			for _, a := range acc[c][k] {
				i.Zero(a)
			}
		}
	}
	one := func(c int) {
		// One broadcast: the matrix row goes straight into the FMAs.
		// Several: it is loaded once and shared.
		if b.kb == 1 {
			x := i.Vec()
			b.bcast(0, x)
			for v := 0; v < nb; v++ {
				i.VFMADD231(b.cols.operand(v, Mem{Base: b.q, Disp: v * i.Bytes}), x, acc[c][0][v])
			}
		} else {
			ev := i.Vecs(nb)
			for v := range ev {
				b.cols.load(v, Mem{Base: b.q, Disp: v * i.Bytes}, ev[v])
			}
			for k := 0; k < b.kb; k++ {
				x := i.Vec()
				b.bcast(k, x)
				for v := 0; v < nb; v++ {
					i.VFMADD231(ev[v], x, acc[c][k][v])
				}
			}
		}
		b.step()
		ADDQ(b.s2, b.q)
	}
	loop := newLabel(i, "loop")
	if b.chains == 1 {
		Label(loop)
		one(0)
		DECQ(b.n)
		JNZ(LabelRef(loop))
		return acc[0]
	}
	round := func() {
		for c := range b.chains {
			one(c)
		}
	}
	if stride, ok := b.s2.(U32); ok && b.p != nil && b.kb == 1 {
		// Two pointer moves a round instead of two a step.
		round = func() {
			for c := range b.chains {
				x := i.Vec()
				i.VBROADCAST(Mem{Base: b.p, Disp: c * i.Size}, x)
				for v := 0; v < nb; v++ {
					i.VFMADD231(b.cols.operand(v, Mem{Base: b.q, Disp: c*int(stride) + v*i.Bytes}), x, acc[c][0][v])
				}
			}
			ADDQ(U32(b.chains*i.Size), b.p)
			ADDQ(U32(b.chains*int(stride)), b.q)
		}
	}
	// n = q·chains + r: q rounds of every chain, then r < chains steps,
	// one on each of the first r chains.
	rest, done := newLabel(i, "rest"), newLabel(i, "done")
	cnt := GP64()
	MOVQ(b.n, cnt)
	SHRQ(U8(log2(b.chains)), cnt)
	JZ(LabelRef(rest))
	Label(loop)
	round()
	DECQ(cnt)
	JNZ(LabelRef(loop))
	Label(rest)
	ANDQ(U32(b.chains-1), b.n)
	for c := 0; c < b.chains-1; c++ {
		JZ(LabelRef(done))
		one(c)
		if c < b.chains-2 {
			DECQ(b.n)
		}
	}
	Label(done)
	// The chains' sums, pairwise.
	for w := 1; w < b.chains; w *= 2 {
		for c := 0; c+w < b.chains; c += 2 * w {
			for k := range acc[c] {
				for v := range acc[c][k] {
					i.VADD(acc[c+w][k][v], acc[c][k][v], acc[c][k][v])
				}
			}
		}
	}
	return acc[0]
}

// addMasked adds the masked lanes of x to sum (the others are left alone, so
// a NaN computed in a lane past the row's end never reaches the sum).
func addMasked(i *ISA, m Mask, x, sum reg.VecVirtual) {
	if i.Is512() {
		i.VADD(x, sum, m.K, sum)
		return
	}
	t := i.Vec()
	i.VAND(x, m.Y, t)
	i.VADD(t, sum, sum)
}

// seqChains is the number of accumulator chains Forward's and Backward's
// products of v vectors a row run: enough that 8 FMAs (2 ports × 4 cycles
// of latency) are in flight, so four up to 3 vectors, else two.
func seqChains(v int) int {
	if v <= 3 {
		return 4
	}
	return 2
}

// vecMat returns the accumulators of a·E for one chunk of columns, as
// Forward and Backward need it: a block of one row broadcast from p (which
// walks along a), E's rows from q with stride s2, n steps, seqChains chains.
func vecMat(i *ISA, p, q reg.Register, s2 Op, n reg.Register, cols chunkVecs) []reg.VecVirtual {
	b := &block{kb: 1, chains: seqChains(cols.n), cols: cols, q: q, s2: s2, n: n,
		bcast: func(_ int, dst reg.VecVirtual) { i.VBROADCAST(Mem{Base: p}, dst) },
		step:  func() { ADDQ(U8(i.Size), p) }, p: p}
	return b.emit(i)[0]
}

// mulPsi multiplies the chunk acc by Ψ's at psi and, with sum set, adds it
// to sum; with out set it also stores the product there.
func (c chunkVecs) mulPsi(acc []reg.VecVirtual, psi reg.Register, sum reg.VecVirtual, out reg.Register) {
	for k, a := range acc {
		c.i.VMUL(c.operand(k, Mem{Base: psi, Disp: k * c.i.Bytes}), a, a)
		if sum != nil {
			c.add(k, a, sum)
		}
		if out != nil {
			c.store(k, a, Mem{Base: out, Disp: k * c.i.Bytes})
		}
	}
}

// scaleStore multiplies the chunk acc by inv and stores it at out.
func (c chunkVecs) scaleStore(acc []reg.VecVirtual, inv reg.VecVirtual, out reg.Register) {
	for k, a := range acc {
		c.i.VMUL(inv, a, a)
		c.store(k, a, Mem{Base: out, Disp: k * c.i.Bytes})
	}
}

// rowSum returns an xmm register whose low lane is Σ src[0:n].
func rowSum(i *ISA, src, n reg.Register) reg.Register {
	acc := i.Vecs(2)
	i.Zero(acc[0])
	i.Zero(acc[1])
	idx := GP64()
	Stripes(i, newLabel(i, "sum"), n.(reg.GPVirtual), idx, 2, func(u int) {
		i.VADD(i.Addr(src, idx, u*i.Bytes), acc[u], acc[u])
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		t := i.Vec()
		i.LoadMasked(m, i.Addr(src, idx, 0), t)
		i.VADD(t, acc[0], acc[0])
	})
	i.VADD(acc[1], acc[0], acc[0])
	return i.HSum(acc[0])
}

// recip stores s to out and returns the broadcast vector 1/s.
func recip(i *ISA, s reg.Register, out Mem) reg.VecVirtual {
	i.VMOVS(s, out)
	return broadcast(i, inverse(i, s))
}

// inverse returns an xmm register whose low lane is 1/x.
func inverse(i *ISA, x Op) reg.VecVirtual {
	one := XMM()
	i.VMOVS(i.Const("fbone", 1), one)
	i.VDIVS(x, one, one)
	return one
}

// broadcast returns a vector of x's low lane (x: xmm or memory).
func broadcast(i *ISA, x Op) reg.VecVirtual {
	v := i.Vec()
	i.VBROADCAST(x, v)
	return v
}

// fillOnes sets the n elements at dst to 1 (β_{T−1}).
func fillOnes(i *ISA, label string, dst reg.Register, n reg.GPVirtual) {
	one := i.Vec()
	i.VBROADCAST(i.Const("fbone", 1), one)
	idx := GP64()
	Stripes(i, newLabel(i, label), n, idx, 1, func(u int) {
		i.VMOVU(one, i.Addr(dst, idx, 0))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		i.StoreMasked(m, one, i.Addr(dst, idx, 0))
	})
}

// mulRow sets dst[0:n] = src[0:n] · v (dst may be src).
func mulRow(i *ISA, dst, src, n reg.Register, v reg.VecVirtual) {
	ScaleElems(i, newLabel(i, "mul"), dst, src, n.(reg.GPVirtual), v, 2)
}

// mulRows sets dst[0:n] = a[0:n] ∘ b[0:n], times s too unless s is nil.
func mulRows(i *ISA, label string, dst, a, b reg.Register, n reg.GPVirtual, s reg.VecVirtual) {
	idx := GP64()
	Stripes(i, newLabel(i, label), n, idx, 2, func(u int) {
		x := i.Vec()
		i.VMOVU(i.Addr(a, idx, u*i.Bytes), x)
		i.VMUL(i.Addr(b, idx, u*i.Bytes), x, x)
		if s != nil {
			i.VMUL(s, x, x)
		}
		i.VMOVU(x, i.Addr(dst, idx, u*i.Bytes))
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		x, y := i.Vec(), i.Vec()
		i.LoadMasked(m, i.Addr(a, idx, 0), x)
		i.LoadMasked(m, i.Addr(b, idx, 0), y)
		i.VMUL(y, x, x)
		if s != nil {
			i.VMUL(s, x, x)
		}
		i.StoreMasked(m, x, i.Addr(dst, idx, 0))
	})
}

// mulSumRow sets dst[0:n] *= ps[0:n] and returns Σ dst (low lane of an xmm).
func mulSumRow(i *ISA, dst, ps, n reg.Register) reg.Register {
	acc := i.Vecs(2)
	i.Zero(acc[0])
	i.Zero(acc[1])
	idx := GP64()
	Stripes(i, newLabel(i, "mulsum"), n.(reg.GPVirtual), idx, 2, func(u int) {
		t := i.Vec()
		i.VMOVU(i.Addr(dst, idx, u*i.Bytes), t)
		i.VMUL(i.Addr(ps, idx, u*i.Bytes), t, t)
		i.VMOVU(t, i.Addr(dst, idx, u*i.Bytes))
		i.VADD(t, acc[u], acc[u])
	}, func(rem reg.GPVirtual) {
		m := i.TailMask(rem)
		t, p := i.Vec(), i.Vec()
		i.LoadMasked(m, i.Addr(dst, idx, 0), t)
		i.LoadMasked(m, i.Addr(ps, idx, 0), p)
		i.VMUL(p, t, t)
		i.StoreMasked(m, t, i.Addr(dst, idx, 0))
		addMasked(i, m, t, acc[0])
	})
	i.VADD(acc[1], acc[0], acc[0])
	return i.HSum(acc[0])
}

// normalizeRow sets dst = src / Σsrc and out = Σsrc.
func normalizeRow(i *ISA, dst, src, n reg.Register, out Mem) {
	s := rowSum(i, src, n)
	inv := recip(i, s, out)
	mulRow(i, dst, src, n, inv)
}

// chunk computes, for the chunk of columns starting at element j0 of a row of
// M, the number of vectors nv (1..nbMax) and the lane count r (1..W) of its
// last vector.
func chunk(i *ISA, M, j0 reg.Register, nbMax int) (nv, r reg.GPVirtual) {
	return chunkOf(i, M, j0, U32(nbMax), U32(nbMax*i.W))
}

// chunkOf is chunk for a chunk of up to n vectors, sw = n·W lanes (each an
// immediate or a register).
func chunkOf(i *ISA, M, j0 reg.Register, n, sw Op) (nv, r reg.GPVirtual) {
	nv, r = GP64(), GP64()
	left := GP64()
	MOVQ(M, left)
	SUBQ(j0, left)
	full := newLabel(i, "full")
	MOVQ(n, nv)
	MOVQ(U32(i.W), r)
	CMPQ(left, sw)
	JAE(LabelRef(full))
	lastVec(i, left, nv, r)
	Label(full)
	return nv, r
}

// lastVec sets nv = ⌈left/W⌉, the vectors of a chunk of left ≥ 1 elements,
// and r = left − (nv−1)·W ∈ [1, W], the lanes of the last.
func lastVec(i *ISA, left, nv, r reg.Register) {
	LEAQ(Mem{Base: left, Disp: i.W - 1}, nv)
	SHRQ(U8(log2(i.W)), nv)
	MOVQ(nv, r)
	SHLQ(U8(log2(i.W)), r)
	SUBQ(left, r)
	NEGQ(r)
	ADDQ(U32(i.W), r)
}

func log2(w int) int { return bits.TrailingZeros(uint(w)) }

// panel reserves a stack buffer of n bytes and returns a local holding its
// address rounded up to 64 bytes (so that vector rows of a packed matrix
// never straddle cache lines).
func panel(n int) Mem {
	buf := AllocLocal(n + 64)
	l := local()
	r := GP64()
	LEAQ(buf, r)
	ADDQ(U8(63), r)
	ANDQ(I8(-64), r)
	MOVQ(r, l)
	return l
}

// uRow sets the first v vectors of the 64-byte-aligned stack row at slot
// ub to α_0 (the param alpha's first row; the last vector under m, zeros
// past it). Stores of whole vectors to it forward to the next step's
// broadcasts, which masked stores to α do not.
func uRow(i *ISA, ub Mem, v int, m Mask) {
	a := Load(Param("alpha").Base(), GP64())
	u := ldq(ub)
	cv := chunkVecs{i: i, n: v, m: m}
	for k := range v {
		x := i.Vec()
		cv.load(k, Mem{Base: a, Disp: k * i.Bytes}, x)
		i.VMOVA(x, Mem{Base: u, Disp: k * i.Bytes})
	}
}

// pack copies rows × nv vectors from src (row stride sstride bytes) to dst
// (row stride nv·W·8), the last vector of each row under mask m and zero
// past it.
// A positive prefetch asks for the source row's bytes that far ahead (the
// next chunk's) to be brought into L2.
func pack(i *ISA, src, sstride, dst, rows reg.Register, nv int, m Mask, prefetch int) {
	loop := newLabel(i, "pack")
	s, d, n := GP64(), GP64(), GP64()
	MOVQ(src, s)
	MOVQ(dst, d)
	MOVQ(rows, n)
	Label(loop)
	cv := chunkVecs{i: i, n: nv, m: m}
	for v := 0; v < nv; v++ {
		t := i.Vec()
		cv.load(v, Mem{Base: s, Disp: v * i.Bytes}, t)
		i.VMOVU(t, Mem{Base: d, Disp: v * i.Bytes})
	}
	for off := 0; prefetch > 0 && off < prefetch; off += 64 {
		PREFETCHT1(Mem{Base: s, Disp: prefetch + off})
	}
	ADDQ(sstride, s)
	ADDQ(U32(nv*i.Bytes), d)
	DECQ(n)
	JNZ(LabelRef(loop))
}

// rowBytes loads M·Size, the stride of a row in bytes.
func rowBytes(i *ISA) reg.Register {
	r := Load(Param("M"), GP64())
	SHLQ(U8(i.Shift()), r)
	return r
}

// packAll packs all M rows of the M×M matrix param src, v vectors a row, into
// the buffer whose address is in the slot pb.
func packAll(i *ISA, src string, pb Mem, v int, m Mask) {
	M := Load(Param("M"), GP64())
	M8 := GP64()
	MOVQ(M, M8)
	SHLQ(U8(i.Shift()), M8)
	pack(i, Load(Param(src).Base(), GP64()), M8, ldq(pb), M, v, m, 0)
}

// local is an 8-byte stack slot.
func local() Mem { return AllocLocal(8) }

func ldq(m Mem) reg.GPVirtual {
	r := GP64()
	MOVQ(m, r)
	return r
}

// The loops below keep their counters in stack slots: the bodies need every
// register they can get, and a reload is cheap next to a block.

// countLoop runs body for each value of the slot ctr up to param limit
// (exclusive), ctr's register in hand; the caller sets ctr's start.
func countLoop(i *ISA, tag string, ctr Mem, limit string, body func(k reg.GPVirtual)) {
	loop, end := newLabel(i, tag), newLabel(i, tag+"end")
	Label(loop)
	k := ldq(ctr)
	CMPQ(k, Load(Param(limit), GP64()))
	JAE(LabelRef(end))
	body(k)
	k = ldq(ctr)
	INCQ(k)
	MOVQ(k, ctr)
	JMP(LabelRef(loop))
	Label(end)
}

// chunkLoop walks a row of M in chunks of up to nb vectors, the first column
// of each in the slot j0l, and runs body(v, m) for a chunk of v vectors
// whose last is under the tail mask m. rl is a slot for the mask's lane
// count, from which inner loops rebuild the mask rather than keep a
// register (on AVX2 a vector) live across the block.
func chunkLoop(i *ISA, tag string, j0l, rl Mem, nb int, body func(v int, m Mask)) {
	chunkLoopStep(i, tag, j0l, rl, nil, nb, body)
}

// chunkLoopStep is chunkLoop with chunks of the vector count in the slot
// stepl (≤ nb; see balancedStep) if it is not nil, else of nb.
func chunkLoopStep(i *ISA, tag string, j0l, rl Mem, stepl *Mem, nb int, body func(v int, m Mask)) {
	MOVQ(U32(0), j0l)
	loop, end := newLabel(i, tag), newLabel(i, tag+"end")
	Label(loop)
	j0 := ldq(j0l)
	M := Load(Param("M"), GP64())
	CMPQ(j0, M)
	JAE(LabelRef(end))
	var nv, r reg.GPVirtual
	if stepl != nil {
		n := ldq(*stepl)
		sw := GP64()
		MOVQ(n, sw)
		SHLQ(U8(log2(i.W)), sw)
		nv, r = chunkOf(i, M, j0, n, sw)
	} else {
		nv, r = chunk(i, M, j0, nb)
	}
	MOVQ(r, rl)
	switchN(i, nv, nb, func(v int) { body(v, i.TailMask(ldq(rl))) })
	j0 = ldq(j0l)
	if stepl != nil {
		s := ldq(*stepl)
		SHLQ(U8(log2(i.W)), s)
		ADDQ(s, j0)
	} else {
		ADDQ(U32(nb*i.W), j0)
	}
	MOVQ(j0, j0l)
	JMP(LabelRef(loop))
	Label(end)
}

// balancedChunks reports whether the sequence kernels of tier i split a
// row of more than nb vectors into chunks of equal size (to a vector)
// rather than into chunks of nb and a rest: a rest of one or two vectors
// is two or four dependent FMA chains over all M rows, mostly latency.
// Only where measured and tested: the AVX-512 kernels keep their chunks
// until checked on an AVX-512 machine. (Its effect and packMulti's,
// together, at multiPackBytes.)
func balancedChunks(i *ISA) bool { return !i.Is512() }

// balancedStep stores in the slot stepl the chunk size, in vectors, that
// splits a row of the param M's ⌈M/W⌉ vectors into the fewest chunks of at
// most nb vectors, as equal as they can be: ⌈n/⌈n/nb⌉⌉.
func balancedStep(i *ISA, stepl Mem, nb int) {
	n := Load(Param("M"), GP64())
	ADDQ(U32(i.W-1), n)
	SHRQ(U8(log2(i.W)), n) // n = ⌈M/W⌉
	// c = ⌈n/nb⌉ (nb need not be a power of two: counted up)
	c, x := GP64(), GP64()
	MOVQ(U32(1), c)
	cl, ce := newLabel(i, "bc"), newLabel(i, "bcend")
	Label(cl)
	IMUL3Q(U32(nb), c, x)
	CMPQ(x, n)
	JAE(LabelRef(ce))
	INCQ(c)
	JMP(LabelRef(cl))
	Label(ce)
	// s = ⌈n/c⌉: the least s ≤ nb with s·c ≥ n, counted down from nb
	s := GP64()
	MOVQ(U32(nb), s)
	sl, se := newLabel(i, "bs"), newLabel(i, "bsend")
	Label(sl)
	MOVQ(s, x)
	DECQ(x)
	IMULQ(c, x)
	CMPQ(x, n)
	JB(LabelRef(se))
	DECQ(s)
	JMP(LabelRef(sl))
	Label(se)
	MOVQ(s, stepl)
}

// packPanel packs the current chunk (v vectors from column j0l, the last
// under m) of rows row0 .. row0+rows−1 of the M-column matrix param src
// into the panel pb, prefetching the next chunk's columns.
func packPanel(i *ISA, src string, row0, rows, j0l, pb Mem, v, nbMax int, m Mask) {
	M8 := rowBytes(i)
	p := ldq(row0)
	IMULQ(M8, p)
	ADDQ(Load(Param(src).Base(), GP64()), p)
	j0 := ldq(j0l)
	LEAQ(Mem{Base: p, Index: j0, Scale: i.Sc()}, p)
	pack(i, p, M8, ldq(pb), ldq(rows), v, m, nbMax*i.Bytes)
}

// blockLoop walks the param limit rows in blocks of up to kbMax, the first
// row of each in the slot blk, and runs body(kb) for a block of kb rows.
func blockLoop(i *ISA, tag string, blk Mem, limit string, kbMax int, body func(kb int)) {
	MOVQ(U32(0), blk)
	blockLoopFrom(i, tag, blk, limit, kbMax, body)
}

// blockLoopFrom is blockLoop from the row the caller put in the slot blk.
func blockLoopFrom(i *ISA, tag string, blk Mem, limit string, kbMax int, body func(kb int)) {
	loop, end := newLabel(i, tag), newLabel(i, tag+"end")
	Label(loop)
	k0 := ldq(blk)
	n := Load(Param(limit), GP64())
	CMPQ(k0, n)
	JAE(LabelRef(end))
	SUBQ(k0, n)
	kb := GP64()
	MOVQ(U32(kbMax), kb)
	CMPQ(kb, n)
	CMOVQGT(n, kb)
	switchN(i, kb, kbMax, body)
	k0 = ldq(blk)
	ADDQ(U32(kbMax), k0)
	MOVQ(k0, blk)
	JMP(LabelRef(loop))
	Label(end)
}

// ---------------------------------------------------------------------------
// Forward

func genForward(i *ISA) {
	fn := i.Fn("forward")
	Kernel(fn, 0, i.Sig("func(alpha, scale, psi, e []%s, T, M int)"), "is the scaled forward pass over a whole sequence (see Forward);", "T ≥ 1, M ≥ 1, lengths checked by the caller.")
	nb := seqVecs(i)

	// t = 0: α_0 = Ψ_0 / Σ Ψ_0.
	{
		alpha := Load(Param("alpha").Base(), GP64())
		psi := Load(Param("psi").Base(), GP64())
		scale := Load(Param("scale").Base(), GP64())
		M := Load(Param("M"), GP64())
		normalizeRow(i, alpha, psi, M, Mem{Base: scale})
	}
	M := Load(Param("M"), GP64())
	CMPQ(M, U32(nb*i.W))
	multi := newLabel(i, "multi")
	JA(LabelRef(multi))

	// One chunk: the whole row stays in registers.
	{
		left := Load(Param("M"), GP64())
		nv := GP64()
		r := GP64()
		lastVec(i, left, nv, r)
		rl := local()
		MOVQ(r, rl)
		// Up to packVecs vectors a row, E is packed.
		packVecs := maxPackVecs(i)
		pb := panel(packVecs * i.W * packVecs * i.W * i.Size)
		eb, esl := local(), local()
		ub, invl := panel(nb*i.Bytes), local()
		switchN(i, nv, nb, func(v int) {
			m := i.TailMask(ldq(rl))
			// E's row stride: packed, an immediate; else the row's bytes
			// (from a slot: the loop needs every register).
			var es Op = U32(v * i.Bytes)
			if v <= packVecs {
				packAll(i, "e", pb, v, m)
				MOVQ(ldq(pb), eb)
			} else {
				MOVQ(Load(Param("e").Base(), GP64()), eb)
				MOVQ(rowBytes(i), esl)
				es = esl
			}
			// The step broadcasts u_{t−1} = Ψ_{t−1}∘(α_{t−2}E), not yet
			// divided by its sum c_{t−1}, from the aligned row ub, and
			// multiplies its product by 1/c_{t−1} (slot invl) at the end:
			// the row sum, its inverse and α_t's store are then off the
			// chain of dependent steps. (The product is c_{t−1} times
			// Forward's: the wrapper, lagChecked, checks the scales.) ub
			// starts as α_0 (padded with zeros), invl as 1; ub is stored as
			// whole vectors, which forward to the next step's loads.
			uRow(i, ub, v, m)
			{
				one := XMM()
				i.VMOVS(i.Const("fbone", 1), one)
				i.VMOVS(one, invl)
			}
			T := Load(Param("T"), GP64())
			t := GP64()
			MOVQ(U32(1), t)
			prev := Load(Param("alpha").Base(), GP64())
			psi := Load(Param("psi").Base(), GP64())
			scale := Load(Param("scale").Base(), GP64())
			M8 := rowBytes(i)
			ADDQ(M8, psi)
			ADDQ(U8(i.Size), scale)
			loop, end := newLabel(i, "t"), newLabel(i, "tend")
			Label(loop)
			CMPQ(t, T)
			JAE(LabelRef(end))
			{
				q := ldq(eb)
				p := ldq(ub)
				n := Load(Param("M"), GP64())
				acc := vecMat(i, p, q, es, n, chunkVecs{i: i, n: v, m: m, padded: v <= packVecs})
				ADDQ(M8, prev)
				sum := i.Vec()
				i.Zero(sum)
				cv := chunkVecs{i: i, n: v, m: m}
				cv.mulPsi(acc, psi, nil, nil)
				ic := broadcast(i, invl)
				u := ldq(ub)
				for k, a := range acc {
					i.VMUL(ic, a, a)
					i.VMOVA(a, Mem{Base: u, Disp: k * i.Bytes})
					cv.add(k, a, sum)
				}
				s := i.HSum(sum)
				x := inverse(i, s)
				i.VMOVS(s, Mem{Base: scale})
				i.VMOVS(x, invl)
				cv.scaleStore(acc, broadcast(i, x), prev)
			}
			ADDQ(M8, psi)
			ADDQ(U8(i.Size), scale)
			INCQ(t)
			JMP(LabelRef(loop))
			Label(end)
		})
		Ret()
	}

	// Several chunks: each chunk stores Ψ∘(αE) and its sum; a last pass
	// scales the row.
	Label(multi)
	{
		tl, prevl, sumv, j0l, rl := local(), local(), AllocLocal(i.Bytes), local(), local()
		var stepl, mp *Mem
		if balancedChunks(i) {
			m := local()
			stepl = &m
			balancedStep(i, m, nb)
			if packsMulti(i) {
				mp = packMulti(i, "e", j0l, rl, stepl, nb)
			}
		}
		steps := func(mp *Mem) {
			MOVQ(U32(1), tl)
			countLoop(i, "mt", tl, "T", func(t reg.GPVirtual) {
				// prev = row t−1 of alpha; the row sum starts at 0.
				M8 := rowBytes(i)
				prev := Load(Param("alpha").Base(), GP64())
				tm := GP64()
				MOVQ(t, tm)
				DECQ(tm)
				IMULQ(M8, tm)
				ADDQ(tm, prev)
				MOVQ(prev, prevl)
				z := i.Vec()
				i.Zero(z)
				i.VMOVU(z, sumv)
				chunkLoopStep(i, "chunk", j0l, rl, stepl, nb, func(v int, m Mask) {
					j0 := ldq(j0l)
					M8 := rowBytes(i)
					q, qs := chunkBase(i, "e", mp, j0, v, M8)
					p := ldq(prevl)
					n := Load(Param("M"), GP64())
					cv := chunkVecs{i: i, n: v, m: m}
					acc := vecMat(i, p, q, qs, n, chunkVecs{i: i, n: v, m: m, padded: mp != nil})
					// Row t of psi and alpha at column j0.
					off := ldq(tl)
					IMULQ(M8, off)
					LEAQ(Mem{Base: off, Index: j0, Scale: i.Sc()}, off)
					psi := Load(Param("psi").Base(), GP64())
					ADDQ(off, psi)
					cur := Load(Param("alpha").Base(), GP64())
					ADDQ(off, cur)
					sum := i.Vec()
					i.VMOVU(sumv, sum)
					cv.mulPsi(acc, psi, sum, cur)
					i.VMOVU(sum, sumv)
				})
				sum := i.Vec()
				i.VMOVU(sumv, sum)
				s := i.HSum(sum)
				scale := Load(Param("scale").Base(), GP64())
				t = ldq(tl)
				inv := recip(i, s, Mem{Base: scale, Index: t, Scale: i.Sc()})
				M := Load(Param("M"), GP64())
				cur := ldq(prevl)
				LEAQ(Mem{Base: cur, Index: M, Scale: i.Sc()}, cur)
				mulRow(i, cur, cur, M, inv)
			})
			Ret()
		}
		multiVariants(i, mp, steps)
	}
}

// multiVariants emits steps for the packed matrix mp, where M allows
// (then a return), and steps without packing (mp nil: not packed at all).
func multiVariants(i *ISA, mp *Mem, steps func(mp *Mem)) {
	if mp == nil {
		steps(nil)
		return
	}
	unpacked := newLabel(i, "unpacked")
	M := Load(Param("M"), GP64())
	CMPQ(M, U32(multiPackMax(i)))
	JA(LabelRef(unpacked))
	steps(mp)
	Label(unpacked)
	steps(nil)
}

// multiPackBytes is the stack buffer into which Forward and Backward pack
// a matrix of more than one chunk a row (AVX2: more than 24 float64
// labels), chunk by chunk with rows padded to whole vectors: misaligned
// loads straddle cache lines. With equal chunks, `simdcrf-bench kernels
// -impl avx2 -kernels forward,backward -labels 25,45,48,49,64 -count 5`,
// builds before and after in turns, medians of 3 (shared AMD EPYC, quiet):
// Forward ×1.08 / ×1.36 / ×0.99 / ×1.12 / ×0.97 faster, Backward ×1.07 /
// ×1.08 / ×0.91 / ×1.10 / ×0.97 (M = 48 and 64: rows of whole lines
// already, the copy is cost; 64 is not packed). A 32 KiB buffer, all of
// L1 here, made M = 64 slower (×0.8, thread CPU time).
const multiPackBytes = 20 << 10

// packsMulti reports whether Forward and Backward of tier i pack rows of
// more than one chunk (packMulti): in float64 only. An L-BFGS iteration
// on UD English EWT (M = 49; `simdcrf-bench phases -tasks ewt-xpos
// -threads 1 -iterations 5`, CPU ms, builds in turns, medians of 4, on the
// shared AMD EPYC) took ×0.90 of the time with float64 packing,
// but ×1.1 with float32 packing too (49 float32 labels are 7 vectors, of
// which the old split into 6 and 1 lost less to misalignment than
// packing cost on EWT's short sentences), and ×0.94 without it.
func packsMulti(i *ISA) bool { return !i.F32() }

// multiPackMax is the largest M whose padded M×M matrix fits
// multiPackBytes.
func multiPackMax(i *ISA) int {
	m := 0
	for {
		n := m + 1
		if n*((n+i.W-1)/i.W)*i.Bytes > multiPackBytes {
			return m
		}
		m = n
	}
}

// packMulti reserves the buffer of multiPackBytes and, where M ≤
// multiPackMax, packs the matrix param src into it chunk by chunk (the
// chunks of chunkLoopStep): chunk c, from column j0, is M rows of its v
// vectors at M·j0 elements from the start. It returns the buffer's slot.
func packMulti(i *ISA, src string, j0l, rl Mem, stepl *Mem, nb int) *Mem {
	mp := panel(multiPackBytes)
	skip := newLabel(i, "nopack")
	M := Load(Param("M"), GP64())
	CMPQ(M, U32(multiPackMax(i)))
	JA(LabelRef(skip))
	chunkLoopStep(i, "mpack", j0l, rl, stepl, nb, func(v int, m Mask) {
		j0 := ldq(j0l)
		M := Load(Param("M"), GP64())
		from := Load(Param(src).Base(), GP64())
		LEAQ(Mem{Base: from, Index: j0, Scale: i.Sc()}, from)
		to, _ := chunkBase(i, src, &mp, j0, v, nil)
		M8 := GP64()
		MOVQ(M, M8)
		SHLQ(U8(i.Shift()), M8)
		pack(i, from, M8, to, M, v, m, 0)
	})
	Label(skip)
	return &mp
}

// chunkBase returns the address of the chunk of v vectors from column j0
// of the matrix param src and its row stride: in the packed buffer mp if
// not nil, else in src itself (whose stride, M·Size, is in the register
// m8).
func chunkBase(i *ISA, src string, mp *Mem, j0 reg.Register, v int, m8 reg.Register) (reg.GPVirtual, Op) {
	if mp == nil {
		q := GP64()
		Load(Param(src).Base(), q)
		LEAQ(Mem{Base: q, Index: j0, Scale: i.Sc()}, q)
		return q, m8
	}
	off := Load(Param("M"), GP64())
	IMULQ(j0, off)
	q := ldq(*mp)
	LEAQ(Mem{Base: q, Index: off, Scale: i.Sc()}, q)
	return q, U32(v * i.Bytes)
}

// ---------------------------------------------------------------------------
// Backward

func genBackward(i *ISA) {
	fn := i.Fn("backward")
	Kernel(fn, 0, i.Sig("func(beta, scale, psi, et []%s, T, M int)"), "is the scaled backward pass over a whole sequence (see Backward);", "T ≥ 1, M ≥ 1, lengths checked by the caller.")
	nb := seqVecs(i)
	tl, invl, j0l, rl := local(), local(), local(), local()
	var stepl *Mem
	if balancedChunks(i) {
		m := local()
		stepl = &m
		balancedStep(i, m, nb)
	}
	betaOnes(i, tl)
	// The steps over more than one chunk a row: from multi, packed and
	// not (multiVariants) on AVX2, not packed on AVX-512.
	loop, end := newLabel(i, "bt"), newLabel(i, "btend")
	multi := loop
	if balancedChunks(i) {
		multi = newLabel(i, "bmulti")
	}
	// Up to packVecs vectors a row (one chunk), Eᵀ is packed, and
	// w = Ψ_{t+1}∘β_{t+1} is formed in registers from β_{t+1}'s and
	// stored as whole vectors to the aligned row wb, which forward to the
	// step's broadcasts (masked stores to β do not): β's stores are then
	// off the chain of dependent steps.
	packVecs := maxPackVecs(i)
	pb := panel(packVecs * i.W * packVecs * i.W * i.Size)
	wb := panel(packVecs * i.Bytes)
	packedRows(i, packVecs, rl, pb, multi, func(v int, m Mask) {
		backwardSteps(i, v, m, tl, pb, wb, nil)
	})
	Ret()
	var mp *Mem
	if balancedChunks(i) {
		Label(multi)
		if packsMulti(i) {
			mp = packMulti(i, "et", j0l, rl, stepl, nb)
		}
	}
	first := true
	multiVariants(i, mp, func(mp *Mem) {
		if !first {
			loop, end = newLabel(i, "bt"), newLabel(i, "btend")
		}
		first = false
		Label(loop)
		{
			t := ldq(tl) // t+1 of the step computing β_t
			TESTQ(t, t)
			JZ(LabelRef(end))
			scale := Load(Param("scale").Base(), GP64())
			i.VMOVS(inverse(i, Mem{Base: scale, Index: t, Scale: i.Sc()}), invl)
		}
		chunkLoopStep(i, "bchunk", j0l, rl, stepl, nb, func(v int, m Mask) {
			j0 := ldq(j0l)
			M8 := rowBytes(i)
			q, qs := chunkBase(i, "et", mp, j0, v, M8)
			off := ldq(tl)
			IMULQ(M8, off) // (t+1)·M·8
			p := Load(Param("beta").Base(), GP64())
			ADDQ(off, p)
			pp := Load(Param("psi").Base(), GP64())
			ADDQ(off, pp)
			n := Load(Param("M"), GP64())
			cv := chunkVecs{i: i, n: v, m: m}
			// As vecMat, but broadcasting Ψ_{t+1}·β_{t+1} formed on the fly.
			b := &block{kb: 1, chains: seqChains(v), cols: chunkVecs{i: i, n: v, m: m, padded: mp != nil}, q: q, s2: qs, n: n,
				bcast: func(_ int, dst reg.VecVirtual) {
					x := XMM()
					i.VMOVS(Mem{Base: pp}, x)
					i.VMULS(Mem{Base: p}, x, x)
					i.VBROADCAST(x, dst)
				},
				step: func() { ADDQ(U8(i.Size), p); ADDQ(U8(i.Size), pp) }}
			acc := b.emit(i)[0]
			cur := Load(Param("beta").Base(), GP64())
			off = ldq(tl)
			DECQ(off)
			IMULQ(M8, off)
			LEAQ(Mem{Base: off, Index: j0, Scale: i.Sc()}, off)
			ADDQ(off, cur)
			cv.scaleStore(acc, broadcast(i, invl), cur)
		})
		{
			t := ldq(tl)
			DECQ(t)
			MOVQ(t, tl)
			JMP(LabelRef(loop))
		}
		Label(end)
		Ret()
	})
}

// betaOnes sets β_{T−1} = 1 and the slot tl to T−1 (Backward's start).
func betaOnes(i *ISA, tl Mem) {
	T := Load(Param("T"), GP64())
	DECQ(T)
	MOVQ(T, tl)
	M := Load(Param("M"), GP64())
	IMULQ(M, T)
	beta := Load(Param("beta").Base(), GP64())
	LEAQ(Mem{Base: beta, Index: T, Scale: i.Sc()}, beta)
	fillOnes(i, "ones", beta, M.(reg.GPVirtual))
}

// packedRows jumps to over when a row of M is longer than n vectors; else,
// for the row's v = 1..n vectors (the last under m, its lane count in the
// slot rl), it packs all of Eᵀ into the slot pb and runs body(v, m).
func packedRows(i *ISA, n int, rl, pb Mem, over string, body func(v int, m Mask)) {
	left := Load(Param("M"), GP64())
	CMPQ(left, U32(n*i.W))
	JA(LabelRef(over))
	nv, r := GP64(), GP64()
	lastVec(i, left, nv, r)
	MOVQ(r, rl)
	switchN(i, nv, n, func(v int) {
		m := i.TailMask(ldq(rl))
		packAll(i, "et", pb, v, m)
		body(v, m)
	})
}

// backwardSteps emits Backward's steps over rows of one chunk of v vectors
// (the last under m), Eᵀ packed at the slot pb: w = Ψ_{T−1} in the aligned
// row at slot wb, then for t = T−1 … 1 (t in the slot tl) β_{t−1} =
// (w·Eᵀ)/scale_t and w = Ψ_{t−1}∘β_{t−1}. Each step calls counts, when set,
// after the product w·Eᵀ is issued and before w is overwritten, with the
// broadcast 1/scale_t (genBackwardTransitions).
func backwardSteps(i *ISA, v int, m Mask, tl, pb, wb Mem, counts func(inv reg.VecVirtual)) {
	cv := chunkVecs{i: i, n: v, m: m}
	// w = Ψ_{T−1} (β_{T−1} = 1).
	{
		off := ldq(tl)
		IMULQ(rowBytes(i), off)
		ps := Load(Param("psi").Base(), GP64())
		ADDQ(off, ps)
		w := ldq(wb)
		for k := 0; k < v; k++ {
			x := i.Vec()
			cv.load(k, Mem{Base: ps, Disp: k * i.Bytes}, x)
			i.VMOVA(x, Mem{Base: w, Disp: k * i.Bytes})
		}
	}
	tloop, tend := newLabel(i, "pt"), newLabel(i, "ptend")
	Label(tloop)
	t := ldq(tl)
	TESTQ(t, t)
	JZ(LabelRef(tend))
	p := ldq(wb)
	n := Load(Param("M"), GP64())
	acc := vecMat(i, p, ldq(pb), U32(v*i.Bytes), n, chunkVecs{i: i, n: v, m: m, padded: true})
	scale := Load(Param("scale").Base(), GP64())
	t = ldq(tl)
	inv := broadcast(i, inverse(i, Mem{Base: scale, Index: t, Scale: i.Sc()}))
	if counts != nil {
		counts(inv)
	}
	DECQ(t)
	MOVQ(t, tl)
	M8 := rowBytes(i)
	IMULQ(M8, t)
	out := Load(Param("beta").Base(), GP64())
	ADDQ(t, out)
	ps := Load(Param("psi").Base(), GP64())
	ADDQ(t, ps)
	w := ldq(wb)
	for k, a := range acc {
		i.VMUL(inv, a, a)
		cv.store(k, a, Mem{Base: out, Disp: k * i.Bytes})
		i.VMUL(cv.operand(k, Mem{Base: ps, Disp: k * i.Bytes}), a, a)
		i.VMOVA(a, Mem{Base: w, Disp: k * i.Bytes})
	}
	JMP(LabelRef(tloop))
	Label(tend)
}

// ---------------------------------------------------------------------------
// ForwardBatch

// With bwd it emits BackwardBatch instead, the same matrix–matrix step run
// backwards: β_{T−1} = 1, and for t = T−2 … 0 the K rows
// w_k = Ψ_{t+1,k}∘β_{t+1,k} (formed in work, K×M) times Eᵀ, each row then
// divided by its scale_{t+1,k}.
func genBatch(i *ISA, bwd bool) {
	E := "e"
	fn := i.Fn("forwardBatch")
	if bwd {
		E = "et"
		fn = i.Fn("backwardBatch")
		Kernel(fn, 0, i.Sig("func(beta, scale, psi, et, work []%s, from []int32, T, K, M, ib int)"), "is BackwardBatch with the rows of Eᵀ taken ib at a time; T, K, M,", "ib ≥ 1; work holds K·M elements; from is empty or T long.")
	} else {
		Kernel(fn, 0, i.Sig("func(alpha, scale, psi, e []%s, from []int32, T, K, M, ib int)"), "is ForwardBatch with the rows of E taken ib at a time (so that a", "block of E stays in cache while every sequence uses it); T, K, M, ib ≥ 1;", "from is empty or T long.")
	}
	kbMax, nbMax := gemmShape(i)
	tl, kl, i0l, k0l, j0l, rl, nil_ := local(), local(), local(), local(), local(), local(), local()
	// froml: the first sequence of the step's row (from[row], 0 if from
	// is empty); the sequences before it are done (past their ends, or
	// not yet begun backwards) and their rows left as they are.
	froml := local()
	// endl, pfroml (backward): the last sequence + 1 whose w a step forms,
	// and the previous step's froml.
	endl, pfroml := local(), local()
	prevl, curl := local(), local()
	var pb Mem // E's panel (AVX-512 reads E in place)
	if !i.Is512() {
		pb = panel(batchPanelRows * nbMax * i.Bytes)
	}
	// rowl: 1 when a row's product is in registers whole. One chunk of
	// columns and one panel of rows: each block then holds whole rows of
	// α'_t, which it finishes itself (Ψ, the scale and the division;
	// backward: the division and w = Ψ∘β for the next step) instead of a
	// pass over them after the product (BenchmarkForwardLockstep, float64
	// AVX-512, ns a position before and after: M = 9 28.5 -> 14.3, 23
	// 44.0 -> 22.3).
	rowl := local()
	{
		f, M := GP64(), Load(Param("M"), GP64())
		MOVQ(U32(0), f)
		no := newLabel2(i, "rowno")
		CMPQ(M, U32(nbMax*i.W))
		JA(LabelRef(no))
		CMPQ(M, U32(batchPanelRows))
		JA(LabelRef(no))
		CMPQ(M, Load(Param("ib"), GP64()))
		JA(LabelRef(no))
		MOVQ(U32(1), f)
		Label(no)
		MOVQ(f, rowl)
	}

	if bwd {
		// β_{T−1} = 1 for every sequence: the last K·M elements.
		KM := Load(Param("K"), GP64())
		IMULQ(Load(Param("M"), GP64()), KM)
		T1 := Load(Param("T"), GP64())
		DECQ(T1)
		IMULQ(KM, T1)
		beta := Load(Param("beta").Base(), GP64())
		LEAQ(Mem{Base: beta, Index: T1, Scale: i.Sc()}, beta)
		fillOnes(i, "bones", beta, KM.(reg.GPVirtual))
	} else {
		// t = 0: normalise every sequence's first row.
		MOVQ(U32(0), kl)
		countLoop(i, "k0", kl, "K", func(k reg.GPVirtual) {
			M := Load(Param("M"), GP64())
			off := GP64()
			MOVQ(k, off)
			IMULQ(M, off)
			alpha := Load(Param("alpha").Base(), GP64())
			LEAQ(Mem{Base: alpha, Index: off, Scale: i.Sc()}, alpha)
			psi := Load(Param("psi").Base(), GP64())
			LEAQ(Mem{Base: psi, Index: off, Scale: i.Sc()}, psi)
			scale := Load(Param("scale").Base(), GP64())
			normalizeRow(i, alpha, psi, M, Mem{Base: scale, Index: k, Scale: i.Sc()})
		})
	}
	MOVQ(U32(1), tl)
	countLoop(i, "t", tl, "T", func(t reg.GPVirtual) {
		KM8 := Load(Param("K"), GP64())
		IMULQ(Load(Param("M"), GP64()), KM8)
		SHLQ(U8(i.Shift()), KM8)
		if bwd {
			// Step tl computes row block t = T−1−tl from t+1 = T−tl:
			// work = Ψ_{t+1}∘β_{t+1} (K·M elements), prev = work,
			// cur = beta + t·K·M·8.
			nxt := Load(Param("T"), GP64())
			SUBQ(t, nxt)
			IMULQ(KM8, nxt)
			ps := Load(Param("psi").Base(), GP64())
			ADDQ(nxt, ps)
			be := Load(Param("beta").Base(), GP64())
			ADDQ(nxt, be)
			SUBQ(KM8, be)
			MOVQ(be, curl)
			ADDQ(KM8, be)
			w := Load(Param("work").Base(), GP64())
			MOVQ(w, prevl)
			{
				row := Load(Param("T"), GP64())
				DECQ(row)
				SUBQ(ldq(tl), row)
				firstOf(i, row, froml)
			}
			// w for the sequences from froml up to endl: all K at the
			// first step and without whole rows; after the first step
			// whole rows have work's w already, but for the sequences
			// this step adds (from falling: aligned at the start).
			form, skip := newLabel2(i, "bwform"), newLabel2(i, "bwskip")
			{
				end := Load(Param("K"), GP64())
				f := ldq(rowl)
				TESTQ(f, f)
				JZ(LabelRef(form))
				CMPQ(t, U8(1))
				JBE(LabelRef(form))
				MOVQ(pfroml, end)
				Label(form)
				MOVQ(end, endl)
				MOVQ(ldq(froml), pfroml)
			}
			f0 := ldq(froml)
			KM := ldq(endl)
			SUBQ(f0, KM)
			JLE(LabelRef(skip))
			IMULQ(Load(Param("M"), GP64()), KM)
			IMULQ(Load(Param("M"), GP64()), f0)
			SHLQ(U8(i.Shift()), f0)
			w = ldq(prevl)
			ADDQ(f0, w)
			ADDQ(f0, ps)
			ADDQ(f0, be)
			mulRows(i, "bw", w, ps, be, KM, nil)
			Label(skip)
		} else {
			firstOf(i, t, froml)
			// prev = alpha + (t−1)·K·M·8, cur = prev + K·M·8
			DECQ(t)
			IMULQ(KM8, t)
			prev := Load(Param("alpha").Base(), GP64())
			ADDQ(t, prev)
			MOVQ(prev, prevl)
			ADDQ(KM8, prev)
			MOVQ(prev, curl)
		}
		MOVQ(U32(0), i0l)

		iloop, iend := newLabel(i, "i0"), newLabel(i, "i0end")
		Label(iloop)
		{
			i0 := ldq(i0l)
			M := Load(Param("M"), GP64())
			CMPQ(i0, M)
			JAE(LabelRef(iend))
			ni := Load(Param("ib"), GP64())
			lim := GP64()
			MOVQ(U32(batchPanelRows), lim)
			CMPQ(ni, lim)
			CMOVQGT(lim, ni)
			SUBQ(i0, M)
			CMPQ(ni, M)
			CMOVQGT(M, ni)
			MOVQ(ni, nil_)
		}
		// blocks runs the product's blocks of sequences for the chunk (v
		// vectors, the last under m) from the panel, or from E in place.
		blocks := func(v int, m Mask, direct bool) {
			MOVQ(ldq(froml), k0l)
			blockLoopFrom(i, "kb", k0l, "K", kbMax, func(kbv int) {
				m := i.TailMask(ldq(rl))
				M8 := rowBytes(i)
				i0 := ldq(i0l)
				// p = prev + k0·M·8 + i0·8
				p := ldq(k0l)
				IMULQ(M8, p)
				LEAQ(Mem{Base: p, Index: i0, Scale: i.Sc()}, p)
				ADDQ(prevl, p)
				sk3 := GP64()
				LEAQ(Mem{Base: M8, Index: M8, Scale: 2}, sk3)
				p2 := kaddr2(p, M8, kbv)
				var q reg.GPVirtual
				var s2 Op = U32(v * i.Bytes)
				if direct {
					// q = E + i0·M·8 + j0·8, rows M·8 apart
					q = ldq(i0l)
					IMULQ(M8, q)
					ADDQ(Load(Param(E).Base(), GP64()), q)
					LEAQ(Mem{Base: q, Index: ldq(j0l), Scale: i.Sc()}, q)
					s2 = M8
				} else {
					q = ldq(pb)
				}
				n := ldq(nil_)
				cv := chunkVecs{i: i, n: v, m: m}
				// E in place on AVX-512: its last vector masked.
				padded := !direct || !i.Is512()
				b := &block{kb: kbv, chains: 1, cols: chunkVecs{i: i, n: v, m: m, padded: padded}, q: q, s2: s2, n: n,
					bcast: func(k int, dst reg.VecVirtual) { i.VBROADCAST(kaddr(p, p2, M8, sk3, k, 0), dst) },
					step: func() {
						ADDQ(U8(i.Size), p)
						if kbv > 4 {
							ADDQ(U8(i.Size), p2)
						}
					}}
				acc := b.emit(i)
				// o = cur + k0·M·8 + j0·8
				o := ldq(k0l)
				IMULQ(M8, o)
				j0 := ldq(j0l)
				LEAQ(Mem{Base: o, Index: j0, Scale: i.Sc()}, o)
				ADDQ(curl, o)
				o2 := kaddr2(o, M8, kbv)
				whole := newLabel2(i, "whole")
				{
					f := ldq(rowl)
					TESTQ(f, f)
					JNZ(LabelRef(whole))
				}
				first := newLabel(i, "first")
				i0 = ldq(i0l)
				TESTQ(i0, i0)
				JZ(LabelRef(first))
				for k := 0; k < kbv; k++ {
					for c := 0; c < v; c++ {
						a := kaddr(o, o2, M8, sk3, k, c*i.Bytes)
						i.VADD(cv.operand(c, a), acc[k][c], acc[k][c])
					}
				}
				Label(first)
				for k := 0; k < kbv; k++ {
					for c := 0; c < v; c++ {
						cv.store(c, acc[k][c], kaddr(o, o2, M8, sk3, k, c*i.Bytes))
					}
				}
				done := newLabel2(i, "wholeend")
				JMP(LabelRef(done))
				Label(whole)
				if bwd {
					wholeRowsBack(i, acc, cv, o, o2, M8, sk3, k0l, tl)
				} else {
					wholeRows(i, acc, cv, o, o2, M8, sk3, k0l, tl)
				}
				Label(done)
			})
		}
		chunkLoop(i, "jc", j0l, rl, nbMax, func(v int, m Mask) {
			// Pack rows i0..i0+ni of E, columns j0.. (v vectors), into the
			// aligned panel; every sequence then reads it from L1. When M
			// is a multiple of the width, E is read in place instead.
			// AVX-512 reads it in place at every M, the tail under a mask.
			if i.Is512() {
				blocks(v, m, true)
				return
			}
			direct, after := newLabel2(i, "edirect"), newLabel2(i, "eafter")
			{
				M := Load(Param("M"), GP64())
				TESTQ(U32(i.W-1), M)
				JZ(LabelRef(direct))
			}
			packPanel(i, E, i0l, nil_, j0l, pb, v, nbMax, m)
			blocks(v, m, false)
			JMP(LabelRef(after))
			Label(direct)
			blocks(v, m, true)
			Label(after)
		})
		{
			i0 := ldq(i0l)
			ADDQ(ldq(nil_), i0)
			MOVQ(i0, i0l)
			JMP(LabelRef(iloop))
		}
		Label(iend)

		if bwd {
			// β_t,k /= scale_{t+1,k}, sequence by sequence (unless the
			// blocks did it).
			tnext := newLabel2(i, "bsdone")
			f := ldq(rowl)
			TESTQ(f, f)
			JNZ(LabelRef(tnext))
			MOVQ(ldq(froml), kl)
			countLoop(i, "bscale", kl, "K", func(k reg.GPVirtual) {
				// scale index (T−tl)·K + k
				si := Load(Param("T"), GP64())
				SUBQ(ldq(tl), si)
				IMULQ(Load(Param("K"), GP64()), si)
				ADDQ(k, si)
				scale := Load(Param("scale").Base(), GP64())
				inv := broadcast(i, inverse(i, Mem{Base: scale, Index: si, Scale: i.Sc()}))
				M := Load(Param("M"), GP64())
				off := ldq(kl)
				IMULQ(M, off)
				cur := ldq(curl)
				LEAQ(Mem{Base: cur, Index: off, Scale: i.Sc()}, cur)
				mulRow(i, cur, cur, M, inv)
			})
			Label(tnext)
			return
		}
		// Ψ, sums and scaling, sequence by sequence (unless the blocks
		// did it).
		normDone := newLabel2(i, "normdone")
		f := ldq(rowl)
		TESTQ(f, f)
		JNZ(LabelRef(normDone))
		MOVQ(ldq(froml), kl)
		countLoop(i, "norm", kl, "K", func(k reg.GPVirtual) {
			M := Load(Param("M"), GP64())
			off := GP64()
			MOVQ(k, off)
			IMULQ(M, off)
			cur := ldq(curl)
			LEAQ(Mem{Base: cur, Index: off, Scale: i.Sc()}, cur)
			// psi row t·K+k = (cur − alpha) + psi
			psi := Load(Param("psi").Base(), GP64())
			ADDQ(cur, psi)
			SUBQ(Load(Param("alpha").Base(), GP64()), psi)
			s := mulSumRow(i, cur, psi, M)
			// scale index t·K + k
			si := ldq(tl)
			IMULQ(Load(Param("K"), GP64()), si)
			ADDQ(ldq(kl), si)
			scale := Load(Param("scale").Base(), GP64())
			inv := recip(i, s, Mem{Base: scale, Index: si, Scale: i.Sc()})
			cur = ldq(curl)
			off = ldq(kl)
			M = Load(Param("M"), GP64())
			IMULQ(M, off)
			LEAQ(Mem{Base: cur, Index: off, Scale: i.Sc()}, cur)
			mulRow(i, cur, cur, M, inv)
		})
		Label(normDone)
	})
	Ret()
}

// firstOf stores in the slot dst from[row] (param from, []int32), or 0
// when from is empty.
func firstOf(i *ISA, row reg.Register, dst Mem) {
	f := GP64()
	MOVQ(U32(0), f)
	none := newLabel2(i, "fromnone")
	n := Load(Param("from").Len(), GP64())
	TESTQ(n, n)
	JZ(LabelRef(none))
	p := Load(Param("from").Base(), GP64())
	MOVLQZX(Mem{Base: p, Index: row, Scale: 4}, f)
	Label(none)
	MOVQ(f, dst)
}

// wholeRows finishes ForwardBatch's rows k0+k of step t (slots k0l, tl)
// whose products α'_t are whole in acc[k] (the last vector under cv's
// mask), stored at rows k of o (o2: kaddr's rows 4..7; stride M8, sk3 =
// 3·M8): each times its Ψ row, the scale its sum (added over the row's
// lanes only), and the row divided by it, as the pass over the rows does.
func wholeRows(i *ISA, acc [][]reg.VecVirtual, cv chunkVecs, o, o2, M8, sk3 reg.Register, k0l, tl Mem) {
	// Ψ's rows; the scales at t·K + k0.
	ps, ps2 := psiRows(i, o, "alpha", M8, len(acc))
	si := ldq(tl)
	IMULQ(Load(Param("K"), GP64()), si)
	ADDQ(ldq(k0l), si)
	sc := Load(Param("scale").Base(), GP64())
	LEAQ(Mem{Base: sc, Index: si, Scale: i.Sc()}, sc)
	for k, row := range acc {
		sum := i.Vec()
		i.Zero(sum)
		for c, a := range row {
			i.VMUL(cv.operand(c, kaddr(ps, ps2, M8, sk3, k, c*i.Bytes)), a, a)
			cv.add(c, a, sum)
		}
		inv := recip(i, hsumHigh(i, sum), Mem{Base: sc, Disp: k * i.Size})
		for c, a := range row {
			i.VMUL(inv, a, a)
			cv.store(c, a, kaddr(o, o2, M8, sk3, k, c*i.Bytes))
		}
	}
}

// ---------------------------------------------------------------------------
// Transitions

func genTransitions(i *ISA) {
	fn := i.Fn("transitions")
	Kernel(fn, 0, i.Sig("func(g, e, alpha, beta, psi, scale, work []%s, T, M int)"), "adds the expected transition counts (see Transitions); T ≥ 2, M ≥ 1.")
	kbMax, nbMax := gemmShape(i)
	tl, i0l, j0l, rl, t0l, ntl := local(), local(), local(), local(), local(), local()
	pb := panel(transPanelRows * nbMax * i.Bytes)

	// work row t−1 = Ψ_t ∘ β_t · (1/scale_t), t = 1..T−1.
	MOVQ(U32(1), tl)
	countLoop(i, "bb", tl, "T", func(t reg.GPVirtual) {
		scale := Load(Param("scale").Base(), GP64())
		inv := broadcast(i, inverse(i, Mem{Base: scale, Index: t, Scale: i.Sc()}))
		M := Load(Param("M"), GP64())
		off := GP64()
		MOVQ(t, off)
		IMULQ(M, off)
		SHLQ(U8(i.Shift()), off)
		psi := Load(Param("psi").Base(), GP64())
		ADDQ(off, psi)
		beta := Load(Param("beta").Base(), GP64())
		ADDQ(off, beta)
		w := Load(Param("work").Base(), GP64())
		ADDQ(off, w)
		m8 := GP64()
		MOVQ(M, m8)
		SHLQ(U8(i.Shift()), m8)
		SUBQ(m8, w)
		mulRows(i, "bbrow", w, psi, beta, M.(reg.GPVirtual), inv)
	})

	// C = Aᵀ·B by blocks of up to transPanelRows positions: each block's
	// columns j0.. of B (work) are packed into an aligned panel that every
	// block of rows i of A (alpha) then reads from L1; g += E∘C_block.
	MOVQ(U32(0), t0l)
	tloop, tend := newLabel(i, "tt"), newLabel(i, "ttend")
	Label(tloop)
	{
		t0 := ldq(t0l)
		n := Load(Param("T"), GP64())
		DECQ(n)
		CMPQ(t0, n)
		JAE(LabelRef(tend))
		SUBQ(t0, n)
		lim := GP64()
		MOVQ(U32(transPanelRows), lim)
		CMPQ(n, lim)
		CMOVQGT(lim, n)
		MOVQ(n, ntl)
	}
	chunkLoop(i, "tj", j0l, rl, nbMax, func(v int, m Mask) {
		// Positions t0.. of work, columns j0.., into the panel.
		packPanel(i, "work", t0l, ntl, j0l, pb, v, nbMax, m)
		blockLoop(i, "ti", i0l, "M", kbMax, func(kbv int) {
			m := i.TailMask(ldq(rl))
			M8 := rowBytes(i)
			// p = alpha + t0·M·8 + i0·8, rows k at +8k, steps of M·8
			p := ldq(t0l)
			IMULQ(M8, p)
			ADDQ(Load(Param("alpha").Base(), GP64()), p)
			i0 := ldq(i0l)
			LEAQ(Mem{Base: p, Index: i0, Scale: i.Sc()}, p)
			n := ldq(ntl)
			cv := chunkVecs{i: i, n: v, m: m}
			b := &block{kb: kbv, chains: 1, cols: chunkVecs{i: i, n: v, m: m, padded: true}, q: ldq(pb), s2: U32(v * i.Bytes), n: n,
				bcast: func(k int, dst reg.VecVirtual) { i.VBROADCAST(Mem{Base: p, Disp: i.Size * k}, dst) },
				step:  func() { ADDQ(M8, p) }}
			acc := b.emit(i)
			// g rows i0+k at column j0, and the same offsets into e.
			off := ldq(i0l)
			IMULQ(M8, off)
			j0 := ldq(j0l)
			LEAQ(Mem{Base: off, Index: j0, Scale: i.Sc()}, off)
			gb := Load(Param("g").Base(), GP64())
			ADDQ(off, gb)
			eb := Load(Param("e").Base(), GP64())
			ADDQ(off, eb)
			sk3 := GP64()
			LEAQ(Mem{Base: M8, Index: M8, Scale: 2}, sk3)
			gb2, eb2 := kaddr2(gb, M8, kbv), kaddr2(eb, M8, kbv)
			// Bring the next block's rows of g and E in meanwhile (this
			// walk down a column panel defeats the hardware prefetchers
			// when M is large).
			ng, ne := GP64(), GP64()
			LEAQ(Mem{Base: gb, Index: sk3, Scale: 2}, ng)
			LEAQ(Mem{Base: eb, Index: sk3, Scale: 2}, ne)
			for k := 0; k < kbv; k++ {
				if k == 4 {
					LEAQ(Mem{Base: ng, Index: M8, Scale: 4}, ng)
					LEAQ(Mem{Base: ne, Index: M8, Scale: 4}, ne)
				}
				for c := 0; c < v; c++ {
					PREFETCHT0(kaddr(ng, ng, M8, sk3, k%4, c*i.Bytes))
					PREFETCHT0(kaddr(ne, ne, M8, sk3, k%4, c*i.Bytes))
				}
			}
			for k := 0; k < kbv; k++ {
				for c := 0; c < v; c++ {
					ga := kaddr(gb, gb2, M8, sk3, k, c*i.Bytes)
					ea := kaddr(eb, eb2, M8, sk3, k, c*i.Bytes)
					x := i.Vec()
					cv.load(c, ga, x)
					i.VFMADD231(cv.operand(c, ea), acc[k][c], x)
					cv.store(c, x, ga)
				}
			}
		})
	})
	{
		t0 := ldq(t0l)
		ADDQ(U32(transPanelRows), t0)
		MOVQ(t0, t0l)
		JMP(LabelRef(tloop))
	}
	Label(tend)
	Ret()
}

// ---------------------------------------------------------------------------
// BackwardTransitions

// fusedVecs is the longest row, in vectors, that BackwardTransitions takes:
// 32 labels, within Backward's packed rows (maxPackVecs). Its stack holds
// Eᵀ packed and the counts C, M × fusedVecs vectors each.
func fusedVecs(i *ISA) int { return min(32/i.W, maxPackVecs(i)) }

// genBackwardTransitions emits Backward's packed steps (backwardSteps) with
// the expected transition counts added on the way: in the step from β_t to
// β_{t−1}, C[i] += α_{t−1}[i] · w_t/scale_t for every row i, with
// w_t = Ψ_t∘β_t the row the step broadcasts; at the end g += E∘C. The
// counts are independent of the chain of steps, whose latency bounds
// Backward at small M, so they fill its idle ports instead of taking a
// pass of their own (Transitions). The counts sum over t downwards, so
// they round unlike Transitions'.
func genBackwardTransitions(i *ISA) {
	fn := i.Fn("backwardTransitions")
	Kernel(fn, 0, i.Sig("func(g, e, alpha, beta, psi, scale, et []%s, T, M int)"), "is Backward plus the transition counts of Transitions (see BackwardTransitions);", "T ≥ 1, 1 ≤ M ≤ fusedVecs·W, lengths checked by the caller.")
	nvMax := fusedVecs(i)
	tl, rl := local(), local()
	betaOnes(i, tl)
	pb := panel(nvMax * i.W * nvMax * i.W * i.Size)
	wb := panel(nvMax * i.Bytes)
	bb := panel(countSteps * nvMax * i.Bytes)
	cb := panel(nvMax * i.W * nvMax * i.Bytes)
	pend := local()
	done := newLabel(i, "btdone")
	packedRows(i, nvMax, rl, pb, done, func(v int, m Mask) {
		// C = 0: M rows of v vectors.
		{
			c := ldq(cb)
			n := Load(Param("M"), GP64())
			z := i.Vec()
			i.Zero(z)
			loop := newLabel(i, "czero")
			Label(loop)
			for k := range v {
				i.VMOVA(z, Mem{Base: c, Disp: k * i.Bytes})
			}
			ADDQ(U32(v*i.Bytes), c)
			DECQ(n)
			JNZ(LabelRef(loop))
		}
		// Each step stores bb = w_t/scale_t as a row of the slot bb, rows
		// filled from the last; every countSteps steps, and for what is
		// left at the end, countRows adds them all to C.
		MOVQ(U32(0), pend)
		backwardSteps(i, v, m, tl, pb, wb, func(inv reg.VecVirtual) {
			p := ldq(pend)
			q := ldq(bb)
			slot := GP64()
			MOVQ(U32(countSteps-1), slot)
			SUBQ(p, slot)
			IMUL3Q(U32(v*i.Bytes), slot, slot)
			ADDQ(slot, q)
			w := ldq(wb)
			for k := range v {
				x := i.Vec()
				i.VMUL(Mem{Base: w, Disp: k * i.Bytes}, inv, x)
				i.VMOVA(x, Mem{Base: q, Disp: k * i.Bytes})
			}
			INCQ(p)
			MOVQ(p, pend)
			skip := newLabel(i, "cskip")
			CMPQ(p, U8(countSteps))
			JNE(LabelRef(skip))
			MOVQ(U32(0), pend)
			// rows α_{t−1} … α_{t+countSteps−2}, bb's rows 0…
			a := ldq(tl)
			DECQ(a)
			IMULQ(rowBytes(i), a)
			ADDQ(Load(Param("alpha").Base(), GP64()), a)
			countRows(i, v, countSteps, a, ldq(bb), cb)
			Label(skip)
		})
		// The rows left: α_0 … α_{p−1}, bb's rows countSteps−p ….
		{
			p := ldq(pend)
			none := newLabel(i, "cnone")
			TESTQ(p, p)
			JZ(LabelRef(none))
			switchN(i, p, countSteps-1, func(kb int) {
				q := ldq(bb)
				ADDQ(U32((countSteps-kb)*v*i.Bytes), q)
				countRows(i, v, kb, Load(Param("alpha").Base(), GP64()), q, cb)
			})
			Label(none)
		}
		// g += E∘C, when there was a transition.
		T := Load(Param("T"), GP64())
		CMPQ(T, U8(2))
		JB(LabelRef(done))
		M8 := rowBytes(i)
		gp := Load(Param("g").Base(), GP64())
		ep := Load(Param("e").Base(), GP64())
		c := ldq(cb)
		n := Load(Param("M"), GP64())
		cv := chunkVecs{i: i, n: v, m: m}
		loop := newLabel(i, "gadd")
		Label(loop)
		for k := range v {
			x, y := i.Vec(), i.Vec()
			cv.load(k, Mem{Base: gp, Disp: k * i.Bytes}, x)
			i.VMOVA(Mem{Base: c, Disp: k * i.Bytes}, y)
			i.VFMADD231(cv.operand(k, Mem{Base: ep, Disp: k * i.Bytes}), y, x)
			cv.store(k, x, Mem{Base: gp, Disp: k * i.Bytes})
		}
		ADDQ(M8, gp)
		ADDQ(M8, ep)
		ADDQ(U32(v*i.Bytes), c)
		DECQ(n)
		JNZ(LabelRef(loop))
	})
	Label(done)
	Ret()
}

// countSteps is how many steps' rows BackwardTransitions adds to C at a
// time: C is loaded and stored once for them all.
const countSteps = 4

// countRows adds kb rows of counts to C (the slot cb, M rows of v
// vectors): C[i] += Σ_s a[s][i]·q[s], rows a[s] of M elements at a,
// rows q[s] of v vectors at q.
func countRows(i *ISA, v, kb int, a, q reg.Register, cb Mem) {
	c := ldq(cb)
	n := Load(Param("M"), GP64())
	M8 := rowBytes(i)
	sk3 := GP64()
	LEAQ(Mem{Base: M8, Index: M8, Scale: 2}, sk3)
	// AVX-512 has the registers to hold the rows of q (at most 16
	// vectors), which leaves the loads to C and the broadcasts.
	row := func(s, k int) Op { return Mem{Base: q, Disp: (s*v + k) * i.Bytes} }
	if i.Is512() {
		r := i.Vecs(kb * v)
		for k := range r {
			i.VMOVA(Mem{Base: q, Disp: k * i.Bytes}, r[k])
		}
		row = func(s, k int) Op { return r[s*v+k] }
	}
	loop := newLabel(i, "cnt")
	Label(loop)
	y := i.Vecs(v)
	for k := range v {
		i.VMOVA(Mem{Base: c, Disp: k * i.Bytes}, y[k])
	}
	for s := range kb {
		x := i.Vec()
		i.VBROADCAST(kaddr(a, nil, M8, sk3, s, 0), x)
		for k := range v {
			i.VFMADD231(row(s, k), x, y[k])
		}
	}
	for k := range v {
		i.VMOVA(y[k], Mem{Base: c, Disp: k * i.Bytes})
	}
	ADDQ(U8(i.Size), a)
	ADDQ(U32(v*i.Bytes), c)
	DECQ(n)
	JNZ(LabelRef(loop))
}

// hsumHigh is i.HSum for any vector register: on AVX-512 the ymm-to-xmm
// step uses the EVEX extract, as registers 16–31 (wholeRows, 24
// accumulators live) have no VEX encoding. (HSum is left as it is: the
// other kernels' output stays byte for byte.)
func hsumHigh(i *ISA, v reg.VecVirtual) reg.Register {
	if !i.Is512() {
		return i.HSum(v)
	}
	hi := YMM()
	VEXTRACTF64X4(U8(1), v, hi)
	i.VADD(hi, v.AsY(), hi)
	x := XMM()
	if i.F32() {
		VEXTRACTF32X4(U8(1), hi, x)
	} else {
		VEXTRACTF64X2(U8(1), hi, x)
	}
	i.VADD(x, hi.AsX(), x)
	y := XMM()
	if i.F32() {
		VMOVHLPS(x, x, y)
		i.VADD(y, x, x)
		VMOVSHDUP(x, y)
	} else {
		VUNPCKHPD(x, x, y)
	}
	i.VADDS(y, x, x)
	return x
}

// wholeRowsBack is wholeRows for BackwardBatch's step tl (row t =
// T−1−tl from t+1): β_t = acc/scale_{t+1} stored at rows k of o, and
// w_t = Ψ_t∘β_t into the rows k0+k of work for the next step (this block
// has read its rows of w_{t+1} there): the same products as the passes
// over the rows (mulRows, mulRow), so the same bits.
func wholeRowsBack(i *ISA, acc [][]reg.VecVirtual, cv chunkVecs, o, o2, M8, sk3 reg.Register, k0l, tl Mem) {
	// Ψ_t's rows, work's at work + k0·M8; the scales at (T−tl)·K + k0.
	ps, ps2 := psiRows(i, o, "beta", M8, len(acc))
	w := ldq(k0l)
	IMULQ(M8, w)
	ADDQ(Load(Param("work").Base(), GP64()), w)
	w2 := kaddr2(w, M8, len(acc))
	si := Load(Param("T"), GP64())
	SUBQ(ldq(tl), si)
	IMULQ(Load(Param("K"), GP64()), si)
	ADDQ(ldq(k0l), si)
	sc := Load(Param("scale").Base(), GP64())
	LEAQ(Mem{Base: sc, Index: si, Scale: i.Sc()}, sc)
	for k, row := range acc {
		inv := broadcast(i, inverse(i, Mem{Base: sc, Disp: k * i.Size}))
		for c, a := range row {
			i.VMUL(inv, a, a)
			cv.store(c, a, kaddr(o, o2, M8, sk3, k, c*i.Bytes))
			x := i.Vec()
			cv.load(c, kaddr(ps, ps2, M8, sk3, k, c*i.Bytes), x)
			i.VMUL(a, x, x)
			cv.store(c, x, kaddr(w, w2, M8, sk3, k, c*i.Bytes))
		}
	}
}

// psiRows returns the rows of Ψ (ps, and kaddr's ps2 for kb rows) that
// match the rows at o of the param out (alpha or beta): o − out + psi.
func psiRows(i *ISA, o reg.Register, out string, M8 reg.Register, kb int) (ps, ps2 reg.Register) {
	p := GP64()
	MOVQ(o, p)
	SUBQ(Load(Param(out).Base(), GP64()), p)
	ADDQ(Load(Param("psi").Base(), GP64()), p)
	return p, kaddr2(p, M8, kb)
}
