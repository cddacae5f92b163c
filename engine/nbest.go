package engine

import (
	"fmt"
	"math"
)

// nbestBuf holds the k-best lattice: for position t, label j and rank r,
// the score of the r-th best partial labelling ending in j at t, and where it
// came from (previous label and rank).
type nbestBuf struct {
	score        []float64 // T×M×k
	prevI, prevR []int32   // T×M×k
	count        []int32   // T×M: how many ranks are filled
	heap         []cand
}

type cand struct {
	score float64
	i, r  int32
}

// better orders candidates: higher score first, then lower label, then lower
// rank, so that results are deterministic with ties.
func (a cand) better(b cand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.i != b.i {
		return a.i < b.i
	}
	return a.r < b.r
}

// NBest finds the k best labellings of a chain (restricted by c if not nil),
// exactly and in order of decreasing score. Exact ties come in a fixed
// order: by last label, then the one before, and so on, lowest first, so the
// first labelling is the one Viterbi returns. It writes up to k of them to
// paths (each of len T) and their scores to scores, and returns how many it
// found: fewer than k when fewer labellings are possible.
func (tr *Transitions) NBest(ws *Workspace, emit []float64, c *ChainOptions, paths [][]int32, scores []float64) (int, error) {
	T, err := tr.chainLen(emit)
	if err != nil {
		return 0, err
	}
	k := len(paths)
	if len(scores) < k {
		return 0, fmt.Errorf("engine: room for %d scores, %d paths", len(scores), k)
	}
	for _, p := range paths {
		if len(p) != T {
			return 0, fmt.Errorf("engine: a path has room for %d labels, chain has %d positions", len(p), T)
		}
	}
	if err := c.check(T, tr.m); err != nil {
		return 0, err
	}
	if k == 0 {
		return 0, nil
	}
	if T == 0 {
		scores[0] = 0
		return 1, nil
	}
	M := tr.m
	ws.grow(T, M)
	if err := tr.logScores(ws, emit, T, c, false); err != nil {
		return 0, err
	}
	nb := &ws.nb
	nb.score = grow(nb.score, T*M*k)
	nb.prevI = grow(nb.prevI, T*M*k)
	nb.prevR = grow(nb.prevR, T*M*k)
	nb.count = grow(nb.count, T*M)
	s := ws.s
	for j := range M {
		nb.score[j*k] = s[j]
		nb.count[j] = 1
		if math.IsInf(s[j], -1) {
			nb.count[j] = 0
		}
	}
	ws.opts = c
	for t := 1; t < T; t++ {
		S := ws.transAt(tr, t, false)
		for j := range M {
			// Merge the sorted lists of the previous position, one per
			// previous label i, each shifted by score[i][j].
			nb.heap = nb.heap[:0]
			for i := range M {
				prev := (t-1)*M + i
				if nb.count[prev] == 0 {
					continue
				}
				v := nb.score[prev*k] + S[i*M+j]
				if !math.IsInf(v, -1) {
					nb.push(cand{v, int32(i), 0})
				}
			}
			cell := t*M + j
			n := int32(0)
			for n < int32(k) && len(nb.heap) > 0 {
				top := nb.pop()
				at := int(cell)*k + int(n)
				nb.score[at] = top.score + s[t*M+j]
				nb.prevI[at], nb.prevR[at] = top.i, top.r
				n++
				prev := (t-1)*M + int(top.i)
				if next := top.r + 1; next < nb.count[prev] {
					nb.push(cand{nb.score[prev*k+int(next)] + S[int(top.i)*M+j], top.i, next})
				}
			}
			if math.IsInf(s[t*M+j], -1) {
				n = 0
			}
			nb.count[cell] = n
		}
	}
	// The best k over the last position's lists.
	nb.heap = nb.heap[:0]
	last := (T - 1) * M
	for j := range M {
		if nb.count[last+j] > 0 {
			nb.push(cand{nb.score[(last+j)*k], int32(j), 0})
		}
	}
	found := 0
	for found < k && len(nb.heap) > 0 {
		top := nb.pop()
		scores[found] = top.score
		j, r := top.i, top.r
		p := paths[found]
		for t := T - 1; t >= 0; t-- {
			p[t] = j
			at := ((t*M)+int(j))*k + int(r)
			j, r = nb.prevI[at], nb.prevR[at]
		}
		found++
		if next := top.r + 1; next < nb.count[last+int(top.i)] {
			nb.push(cand{nb.score[(last+int(top.i))*k+int(next)], top.i, next})
		}
	}
	if found == 0 {
		return 0, ErrNoLabelling
	}
	return found, nil
}

func (nb *nbestBuf) push(c cand) {
	h := append(nb.heap, c)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].better(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	nb.heap = h
}

func (nb *nbestBuf) pop() cand {
	h := nb.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].better(h[m]) {
			m = l
		}
		if r < n && h[r].better(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	nb.heap = h
	return top
}
