package kernels

import (
	"fmt"
	"os"
	"sync/atomic"
)

// EnvVar names the environment variable that forces an implementation.
const EnvVar = "SIMDCRF_KERNELS"

// impl is one implementation of every kernel: a table per architecture
// (dispatch_amd64.go, dispatch_arm64.go) fills every field, naming the
// generic function where a tier has no kernel of its own
// (TestTiersComplete checks that none is nil or generic unexpectedly).
type impl struct {
	name      string
	available bool   // the CPU can run it
	needs     string // what the CPU must have (said when it has not)

	exp, log      func(dst, src []float64)
	forward       func(alpha, scale, psi, e []float64, T, M int)
	backward      func(beta, scale, psi, et []float64, T, M int)
	forwardBatch  func(alpha, scale, psi, e []float64, from []int32, T, K, M int)
	backwardBatch func(beta, scale, psi, et, work []float64, from []int32, T, K, M int)
	transitions   func(g, e, alpha, beta, psi, scale, work []float64, T, M int)
	// backwardTransitions: Backward then Transitions, fused where a tier
	// has the kernel (backwardTransitionsOf where not).
	backwardTransitions func(g, e, alpha, beta, psi, scale, et, work []float64, T, M int)
	shiftRows           func(out, mx, lo, in, a []float64, T, M int)
	logMatVec           func(out, a, tr []float64, M int)
	viterbi             func(delta []float64, bp []int32, s, tr []float64, T, M int)
	viterbiMax          func(delta []float64, s, tr []float64, T, M int)
	gather              func(s, w []float64, ld int, ptr, ids []int32, vals []float64, T, M int)
	scatter             func(g []float64, ld int, p []float64, ptr, ids []int32, vals []float64, c float64, T, M int)
	dot                 func(x, y []float64) float64
	axpy                func(a float64, x, y []float64)
	scale               func(a float64, x []float64)
	mul                 func(dst, x, y []float64, a float64)
	axpyWiden           func(a float64, x []float32, y []float64)
	spmv                func(y, x []float64, ptr, idx []int32, v []float64)
	gatherMulAdd        func(q, x []float64, xi []int32, y []float64, yi []int32)
	maxPlusCSR          func(y []float64, arg []int32, x []float64, ptr, idx []int32, v []float64)
	byteMasks           func(a, b []uint64, src []byte, ca, cb1, cb2 byte)
	selectGE            func(dst []int32, x []float64, bound float64) int // select.go
	selectSumGE         func(dst []int32, x, y []float64, bound float64) int
	max                 func(x []float64) float64

	// float32 kernels (kernels32.go)
	exp32                 func(dst, src []float32)
	forward32             func(alpha, scale, psi, e []float32, T, M int)
	forwardBatch32        func(alpha, scale, psi, e []float32, from []int32, T, K, M int)
	backwardBatch32       func(beta, scale, psi, et, work []float32, from []int32, T, K, M int)
	backward32            func(beta, scale, psi, et []float32, T, M int)
	transitions32         func(g, e, alpha, beta, psi, scale, work []float32, T, M int)
	backwardTransitions32 func(g, e, alpha, beta, psi, scale, et, work []float32, T, M int)
	shiftRows32           func(out, mx, lo, in, a []float32, T, M int)
	viterbi32             func(delta []float32, bp []int32, s, tr []float32, T, M int)
	viterbiMax32          func(delta []float32, s, tr []float32, T, M int)
	gather32              func(s, w []float32, ld int, ptr, ids []int32, vals []float32, T, M int)
	scatter32             func(g []float32, ld int, p []float32, ptr, ids []int32, vals []float32, c float32, T, M int)
	dot32                 func(x, y []float32) float64
	axpy32                func(a float32, x, y []float32)
	scale32               func(a float32, x []float32)
	mul32                 func(dst, x, y []float32, a float32)
	selectGE32            func(dst []int32, x []float32, bound float32) int
	selectSumGE32         func(dst []int32, x, y []float32, bound float32) int
	max32                 func(x []float32) float32

	// vectorMaxPlus: maxPlusCSR is a vector kernel (MaxPlusCSRVector).
	vectorMaxPlus bool

	fmaPeak   func(n int) float64 // FMA throughput probe (benchmarks only; nil in generic)
	peakFlops int                 // flops per fmaPeak iteration
}

