package isa

// Vector exp and log, emitted inline so that any kernel can use them: the
// elementwise Exp/Log kernels and the log-domain forward step (LogMatVec)
// share these emitters.
//
// Both work on one vector register of the tier's width. Their constants come
// from a Consts set: each constant is either kept in a register (Load) or
// read from memory as a full-width vector operand (replicated data, declared
// once per generated file), so that a kernel with few free registers (AVX2)
// can still inline them.

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ExpMin and ExpMax mirror kernels.ExpMin/ExpMax: below ExpMin the vector
// exp flushes to +0, above ExpMax it gives +Inf.
const (
	ExpMin = -708.3964185322641
	ExpMax = 709.782712893384
)

// ExpDegree is the degree of the polynomial for exp(r), |r| ≤ ln2/2: a
// Chebyshev fit (mpmath.chebyfit at 120 bits on [−ln2/2, ln2/2]·1.0001)
// whose error with the coefficients rounded to float64 is 1.6e-17 relative
// (0.075 ulp); c0 and c1 round to exactly 1, so exp(0) = 1 exactly. (A Taylor
// polynomial needs degree 13 for the same accuracy.)
const ExpDegree = 11

var expPoly = [ExpDegree + 1]float64{1.0, 1.0, 0.5000000000000019, 0.1666666666666668,
	0.04166666666648795, 0.008333333333319589, 0.0013888888952352863, 0.00019841269890076403,
	2.4801485441561313e-05, 2.755724088722987e-06, 2.763265472252779e-07, 2.5110049204818658e-08}

// fdlibm's constants (Go's math/log.go), shared by exp and log.
const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000: trailing zeros, so k·ln2Hi is exact for |k| < 2^20
	ln2Lo = 1.90821492927058770002e-10 // ln2 − ln2Hi
	logL1 = 6.666666666666735130e-01
	logL2 = 3.999999999940941908e-01
	logL3 = 2.857142874366239149e-01
	logL4 = 2.222219843214978396e-01
	logL5 = 1.818357216161805012e-01
	logL6 = 1.531383769920937332e-01
	logL7 = 1.479819860511658591e-01
)

// constBits lists every named constant the emitters can use, as float64 bit
// patterns.
var constBits = func() map[string]uint64 {
	f := math.Float64bits
	m := map[string]uint64{
		"log2e":   f(math.Log2E),
		"shift":   f(0x1.8p52), // adding it rounds to an integer kept in the low mantissa bits
		"ln2hi":   f(ln2Hi),
		"ln2lo":   f(ln2Lo),
		"expmin":  f(ExpMin),
		"expmax":  f(ExpMax),
		"inf":     f(math.Inf(1)),
		"neginf":  f(math.Inf(-1)),
		"nan":     0x7ff8000000000000,
		"zero":    0,
		"one":     f(1),
		"two":     f(2),
		"half":    f(0.5),
		"absmask": 0x7fffffffffffffff,
		// log: subnormal pre-scale
		"two54":    f(0x1p54),
		"k54":      f(54),
		"smallest": 0x0010000000000000, // 2^-1022, the smallest normal
		// log: u = bits(x) + logoff has exponent field k+1023 where
		// x = 2^k·m, m ∈ [√½, √2); m's bits are (u & lomask) + bits(√½).
		"logoff":   0x3ff0000000000000 - 0x3fe6a09e667f3bcd,
		"lomask":   0x000fffffffffffff,
		"sqrthalf": 0x3fe6a09e667f3bcd,
		// log: the integer e in [0, 2047] or'd into 2^52's bits is 2^52+e.
		"kmagic": 0x4330000000000000,
		"kbias":  f(0x1p52 + 1023),
		"L1":     f(logL1), "L2": f(logL2), "L3": f(logL3), "L4": f(logL4),
		"L5": f(logL5), "L6": f(logL6), "L7": f(logL7),
	}
	for k, c := range expPoly {
		m[ExpCoef(k)] = f(c)
	}
	return m
}()

