package kernels

// The Viterbi recursions, one function for float64 and float32.

func viterbiGeneric[F float](delta []F, bp []int32, s, tr []F, T, M int) {
	copy(delta[:M], s[:M])
	for t := 1; t < T; t++ {
		prev := delta[(t-1)*M : t*M]
		cur := delta[t*M : (t+1)*M]
		arg := bp[t*M : (t+1)*M]
		d0 := prev[0]
		for j, v := range tr[:M] {
			cur[j] = d0 + v
			arg[j] = 0
		}
		for i := 1; i < M; i++ {
			di := prev[i]
			row := tr[i*M : (i+1)*M]
			for j, v := range row {
				if c := di + v; c > cur[j] {
					cur[j] = c
					arg[j] = int32(i)
				}
			}
		}
		st := s[t*M : (t+1)*M]
		for j := range cur {
			cur[j] += st[j]
		}
	}
}

// viterbiMaxGeneric is viterbiGeneric without the back-pointers: the same
// additions and strict comparisons, so the same δ bit for bit.
func viterbiMaxGeneric[F float](delta []F, s, tr []F, T, M int) {
	copy(delta[:M], s[:M])
	for t := 1; t < T; t++ {
		prev := delta[(t-1)*M : t*M]
		cur := delta[t*M : (t+1)*M]
		d0 := prev[0]
		for j, v := range tr[:M] {
			cur[j] = d0 + v
		}
		for i := 1; i < M; i++ {
			di := prev[i]
			row := tr[i*M : (i+1)*M]
			for j, v := range row {
				if c := di + v; c > cur[j] {
					cur[j] = c
				}
			}
		}
		st := s[t*M : (t+1)*M]
		for j := range cur {
			cur[j] += st[j]
		}
	}
}

// backtraceMax is Backtrace for a δ without back-pointers: it recomputes
// the pointer of the chosen label only, bp_t[y] = argmax_i δ_{t−1}[i] +
// tr[i][y] with viterbiGeneric's additions and comparisons (ascending i,
// strict >, starting from i = 0), so it finds exactly the pointer
// viterbiGeneric stores: O(M) per position instead of O(M²). trT, if not
// nil, is tr transposed, whose rows are tr's columns (read contiguously).
func backtraceMax[F float](path []int32, delta, s, tr, trT []F, T, M int) F {
	last := delta[(T-1)*M : T*M]
	best, y := last[0], 0
	for j := 1; j < M; j++ {
		if last[j] > best {
			best, y = last[j], j
		}
	}
	path[T-1] = int32(y)
	for t := T - 1; t > 0; t-- {
		prev, dt, st := delta[(t-1)*M:t*M], delta[t*M+y], s[t*M+y]
		if trT != nil {
			y = pointer(prev, trT[y*M:(y+1)*M], 1, dt, st)
		} else {
			y = pointer(prev, tr[y:], M, dt, st)
		}
		path[t-1] = int32(y)
	}
	return best
}

// pointer returns the back-pointer of label y at step t: argmax_i prev[i] +
// col[i·stride] (ascending i, strict >, starting from i = 0; prev is
// δ_{t−1}, col[i·stride] is tr[i][y], dt is δ_t[y] and st is s_t[y]). The
// kernels compute dt = m + st with m the maximum candidate, so the winner,
// the first i with candidate m, is also the first i whose candidate c gives
// c + st == dt. A lower candidate can round to the same sum, so the first
// such i is accepted only if no later candidate is larger (then c = m: if
// c < m, the index of m comes later and is larger). Both scans branch
// predictably (once each); anything else (a NaN δ, a failed check) runs the
// comparison loop itself.
func pointer[F float](prev, col []F, stride int, dt, st F) int {
	M := len(prev)
	_ = col[(M-1)*stride]
	for i, p := range prev {
		c := p + col[i*stride]
		if c+st != dt {
			continue
		}
		for k := i + 1; k < M; k++ {
			if prev[k]+col[k*stride] > c {
				goto slow
			}
		}
		return i
	}
slow:
	b, arg := prev[0]+col[0], 0
	for i := 1; i < M; i++ {
		if c := prev[i] + col[i*stride]; c > b {
			b, arg = c, i
		}
	}
	return arg
}