var generic = &impl{
	name:                "generic",
	available:           true,
	exp:                 expGeneric,
	log:                 logGeneric,
	forward:             forwardGeneric[float64],
	backward:            backwardGeneric[float64],
	forwardBatch:        forwardBatchGeneric[float64],
	backwardBatch:       backwardBatchGeneric[float64],
	transitions:         transitionsGeneric[float64],
	backwardTransitions: backwardTransitionsOf(backwardGeneric[float64], transitionsGeneric[float64]),
	shiftRows:           shiftRowsGeneric[float64],
	logMatVec:           logMatVecGeneric,
	viterbi:             viterbiGeneric[float64],
	viterbiMax:          viterbiMaxGeneric[float64],
	gather:              gatherGeneric[float64],
	scatter:             scatterGeneric[float64],
	dot:                 dotGeneric[float64],
	axpy:                axpyGeneric[float64],
	scale:               scaleGeneric[float64],
	mul:                 mulGeneric[float64],
	axpyWiden:           axpyWidenGeneric,
	spmv:                spmvGeneric,
	gatherMulAdd:        gatherMulAddGeneric,
	maxPlusCSR:          maxPlusCSRGeneric,
	byteMasks:           byteMasksGeneric,
	selectGE:            selectGEGeneric[float64],
	selectSumGE:         selectSumGEGeneric[float64],
	max:                 maxGeneric[float64],

	exp32:                 exp32Generic,
	forward32:             forwardGeneric[float32],
	forwardBatch32:        forwardBatchGeneric[float32],
	backwardBatch32:       backwardBatchGeneric[float32],
	backward32:            backwardGeneric[float32],
	transitions32:         transitionsGeneric[float32],
	backwardTransitions32: backwardTransitionsOf(backwardGeneric[float32], transitionsGeneric[float32]),
	shiftRows32:           shiftRowsGeneric[float32],
	viterbi32:             viterbiGeneric[float32],
	viterbiMax32:          viterbiMaxGeneric[float32],
	gather32:              gatherGeneric[float32],
	scatter32:             scatterGeneric[float32],
	dot32:                 dotGeneric[float32],
	axpy32:                axpyGeneric[float32],
	scale32:               scaleGeneric[float32],
	mul32:                 mulGeneric[float32],
	selectGE32:            selectGEGeneric[float32],
	selectSumGE32:         selectSumGEGeneric[float32],
	max32:                 maxGeneric[float32],
}

var (
	// all lists every implementation compiled in, in order of preference
	// (worst first); unavailable ones are kept so that tools can say why.
	all    []*impl
	active atomic.Pointer[impl]
	note   string
)

func init() {
	all = append([]*impl{generic}, platformImpls()...)
	best := generic
	for _, p := range all {
		if p.available {
			best = p
		}
	}
	if req := os.Getenv(EnvVar); req != "" {
		p := lookup(req)
		switch {
		case p == nil:
			note = fmt.Sprintf("%s=%q names no implementation in this build; using %s", EnvVar, req, best.name)
		case !p.available:
			note = fmt.Sprintf("%s=%q is not supported by this CPU; using %s", EnvVar, req, best.name)
		default:
			best = p
		}
	}
	active.Store(best)
}

func cur() *impl { return active.Load() }

func lookup(name string) *impl {
	for _, p := range all {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Impl returns the name of the implementation in use: "generic", "avx2",
// "avx512" or "neon".
func Impl() string { return cur().name }

// Impls returns the names of the implementations this CPU and build can run,
// generic first.
func Impls() []string {
	var names []string
	for _, p := range all {
		if p.available {
			names = append(names, p.name)
		}
	}
	return names
}

// Compiled returns the names of all implementations in this build, whether or
// not the CPU can run them.
func Compiled() []string {
	var names []string
	for _, p := range all {
		names = append(names, p.name)
	}
	return names
}

// Note explains why the implementation requested through SIMDCRF_KERNELS was
// not used; it is empty when the request was honoured or there was none.
func Note() string { return note }

// Use switches every kernel to the named implementation and returns a function
// that restores the previous one. It is meant for tests and benchmarks; the
// switch is atomic, but calls already running finish with the old one.
func Use(name string) (restore func(), err error) {
	p := lookup(name)
	if p == nil {
		return nil, fmt.Errorf("kernels: no implementation %q in this build (have %v)", name, Compiled())
	}
	if !p.available {
		return nil, fmt.Errorf("kernels: implementation %q is not supported by this CPU", name)
	}
	old := active.Swap(p)
	return func() { active.Store(old) }, nil
}

// FMAProbe runs n iterations of the active tier's FMA throughput probe (many
// independent vector FMAs, the most arithmetic a core can do) and returns the
// floating-point operations it did, or 0 if the tier has no probe. Benchmarks
// divide by the elapsed time to measure the core's peak.
func FMAProbe(n int) float64 {
	p := cur()
	if p.fmaPeak == nil {
		return 0
	}
	p.fmaPeak(n)
	return float64(n) * float64(p.peakFlops)
}