// The float32 exp (Exp32): the same method with float32 constants. |r| ≤
// ln2/2 needs degree 7 of exp's Taylor series for 0.09 ulp of float32
// (r^8/8! ≤ 5.3e-9); ln2Hi32 has 9 significant bits, so n·ln2Hi32 is
// exact for |n| < 2^15.
const (
	ExpDegree32 = 7
	ln2Hi32     = 0.693359375
	ln2Lo32     = math.Ln2 - ln2Hi32
	// ExpMin32/ExpMax32 mirror kernels.ExpMin32/ExpMax32.
	ExpMin32 = -87.33654475055310898657
	ExpMax32 = 88.72283905206835
)

// constBits32 is constBits for the float32 kernels, as float32 bit patterns.
var constBits32 = func() map[string]uint32 {
	f := math.Float32bits
	// The range limits rounded inwards to float32, so that comparing a
	// float32 x with them is comparing it with the exact limits.
	expmin := float32(ExpMin32)
	if float64(expmin) < ExpMin32 {
		expmin = math.Nextafter32(expmin, 0)
	}
	expmax := float32(ExpMax32)
	if float64(expmax) > ExpMax32 {
		expmax = math.Nextafter32(expmax, 0)
	}
	m := map[string]uint32{
		"log2e":  f(math.Log2E),
		"shift":  f(0x1.8p23),
		"ln2hi":  f(ln2Hi32),
		"ln2lo":  f(float32(ln2Lo32)),
		"expmin": f(expmin),
		"expmax": f(expmax),
		"inf":    f(float32(math.Inf(1))),
	}
	fact := 1.0
	for k := 0; k <= ExpDegree32; k++ {
		if k > 0 {
			fact *= float64(k)
		}
		m[ExpCoef(k)] = f(float32(1 / fact))
	}
	return m
}()

// ExpCoef names the constant c_k of the exp polynomial.
func ExpCoef(k int) string { return fmt.Sprintf("expc%d", k) }

// ExpConstNames lists the constants ExpPD reads, most used first (a kernel
// with spare registers loads a prefix of this list).
func (i *ISA) ExpConstNames() []string {
	n := []string{"log2e", "shift", "ln2hi", "ln2lo", "expmin"}
	for k := i.expDegree(); k >= 0; k-- {
		n = append(n, ExpCoef(k))
	}
	return append(n, "expmax", "inf")
}

// LogConstNames lists the constants LogPD reads.
func LogConstNames() []string {
	return []string{"logoff", "lomask", "sqrthalf", "kmagic", "kbias", "one", "two", "half",
		"L1", "L2", "L3", "L4", "L5", "L6", "L7", "ln2hi", "ln2lo",
		"two54", "k54", "smallest", "zero", "neginf", "nan", "inf"}
}

var vecData = map[string]Mem{}

// vecConst returns the memory operand of a named constant replicated to 64
// bytes (a full vector for both tiers), declared once per file.
func (i *ISA) vecConst(name string) Mem {
	key, sym := name, "ve_"+name
	if i.F32() {
		key, sym = "32_"+name, "ve32_"+name
	}
	if m, ok := vecData[key]; ok {
		return m
	}
	var b Constant
	if i.F32() {
		b32, ok := constBits32[name]
		if !ok {
			panic("isa: unknown float32 vector constant " + name)
		}
		b = U32(b32)
	} else {
		b64, ok := constBits[name]
		if !ok {
			panic("isa: unknown vector constant " + name)
		}
		b = U64(b64)
	}
	m := GLOBL(sym, RODATA|NOPTR)
	for k := 0; k < 64/i.Size; k++ {
		DATA(i.Size*k, b)
	}
	vecData[key] = m
	return m
}

// Consts is the set of vector constants a function's exp/log code reads.
type Consts struct {
	i    *ISA
	regs map[string]reg.VecVirtual
}

// NewConsts starts a constant set for the function being written.
func (i *ISA) NewConsts() *Consts { return &Consts{i: i, regs: map[string]reg.VecVirtual{}} }

