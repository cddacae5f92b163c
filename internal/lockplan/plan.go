// Package lockplan is what the trainer, the CRF layer and the engine's
// batch calls share about lockstep groups (chains of similar lengths whose
// forward–backward runs together on the matrix–matrix kernels; see
// engine/lockstep.go): how chains are grouped and dealt to workers (Plan,
// Groups), and the two hooks that keep training policy out of package
// engine's and package train's public API: Posteriors (a group's
// forward–backward, for the trainer) and Force (the trainer's path forced,
// for benchmarks).
package lockplan

import (
	"math"
	"slices"
)

// Chains is the most chains a lockstep group holds:
// BenchmarkLockstepChains at M = 1,024 levels off from K = 8 (K = 8, 16, 32
// within noise, K = 2 and 4 two to three times slower); at M = 256 K = 32 was
// the fastest.
const Chains = 32

// Rows caps a group's chains × positions (its four buffers hold
// that many rows of M floats: 40 MB at M = 1,208).
const Rows = 1024

// Groups splits chains of lengths lens into lockstep groups: it
// returns the groups as lists of chain indices, of chains with similar
// lengths (at most maxK of them, at most a quarter of a group's positions
// padding, at most 1,024 chain positions), and lists every chain of
// length 0 or one that fits no group as a group of its own (better run
// alone, with Posteriors). The groups are ordered for Pool.Run on threads
// workers: the costliest first, dealt back and forth over the workers'
// blocks so that each gets a similar share. The result depends only on
// lens, maxK and threads.
func Groups(lens []int, maxK, threads int) [][]int32 {
	var p Plan
	length := func(i int) int { return lens[i] }
	p.Group(len(lens), length, maxK)
	p.Deal(threads, length)
	out := make([][]int32, len(p.units))
	for u, r := range p.units {
		out[u] = append([]int32(nil), p.order[r[0]:r[1]]...)
	}
	return out
}

// Make groups chains of lengths lens as Groups does, into the plan's own
// buffers (no allocation once they have grown), and returns the number of
// units (groups and chains alone), ordered for Pool.Run on threads
// workers.
func (p *Plan) Make(lens []int32, maxK, threads int) int {
	length := func(i int) int { return int(lens[i]) }
	p.Group(len(lens), length, maxK)
	p.Deal(threads, length)
	return len(p.units)
}

// Len returns the number of units.
func (p *Plan) Len() int { return len(p.units) }

// Unit returns the chain indices of unit u (valid until the next Make or
// Group); a unit of one chain runs alone.
func (p *Plan) Unit(u int) []int32 {
	r := p.units[u]
	return p.order[r[0]:r[1]]
}

// Plan is a grouping of chains: unit u is the chains
// order[units[u][0]:units[u][1]].
type Plan struct {
	keys  []uint64
	order []int32
	units [][2]int32
	tmp   [][2]int32
	rank  []uint64
	fill  []int
}

// Group groups n chains (at most maxK a group); length(i) is chain i's
// length, or −1 if it must run alone. Groups come first, in order of
// length, then the chains alone.
func (p *Plan) Group(n int, length func(i int) int, maxK int) {
	p.keys, p.order, p.units = p.keys[:0], p.order[:0], p.units[:0]
	for i := range n {
		if L := length(i); L > 0 {
			p.keys = append(p.keys, uint64(L)<<32|uint64(i))
		}
	}
	slices.Sort(p.keys)
	maxK = max(maxK, 1)
	for s := 0; s < len(p.keys); {
		sum := int(p.keys[s] >> 32)
		e := s + 1
		for ; e < len(p.keys) && e-s < maxK; e++ {
			L := int(p.keys[e] >> 32)
			rows := (e - s + 1) * L
			if rows > Rows || 4*rows > 5*(sum+L) {
				break
			}
			sum += L
		}
		u := [2]int32{int32(len(p.order)), 0}
		for _, key := range p.keys[s:e] {
			p.order = append(p.order, int32(key&(1<<32-1)))
		}
		u[1] = int32(len(p.order))
		p.units = append(p.units, u)
		s = e
	}
	for i := range n {
		if length(i) <= 0 {
			p.order = append(p.order, int32(i))
			p.units = append(p.units, [2]int32{int32(len(p.order) - 1), int32(len(p.order))})
		}
	}
}