// Load keeps the named constants in registers from here on (emit it before
// the loops that use them).
func (c *Consts) Load(names ...string) {
	for _, n := range names {
		if _, ok := c.regs[n]; ok {
			continue
		}
		v := c.i.Vec()
		c.i.Mov(c.i.vecConst(n), v)
		c.regs[n] = v
	}
}

// Op returns a constant as an operand: its register if loaded, otherwise a
// full-width memory operand.
func (c *Consts) Op(name string) Op {
	if v, ok := c.regs[name]; ok {
		return v
	}
	return c.i.vecConst(name)
}

// Mov copies a register or a (full-width, unaligned) memory operand into dst.
func (i *ISA) Mov(src Op, dst reg.VecVirtual) {
	if _, ok := src.(Mem); ok {
		VMOVUPD(src, dst)
		return
	}
	VMOVAPD(src, dst)
}

// Integer ops: the VEX forms have no zmm encoding, the EVEX ones need the Q
// suffix.
func (i *ISA) pand(a, b Op, dst reg.VecVirtual) {
	if i.Is512() {
		VPANDQ(a, b, dst)
		return
	}
	VPAND(a, b, dst)
}

func (i *ISA) por(a, b Op, dst reg.VecVirtual) {
	if i.Is512() {
		VPORQ(a, b, dst)
		return
	}
	VPOR(a, b, dst)
}

// Select sets dst = cmp(x, c) ? val : dst lane by lane, where cmp is a
// VCMPPD predicate (x is compared as the first operand, c may be memory).
// tmp-free on AVX-512 (opmask), one scratch vector on AVX2.
func (i *ISA) Select(pred uint8, x reg.VecVirtual, c, val Op, dst reg.VecVirtual) {
	if i.Is512() {
		k := K()
		i.VCMP(U8(pred), c, x, k)
		if _, ok := val.(Mem); ok {
			i.VMOVU(val, k, dst)
		} else {
			i.VMOVA(val, k, dst)
		}
		return
	}
	m := YMM()
	i.VCMP(U8(pred), c, x, m)
	i.VBLENDV(m, val, dst, dst)
}

// Keep zeroes the lanes of dst where cmp(x, c) is false.
func (i *ISA) Keep(pred uint8, x reg.VecVirtual, c Op, dst reg.VecVirtual) {
	if i.Is512() {
		k := K()
		i.VCMP(U8(pred), c, x, k)
		if i.F32() {
			VMOVAPS_Z(dst, k, dst)
		} else {
			VMOVAPD_Z(dst, k, dst)
		}
		return
	}
	m := YMM()
	i.VCMP(U8(pred), c, x, m)
	VANDPD(m, dst, dst)
}

// VCMPPD predicates.
const (
	CmpEQ    = 0x00 // EQ_OQ
	CmpLT    = 0x01 // LT_OS
	CmpUnord = 0x03
	CmpNLT   = 0x05 // NLT_US: true for ≥ and for NaN
	CmpGE    = 0x0d // GE_OS: false for NaN
	CmpGT    = 0x0e // GT_OS
)

// ExpMode says which inputs an inlined exp must handle.
type ExpMode int

const (
	// ExpFull handles every input: x < ExpMin → +0 (so -Inf → +0),
	// x > ExpMax → +Inf, NaN → NaN.
	ExpFull ExpMode = iota
	// ExpNonPos is for x ≤ 0, -Inf or NaN (the shifted terms of a
	// log-sum-exp): it skips the overflow test.
	ExpNonPos
)

// ExpPD sets dst = exp(x) lane by lane (x is left unchanged; dst ≠ x), within
// 2 ulp of math.Exp where the result is normal.
//
// Method: n = round(x·log2e) by the shift trick (z = x·log2e + 1.5·2^52 keeps
// n in its low mantissa bits), r = x − n·ln2 in two FMA steps (Cody–Waite,
// exact first step), exp(r) by a degree-11 polynomial in Horner form with
// FMA, then 2^n applied by adding n<<52 to the bits of the result, which
// is exact while the result is normal: for ExpMin ≤ x ≤ ExpMax,
// −1022 ≤ n ≤ 1024 and the biased exponent stays within [1, 2046] (ExpMin
// lies 2.7e-14 above −1022·ln2, so r > 0 and p ≥ 1 when n = −1022; ExpMax
// lies 2.4e-14 below 1024·ln2, so p < 1 when n = 1024). Out-of-range lanes
// compute garbage (never subnormal arithmetic) that the final selects
// replace.
//
// For float32 (Exp32) the same code runs with float32 constants: shift
// 1.5·2^23, a degree-7 polynomial, 2^n added as n<<23 to 32-bit lanes; the
// limits are ExpMin32/ExpMax32 rounded inwards to float32, and ExpMin32 lies
// less than one float32 spacing (7.6e-6) above −126·ln2, ExpMax32 below
// 128·ln2, so the same argument keeps the biased exponent in [1, 254].
func (i *ISA) ExpPD(c *Consts, mode ExpMode, x, dst reg.VecVirtual) {
	fnmadd231, fmadd213 := VFNMADD231PD, VFMADD213PD
	if i.F32() {
		fnmadd231, fmadd213 = VFNMADD231PS, VFMADD213PS
	}
	z, n, r := i.Vec(), i.Vec(), i.Vec()
	i.Mov(c.Op("shift"), z)
	i.VFMADD231(c.Op("log2e"), x, z) // z = x·log2e + shift
	i.VSUB(c.Op("shift"), z, n)      // n = z − shift, an integer
	i.Mov(x, r)
	fnmadd231(c.Op("ln2hi"), n, r) // r = x − n·ln2hi (exact)
	fnmadd231(c.Op("ln2lo"), n, r) // r −= n·ln2lo
	p := dst
	deg := i.expDegree()
	i.Mov(c.Op(ExpCoef(deg-1)), p)
	i.VFMADD231(c.Op(ExpCoef(deg)), r, p)
	for k := deg - 2; k >= 0; k-- {
		fmadd213(c.Op(ExpCoef(k)), r, p) // p = p·r + c_k
	}
	if i.F32() {
		VPSLLD(U8(23), z, z) // n<<23: the low mantissa bits of z hold n mod 2^9
		VPADDD(z, p, p)
	} else {
		VPSLLQ(U8(52), z, z) // n<<52 (mod 2^64): the low mantissa bits of z hold n mod 2^12
		VPADDQ(z, p, p)
	}
	i.Keep(CmpGE, x, c.Op("expmin"), p) // x < ExpMin, -Inf, NaN → 0
	if mode == ExpFull {
		i.Select(CmpGT, x, c.Op("expmax"), c.Op("inf"), p)
	}
	// NaN → x: VMAXPD returns its second source (x) when either is NaN; for
	// other lanes p ≥ 0 > x or p = exp(x) > x, so p is kept.
	i.VMAX(x, p, p)
}

func (i *ISA) expDegree() int {
	if i.F32() {
		return ExpDegree32
	}
	return ExpDegree
}

// LogMode says which inputs an inlined log must handle.
type LogMode int

const (
	// LogFull handles every input: subnormals, ±0 → -Inf, x < 0 → NaN,
	// +Inf → +Inf, NaN → NaN.
	LogFull LogMode = iota
	// LogNormal is for inputs that are positive normal finite numbers or
	// NaN (NaN → NaN), such as a log-sum-exp's sum ∈ [1, M].
	LogNormal
)