// unitCost estimates a unit's work: a group's chains × longest length; a
// chain alone costs four times its length (the single-chain step is that
// much slower at large M).
func (p *Plan) unitCost(u [2]int32, length func(i int) int) uint64 {
	k := uint64(u[1] - u[0])
	longest := 0
	for _, c := range p.order[u[0]:u[1]] {
		longest = max(longest, length(int(c)))
	}
	if k == 1 {
		return 4 * uint64(longest)
	}
	return k * uint64(longest)
}

// Deal orders the units for Pool.Run on W workers, which hands worker w
// the block [w·n/W, (w+1)·n/W): the costliest first, dealt back and forth
// over the workers' blocks (which keep their sizes), so that each block
// gets a similar share of the work. The order depends only on the plan.
func (p *Plan) Deal(W int, length func(i int) int) {
	n := len(p.units)
	if W <= 1 || n <= 1 {
		return
	}
	// Decreasing cost, ties in unit order: sort (^cost, unit) keys.
	p.rank = slices.Grow(p.rank[:0], n)[:n]
	for u, r := range p.units {
		c := min(p.unitCost(r, length), math.MaxUint32)
		p.rank[u] = uint64(math.MaxUint32-c)<<32 | uint64(u)
	}
	slices.Sort(p.rank)
	p.fill = slices.Grow(p.fill[:0], W)[:W]
	clear(p.fill)
	p.tmp = slices.Grow(p.tmp[:0], n)[:n]
	pos, dir := 0, 1
	for _, key := range p.rank {
		for {
			lo, hi := pos*n/W, (pos+1)*n/W
			if lo+p.fill[pos] < hi {
				p.tmp[lo+p.fill[pos]] = p.units[key&(1<<32-1)]
				p.fill[pos]++
				break
			}
			pos, dir = step(pos, dir, W)
		}
		pos, dir = step(pos, dir, W)
	}
	copy(p.units, p.tmp)
}

// step moves back and forth over 0..W−1 (0, 1, …, W−1, W−1, …, 0, 0, …).
func step(pos, dir, W int) (int, int) {
	pos += dir
	if pos == W {
		return W - 1, -1
	}
	if pos < 0 {
		return 0, 1
	}
	return pos, dir
}

var posteriors any // set by package engine

// RegisterPosteriors is package engine's: f runs a group of chains without
// options in lockstep (Transitions.posteriorsLockstep).
func RegisterPosteriors[T, W any](f func(tr T, ws W, emits, marg [][]float64, logZ, trans, start, end []float64) (int, error)) {
	posteriors = f
}

// Posteriors runs forward–backward over the chains emits (T_k×M each) of
// tr (an *engine.Transitions) at once in ws (an *engine.Workspace): log Z
// of each into logZ[k], its marginals into marg[k] (if marg and marg[k] are
// not nil), the expected transition, start and end counts summed over the
// chains ADDED to trans, start and end (each may be nil). It returns the
// index of the chain that failed and its error, or −1.
func Posteriors[T, W any](tr T, ws W, emits, marg [][]float64, logZ, trans, start, end []float64) (int, error) {
	f := posteriors.(func(T, W, [][]float64, [][]float64, []float64, []float64, []float64, []float64) (int, error))
	return f(tr, ws, emits, marg, logZ, trans, start, end)
}

var force any // set by package train

// RegisterForce is package train's: f sets a Config's lockstep mode.
func RegisterForce[C any](f func(cfg *C, mode string)) { force = f }

// Force sets cfg's (a *train.Config) lockstep mode: "always" plans
// lockstep groups at any M, "never" runs one sequence at a time, "" and
// "auto" keep the trainer's choice; train refuses any other. Only
// benchmarks (bench/trainbench's scaling suite plots both paths at every
// M) and tests set it; results agree up to rounding.
func Force[C any](cfg *C, mode string) { force.(func(*C, string))(cfg, mode) }