// LogPD sets dst = log(x) lane by lane (x is left unchanged; dst ≠ x), within
// 1 ulp or so of math.Log: the reduction is fdlibm's (as Go's math/log.go),
// done with integer operations on the bits.
//
// x = 2^k·m with m ∈ [√½, √2): u = bits(x) + (bits(1) − bits(√½)) has k+1023
// in its exponent field and m's bits are (u & 2^52−1) + bits(√½). k becomes a
// float by or-ing it into 2^52's mantissa (AVX2 has no int64→double
// conversion). Subnormal x are first scaled by 2^54 (k −= 54). Then with
// f = m − 1 (exact), s = f/(2+f):
//
//	log(x) = k·ln2hi − ((hfsq − (s·(hfsq+R) + k·ln2lo)) − f),  hfsq = f²/2
//
// where R is fdlibm's L1..L7 polynomial in s².
func (i *ISA) LogPD(c *Consts, mode LogMode, x, dst reg.VecVirtual) {
	xs := x
	var kadj reg.VecVirtual
	if mode == LogFull {
		// Subnormal lanes: xs = x·2^54, kadj = 54; others xs = x, kadj = 0.
		xs, kadj = i.Vec(), i.Vec()
		if i.Is512() {
			k := K()
			VCMPPD(U8(CmpLT), c.Op("smallest"), x, k)
			VMOVAPD(x, xs)
			VMULPD(c.Op("two54"), x, k, xs)
			if _, ok := c.Op("k54").(Mem); ok {
				VMOVUPD_Z(c.Op("k54"), k, kadj)
			} else {
				VMOVAPD_Z(c.Op("k54"), k, kadj)
			}
		} else {
			m := YMM()
			VCMPPD(U8(CmpLT), c.Op("smallest"), x, m)
			VMULPD(c.Op("two54"), x, xs)
			VBLENDVPD(m, xs, x, xs)
			VANDPD(c.Op("k54"), m, kadj)
		}
	}
	u, kf, f := i.Vec(), i.Vec(), i.Vec()
	VPADDQ(c.Op("logoff"), xs, u)
	VPSRLQ(U8(52), u, kf)         // k + 1023 ∈ [0, 2047]
	i.por(c.Op("kmagic"), kf, kf) // 2^52 + k + 1023 as a float
	VSUBPD(c.Op("kbias"), kf, kf) // k (exact)
	if mode == LogFull {
		VSUBPD(kadj, kf, kf)
	}
	i.pand(c.Op("lomask"), u, f)
	VPADDQ(c.Op("sqrthalf"), f, f) // m ∈ [√½, √2)
	VSUBPD(c.Op("one"), f, f)      // f = m − 1, exact
	s, t := i.Vec(), i.Vec()
	VADDPD(c.Op("two"), f, t)
	VDIVPD(t, f, s) // s = f/(2+f)
	s2, s4 := i.Vec(), i.Vec()
	VMULPD(s, s, s2)
	VMULPD(s2, s2, s4)
	t1, t2 := i.Vec(), t
	i.Mov(c.Op("L5"), t1)
	VFMADD231PD(c.Op("L7"), s4, t1)
	VFMADD213PD(c.Op("L3"), s4, t1)
	VFMADD213PD(c.Op("L1"), s4, t1)
	VMULPD(s2, t1, t1) // t1 = s²·(L1 + s⁴·(L3 + s⁴·(L5 + s⁴·L7)))
	i.Mov(c.Op("L4"), t2)
	VFMADD231PD(c.Op("L6"), s4, t2)
	VFMADD213PD(c.Op("L2"), s4, t2)
	VMULPD(s4, t2, t2) // t2 = s⁴·(L2 + s⁴·(L4 + s⁴·L6))
	VADDPD(t2, t1, t1) // R
	h := dst
	VMULPD(f, f, h)
	VMULPD(c.Op("half"), h, h) // hfsq
	VADDPD(h, t1, t1)          // hfsq + R
	b := t2
	VMULPD(c.Op("ln2lo"), kf, b)
	VFMADD231PD(t1, s, b)             // s·(hfsq+R) + k·ln2lo
	VSUBPD(b, h, h)                   // hfsq − that
	VSUBPD(f, h, h)                   // − f
	VFMSUB231PD(c.Op("ln2hi"), kf, h) // k·ln2hi − that
	if mode == LogFull {
		i.Select(CmpEQ, x, c.Op("zero"), c.Op("neginf"), h) // ±0 → -Inf
		i.Select(CmpLT, x, c.Op("zero"), c.Op("nan"), h)    // x < 0 → NaN
		i.Select(CmpNLT, x, c.Op("inf"), x, h)              // +Inf, NaN → x
	} else {
		i.Select(CmpUnord, x, x, x, h)
	}
}
